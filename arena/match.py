"""`garfish match`: play a match between two UCI engines with colour-swapped pairs of games.

Each opening (a FEN/EPD line, or the final position of a PGN game; openings are taken in a
random order fixed by --seed) is played twice, the engines swapping colours. Every concurrency
slot (a thread) owns its own pair of engine processes.

Limits and time losses:
  --tc BASE+INC   real clocks: before each move the engine gets wtime/btime/winc/binc. The wall
                  time of a move is measured from sending `position`/`go` to receiving `bestmove`.
                  A move is a time loss when that time exceeds the mover's remaining clock by more
                  than --time-margin (default 0 ms). Otherwise the time is taken off the clock
                  (not below 0) and the increment added.
  --movetime MS   `go movetime MS`; a time loss when a move takes longer than MS + --time-margin
                  (default 100 ms, for the engine's reply latency).
  --nodes N       `go nodes N`; no time losses, but an engine silent for --stall-timeout seconds
                  forfeits on time.
  A watchdog kills an engine 1 s after its move became a time loss (it is restarted for the next game).

Game ends: checkmate, stalemate, threefold repetition, fifty-move rule, insufficient material
(python-chess `outcome(claim_draw=True)`); adjudication (resign: both engines report a score of at
least --resign-score cp for the same side for --resign-moves moves each; draw: both report
|score| <= --draw-score cp for --draw-moves moves each from move --draw-after on; --max-moves);
forfeits: illegal move (also `bestmove 0000` / `(none)`), time loss, crash/disconnection. A time
loss is a draw when the opponent has no mating material. Crashed or killed engines are restarted.

Statistics (from the first engine's side): W/D/L, Elo with a 95% interval from the pentanomial
of finished pairs, LOS (normal approximation over W and L), and with --sprt the generalized SPRT
for logistic Elo on the pentanomial of finished pairs (fishtest's LLR_logistic: the exact
maximum-likelihood ratio of the multinomial model, see arena.stats); the match stops when the
LLR leaves [ln(beta/(1-alpha)), ln((1-beta)/alpha)]. Games already running when a decision
falls are finished and counted.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import importlib.util
import json
import logging
import math
import queue
import random
import re
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Optional, TextIO

import chess
import chess.engine
import chess.pgn

from garfish.arena import stats
from garfish.arena.driver import (DEFAULT_COMMAND, EXIT_ENGINE, EXIT_OK, EXIT_USAGE, EngineProcess, EngineSpec,
                                  EngineStartError, MoveError, quiet_python_chess, split_command)

PROG = "garfish match"
LOG = logging.getLogger(__name__)
MATE_CP = 100_000  # centipawn value used for mate scores in adjudication
WATCHDOG_SLACK = 1.0  # seconds past the time-loss point before a silent engine is killed
DEFAULT_CLOCK_MARGIN_MS = 0
DEFAULT_MOVETIME_MARGIN_MS = 100
DEFAULT_STALL_TIMEOUT = 60.0
ENGINE_COUNT = 2
ABORT_JOIN_SECONDS = 10.0  # how long an interrupted match waits for its slot threads
FORFEIT_KINDS = ("illegal", "time", "crash")
KIND_OF_MOVE_ERROR = MappingProxyType({"illegal": "illegal", "timeout": "time", "crash": "crash"})
PGN_TERMINATION = MappingProxyType({"illegal": "rules infraction", "time": "time forfeit", "crash": "abandoned"})
TC_PATTERN = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*(?:\+\s*(\d+(?:\.\d*)?))?\s*$")
SPRT_KEYS = MappingProxyType({"elo0": 0.0, "elo1": 10.0, "alpha": 0.05, "beta": 0.05})
SEED_RANGE = 2**31  # a seed is drawn from this range (and printed) when --seed is not given
RESULT_POINTS = MappingProxyType({"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5})


# --------------------------------------------------------------------------- configuration
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
class SprtConfig:
    """SPRT hypotheses (logistic Elo) and error rates."""

    elo0: float
    elo1: float
    alpha: float
    beta: float


@dataclass
class MatchConfig:
    """Everything the match needs."""

    engines: list[EngineSpec]
    tc: TimeControl
    games: int
    concurrency: int
    adjudication: Adjudication
    sprt: Optional[SprtConfig]
    seed: Optional[int]
    event: str = "garfish match"


@dataclass
class GameTask:
    """One game to play: its number, pair, opening and which colour engine 1 has."""

    number: int
    pair: int
    opening: int
    fen: str
    chess960: bool
    engine1_white: bool


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


# --------------------------------------------------------------------------- parsing
def parse_tc(text: str) -> tuple[float, float]:
    """'10+0.1' -> (10.0, 0.1), '60' -> (60.0, 0.0); ValueError otherwise."""
    match = TC_PATTERN.match(text)
    if not match:
        raise ValueError(f"--tc must be BASE+INC in seconds (e.g. 10+0.1), not '{text}'")
    base, increment = float(match.group(1)), float(match.group(2) or 0.0)
    if base <= 0:
        raise ValueError("--tc base time must be positive")
    return base, increment


def parse_engine(tokens: list[str], index: int) -> EngineSpec:
    """`cmd=CMD name=N option.X=V ...` -> EngineSpec (ValueError on bad input)."""
    argv: Optional[list[str]] = None
    name: Optional[str] = None
    options: dict[str, str] = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep:
            raise ValueError(f"--engine {index}: '{token}' is not KEY=VALUE (keys: cmd, name, option.NAME)")
        if key == "cmd":
            argv = split_command(value)
        elif key == "name":
            name = value
        elif key.startswith("option.") and len(key) > len("option."):
            options[key[len("option."):]] = value
        else:
            raise ValueError(f"--engine {index}: unknown key '{key}' (keys: cmd, name, option.NAME)")
    return EngineSpec(argv=argv or list(DEFAULT_COMMAND), options=options, name=name)


def parse_sprt(tokens: list[str]) -> SprtConfig:
    """`elo0=0 elo1=10 alpha=0.05 beta=0.05` (any subset; defaults as shown) -> SprtConfig."""
    values = dict(SPRT_KEYS)
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep or key not in SPRT_KEYS:
            raise ValueError(f"--sprt takes elo0=, elo1=, alpha=, beta=, not '{token}'")
        try:
            values[key] = float(value)
        except ValueError:
            raise ValueError(f"--sprt {key} must be a number, not '{value}'") from None
    if values["elo1"] <= values["elo0"]:
        raise ValueError("--sprt needs elo1 > elo0")
    stats.sprt_bounds(values["alpha"], values["beta"])
    return SprtConfig(**values)


def board_from_line(text: str, chess960: bool) -> chess.Board:
    """A FEN (6 fields) or EPD line -> board (ValueError when neither)."""
    try:
        return chess.Board(text, chess960=chess960)
    except ValueError:
        board = chess.Board(chess960=chess960)
        board.set_epd(text)
        return board


def usable(board: chess.Board) -> Optional[str]:
    """Why a board cannot start a game, or None."""
    if not board.is_valid():
        return "not a valid position"
    if board.is_game_over(claim_draw=True):
        return "the game is already over"
    return None


def load_openings(path: Path, needed: int, seed: Optional[int], chess960: bool,
                  warn: Callable[[str], None]) -> list[tuple[int, chess.Board]]:
    """`needed` openings (number in the file, board) in a seeded random order, cycling if the file is short."""
    rng = random.Random(seed)
    if path.suffix.lower() == ".pgn":
        return _pgn_openings(path, needed, rng, warn)
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise ValueError(f"cannot read openings '{path}': {exc.strerror or exc}") from None
    entries = [(number, text.strip()) for number, text in enumerate(lines, 1)
               if text.strip() and not text.strip().startswith("#")]
    rng.shuffle(entries)
    chosen: list[tuple[int, chess.Board]] = []
    for number, text in entries:
        if len(chosen) >= needed:
            break
        try:
            board = board_from_line(text, chess960)
        except ValueError as exc:
            warn(f"{path}:{number}: skipped opening: {exc}")
            continue
        problem = usable(board)
        if problem:
            warn(f"{path}:{number}: skipped opening: {problem}")
            continue
        chosen.append((number, board))
    return _cycle(chosen, needed, path)


def _pgn_openings(path: Path, needed: int, rng: random.Random,
                  warn: Callable[[str], None]) -> list[tuple[int, chess.Board]]:
    """Final positions of randomly chosen PGN games."""
    try:
        handle = open(path, encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ValueError(f"cannot read openings '{path}': {exc.strerror or exc}") from None
    chosen: list[tuple[int, chess.Board]] = []
    with handle:
        offsets = []
        while True:
            offset = handle.tell()
            if not chess.pgn.skip_game(handle):
                break
            offsets.append(offset)
        order = list(range(len(offsets)))
        rng.shuffle(order)
        for index in order:
            if len(chosen) >= needed:
                break
            handle.seek(offsets[index])
            game = chess.pgn.read_game(handle)
            if game is None or game.errors:
                warn(f"{path}: game {index + 1}: skipped opening: "
                     f"{game.errors[0] if game is not None and game.errors else 'unreadable'}")
                continue
            board = game.end().board()
            problem = usable(board)
            if problem:
                warn(f"{path}: game {index + 1}: skipped opening: {problem}")
                continue
            chosen.append((index + 1, board))
    return _cycle(chosen, needed, path)


def _cycle(chosen: list[tuple[int, chess.Board]], needed: int, path: Path) -> list[tuple[int, chess.Board]]:
    """Repeat the openings found when the file has fewer than needed."""
    if not chosen:
        raise ValueError(f"no usable openings in '{path}'")
    return [chosen[index % len(chosen)] for index in range(needed)]


def make_tasks(games: int, openings: list[tuple[int, chess.Board]]) -> list[GameTask]:
    """Game tasks: pair p plays opening p twice, engine 1 White first."""
    tasks = []
    for number in range(1, games + 1):
        pair = (number - 1) // 2
        opening, board = openings[pair]
        tasks.append(GameTask(number=number, pair=pair, opening=opening, fen=board.fen(),
                              chess960=board.chess960, engine1_white=number % 2 == 1))
    return tasks


# --------------------------------------------------------------------------- one game
def score_cp(info: dict, mover: chess.Color) -> Optional[int]:
    """The mover's reported score in centipawns (mates as +-MATE_CP), or None."""
    score = info.get("score")
    if score is None:
        return None
    return score.pov(mover).score(mate_score=MATE_CP)


def move_comment(info: dict, mover: chess.Color, elapsed: float) -> str:
    """PGN comment for a move: score/depth and the time used."""
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
    """An Ending for a forfeit by `color` (a time loss is a draw if the opponent cannot mate)."""
    side = "White" if color == chess.WHITE else "Black"
    what = {"illegal": "forfeits", "time": "loses on time", "crash": "crashed / disconnected"}[kind]
    reason = f"{side} ({engine_name}) {what}: {detail}"
    result = "0-1" if color == chess.WHITE else "1-0"
    if kind == "time" and board.has_insufficient_material(not color):
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


def play_game(task: GameTask, engines: list[EngineProcess], config: MatchConfig,
              abort: threading.Event) -> GameRecord:
    """Play one game; engines that crashed or were killed are restarted first (EngineStartError if that fails)."""
    started = time.perf_counter()
    first, second = engines
    players = {chess.WHITE: first if task.engine1_white else second,
               chess.BLACK: second if task.engine1_white else first}
    board = chess.Board(task.fen, chess960=task.chess960)
    start_board = board.copy()
    tc = config.tc
    clocks = {chess.WHITE: tc.base, chess.BLACK: tc.base}
    key = object()
    comments: list[str] = []
    tracker = AdjudicationTracker(config.adjudication)
    ending: Optional[Ending] = None
    for color in (chess.WHITE, chess.BLACK):
        ensure_running(players[color], abort)
        try:
            players[color].new_game(key)
        except MoveError as exc:
            ending = forfeit_ending(board, color, "crash", players[color].name, f"before the first move: {exc}")
            players[color].kill()  # restarted when its next game starts
            break
    outcome = board.outcome(claim_draw=True)  # computed once per position (claim_draw is costly)
    while ending is None:
        if abort.is_set():
            raise MatchAborted
        if outcome is not None:
            ending = rules_ending(outcome)
            break
        max_moves = config.adjudication.max_moves
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
        if tc.kind == "clock":
            clocks[mover] = max(0.0, clocks[mover] - played.elapsed) + tc.increment
        comments.append(move_comment(played.info, mover, played.elapsed))
        board.push(played.move)
        outcome = board.outcome(claim_draw=True)
        if outcome is None:
            ending = tracker.update(board, mover, score_cp(played.info, mover))
    return make_record(task, players, start_board, board, comments, ending, config,
                       time.perf_counter() - started)


def make_record(task: GameTask, players: dict[chess.Color, EngineProcess], start_board: chess.Board,
                board: chess.Board, comments: list[str], ending: Ending, config: MatchConfig,
                seconds: float) -> GameRecord:
    """The GameRecord (with its PGN text) of a finished game."""
    white, black = players[chess.WHITE].name, players[chess.BLACK].name
    game = chess.pgn.Game()
    game.headers["Event"] = config.event
    game.headers["Site"] = "local"
    game.headers["Date"] = datetime.date.today().strftime("%Y.%m.%d")
    game.headers["Round"] = str(task.number)
    game.headers["White"] = white
    game.headers["Black"] = black
    game.headers["Result"] = ending.result
    game.headers["TimeControl"] = config.tc.pgn()
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
                      pgn=str(game))


# --------------------------------------------------------------------------- the match
@dataclass
class HistoryPoint:
    """The Elo estimate after some number of games (for --plot)."""

    games: int
    elo: float
    lower: float
    upper: float


@dataclass
class MatchState:
    """Results so far, shared by the slot threads (guard with `lock`)."""

    names: list[str]
    total: int
    sprt_config: Optional[SprtConfig]
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    records: list[GameRecord] = field(default_factory=list)
    pair_points: dict[int, list[float]] = field(default_factory=dict)
    pentanomial: list[int] = field(default_factory=lambda: [0] * stats.PENTANOMIAL_SIZE)
    history: list[HistoryPoint] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    abort: threading.Event = field(default_factory=threading.Event)
    sprt_result: Optional[stats.SprtResult] = None

    def wdl(self) -> tuple[int, int, int]:
        """Wins, draws, losses of engine 1."""
        points = [record.engine1_points() for record in self.records]
        return points.count(1.0), points.count(0.5), points.count(0.0)

    def estimate(self) -> Optional[stats.EloEstimate]:
        """Elo from the pentanomial when a pair is complete, else from the games; None before any game."""
        if sum(self.pentanomial):
            return stats.pentanomial_elo(self.pentanomial)
        if self.records:
            wins, draws, losses = self.wdl()
            return stats.trinomial_elo(wins, draws, losses)
        return None

    def add(self, record: GameRecord) -> None:
        """Count a finished game (call with the lock held); sets `stop` when the SPRT decides."""
        self.records.append(record)
        points = self.pair_points.setdefault(record.pair, [])
        points.append(record.engine1_points())
        if len(points) == 2:
            self.pentanomial[round(sum(points) * 2)] += 1
        estimate = self.estimate()
        if estimate is not None:
            self.history.append(HistoryPoint(len(self.records), estimate.elo, estimate.lower, estimate.upper))
        if self.sprt_config is not None:
            config = self.sprt_config
            self.sprt_result = stats.sprt(self.pentanomial, config.elo0, config.elo1, config.alpha, config.beta)
            if self.sprt_result.decision is not None:
                self.stop.set()

    def fail(self, message: str) -> None:
        """Record a runner error and stop the match."""
        with self.lock:
            self.errors.append(message)
        self.stop.set()


def game_line(record: GameRecord, state: MatchState) -> str:
    """The live line printed after each game (call with the lock held)."""
    wins, draws, losses = state.wdl()
    estimate = state.estimate()
    elo = "" if estimate is None else f"  Elo {stats.format_elo(estimate.elo)}"
    if estimate is not None and math.isfinite(estimate.error):
        elo += f" +/- {estimate.error:.1f}"
    sprt = "" if state.sprt_result is None else f"  LLR {state.sprt_result.llr:+.2f}"
    return (f"Game {record.number} ({record.white} vs {record.black}, opening {record.opening}): "
            f"{record.result} [{record.reason}]  {len(state.records)}/{state.total} done; "
            f"{state.names[0]}: W {wins} D {draws} L {losses}{elo}{sprt}")


def slot_worker(slot: int, engines: list[EngineProcess], tasks: "queue.Queue[GameTask]", config: MatchConfig,
                state: MatchState, on_game: Callable[[GameRecord], None]) -> None:
    """One concurrency slot: play games from the queue with its own engine pair until done or stopped."""
    while not state.stop.is_set():
        try:
            task = tasks.get_nowait()
        except queue.Empty:
            return
        try:
            record = play_game(task, engines, config, state.abort)
        except MatchAborted:
            return
        except EngineStartError as exc:
            state.fail(f"slot {slot}, game {task.number}: an engine could not be restarted: {exc}")
            return
        except Exception as exc:  # a bug in the runner: report it with its traceback, stop the match
            LOG.exception("slot %d, game %d: internal error", slot, task.number)
            state.fail(f"slot {slot}, game {task.number}: internal error: {type(exc).__name__}: {exc}")
            return
        on_game(record)


def start_engines(specs: list[EngineSpec], slots: int) -> list[list[EngineProcess]]:
    """Start `slots` pairs of engines in parallel; on any failure close the others and raise EngineStartError."""
    started: list[list[Optional[EngineProcess]]] = [[None] * len(specs) for _ in range(slots)]
    errors: list[str] = []

    def start(slot: int, index: int) -> None:
        """Start one engine (thread body)."""
        try:
            started[slot][index] = EngineProcess(specs[index])
        except EngineStartError as exc:
            errors.append(f"engine {index + 1}: {exc}")

    threads = [threading.Thread(target=start, args=(slot, index), daemon=True)
               for slot in range(slots) for index in range(len(specs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        for pair in started:
            for engine in pair:
                if engine is not None:
                    engine.close()
        raise EngineStartError(sorted(set(errors))[0])
    return [[engine for engine in pair if engine is not None] for pair in started]


def unique_names(engines: list[EngineProcess]) -> None:
    """Give the two engines different display names (suffix ' 2' when their names are equal)."""
    if engines[0].name == engines[1].name:
        engines[1].spec.name = f"{engines[1].name} 2"


def run_match(config: MatchConfig, tasks: list[GameTask], pgn_out: Optional[TextIO], progress: bool,
              out: Callable[[str], None]) -> MatchState:
    """Play all games (or until the SPRT decides); returns the final state (raises EngineStartError at start)."""
    from tqdm import tqdm

    slots = max(1, min(config.concurrency, len(tasks)))
    pairs = start_engines(config.engines, slots)
    unique_names(pairs[0])  # the specs are shared by all slots, so this names every slot's engines
    state = MatchState(names=[pairs[0][0].name, pairs[0][1].name], total=len(tasks), sprt_config=config.sprt)
    queue_: "queue.Queue[GameTask]" = queue.Queue()
    for task in tasks:
        queue_.put(task)
    bar = tqdm(total=len(tasks), unit="game", file=sys.stderr, dynamic_ncols=True,
               disable=None if progress else True)

    def on_game(record: GameRecord) -> None:
        """Count, print and save a finished game."""
        with state.lock:
            state.add(record)
            line = game_line(record, state)
            bar.update(1)
            bar.write(line, file=sys.stdout)
            sys.stdout.flush()
            if pgn_out is not None:
                pgn_out.write(record.pgn + "\n\n")
                pgn_out.flush()

    out(f"{PROG}: {state.names[0]} vs {state.names[1]}, {len(tasks)} games, {config.tc.describe()}, "
        f"concurrency {slots}, seed {config.seed}")
    threads = [threading.Thread(target=slot_worker, args=(slot, pairs[slot], queue_, config, state, on_game),
                                daemon=True, name=f"match-slot-{slot}") for slot in range(slots)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)
    except KeyboardInterrupt:
        state.abort.set()
        state.fail("interrupted by the user; unfinished games are not counted")
        for pair in pairs:
            for engine in pair:
                engine.kill()
        for thread in threads:
            thread.join(ABORT_JOIN_SECONDS)
    finally:
        bar.close()
        for pair in pairs:
            for engine in pair:
                engine.close()
    return state


# --------------------------------------------------------------------------- report
def summary_dict(state: MatchState, config: MatchConfig) -> dict[str, Any]:
    """The final numbers as a dictionary (also the JSON report)."""
    wins, draws, losses = state.wdl()
    games = len(state.records)
    estimate = state.estimate()
    forfeits = {name: {kind: 0 for kind in FORFEIT_KINDS} for name in state.names}
    for record in state.records:
        if record.forfeit_engine is not None and record.forfeit_kind is not None:
            forfeits[state.names[record.forfeit_engine]][record.forfeit_kind] += 1
    endings = collections.Counter(record.category for record in state.records)
    summary: dict[str, Any] = {
        "engines": state.names,
        "games": games,
        "planned_games": state.total,
        "wins": wins, "draws": draws, "losses": losses,
        "points": wins + draws / 2,
        "score": (wins + draws / 2) / games if games else None,
        "pentanomial": list(state.pentanomial),
        "elo": None if estimate is None else _finite(estimate.elo),
        "elo_lower": None if estimate is None else _finite(estimate.lower),
        "elo_upper": None if estimate is None else _finite(estimate.upper),
        "elo_source": "pentanomial" if sum(state.pentanomial) else "games",
        "los": stats.los(wins, losses),
        "forfeits": forfeits,
        "endings": dict(endings.most_common()),
        "errors": list(state.errors),
    }
    if state.sprt_config is not None:
        lower, upper = stats.sprt_bounds(state.sprt_config.alpha, state.sprt_config.beta)
        result = state.sprt_result
        summary["sprt"] = {**asdict(state.sprt_config), "llr": result.llr if result else 0.0,
                           "lower_bound": lower, "upper_bound": upper,
                           "decision": result.decision if result else None,
                           "model": "logistic-Elo GSPRT approximation on the pentanomial"}
    return summary


def _finite(value: float) -> Optional[float]:
    """JSON-safe number: None for +-inf/nan."""
    return value if math.isfinite(value) else None


def print_summary(state: MatchState, config: MatchConfig, out: Callable[[str], None]) -> None:
    """The end-of-match report."""
    summary = summary_dict(state, config)
    names = state.names
    games = summary["games"]
    out("-" * 72)
    out(f"Finished {games}/{state.total} games: {names[0]} vs {names[1]}")
    if games:
        out(f"{names[0]}: W {summary['wins']}  D {summary['draws']}  L {summary['losses']}  "
            f"points {summary['points']:g}/{games} ({100 * summary['score']:.1f}%)")
    out(f"Pentanomial [0, 0.5, 1, 1.5, 2]: {summary['pentanomial']}")
    estimate = state.estimate()
    if estimate is not None:
        source = "pentanomial of finished pairs" if sum(state.pentanomial) else "single games (no finished pair)"
        out(f"Elo difference: {stats.format_elo(estimate.elo)}  95% interval "
            f"[{stats.format_elo(estimate.lower)}, {stats.format_elo(estimate.upper)}]  from the {source}")
        out(f"LOS: {100 * summary['los']:.1f}%")
    if "sprt" in summary:
        sprt = summary["sprt"]
        verdict = {"H1": "H1 accepted", "H0": "H0 accepted"}.get(sprt["decision"], "no decision")
        out(f"SPRT elo0={sprt['elo0']:g} elo1={sprt['elo1']:g} alpha={sprt['alpha']:g} beta={sprt['beta']:g}: "
            f"LLR {sprt['llr']:+.3f} bounds [{sprt['lower_bound']:+.3f}, {sprt['upper_bound']:+.3f}]: {verdict}")
    for name in names:
        counts = summary["forfeits"][name]
        out(f"Forfeits {name}: " + ", ".join(f"{kind} {counts[kind]}" for kind in FORFEIT_KINDS))
    if summary["endings"]:
        out("Endings: " + ", ".join(f"{name} {count}" for name, count in summary["endings"].items()))
    for error in summary["errors"]:
        out(f"Error: {error}")


def plot_history(path: Path, history: list[HistoryPoint], names: list[str]) -> None:
    """Draw the Elo estimate and its 95% interval against games played (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    finite = [point for point in history
              if math.isfinite(point.elo) and math.isfinite(point.lower) and math.isfinite(point.upper)]
    figure, axes = plt.subplots(figsize=(8, 4.5))
    if finite:
        games = [point.games for point in finite]
        axes.plot(games, [point.elo for point in finite], label="Elo estimate")
        axes.fill_between(games, [point.lower for point in finite], [point.upper for point in finite],
                          alpha=0.3, label="95% interval")
    axes.axhline(0.0, color="grey", linewidth=0.8)
    axes.set_xlabel("games played")
    axes.set_ylabel(f"Elo of {names[0]} vs {names[1]}")
    axes.set_title(f"{names[0]} vs {names[1]}")
    axes.legend(loc="best")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def check_matplotlib() -> Optional[str]:
    """An error message when matplotlib is missing, else None."""
    if importlib.util.find_spec("matplotlib") is None:
        return "--plot needs matplotlib: pip install 'garfish[plot]' (or pip install matplotlib)"
    return None


# --------------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    """Command-line arguments of `garfish match`."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", action="append", nargs="+", required=True, metavar="KEY=VALUE",
                        help="an engine: cmd=CMD (shell-quoted; default Garfish) name=N option.X=V; give it twice")
    limit = parser.add_mutually_exclusive_group(required=True)
    limit.add_argument("--tc", metavar="BASE+INC", help="clock per side in seconds, e.g. 10+0.1")
    limit.add_argument("--movetime", type=float, metavar="MS", help="milliseconds per move")
    limit.add_argument("--nodes", type=int, metavar="N", help="nodes per move")
    parser.add_argument("--games", type=int, required=True, metavar="N", help="number of games")
    parser.add_argument("--openings", type=Path, metavar="FILE",
                        help="EPD/FEN lines or PGN games (final positions); default: the start position")
    parser.add_argument("--chess960", action="store_true", help="read the openings as Chess960 positions")
    parser.add_argument("--concurrency", type=int, default=1, metavar="J", help="games played at once")
    parser.add_argument("--pgnout", type=Path, metavar="FILE", help="write all games to this PGN file")
    parser.add_argument("--report", type=Path, metavar="FILE.json", help="write the summary as JSON")
    parser.add_argument("--sprt", nargs="*", metavar="KEY=VALUE",
                        help="sequential test: elo0=0 elo1=10 alpha=0.05 beta=0.05 (defaults shown)")
    parser.add_argument("--seed", type=int, help="seed for the opening order (default: random)")
    parser.add_argument("--plot", type=Path, metavar="FILE.png", help="plot Elo and its interval (needs matplotlib)")
    parser.add_argument("--resign-score", type=int, metavar="CP", help="resign adjudication threshold (centipawns)")
    parser.add_argument("--resign-moves", type=int, metavar="M", help="... for M consecutive moves of each engine")
    parser.add_argument("--draw-score", type=int, metavar="CP", help="draw adjudication threshold (centipawns)")
    parser.add_argument("--draw-moves", type=int, metavar="M", help="... for M consecutive moves of each engine")
    parser.add_argument("--draw-after", type=int, default=0, metavar="K", help="... counted from move K on")
    parser.add_argument("--max-moves", type=int, default=0, metavar="N", help="adjudicate a draw after move N")
    parser.add_argument("--time-margin", type=float, metavar="MS",
                        help=f"tolerance before a move is a time loss (default {DEFAULT_CLOCK_MARGIN_MS} ms "
                             f"with --tc, {DEFAULT_MOVETIME_MARGIN_MS} ms with --movetime)")
    parser.add_argument("--stall-timeout", type=float, default=DEFAULT_STALL_TIMEOUT, metavar="S",
                        help="with --nodes: seconds without bestmove before a time forfeit")
    parser.add_argument("--event", default="garfish match", help="PGN Event tag")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (it is off when stderr is no TTY)")
    parser.add_argument("--show-stderr", action="store_true", help="let the engines' stderr through")
    parser.add_argument("-v", "--verbose", action="store_true", help="log python-chess's warnings")
    return parser


def build_config(args: argparse.Namespace) -> MatchConfig:
    """MatchConfig from the arguments (ValueError with a message on bad values)."""
    if len(args.engine) != ENGINE_COUNT:
        raise ValueError(f"give --engine exactly twice (got {len(args.engine)})")
    engines = [parse_engine(tokens, index + 1) for index, tokens in enumerate(args.engine)]
    for spec in engines:
        spec.show_stderr = args.show_stderr
    if args.games < 1:
        raise ValueError("--games must be at least 1")
    if args.concurrency < 1:
        raise ValueError("--concurrency must be at least 1")
    if args.time_margin is not None and args.time_margin < 0:
        raise ValueError("--time-margin must not be negative")
    if args.tc is not None:
        base, increment = parse_tc(args.tc)
        margin = DEFAULT_CLOCK_MARGIN_MS if args.time_margin is None else args.time_margin
        tc = TimeControl("clock", base=base, increment=increment, margin=margin / 1000)
    elif args.movetime is not None:
        if not args.movetime > 0:
            raise ValueError("--movetime must be positive")
        margin = DEFAULT_MOVETIME_MARGIN_MS if args.time_margin is None else args.time_margin
        tc = TimeControl("movetime", movetime=args.movetime / 1000, margin=margin / 1000)
    else:
        if args.nodes < 1:
            raise ValueError("--nodes must be at least 1")
        if not args.stall_timeout > 0:
            raise ValueError("--stall-timeout must be positive")
        tc = TimeControl("nodes", nodes=args.nodes, stall_timeout=args.stall_timeout)
    adjudication = Adjudication(max_moves=max(0, args.max_moves), draw_after=max(0, args.draw_after))
    if (args.resign_score is None) != (args.resign_moves is None):
        raise ValueError("--resign-score and --resign-moves go together")
    if args.resign_score is not None:
        if args.resign_score <= 0 or args.resign_moves < 1:
            raise ValueError("--resign-score must be positive and --resign-moves at least 1")
        adjudication.resign_score, adjudication.resign_moves = args.resign_score, args.resign_moves
    if (args.draw_score is None) != (args.draw_moves is None):
        raise ValueError("--draw-score and --draw-moves go together")
    if args.draw_score is not None:
        if args.draw_score < 0 or args.draw_moves < 1:
            raise ValueError("--draw-score must not be negative and --draw-moves must be at least 1")
        adjudication.draw_score, adjudication.draw_moves = args.draw_score, args.draw_moves
    sprt = parse_sprt(args.sprt) if args.sprt is not None else None
    return MatchConfig(engines=engines, tc=tc, games=args.games, concurrency=args.concurrency,
                       adjudication=adjudication, sprt=sprt, seed=args.seed, event=args.event)


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of `garfish match`."""
    args = build_parser().parse_args(argv)
    quiet_python_chess(args.verbose)

    def warn(message: str) -> None:
        """Print a problem to stderr."""
        print(f"{PROG}: {message}", file=sys.stderr)

    try:
        config = build_config(args)
        if args.plot is not None:
            problem = check_matplotlib()
            if problem:
                raise ValueError(problem)
        if config.seed is None:
            config.seed = random.SystemRandom().randrange(SEED_RANGE)
        pairs_needed = (config.games + 1) // 2
        if args.openings is not None:
            openings = load_openings(args.openings, pairs_needed, config.seed, args.chess960, warn)
        else:
            openings = [(0, chess.Board(chess960=args.chess960))] * pairs_needed
    except ValueError as exc:
        warn(str(exc))
        return EXIT_USAGE
    tasks = make_tasks(config.games, openings)
    try:
        pgn_out = open(args.pgnout, "w", encoding="utf-8") if args.pgnout else None
    except OSError as exc:
        warn(f"cannot write '{args.pgnout}': {exc.strerror or exc}")
        return EXIT_USAGE
    try:
        state = run_match(config, tasks, pgn_out, not args.no_progress, lambda line: print(line, flush=True))
    except EngineStartError as exc:
        warn(str(exc))
        return EXIT_ENGINE
    finally:
        if pgn_out is not None:
            pgn_out.close()
    print_summary(state, config, lambda line: print(line, flush=True))
    if args.pgnout:
        print(f"PGN: {args.pgnout}")
    status = EXIT_ENGINE if state.errors else EXIT_OK
    if args.report:
        try:
            args.report.write_text(json.dumps(summary_dict(state, config), indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            warn(f"cannot write '{args.report}': {exc.strerror or exc}")
            status = EXIT_USAGE
    if args.plot:
        try:
            plot_history(args.plot, state.history, state.names)
            print(f"Plot: {args.plot}")
        except (OSError, ValueError) as exc:
            warn(f"cannot write plot '{args.plot}': {exc}")
            status = EXIT_USAGE
    return status
