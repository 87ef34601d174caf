"""One game of `garfish match`: clocks and time losses, adjudication, forfeits, and the game record with its PGN."""

from __future__ import annotations

import datetime
import threading
import time
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Optional

import chess
import chess.engine
import chess.pgn

from garfish.arena.driver import EngineProcess, MoveError
from garfish.arena.openings import GameTask
from garfish.arena.rules import game_outcome

MATE_CP = 100_000  # centipawn value used for mate scores in adjudication
WATCHDOG_SLACK = 1.0  # seconds past the time-loss point before a silent engine is killed
DEFAULT_STALL_TIMEOUT = 60.0
FORFEIT_KINDS = ("illegal", "time", "crash")
KIND_OF_MOVE_ERROR = MappingProxyType({"illegal": "illegal", "timeout": "time", "crash": "crash"})
PGN_TERMINATION = MappingProxyType({"illegal": "rules infraction", "time": "time forfeit", "crash": "abandoned"})
RESULT_POINTS = MappingProxyType({"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5})


# --------------------------------------------------------------------------- settings and records
@dataclass
class TimeControl:
    """The search limit of every move and the time-loss rule."""

    kind: str  # "clock", "movetime" or "nodes"
    base: float = 0.0
    increment: float = 0.0
    movetime: float = 0.0
    nodes: int = 0
    margin: float = 0.0  # seconds of tolerance before a move is a time loss
    stall_timeout: float = DEFAULT_STALL_TIMEOUT

    def clock_after(self, clock: float, elapsed: float) -> float:
        """A clock after a move that took `elapsed` seconds: the time comes off (never below 0), the
        increment goes on."""
        return max(0.0, clock - elapsed) + self.increment

    def pgn(self) -> str:
        """The PGN TimeControl tag."""
        if self.kind == "clock":
            return f"{self.base:g}+{self.increment:g}"
        if self.kind == "movetime":
            return f"{self.movetime:g}/move"
        return "-"

    def describe(self) -> str:
        """A human-readable description."""
        if self.kind == "clock":
            return f"tc {self.base:g}+{self.increment:g} s, time margin {self.margin * 1000:g} ms"
        if self.kind == "movetime":
            return f"movetime {self.movetime * 1000:g} ms, time margin {self.margin * 1000:g} ms"
        return f"nodes {self.nodes}, stall timeout {self.stall_timeout:g} s"


@dataclass
class Adjudication:
    """Resign, draw and move-limit adjudication settings (None/0 = off)."""

    resign_score: Optional[int] = None
    resign_moves: int = 0
    draw_score: Optional[int] = None
    draw_moves: int = 0
    draw_after: int = 0
    max_moves: int = 0


@dataclass
class PonderStats:
    """An engine's moves and those it played after a ponderhit: how many, the longest, and the
    largest share of its clock one took (0 without a clock)."""

    moves: int = 0
    hits: int = 0
    longest: float = 0.0
    largest_share: float = 0.0

    def add(self, elapsed: float, ponderhit: bool, clock: Optional[float]) -> None:
        """Count a move that took `elapsed` seconds with `clock` seconds left before it (None: no clock)."""
        self.moves += 1
        if ponderhit:
            self.hits += 1
            self.longest = max(self.longest, elapsed)
            if clock:
                self.largest_share = max(self.largest_share, elapsed / clock)

    def merge(self, other: PonderStats) -> None:
        """Add another game's counts."""
        self.moves += other.moves
        self.hits += other.hits
        self.longest = max(self.longest, other.longest)
        self.largest_share = max(self.largest_share, other.largest_share)


@dataclass
class GameRecord:
    """The outcome of one game."""

    number: int
    pair: int
    opening: int
    white: str
    black: str
    engine1_white: bool
    result: str
    termination: str  # PGN Termination tag value
    reason: str  # ResultReason tag: what ended the game
    category: str  # short ending class for the summary (e.g. "checkmate", "forfeit: time")
    forfeit_engine: Optional[int] = None  # 0 or 1: which engine forfeited
    forfeit_kind: Optional[str] = None
    plies: int = 0
    seconds: float = 0.0
    pgn: str = ""
    ponder: tuple[PonderStats, PonderStats] = field(default_factory=lambda: (PonderStats(), PonderStats()))
    clock_left: tuple[Optional[float], Optional[float]] = (None, None)  # engine 1's and 2's clock at the end
    """Seconds on each engine's clock when the game ended (None without a clock or after a forfeit)."""
    pairing: int = 0  # in a gauntlet or round robin, the pairing of players that played it (GameTask.pairing)

    def engine1_points(self) -> float:
        """Points of engine 1 in this game."""
        white_points = RESULT_POINTS[self.result]
        return white_points if self.engine1_white else 1.0 - white_points


@dataclass
class Ending:
    """How a game ended (while it is being played)."""

    result: str
    termination: str
    reason: str
    category: str
    forfeit_color: Optional[chess.Color] = None
    forfeit_kind: Optional[str] = None


# --------------------------------------------------------------------------- one game
def score_cp(info: dict, mover: chess.Color) -> Optional[int]:
    """The mover's reported score in centipawns (mates as +-MATE_CP), or None."""
    score = info.get("score")
    if score is None:
        return None
    return score.pov(mover).score(mate_score=MATE_CP)


def move_comment(info: dict, mover: chess.Color, elapsed: float, ponderhit: bool = False) -> str:
    """PGN comment for a move: score/depth, the time used and whether it followed a ponderhit."""
    score = info.get("score")
    depth = info.get("depth")
    parts = []
    if score is not None:
        pov = score.pov(mover)
        if pov.is_mate():
            mate = pov.mate()
            parts.append(f"{'+' if mate > 0 else '-'}M{abs(mate)}")
        else:
            parts.append(f"{pov.score() / 100:+.2f}")
        if depth is not None:
            parts[-1] += f"/{depth}"
    parts.append(f"{elapsed:.3f}s")
    if ponderhit:
        parts.append("ponderhit")
    return " ".join(parts)


class AdjudicationTracker:
    """Counts consecutive plies in which the engines' scores support a resign or draw adjudication."""

    def __init__(self, settings: Adjudication) -> None:
        """Start with empty streaks."""
        self.settings = settings
        self.winning = {chess.WHITE: 0, chess.BLACK: 0}
        self.drawn = 0

    def update(self, board: chess.Board, mover: chess.Color, score: Optional[int]) -> Optional[Ending]:
        """Record the score of the move just made (board is after it); an Ending when adjudicated."""
        settings = self.settings
        white_score = None if score is None else (score if mover == chess.WHITE else -score)
        if settings.resign_score is not None:
            for color, sign in ((chess.WHITE, 1), (chess.BLACK, -1)):
                agrees = white_score is not None and sign * white_score >= settings.resign_score
                self.winning[color] = self.winning[color] + 1 if agrees else 0
                if self.winning[color] >= 2 * settings.resign_moves:
                    side = "White" if color == chess.WHITE else "Black"
                    return Ending("1-0" if color == chess.WHITE else "0-1", "adjudication",
                                  f"resign adjudication: both engines scored {side} up by at least "
                                  f"{settings.resign_score} cp for {settings.resign_moves} moves each",
                                  "adjudication: resign")
        if settings.draw_score is not None:
            move_number = board.fullmove_number - (1 if mover == chess.BLACK else 0)
            if move_number >= settings.draw_after:
                near_zero = white_score is not None and abs(white_score) <= settings.draw_score
                self.drawn = self.drawn + 1 if near_zero else 0
                if self.drawn >= 2 * settings.draw_moves:
                    return Ending("1/2-1/2", "adjudication",
                                  f"draw adjudication: both engines scored within {settings.draw_score} cp "
                                  f"for {settings.draw_moves} moves each (from move {settings.draw_after})",
                                  "adjudication: draw")
        return None


def rules_ending(outcome: chess.Outcome) -> Ending:
    """An Ending for a game over by the rules."""
    names = {
        chess.Termination.CHECKMATE: "checkmate",
        chess.Termination.STALEMATE: "stalemate",
        chess.Termination.INSUFFICIENT_MATERIAL: "insufficient material",
        chess.Termination.SEVENTYFIVE_MOVES: "75-move rule",
        chess.Termination.FIVEFOLD_REPETITION: "fivefold repetition",
        chess.Termination.FIFTY_MOVES: "fifty-move rule",
        chess.Termination.THREEFOLD_REPETITION: "threefold repetition",
    }
    name = names.get(outcome.termination, outcome.termination.name.lower())
    return Ending(outcome.result(), "normal", name, name)


def forfeit_ending(board: chess.Board, color: chess.Color, kind: str, engine_name: str, detail: str) -> Ending:
    """An Ending for a forfeit by `color`: a draw when the opponent has no mating material, as in
    cutechess-cli (`ChessPlayer::forfeit`), for every kind of forfeit."""
    side = "White" if color == chess.WHITE else "Black"
    what = {"illegal": "forfeits", "time": "loses on time", "crash": "crashed / disconnected"}[kind]
    reason = f"{side} ({engine_name}) {what}: {detail}"
    result = "0-1" if color == chess.WHITE else "1-0"
    if board.has_insufficient_material(not color):
        result = "1/2-1/2"
        reason += "; drawn because the opponent has insufficient mating material"
    return Ending(result, PGN_TERMINATION[kind], reason, f"forfeit: {kind}", color, kind)


def move_limits(tc: TimeControl, clocks: dict[chess.Color, float],
                mover: chess.Color) -> tuple[chess.engine.Limit, Optional[float], float]:
    """(python-chess limit, allowed seconds before a time loss or None, watchdog seconds)."""
    if tc.kind == "clock":
        limit = chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK],
                                   white_inc=tc.increment, black_inc=tc.increment)
        allowed = clocks[mover] + tc.margin
        return limit, allowed, allowed + WATCHDOG_SLACK
    if tc.kind == "movetime":
        allowed = tc.movetime + tc.margin
        return chess.engine.Limit(time=tc.movetime), allowed, allowed + WATCHDOG_SLACK
    return chess.engine.Limit(nodes=tc.nodes), None, tc.stall_timeout


class MatchAborted(Exception):
    """The match was interrupted while a game was being played."""


def restart(engine: EngineProcess, abort: threading.Event) -> None:
    """Restart an engine unless the match is being aborted (raises EngineStartError or MatchAborted)."""
    if abort.is_set():
        raise MatchAborted
    engine.restart()


def ensure_running(engine: EngineProcess, abort: threading.Event) -> None:
    """Restart an engine that has died (raises EngineStartError or MatchAborted)."""
    if not engine.alive():
        restart(engine, abort)


def end_pondering(engines: list[EngineProcess]) -> None:
    """The game is over: stop the engines' ponder searches (one that does not stop is killed and
    restarted for its next game; the result stands)."""
    for engine in engines:
        try:
            engine.stop_pondering()
        except MoveError:
            engine.kill()


def play_game(task: GameTask, engines: list[EngineProcess], tc: TimeControl, adjudication: Adjudication, event: str,
              abort: threading.Event) -> GameRecord:
    """Play one game; engines that crashed or were killed are restarted first (EngineStartError if that fails)."""
    started = time.perf_counter()
    first, second = engines
    players = {chess.WHITE: first if task.engine1_white else second,
               chess.BLACK: second if task.engine1_white else first}
    board = chess.Board(task.fen, chess960=task.chess960)
    start_board = board.copy()
    clocks = {chess.WHITE: tc.base, chess.BLACK: tc.base}
    key = object()
    comments: list[str] = []
    tracker = AdjudicationTracker(adjudication)
    ponder = {chess.WHITE: PonderStats(), chess.BLACK: PonderStats()}
    ending: Optional[Ending] = None
    for color in (chess.WHITE, chess.BLACK):
        ensure_running(players[color], abort)
        try:
            players[color].new_game(key)
        except MoveError as exc:
            ending = forfeit_ending(board, color, "crash", players[color].name, f"before the first move: {exc}")
            players[color].kill()  # restarted when its next game starts
            break
    outcome = game_outcome(board)  # once per position: over only by a rule in effect, never a claim
    while ending is None:
        if abort.is_set():
            raise MatchAborted
        if outcome is not None:
            ending = rules_ending(outcome)
            break
        max_moves = adjudication.max_moves
        if max_moves and board.fullmove_number > max_moves:
            ending = Ending("1/2-1/2", "adjudication", f"draw adjudication: move limit {max_moves} reached",
                            "adjudication: move limit")
            break
        mover = board.turn
        engine = players[mover]
        limit, allowed, watchdog = move_limits(tc, clocks, mover)
        try:
            played = engine.play(board, limit, key, watchdog)
        except MoveError as exc:
            kind = KIND_OF_MOVE_ERROR[exc.kind]
            detail = exc.detail
            if kind == "time" and allowed is not None:
                detail += f" (allowed {allowed:.3f} s)"
            ending = forfeit_ending(board, mover, kind, engine.name, detail)
            if kind in ("time", "crash"):
                engine.kill()  # restarted when its next game starts
            break
        if allowed is not None and played.elapsed > allowed:
            budget = clocks[mover] if tc.kind == "clock" else tc.movetime
            ending = forfeit_ending(board, mover, "time", engine.name,
                                    f"{board.san(played.move)} took {played.elapsed:.3f} s with "
                                    f"{budget:.3f} s left (margin {tc.margin * 1000:g} ms)")
            break
        ponder[mover].add(played.elapsed, played.ponderhit, clocks[mover] if tc.kind == "clock" else None)
        if tc.kind == "clock":
            clocks[mover] = tc.clock_after(clocks[mover], played.elapsed)
        comments.append(move_comment(played.info, mover, played.elapsed, played.ponderhit))
        board.push(played.move)
        outcome = game_outcome(board)
        if outcome is None:
            ending = tracker.update(board, mover, score_cp(played.info, mover))
    end_pondering(engines)
    record = make_record(task, players, start_board, board, comments, ending, tc, event,
                         time.perf_counter() - started)
    first_color = chess.WHITE if task.engine1_white else chess.BLACK
    record.ponder = (ponder[first_color], ponder[not first_color])
    if tc.kind == "clock" and record.forfeit_engine is None:
        record.clock_left = (clocks[first_color], clocks[not first_color])
    return record


def make_record(task: GameTask, players: dict[chess.Color, EngineProcess], start_board: chess.Board,
                board: chess.Board, comments: list[str], ending: Ending, tc: TimeControl,
                event: str, seconds: float) -> GameRecord:
    """The GameRecord (with its PGN text) of a finished game."""
    white, black = players[chess.WHITE].name, players[chess.BLACK].name
    game = chess.pgn.Game()
    game.headers["Event"] = event
    game.headers["Site"] = "local"
    game.headers["Date"] = datetime.date.today().strftime("%Y.%m.%d")
    game.headers["Round"] = str(task.number)
    game.headers["White"] = white
    game.headers["Black"] = black
    game.headers["Result"] = ending.result
    game.headers["TimeControl"] = tc.pgn()
    game.headers["Termination"] = ending.termination
    game.headers["ResultReason"] = ending.reason
    game.headers["Opening"] = f"#{task.opening}"
    game.headers["PlyCount"] = str(len(board.move_stack))
    game.setup(start_board)
    node: chess.pgn.GameNode = game
    for move, comment in zip(board.move_stack, comments):
        node = node.add_variation(move)
        node.comment = comment
    forfeit_engine = None
    if ending.forfeit_color is not None:
        forfeit_engine = 0 if (ending.forfeit_color == chess.WHITE) == task.engine1_white else 1
    return GameRecord(number=task.number, pair=task.pair, opening=task.opening, white=white, black=black,
                      engine1_white=task.engine1_white, result=ending.result, termination=ending.termination,
                      reason=ending.reason, category=ending.category, forfeit_engine=forfeit_engine,
                      forfeit_kind=ending.forfeit_kind, plies=len(board.move_stack), seconds=seconds,
                      pgn=str(game), pairing=task.pairing)
