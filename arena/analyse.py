"""`garfish analyse`: annotate the games of a PGN file with a UCI engine (Garfish by default).

Every move of each game's main line is searched from the position before it with MultiPV 2; when
the move played is not one of the two lines, a second search with `searchmoves` scores it to the
depth the first reached. The engine is asked for `UCI_ShowWDL`, and a move's loss is the expected score it gave
away against the best line (arena/annotate.py judges it and writes the verdicts). Each game gets
`ucinewgame` first, so its searches do not depend on the games before it: with --nodes or --depth
the output is the same whatever -j or --cluster.

The output PGN holds the games in the input's order, annotated: `[%eval]` on each move, ?!/?/??
with the better line as a variation, the players' figures in a comment before the first move. A
game that cannot be read as written (an illegal move, an unknown variant, a broken header) is
reported (which game, which move, why) and copied to the output as it was, not analysed.

A test suite (SUITE.epd or .fen, or a file whose first line is a position) is analysed as one-move
games: each position (FEN, SetUp 1) with its first `bm` played, Event its `id`. A position without bm
has no move played to judge: it is reported and copied unanalysed.

Resuming: beside OUT.pgn the tool keeps OUT.pgn.analyse, the run's settings on its first line and
then a JSON line per game written right after the game went into the PGN, with the PGN's size after
it. The same command with --resume continues an interrupted run: the games the journal records stay,
the PGN is cut back to the last of them, the others are analysed. The input file, the engine, its
options and the limit must be the journal's; -j, --cluster, --plot and --limit may change.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import io
import json
import logging
import re
import sys
import threading
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Callable, ContextManager, Generator, Iterator, Mapping, Optional, Sequence, Union

import chess
import chess.engine
import chess.pgn

from garfish.arena.annotate import (GameAnalysis, MoveEval, PlayerSummary, PlotPoint, annotate, expected_score,
                                    mover_map, plot_game, plot_points, summarize)
from garfish.arena.driver import (DEFAULT_COMMAND, EngineProcess, EngineSpec, EngineStartError, quiet_python_chess,
                                  split_command)
from garfish.arena.epd import add_search_arguments, build_config
from garfish.arena.epd import validate as validate_search
from garfish.arena.sidecar import load_records, open_record_files
from garfish.arena.suite import EpdConfig, make_limit
from garfish.arena.tools import EXIT_ENGINE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from garfish.arena.workers import run_as_worker, run_pool, serve_tasks

PROG = "garfish analyse"
LOG = logging.getLogger(__name__)
MULTIPV = 2  # lines per search: the best, and a second that is often the move played
INFO = chess.engine.INFO_BASIC | chess.engine.INFO_SCORE | chess.engine.INFO_PV
SHOW_WDL = "UCI_ShowWDL"
JOURNAL_SUFFIX = ".analyse"
JOURNAL_HEADER = "# garfish analyse "
JOURNAL_KIND = "garfish analyse journal"
JOURNAL_FORMAT = 1  # the journal's settings must match; a change of the verdicts' rules changes this
SHA_DIGITS = 16
MOVE_ERRORS = (chess.IllegalMoveError, chess.AmbiguousMoveError, chess.InvalidMoveError)
QUOTED = re.compile(r"'([^']*)'")

EngineArg = Union[None, str, Sequence[str], chess.engine.SimpleEngine]


class GameError(ValueError):
    """A game that cannot be analysed as written: the message says where and why."""


# --------------------------------------------------------------------------- reading games
@dataclass
class GameText:
    """One game of the input as written: its place in the file (from 1), its first line and its text."""

    number: int
    line: int
    text: str
    skip: Optional[str] = None  # why the game is copied without analysis (a suite's position with no bm)


class ReportingBuilder(chess.pgn.GameBuilder):
    """python-chess's game builder that keeps each error in game.errors as a GameError saying where it was
    met (which move, in which position), instead of logging it."""

    def handle_error(self, error: Exception) -> None:
        """Keep the error, described."""
        self.game.errors.append(GameError(describe_error(self.variation_stack[-1], error)))


def describe_error(node: chess.pgn.GameNode, error: Exception) -> str:
    """'move 2. Ke3: illegal in <FEN>' for a move error at this node, else 'headers: ...'."""
    if not isinstance(error, MOVE_ERRORS):
        return f"headers: {error}"
    kind = ("illegal" if isinstance(error, chess.IllegalMoveError) else
            "ambiguous" if isinstance(error, chess.AmbiguousMoveError) else "not a move")
    quoted = QUOTED.search(str(error))
    token = quoted.group(1) if quoted else "?"
    try:
        board = node.board()
    except ValueError:
        return f"move {token}: {kind}"
    where = "in a variation, " if not node.is_mainline() else ""
    number = f"{board.fullmove_number}{'.' if board.turn == chess.WHITE else '...'}"
    return f"{where}move {number} {token}: {kind} in {board.fen()}"


def split_games(text: str, limit: int = 0) -> list[GameText]:
    """The games of a PGN text as written (the first `limit` of them when limit > 0)."""
    handle = io.StringIO(text)
    games: list[GameText] = []
    while not limit or len(games) < limit:
        start = handle.tell()
        if chess.pgn.read_headers(handle) is None:
            break
        body = text[start:handle.tell()]
        stripped = body.lstrip()
        line = text.count("\n", 0, start + len(body) - len(stripped)) + 1
        games.append(GameText(len(games) + 1, line, stripped.rstrip()))
    return games


def read_text(path: Path) -> str:
    """A PGN file's text: UTF-8, or Latin-1 when it is not UTF-8 (OSError when it cannot be read)."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


POSITION_SUFFIXES = (".epd", ".fen")
NO_BM = "no bm: no move played to judge"


def is_positions(path: Path, text: str) -> bool:
    """Whether the input is a test suite (EPD or FEN lines): by its extension, else by its first line that
    is not blank or a comment ('#', '%'), which then reads as EPD or FEN and is no PGN header."""
    if path.suffix.lower() in POSITION_SUFFIXES:
        return True
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "%")):
            continue
        if line.startswith("["):
            return False
        try:
            read_position(line)
        except ValueError:
            return False
        return True
    return False


def read_position(line: str) -> tuple[chess.Board, dict[str, Any]]:
    """A board and its EPD operations from an EPD line or a FEN (with its move counters) (ValueError)."""
    parts = line.split()
    if len(parts) >= 6 and parts[4].isdigit() and parts[5].isdigit():  # a FEN's counters, then any operations
        board, ops = chess.Board.from_epd(" ".join(parts[:4] + parts[6:]))
        board.halfmove_clock, board.fullmove_number = int(parts[4]), max(1, int(parts[5]))
        return board, ops
    return chess.Board.from_epd(line)


def split_positions(text: str, name: str, limit: int = 0) -> list[GameText]:
    """The positions of a test suite as one-move games (the first `limit` when limit > 0): the position
    (FEN, SetUp), its first `bm` played, Event its `id` (else 'NAME position N'), Site the file's name, the
    side to move named after the suite (NAME) and the other '?'. A position with no bm, and a line that is
    not a position, are games to copy unanalysed, with the reason."""
    games: list[GameText] = []
    suite = Path(name).stem
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(("#", "%")):
            continue
        if limit and len(games) >= limit:
            break
        game = chess.pgn.Game()
        game.headers["Site"] = name
        skip = None
        try:
            board, ops = read_position(line)
        except ValueError as exc:
            game.headers["Event"] = f"{suite} line {number}"
            game.comment = line
            skip = f"not a position: {exc}"
        else:
            game.headers["Event"] = str(ops.get("id") or f"{suite} position {len(games) + 1}")
            game.headers["White" if board.turn == chess.WHITE else "Black"] = suite
            game.setup(board)
            best = ops.get("bm")
            if best:
                game.add_main_variation(best[0])
            else:
                skip = NO_BM
        text_of = game.accept(chess.pgn.StringExporter(headers=True, variations=True, comments=True))
        games.append(GameText(len(games) + 1, number, text_of, skip))
    return games


def parse_game(text: str) -> chess.pgn.Game:
    """A game from its text, or GameError saying what cannot be read (python-chess would drop it) or analysed."""
    for line in text.lstrip().splitlines():
        if not line.startswith("["):
            break  # the headers end here
        if not chess.pgn.TAG_REGEX.match(line):
            raise GameError(f"headers: broken header line {line!r}")
    game = chess.pgn.read_game(io.StringIO(text), Visitor=ReportingBuilder)
    if game is None:
        raise GameError("no game")
    check_game(game)
    return game


def check_game(game: chess.pgn.Game) -> None:
    """GameError when python-chess met errors in the game or its variant is not standard chess or Chess960."""
    if game.errors:  # the first: python-chess skips the rest of a variation after one, and may stumble on
        raise GameError(str(game.errors[0]))  # what follows
    try:
        board = game.board()
    except ValueError as exc:
        raise GameError(f"headers: {exc}") from None
    if type(board) is not chess.Board:
        raise GameError(f"headers: variant {game.headers.get('Variant', '?')!r}: only standard chess and Chess960 "
                        f"are analysed")


# --------------------------------------------------------------------------- searching a game
def limit_text(limit: chess.engine.Limit) -> str:
    """'nodes 20000', 'depth 12' or '0.2 s'."""
    if limit.nodes is not None:
        return f"nodes {limit.nodes}"
    if limit.depth is not None:
        return f"depth {limit.depth}"
    return f"{limit.time:g} s"


def search_game(engine: chess.engine.SimpleEngine, game: chess.pgn.Game, limit: chess.engine.Limit,
                number: int = 1, on_move: Optional[Callable[[], None]] = None,
                guard: Callable[[], ContextManager[Any]] = contextlib.nullcontext) -> GameAnalysis:
    """Search every move of the game's main line from the position before it (MultiPV 2, and a second
    search of the move played when neither line is it); on_move after each move; each search runs
    inside guard() (a watchdog). Raises GameError for a game that cannot be analysed, and python-chess's
    EngineError / EngineTerminatedError when the engine fails."""
    check_game(game)
    board = game.board()
    if board.chess960 and "UCI_Chess960" not in engine.options:
        raise GameError("headers: a Chess960 game, and the engine does not declare UCI_Chess960")
    options = {SHOW_WDL: True} if SHOW_WDL in engine.options else {}
    key = object()  # a new game for python-chess: ucinewgame before the first search
    analysis = GameAnalysis(number, engine.id.get("name", "engine"), limit_text(limit))

    def search(root: chess.Board, depth: Optional[int] = None, **kwargs: Any) -> list[chess.engine.InfoDict]:
        """One search of this position, with the game's limit or to `depth` (from its FEN after a null move:
        UCI cannot send one)."""
        if any(not move for move in root.move_stack):
            root = chess.Board(root.fen(), chess960=root.chess960)
        with guard():
            found = engine.analyse(root, limit if depth is None else chess.engine.Limit(depth=depth), game=key,
                                   info=INFO, options=options, **kwargs)
        return found if isinstance(found, list) else [found]

    for ply, move in enumerate(game.mainline_moves()):
        if move and board.is_legal(move):
            analysis.moves.append(search_move(search, board, ply, move))
        board.push(move)
        if on_move is not None:
            on_move()
    return analysis


def search_move(search: Callable[..., list[chess.engine.InfoDict]], board: chess.Board, ply: int,
                move: chess.Move) -> MoveEval:
    """The best line and the move played, scored from the mover's side. A move played that is neither line
    gets a search of its own to the depth the best line reached: its score then weighs as much (a search of
    one root move would go deeper under the same nodes; under a time limit an engine may stop one early)."""
    mover = board.turn
    lines = search(board, multipv=MULTIPV) or [{}]
    best = lines[0]
    played = next((line for line in lines if line.get("pv") and line["pv"][0] == move), None)
    nodes = best.get("nodes", 0)
    if played is None:
        played = (search(board, best.get("depth"), root_moves=[move]) or [{}])[0]
        nodes += played.get("nodes", 0)
    best_score, played_score = best.get("score"), played.get("score")
    best_expected, played_expected = expected_score(best, mover), expected_score(played, mover)
    record = MoveEval(ply, move.uci(), [step.uci() for step in best.get("pv", [])], depth=played.get("depth"),
                      nodes=nodes)
    if best_score is not None and played_score is not None and best_expected is not None \
            and played_expected is not None:
        record.best, record.played = best_score.pov(mover), played_score.pov(mover)
        record.best_expected, record.played_expected = best_expected, played_expected
    return record


def open_engine(engine: EngineArg, options: Optional[Mapping[str, str]]) -> tuple[chess.engine.SimpleEngine,
                                                                                  Optional[EngineProcess]]:
    """The python-chess engine to search with, and the process this call started (None for one given open)."""
    if isinstance(engine, chess.engine.SimpleEngine):
        if options:
            engine.configure(dict(options))
        return engine, None
    argv = (list(DEFAULT_COMMAND) if engine is None else split_command(engine) if isinstance(engine, str)
            else list(engine))
    process = EngineProcess(EngineSpec(argv=argv, options=dict(options or {})))
    assert process.engine is not None
    return process.engine, process


def analyse_game(game: chess.pgn.Game, limit: chess.engine.Limit, engine: EngineArg = None, *,
                 options: Optional[Mapping[str, str]] = None,
                 on_move: Optional[Callable[[], None]] = None) -> chess.pgn.Game:
    """The game annotated by an engine: `[%eval]` on each move, ?!/?/?? with the better line, the
    players' figures in a comment. engine: None (Garfish), a command line (a string, shell-quoted, or
    an argv list) started and closed here, or an open python-chess SimpleEngine, left open. options:
    UCI options (name -> text value). The game given is not changed. Raises GameError for a game that
    cannot be analysed, EngineStartError when the engine does not start."""
    analysis = analyse_moves(game, limit, engine, options=options, on_move=on_move)
    return annotate(game, analysis)


def analyse_moves(game: chess.pgn.Game, limit: chess.engine.Limit, engine: EngineArg = None, *,
                  options: Optional[Mapping[str, str]] = None,
                  on_move: Optional[Callable[[], None]] = None) -> GameAnalysis:
    """The engine's findings for each move (analyse_game without writing them into the game)."""
    check_game(game)
    searcher, process = open_engine(engine, options)
    try:
        return search_game(searcher, game, limit, on_move=on_move)
    finally:
        if process is not None:
            process.close()


# --------------------------------------------------------------------------- one game in a tool's engine
@dataclass
class GameResult:
    """A game's outcome in a worker: its analysis, or why there is none."""

    number: int
    analysis: Optional[GameAnalysis] = None
    error: Optional[str] = None
    note: Optional[str] = None


@contextlib.contextmanager
def watchdog(process: EngineProcess, seconds: float) -> Iterator[None]:
    """Kill the engine when the block (one search) takes longer than `seconds`."""
    timer = threading.Timer(seconds, process.kill)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


ENGINE_FAILURES = (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError, RuntimeError)


def analyse_in(process: EngineProcess, text: GameText, config: EpdConfig,
               on_moves: Callable[[int], Any]) -> GameResult:
    """Analyse one game with a tool's engine, restarting it once after a crash or a search past the
    watchdog (then the game starts over); on_moves(n) counts moves done (negative when they are redone).
    Raises EngineStartError when the engine cannot be restarted."""
    result = GameResult(text.number)
    for attempt in range(2):
        done = 0

        def moved() -> None:
            """Count one move."""
            nonlocal done
            done += 1
            on_moves(1)

        try:
            game = parse_game(text.text)
            if process.engine is None or not process.alive():
                process.restart()
            assert process.engine is not None
            result.analysis = search_game(process.engine, game, make_limit(config.limit), text.number, moved,
                                          lambda: watchdog(process, config.watchdog))
            result.error = None
            return result
        except GameError as exc:
            result.error = str(exc)
            return result
        except ENGINE_FAILURES as exc:
            on_moves(-done)
            what = "watchdog" if process.broken else "crash"
            result.error = f"engine {what}: {type(exc).__name__}: {exc}".rstrip(": ")
            process.restart()
            if attempt == 0:
                result.note = f"engine restarted after a {what}"
    return result


# --------------------------------------------------------------------------- running the games
def worker(config: EpdConfig, tasks: Any, results: Any) -> None:
    """Worker process body: analyse games until the parent says stop (see garfish.arena.workers); the moves
    are counted to the parent as ("moves", n)."""
    run_as_worker(functools.partial(
        serve_tasks, config.spec, tasks, results,
        handle=lambda engine, text, report: analyse_in(engine, text, config, lambda n: report("moves", n))))


Event = tuple[str, Any]  # ("ready", name), ("moves", n), ("result", GameResult)


def run_serial(config: EpdConfig, texts: list[GameText],
               on_moves: Callable[[int], Any]) -> Generator[Event, None, None]:
    """Analyse the games one by one in this process, counting moves with on_moves as they are done
    (raises EngineStartError)."""
    engine = EngineProcess(config.spec)
    try:
        yield "ready", engine.name
        for text in texts:
            yield "result", analyse_in(engine, text, config, on_moves)
    finally:
        engine.close()


def analyse_on_worker(config: EpdConfig, text: GameText) -> GameResult:
    """Dask task: analyse one game with this worker's engine (see garfish.arena.cluster)."""
    from garfish.arena import cluster

    with cluster.pool().borrowed([config.spec], EngineProcess) as engines:
        return analyse_in(engines[0], text, config, lambda n: None)


def run_cluster(config: EpdConfig, texts: list[GameText], address: str,
                verbose: bool) -> Generator[Event, None, None]:
    """Analyse the games on a Dask cluster, one task per game, yielding events as results come (raises
    EngineStartError, also for the cluster itself)."""
    from garfish.arena import cluster

    shipped = replace(config, spec=cluster.for_workers(config.spec))
    with cluster.connect(address, verbose) as client:
        yield "ready", cluster.probe(client, [shipped.spec])[0][0]
        jobs = [(text.number, (shipped, text)) for text in texts]
        for result in cluster.stream(client, analyse_on_worker, jobs, "game"):
            yield "result", result


# --------------------------------------------------------------------------- the output and its journal
def journal_path(out: Path) -> Path:
    """The journal of the analysis written to this PGN file."""
    return out.with_name(out.name + JOURNAL_SUFFIX)


def file_digest(path: Path) -> str:
    """The first SHA_DIGITS hex digits of a file's SHA-256 (OSError when unreadable)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:SHA_DIGITS]


@dataclass
class GameRecord:
    """A finished game as the journal keeps it: enough for the summary table and the picture."""

    number: int
    white: str
    black: str
    result: str
    analysed: bool
    reason: Optional[str] = None  # why a game was copied unanalysed
    sides: dict[str, dict[str, Any]] = field(default_factory=dict)  # "white"/"black" -> PlayerSummary fields
    start: float = 0.5  # White's expected score before the first judged move
    points: list[list[Any]] = field(default_factory=list)  # PlotPoint fields

    def summary(self, color: chess.Color) -> PlayerSummary:
        """A side's figures."""
        return PlayerSummary(**self.sides["white" if color == chess.WHITE else "black"])


def parse_record(line: str) -> tuple[GameRecord, int, int]:
    """A journal line back to its record, the game's number and the PGN's size after it (ValueError when malformed)."""
    try:
        fields = json.loads(line)
        end = int(fields.pop("pgn_end"))
        record = GameRecord(**fields)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ValueError(f"malformed game line ({type(exc).__name__}: {exc})") from None
    return record, record.number, end


def load_journal(path: Path, settings: dict[str, Any]) -> Optional[tuple[list[GameRecord], int, int]]:
    """The games a journal records (the first games of the input, in order), the PGN's size after the last
    of them and the journal's own size up to there; None without a journal (ValueError as
    sidecar.load_records, or when the games are not the input's first)."""
    loaded = load_records(path, settings, JOURNAL_HEADER, JOURNAL_KIND, "an analysis made", parse_record)
    if loaded is not None and [record.number for record in loaded[0]] != list(range(1, len(loaded[0]) + 1)):
        raise ValueError(f"'{path}' does not record the input's first games in order")
    return loaded


class Output:
    """The annotated PGN and its journal, written game by game in the input's order."""

    def __init__(self, pgn: IO[str], journal: IO[str], pgn_size: int) -> None:
        """Files opened for appending; pgn_size: the PGN's size in bytes now."""
        self.pgn = pgn
        self.journal = journal
        self.pgn_size = pgn_size

    def write(self, text: str, record: GameRecord) -> None:
        """Append a game's text to the PGN, then its line to the journal."""
        text = text.strip() + "\n\n"
        self.pgn.write(text)
        self.pgn.flush()
        self.pgn_size += len(text.encode("utf-8"))
        line = asdict(record)
        line["pgn_end"] = self.pgn_size
        self.journal.write(json.dumps(line, sort_keys=True) + "\n")
        self.journal.flush()

    def close(self) -> None:
        """Close both files."""
        self.pgn.close()
        self.journal.close()


def open_output(out: Path, settings: dict[str, Any], resume: bool) -> tuple[Output, list[GameRecord]]:
    """The output files, and the games already done when resuming (ValueError when the journal does not
    fit; OSError when a file cannot be written). Without resume both files start empty."""
    journal = journal_path(out)
    try:
        loaded = load_journal(journal, settings) if resume else None
    except ValueError as exc:
        raise ValueError(f"cannot resume: {exc}") from None
    ends = None if loaded is None else loaded[1:]
    pgn, journal_file = open_record_files(out, journal, JOURNAL_HEADER, settings, ends)
    return Output(pgn, journal_file, 0 if ends is None else ends[0]), [] if loaded is None else loaded[0]


def game_title(headers: Mapping[str, str]) -> tuple[str, str, str]:
    """White, Black and the result as the headers give them."""
    return headers.get("White", "?"), headers.get("Black", "?"), headers.get("Result", "*")


def headers_of(text: GameText) -> Mapping[str, str]:
    """A game's headers, as far as python-chess reads them (empty when it cannot)."""
    found = chess.pgn.read_headers(io.StringIO(text.text))
    return found if found is not None else {}


def finish(text: GameText, result: GameResult) -> tuple[str, GameRecord]:
    """The text to write for a game and its journal record."""
    white, black, outcome = game_title(headers_of(text))
    if result.analysis is None:
        return text.text, GameRecord(text.number, white, black, outcome, False, result.error)
    game = parse_game(text.text)
    annotated = annotate(game, result.analysis)
    sides = summarize(result.analysis, mover_map(game))
    start, points = plot_points(game, result.analysis)
    exporter = chess.pgn.StringExporter(headers=True, variations=True, comments=True)
    record = GameRecord(text.number, white, black, outcome, True, None,
                        {"white": asdict(sides[chess.WHITE]), "black": asdict(sides[chess.BLACK])},
                        start, [[p.x, p.label, p.white, p.judgement] for p in points])
    return annotated.accept(exporter), record


def plot_record(directory: Path, record: GameRecord) -> Path:
    """Draw a game's picture from its record: DIR/game-NNNN.png."""
    path = directory / f"game-{record.number:04d}.png"
    accuracy = []
    for color, name in ((chess.WHITE, "White"), (chess.BLACK, "Black")):
        value = record.summary(color).accuracy
        accuracy.append(f"{name} {'-' if value is None else f'{value:.0f}'}")
    title = f"{record.white} - {record.black}  {record.result}   (accuracy: {', '.join(accuracy)})"
    plot_game(path, title, record.start, [PlotPoint(*point) for point in record.points])
    return path


# --------------------------------------------------------------------------- reporting
def game_line(record: GameRecord, done: int, total: int) -> str:
    """One line per finished game."""
    counter = f"[{done:>{len(str(total))}}/{total}]"
    head = f"{counter} game {record.number}: {record.white} - {record.black} {record.result}"
    if not record.analysed:
        return f"{head}: not analysed, copied as it was (see the reason above)"
    parts = []
    for color, name in ((chess.WHITE, "White"), (chess.BLACK, "Black")):
        side = record.summary(color)
        accuracy = "-" if side.accuracy is None else f"{side.accuracy:.0f}"
        parts.append(f"{name} accuracy {accuracy} ?! {side.inaccuracies} ? {side.mistakes} ?? {side.blunders}")
    return f"{head}: {' | '.join(parts)}"


@dataclass
class PlayerTotals:
    """One player's figures summed over the games analysed."""

    games: int = 0
    side: PlayerSummary = field(default_factory=PlayerSummary)
    accuracies: list[float] = field(default_factory=list)


def player_table(records: list[GameRecord]) -> list[str]:
    """The summary table: per player (by name) games, moves, average loss, ACPL, counts, mean accuracy."""
    players: dict[str, PlayerTotals] = {}
    for record in records:
        if not record.analysed:
            continue
        for color, name in ((chess.WHITE, record.white), (chess.BLACK, record.black)):
            side = record.summary(color)
            totals = players.setdefault(name, PlayerTotals())
            totals.games += 1
            for key in ("moves", "loss", "centipawn_loss", "inaccuracies", "mistakes", "blunders"):
                setattr(totals.side, key, getattr(totals.side, key) + getattr(side, key))
            if side.accuracy is not None:
                totals.accuracies.append(side.accuracy)
    width = max([len(name) for name in players] + [6])
    lines = [f"{'player':<{width}}  games  moves  avg loss   ACPL   ?!    ?   ??  accuracy"]
    for name, totals in sorted(players.items()):
        side = totals.side
        accuracy = f"{sum(totals.accuracies) / len(totals.accuracies):8.1f}" if totals.accuracies else "       -"
        lines.append(f"{name:<{width}}  {totals.games:5d}  {side.moves:5d}  {side.average_loss:7.2f}%  "
                     f"{side.acpl:5.0f}  {side.inaccuracies:3d}  {side.mistakes:3d}  {side.blunders:3d}  {accuracy}")
    return lines


# --------------------------------------------------------------------------- the command line
def build_parser() -> argparse.ArgumentParser:
    """Command-line arguments of `garfish analyse`."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("games", type=Path, metavar="GAMES.pgn",
                        help="the games to analyse, or a test suite (.epd/.fen): each position with its bm as a game")
    parser.add_argument("-o", "--output", type=Path, metavar="OUT.pgn",
                        help="the annotated games (default: GAMES.analysed.pgn beside the input)")
    add_search_arguments(parser, "search")
    parser.add_argument("--plot", type=Path, metavar="DIR", help="draw a PNG per game into DIR (needs matplotlib)")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted run (see above)")
    parser.add_argument("--limit", type=int, default=0, metavar="N", help="only the first N games")
    return parser


def validate(args: argparse.Namespace) -> Optional[str]:
    """An error message for out-of-range arguments (those `garfish epd` shares checked as it checks them), or None."""
    problem = validate_search(args)
    if problem is None and args.plot is not None:
        from garfish.arena.report import check_matplotlib

        problem = check_matplotlib()
    return problem


def output_path(args: argparse.Namespace) -> Path:
    """-o, or GAMES.analysed.pgn beside the input."""
    if args.output is not None:
        return Path(args.output)
    return args.games.with_name(args.games.stem + ".analysed.pgn")


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of `garfish analyse`."""
    args = build_parser().parse_args(argv)
    problem = validate(args)
    if problem:
        print(f"{PROG}: {problem}", file=sys.stderr)
        return EXIT_USAGE
    quiet_python_chess(args.verbose)
    logging.getLogger("chess.pgn").setLevel(logging.CRITICAL)  # bad games are reported here, game by game
    out = output_path(args)
    try:
        config = build_config(args)
        if out.resolve() == args.games.resolve():
            raise ValueError("the output must not be the input file")
        source = read_text(args.games)
        texts = (split_positions(source, args.games.name, args.limit) if is_positions(args.games, source)
                 else split_games(source, args.limit))
        if not texts:
            raise ValueError(f"no games in '{args.games}'")
        settings = {"format": JOURNAL_FORMAT, "input": file_digest(args.games), "engine": config.spec.argv,
                    "options": config.spec.options, "limit": config.limit}
        if args.plot is not None:
            args.plot.mkdir(parents=True, exist_ok=True)
        output, done = open_output(out, settings, args.resume)
    except ValueError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"{PROG}: '{exc.filename}': {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return run(args, config, texts, output, done, out)
    finally:
        output.close()


def run(args: argparse.Namespace, config: EpdConfig, texts: list[GameText], output: Output,
        done: list[GameRecord], out: Path) -> int:
    """Analyse the games not yet done, write them in order, print a line a game and the table; the exit status."""
    from tqdm import tqdm

    records = list(done)  # the games written, in order
    waiting: dict[int, GameResult] = {}  # games done, each waiting for those before it to be written
    todo: list[GameText] = []
    plies_of: dict[int, int] = {}
    for text in texts[len(done):]:
        if text.skip:
            waiting[text.number] = GameResult(text.number, error=text.skip)
            continue
        try:
            plies_of[text.number] = sum(1 for _ in parse_game(text.text).mainline_moves())
        except GameError as exc:
            waiting[text.number] = GameResult(text.number, error=str(exc))
            continue
        todo.append(text)
    plies = sum(plies_of.values())
    where = f"cluster {args.cluster}" if args.cluster is not None else f"{min(args.jobs, max(len(todo), 1))} job(s)"
    limit = limit_text(make_limit(config.limit))
    resumed = f", resumed after {len(done)}" if done else ""
    print(f"{PROG}: {len(texts)} games from {args.games} ({len(todo)} to analyse, {plies} moves{resumed}), "
          f"{limit} a search, {where}", flush=True)
    bar = tqdm(total=plies, unit="move", file=sys.stderr, dynamic_ncols=True,
               disable=True if args.no_progress else None)
    if args.plot is not None:
        for record in done:
            if record.analysed and not (args.plot / f"game-{record.number:04d}.png").exists():
                plot_record(args.plot, record)

    def flush() -> None:
        """Write the games that are next in order."""
        while len(records) < len(texts) and texts[len(records)].number in waiting:
            text = texts[len(records)]
            written, record = finish(text, waiting.pop(text.number))
            output.write(written, record)
            records.append(record)
            if not record.analysed:
                bar.write(f"{PROG}: {args.games}, game {text.number} (line {text.line}): {record.reason}; "
                          f"copied as it was, not analysed", file=sys.stderr)
            if record.analysed and args.plot is not None:
                plot_record(args.plot, record)
            bar.set_description(f"game {len(records)}/{len(texts)}", refresh=False)
            bar.write(game_line(record, len(records), len(texts)), file=sys.stdout)
            sys.stdout.flush()

    flush()
    status = EXIT_OK
    names: set[str] = set()  # the engines' names, shown once
    jobs = min(args.jobs, len(todo))
    if todo:
        if args.cluster is not None:
            source = run_cluster(config, todo, args.cluster, args.verbose)
        elif jobs <= 1:
            source = run_serial(config, todo, bar.update)
        else:
            source = run_pool(worker, config, todo, jobs)
        try:
            for kind, payload in source:
                if kind == "ready" and payload not in names:
                    names.add(payload)
                    bar.write(f"engine: {payload}", file=sys.stdout)
                elif kind == "moves":
                    bar.update(payload)
                elif kind == "result":
                    if args.cluster is not None:
                        bar.update(plies_of[payload.number])
                    if payload.note:
                        bar.write(f"{PROG}: game {payload.number}: {payload.note}", file=sys.stderr)
                    waiting[payload.number] = payload
                    flush()
        except EngineStartError as exc:
            bar.close()
            print(f"{PROG}: {exc}", file=sys.stderr)
            status = EXIT_ENGINE
        except KeyboardInterrupt:
            bar.close()
            print(f"{PROG}: interrupted; run the same command with --resume to go on", file=sys.stderr)
            status = EXIT_INTERRUPTED
        finally:
            source.close()
    bar.close()
    print("-" * 72)
    for line in player_table(records):
        print(line)
    not_analysed = [record.number for record in records if not record.analysed]
    if not_analysed:
        print(f"Not analysed ({len(not_analysed)}): games {', '.join(map(str, not_analysed))} (see above)")
    print(f"PGN: {out}" + (f"   Plots: {args.plot}" if args.plot is not None else ""), flush=True)
    return status
