"""`garfish datagen OUT`: training positions from a UCI engine's self-play, labelled by its own searches.

Each game starts from an opening drawn at random from an EPD/FEN book (default
../shared/data/books/noob_3moves.epd), followed by --random-plies uniformly random legal plies;
a game whose random plies end it is skipped. The engine then plays both sides with `go nodes N`
(`ucinewgame` before each game), and the position before every move is written with the score of
that search and the move played. A game ends by the rules in effect (arena.rules: checkmate,
stalemate, insufficient material, a third occurrence, 100 plies without a capture or pawn move;
never a draw the side to move merely could claim), when a position
at --max-plies is reached (a draw), or by adjudication once the score of a position beyond ply
--adjudicate-ply exceeds --adjudicate-score in absolute value (the side ahead wins; that position
is the game's last line). Plies count from the start of the game, as the FEN's move number does.

Format (as ../shared/data/train/README.md), one position a line: `FEN;SCORE;BEST;RESULT`, SCORE in
centipawns and RESULT (1, 0.5, 0) from White's side, mate scores as +-(32000 - moves to mate)
clipped to +-20000, BEST in UCI notation. OUT is plain text, or gzip when its name ends in .gz
(each game is its own gzip member; gzip readers see one stream), or a pack of the same lines
when it ends in .gfpk (garfish.arena.pack: the pack's header, then a block a game). Positions of a
game are consecutive: a line starts a new game exactly when its FEN is not the previous line's
position after the previous line's BEST.

Resuming: game N is drawn from a generator seeded with (seed, N), so a game is the same in every
run, and games are written in the order of their numbers (one finished before an older one waits
for it), so that OUT is the same bytes with any -j (an engine that plays the same moves at the same
node count, as Stockfish on one thread does). Each finished game is appended to OUT whole (one
write) and then recorded in the sidecar OUT.datagen (the settings on its first line, then `GAME
OUT-SIZE POSITIONS` a game). A rerun of the same command reads the sidecar, cuts OUT back to the
size its last game left (an unfinished write of an interrupted run), skips the games recorded and
plays new numbers until --games games are recorded in total; without --seed it takes the sidecar's.
A game finished before an older one waits for it in the ahead file OUT.datagen-ahead, which the
rerun takes its games from. An interrupted run (Ctrl-C, SIGTERM, kill -9) so loses only the games
in progress. Settings that change the games (seed, nodes, the opening book's content, random plies,
ply limit, adjudication) must match the sidecar's.

Cluster: with --cluster ADDRESS the games are played on the workers of a Dask cluster, a task a
game (garfish.arena.cluster: each worker keeps its engine from game to game), and written here as
with -j: the same bytes. The scheduler gives the game of a worker that dies to another worker; the
games in progress when the scheduler itself is lost are handed out again once the client reaches it
again (a scheduler restarted at the same address within cluster.CONNECT_TIMEOUT), else the run stops
and the same command continues it.

Engines: each of the -j worker processes (or cluster worker threads) drives its own engine. A game
in which the engine dies, stalls past --timeout or plays an illegal move is played again from its
start by the restarted engine (the same game: a crash, or a machine paused past the timeout, leaves
the file as it would have been), up to RETRIES times, and then dropped and reported; one in which a
search ends without a score is dropped at once (the engine goes on). After 10 dropped games in a row
(MAX_DROPS_IN_A_ROW) the run stops.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import gzip
import hashlib
import json
import multiprocessing
import os
import queue
import random
import shlex
import shutil
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any, Callable, Iterator, Optional, Protocol

import chess
import chess.engine

from garfish.arena.data import data_dir
from garfish.arena.driver import (DEFAULT_COMMAND, EngineSpec, EngineStartError, MoveError, parse_option_pairs,
                                  quiet_python_chess, split_command)
from garfish.arena.game import DEFAULT_STALL_TIMEOUT
from garfish.arena.openings import board_from_line, usable
from garfish.arena.pack import PACK_HEADER, PACK_SUFFIX, block, write_new
from garfish.arena.pipe import PipeEngine
from garfish.arena.rules import game_outcome
from garfish.arena.sidecar import choose_seed, header, parse_header, read_header
from garfish.arena.tools import EXIT_ENGINE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, check_cluster, on_stop_signals
from garfish.arena.workers import POLL_SECONDS, Report, StopSignal, run_as_worker, shut_down, start_engine

try:
    import fcntl
except ImportError:  # Windows: no lock against a second run on the same OUT
    fcntl = None  # type: ignore[assignment]

PROG = "garfish datagen"
DEFAULT_NODES = 5000
DEFAULT_RANDOM_PLIES = 4
DEFAULT_MAX_PLIES = 400
DEFAULT_ADJUDICATE_SCORE = 2500  # centipawns; 0 switches adjudication off
DEFAULT_ADJUDICATE_PLY = 20
DEFAULT_BOOK = Path("books") / "noob_3moves.epd"  # inside the shared data folder
MATE_SCORE = 32000  # a mate in n moves scores MATE_SCORE - n
SCORE_CLIP = 20000  # scores (and so all mates) are clipped to +-SCORE_CLIP
STOCKFISH = "stockfish"
STOCKFISH_FALLBACK = Path("/usr/games/stockfish")  # Debian's package installs it off the usual PATH
SIDECAR_SUFFIX = ".datagen"
SIDECAR_MAGIC = "# garfish datagen "
SIDECAR_KIND = "garfish datagen sidecar"
AHEAD_SUFFIX = ".datagen-ahead"  # games finished before an older one, kept until they are written
AHEAD_MAGIC = "# garfish datagen ahead "
AHEAD_KIND = "garfish datagen ahead file"
# Settings that decide the games: a rerun must keep them. A change of the others is only reported.
BINDING_SETTINGS = ("seed", "nodes", "random_plies", "max_plies", "adjudicate_score", "adjudicate_ply",
                    "openings_sha256")
OTHER_SETTINGS = ("engine", "options", "openings")
MAX_DROPS_IN_A_ROW = 10
RETRIES = 2  # a game whose engine failed is played again this many times before it is dropped
MAX_OPENING_DRAWS = 1000  # draws of unusable book lines before the book is given up
TASKS_PER_WORKER = 2  # games queued per worker, so that none waits for the parent
SLOTS_SECONDS = 5.0  # how often a run on a cluster counts its worker threads again
RESULT_TEXT = MappingProxyType({True: "1", False: "0", None: "0.5"})  # by the winner


# --------------------------------------------------------------------------- games
@dataclass(frozen=True)
class Rules:
    """How the games are played and when they end."""

    nodes: int
    max_plies: int
    adjudicate_score: int  # 0: no adjudication
    adjudicate_ply: int
    timeout: float  # seconds without a bestmove before the engine is killed and the game dropped


@dataclass(frozen=True)
class GameStart:
    """A game to play: its number, the opening from the book and the random plies after it (UCI)."""

    number: int
    fen: str
    moves: tuple[str, ...]


@dataclass(frozen=True)
class FinishedGame:
    """A played game: its lines (each ending in a newline), how many, its result and how it ended."""

    number: int
    text: str
    positions: int
    result: str
    ending: str


class NoScoreError(Exception):
    """The engine's search reported no score."""


class ParentGone(Exception):
    """The process that started this worker has died (kill -9): stop at once."""


def white_score(score: Optional[chess.engine.PovScore]) -> Optional[int]:
    """Centipawns from White's side; a mate in n moves as +-(MATE_SCORE - n); clipped to +-SCORE_CLIP."""
    if score is None:
        return None
    value = score.white().score(mate_score=MATE_SCORE)
    assert value is not None
    return max(-SCORE_CLIP, min(SCORE_CLIP, value))


def play_selfplay_game(engine: PipeEngine, start: GameStart, rules: Rules, alive: Callable[[], bool]) -> FinishedGame:
    """Play one game of the engine against itself and label its positions.

    Raises MoveError (the engine failed; it may need a restart), NoScoreError, or ParentGone when
    alive() turns false between moves.
    """
    board = chess.Board(start.fen)
    for uci in start.moves:
        board.push_uci(uci)
    key = object()
    engine.new_game(key)
    limit = chess.engine.Limit(nodes=rules.nodes)
    lines: list[str] = []
    while True:
        outcome = game_outcome(board)
        if outcome is not None:
            result, ending = RESULT_TEXT[outcome.winner], outcome.termination.name.lower()
            break
        if board.ply() >= rules.max_plies:
            result, ending = RESULT_TEXT[None], f"ply limit {rules.max_plies}"
            break
        if not alive():
            raise ParentGone
        played = engine.play(board, limit, key, rules.timeout)
        score = white_score(played.info.get("score"))
        if score is None:
            raise NoScoreError(f"the engine sent bestmove {played.move.uci()} without a score")
        lines.append(f"{board.fen()};{score};{played.move.uci()}")
        adjudicated = (rules.adjudicate_score > 0 and board.ply() > rules.adjudicate_ply
                       and abs(score) > rules.adjudicate_score)
        board.push(played.move)
        if adjudicated:
            result, ending = RESULT_TEXT[score > 0], f"adjudication at {score:+d}"
            break
    text = "".join(f"{line};{result}\n" for line in lines)
    return FinishedGame(start.number, text, len(lines), result, ending)


# --------------------------------------------------------------------------- openings
class Book:
    """The opening lines of an EPD/FEN file, drawn at random; unusable lines are reported once and redrawn."""

    def __init__(self, path: Path, warn: Callable[[str], None]) -> None:
        """Read the file (ValueError when it cannot be read or holds no lines)."""
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ValueError(f"cannot read openings '{path}': {exc.strerror or exc}") from None
        self.path = path
        self.sha256 = hashlib.sha256(raw).hexdigest()
        text = raw.decode("utf-8", errors="replace")
        self.lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), 1)
                      if line.strip() and not line.strip().startswith("#")]
        if not self.lines:
            raise ValueError(f"no openings in '{path}'")
        self.bad: set[int] = set()
        self.warn = warn

    def draw(self, rng: random.Random) -> chess.Board:
        """A usable opening position drawn with rng (ValueError after MAX_OPENING_DRAWS unusable draws)."""
        for _ in range(MAX_OPENING_DRAWS):
            number, text = self.lines[rng.randrange(len(self.lines))]
            try:
                board = board_from_line(text, False)
                problem = usable(board)
            except ValueError as exc:
                problem = str(exc)
            if problem is None:
                return board
            if number not in self.bad:
                self.bad.add(number)
                self.warn(f"{self.path}:{number}: skipped opening: {problem}")
        raise ValueError(f"no usable opening in {MAX_OPENING_DRAWS} draws from '{self.path}'")


def game_start(book: Book, seed: int, number: int, random_plies: int) -> Optional[GameStart]:
    """Game `number`'s opening and random plies, the same for the same (seed, number); None when the
    random plies end the game (it is skipped)."""
    rng = random.Random(f"{seed}:{number}")  # a str seed is hashed with SHA-512: the same in every process
    board = book.draw(rng)
    fen = board.fen()
    moves = []
    for _ in range(random_plies):
        move = rng.choice(sorted(board.legal_moves, key=chess.Move.uci))
        moves.append(move.uci())
        board.push(move)
        if game_outcome(board) is not None:
            return None
    return GameStart(number, fen, tuple(moves))


# --------------------------------------------------------------------------- the output and its sidecar
class OutputError(Exception):
    """OUT and its sidecar cannot be used (or continued) as asked."""


def sidecar_path(out: Path) -> Path:
    """Where OUT's record of finished games lives."""
    return out.with_name(out.name + SIDECAR_SUFFIX)


def ahead_path(out: Path) -> Path:
    """Where OUT's games finished ahead of an older one wait to be written."""
    return out.with_name(out.name + AHEAD_SUFFIX)


def read_settings(sidecar: Path) -> Optional[dict[str, Any]]:
    """The settings recorded in a sidecar, or None when it has no complete first line (OutputError if unreadable)."""
    return read_header(sidecar, SIDECAR_MAGIC, SIDECAR_KIND, OutputError)


class Output:
    """OUT and its sidecar, for one run: whole games appended, each recorded once it is written.

    Opening it locks the sidecar (one run per OUT), checks the settings against those recorded,
    and repairs what an interrupted run may have left: a torn last sidecar line, and bytes in OUT
    past the end of the last recorded game. A game finished before an older one (by another worker)
    waits for it in memory and in the ahead file OUT.datagen-ahead (its settings line, then a game a
    line as JSON), so that a run stopped meanwhile loses no finished game: the next run takes them
    from there (`ahead`) instead of playing them again; the file goes once all its games are in OUT.
    """

    def __init__(self, path: Path, settings: dict[str, Any], warn: Callable[[str], None]) -> None:
        """Open (creating) OUT and its sidecar (OutputError when they cannot be used)."""
        self.path = path
        self.settings = settings
        self.sidecar = sidecar_path(path)
        self.compress = path.name.endswith(".gz")
        self.packed = path.name.endswith(PACK_SUFFIX)
        self.done: set[int] = set()
        self.positions = 0
        self.size = 0
        self.ahead_file: Optional[IO[bytes]] = None
        try:
            self.journal = open(self.sidecar, "a+b")
        except OSError as exc:
            raise OutputError(f"cannot write '{self.sidecar}': {exc.strerror or exc}") from None
        try:
            self._lock()
            recorded = self._read_journal(settings, warn)
            self.data = self._open_data(recorded, warn)
        except BaseException:
            self.journal.close()
            raise
        self.ahead = self._read_ahead(warn)  # by number: games finished by an earlier run and not yet in OUT
        self.ahead_numbers = set(self.ahead)  # the games in the ahead file

    def _lock(self) -> None:
        """Take the sidecar's lock, or fail when another run holds it."""
        if fcntl is None:
            return
        try:
            fcntl.flock(self.journal.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise OutputError(f"another garfish datagen is writing '{self.path}' "
                              f"(it holds the lock on '{self.sidecar}')") from None

    def _read_journal(self, settings: dict[str, Any], warn: Callable[[str], None]) -> bool:
        """Read the settings and games recorded (writing the settings line when new); whether any were recorded."""
        self.journal.seek(0)
        content = self.journal.read()
        first, newline, rest = content.partition(b"\n")
        if not newline:  # a new sidecar, or one whose settings line was never finished
            self.journal.truncate(0)
            self._append_journal(header(SIDECAR_MAGIC, settings))
            return False
        recorded = parse_header(first, self.sidecar, SIDECAR_MAGIC, SIDECAR_KIND, OutputError)

        def changes(keys: tuple[str, ...]) -> str:
            """The settings among keys that differ from those recorded."""
            return "; ".join(f"{key} {recorded.get(key)!r} -> {settings.get(key)!r}" for key in keys
                             if recorded.get(key) != settings.get(key))

        if changes(BINDING_SETTINGS):
            raise OutputError(f"'{self.path}' was begun with other settings ({changes(BINDING_SETTINGS)}): "
                              f"continue it with the same ones, or write to another file")
        if changes(OTHER_SETTINGS):
            warn(f"'{self.path}' was begun with other settings: {changes(OTHER_SETTINGS)}")
        good = len(first) + 1
        for line in rest.split(b"\n")[:-1]:  # the part after the last newline is a torn line, if any
            fields = line.split()
            if len(fields) != 3 or not all(field.isdigit() for field in fields):
                break
            number, size, positions = (int(field) for field in fields)
            self.done.add(number)
            self.size, self.positions = size, self.positions + positions
            good += len(line) + 1
        if good < len(content):
            warn(f"'{self.sidecar}': cut {len(content) - good} bytes after its last whole record")
            self.journal.truncate(good)
        return True

    def _open_data(self, recorded: bool, warn: Callable[[str], None]) -> Any:
        """Open OUT for appending, cut back to the end of the last recorded game."""
        try:
            handle = open(self.path, "ab", buffering=0)
        except OSError as exc:
            raise OutputError(f"cannot write '{self.path}': {exc.strerror or exc}") from None
        actual = os.fstat(handle.fileno()).st_size
        if not recorded and actual > 0:
            handle.close()
            raise OutputError(f"'{self.path}' is not empty and has no sidecar '{self.sidecar.name}': "
                              f"it was not written by garfish datagen (or its sidecar is lost); "
                              f"choose another file")
        if actual < self.size:
            handle.close()
            raise OutputError(f"'{self.path}' holds {actual} bytes but its sidecar records {self.size}: "
                              f"it was cut or replaced; choose another file")
        if actual > self.size:
            warn(f"'{self.path}': cut {actual - self.size} bytes of an unfinished write after its last "
                 f"recorded game")
            os.ftruncate(handle.fileno(), self.size)
        return handle

    def _read_ahead(self, warn: Callable[[str], None]) -> dict[int, FinishedGame]:
        """The games of the ahead file not yet in OUT; the file is rewritten with them alone, or removed. One
        of other settings (a run of another OUT of the same name) is dropped, as is a torn last line."""
        path = ahead_path(self.path)
        try:
            lines = path.read_bytes().split(b"\n")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise OutputError(f"cannot read '{path}': {exc.strerror or exc}") from None
        games: dict[int, FinishedGame] = {}
        try:
            recorded = parse_header(lines[0], path, AHEAD_MAGIC, AHEAD_KIND, OutputError) if len(lines) > 1 else {}
        except OutputError as exc:
            warn(f"{exc}: its games are not used")
            recorded = {}
        if all(recorded.get(key) == self.settings.get(key) for key in BINDING_SETTINGS):
            for line in lines[1:-1]:  # the part after the last newline is a torn line, if any
                try:
                    game = FinishedGame(**json.loads(line))
                except (TypeError, ValueError):
                    warn(f"'{path}': an unreadable line: the games after it are played again")
                    break
                if game.number not in self.done and game.text.count("\n") == game.positions:
                    games[game.number] = game
        elif recorded:
            warn(f"'{path}' is of other settings: its games are not used")
        try:
            if games:
                write_new(path, header(AHEAD_MAGIC, self.settings).encode("utf-8")
                          + b"".join(json.dumps(asdict(game)).encode("utf-8") + b"\n" for game in games.values()))
            else:
                path.unlink()
        except OSError as exc:
            raise OutputError(f"cannot write '{path}': {exc.strerror or exc}") from None
        return games

    def keep_ahead(self, game: FinishedGame) -> None:
        """Keep a game that finished before an older one in the ahead file, on disk, until it is written to OUT."""
        if self.ahead_file is None:
            self.ahead_file = open(ahead_path(self.path), "ab")
            if self.ahead_file.tell() == 0:
                self.ahead_file.write(header(AHEAD_MAGIC, self.settings).encode("utf-8"))
        self.ahead_file.write(json.dumps(asdict(game)).encode("utf-8") + b"\n")
        self.ahead_file.flush()
        os.fsync(self.ahead_file.fileno())
        self.ahead_numbers.add(game.number)

    def _append_journal(self, text: str) -> None:
        """Append to the sidecar and put it on disk."""
        self.journal.write(text.encode("utf-8"))
        self.journal.flush()
        os.fsync(self.journal.fileno())

    def append(self, game: FinishedGame) -> None:
        """Write a finished game to OUT in one piece, put it on disk, then record it in the sidecar."""
        if self.packed:  # the header goes with the first game: a rerun's cut keeps or drops both
            data = (PACK_HEADER if self.size == 0 else b"") + block(game.text, f"game {game.number}")
        else:
            data = game.text.encode("utf-8")
            if self.compress:
                data = gzip.compress(data, mtime=0)
        view = memoryview(data)
        while view:
            written = self.data.write(view)
            view = view[written:]
        os.fsync(self.data.fileno())
        self.size += len(data)
        self._append_journal(f"{game.number} {self.size} {game.positions}\n")
        self.done.add(game.number)
        self.positions += game.positions

    def close(self) -> None:
        """Close the files (and so release the lock); remove the ahead file once all its games are in OUT."""
        self.data.close()
        if self.ahead_file is not None:
            self.ahead_file.close()
        if self.ahead_numbers and self.ahead_numbers <= self.done:
            ahead_path(self.path).unlink(missing_ok=True)
        self.journal.close()


# --------------------------------------------------------------------------- the worker processes
@dataclass(frozen=True)
class WorkerConfig:
    """What a worker process needs: the engine, the rules, and its parent's process id."""

    spec: EngineSpec
    rules: Rules
    parent: int
    verbose: bool = False


def worker(config: WorkerConfig, tasks: Any, results: Any) -> None:
    """Worker process body: play the games sent until the parent says stop (see garfish.arena.workers)."""
    run_as_worker(functools.partial(serve, config, tasks, results))


def serve(config: WorkerConfig, tasks: Any, results: Any, stop: StopSignal) -> None:
    """Own one engine and play the games from `tasks` until a None arrives; report each on `results`."""
    quiet_python_chess(config.verbose)

    def alive() -> bool:
        """Whether the parent still runs (a worker whose parent was killed is reparented)."""
        return os.getppid() == config.parent

    engine = start_engine(config.spec, results, stop, PipeEngine)
    if engine is None:
        return

    def restart() -> None:
        """Restart the engine, a stop held back meanwhile."""
        with stop.held():
            engine.restart()

    try:
        while (start := next_task(tasks, alive)) is not None:
            play_with_retries(engine, start, config.rules, alive, restart,
                              lambda kind, payload: results.put((kind, payload)))
    except EngineStartError as exc:
        results.put(("fatal", f"the engine could not be restarted: {exc}"))
    except ParentGone:
        results.cancel_join_thread()  # nobody reads the results any more: exit without flushing them
    finally:
        engine.close()


def play_with_retries(engine: PipeEngine, start: GameStart, rules: Rules, alive: Callable[[], bool],
                      restart: Callable[[], None], report: Report) -> None:
    """Play a game, again from its start after an engine failure (up to RETRIES times), and report it:
    ("retried", (number, why)) before each replay, then ("game", FinishedGame) or ("dropped", (number, why)).
    Raises EngineStartError when restart() cannot start the engine again, ParentGone as play_selfplay_game."""
    for attempt in range(RETRIES + 1):
        try:
            game = play_selfplay_game(engine, start, rules, alive)
        except MoveError as exc:
            restart()
            reason = f"{exc.kind}: {exc.detail}; engine restarted"
            if attempt < RETRIES:  # the same game again (game N is drawn from (seed, N))
                report("retried", (start.number, reason))
                continue
            report("dropped", (start.number, reason))
        except NoScoreError as exc:  # the engine works: no restart, and the game would end so again
            report("dropped", (start.number, str(exc)))
        else:
            report("game", game)
        return


def next_task(tasks: Any, alive: Callable[[], bool]) -> Optional[GameStart]:
    """The next game to play, or None at the end (raises ParentGone when the parent has died)."""
    while True:
        try:
            return tasks.get(timeout=POLL_SECONDS)
        except queue.Empty:
            if not alive():
                raise ParentGone from None


# --------------------------------------------------------------------------- the run
@dataclass
class RunConfig:
    """One run: engine, rules, openings, how many games in total and how."""

    spec: EngineSpec
    rules: Rules
    book: Book
    seed: int
    random_plies: int
    games: int
    jobs: int
    progress: bool
    verbose: bool = False  # the workers log the engines' traffic (-v)
    cluster: Optional[str] = None  # play on this Dask cluster (a scheduler address or local[:N]) instead of -j


@dataclass
class RunState:
    """What happened in this run."""

    games: int = 0
    positions: int = 0
    dropped: int = 0
    retried: int = 0
    skipped: int = 0
    drops_in_a_row: int = 0
    error: Optional[str] = None
    interrupted: bool = False


def game_starts(config: RunConfig, done: set[int], state: RunState) -> Iterator[GameStart]:
    """The games to play, by number: those not done and not ended by their random plies (counted as skipped)."""
    number = 0
    while True:
        number += 1
        if number in done:
            continue
        start = game_start(config.book, config.seed, number, config.random_plies)
        if start is None:
            state.skipped += 1
            continue
        yield start


@contextlib.contextmanager
def stop_requests(flag: list[bool]) -> Iterator[None]:
    """While inside, Ctrl-C and SIGTERM set flag[0] instead of interrupting (so no write is cut in two)."""
    def request(signum: int, frame: Any) -> None:
        """Signal handler: ask the run to stop."""
        flag[0] = True

    with on_stop_signals(request):
        yield


class Players(Protocol):
    """Where a run's games are played: worker processes (-j N, ProcessPlayers) or the workers of a Dask cluster
    (--cluster, ClusterPlayers). For each game handed out they report the events of play_with_retries."""

    def start(self) -> None:
        """Start the workers, or reach the cluster (raises EngineStartError)."""

    def slots(self) -> int:
        """How many games are played at once."""

    def submit(self, start: GameStart) -> None:
        """Hand a game out."""

    def next_event(self, seconds: float) -> Optional[tuple[str, Any]]:
        """The next event, ("ready", the engine's name), ("note", a line to show), a game's (play_with_retries)
        or ("fatal", why), or None when none came within `seconds` (raises EngineStartError)."""

    def gone(self) -> Optional[str]:
        """Why no event can come any more (every worker process has exited), or None."""

    def close(self, completed: bool) -> None:
        """Stop the workers (waiting for them after a complete run), or cancel the cluster's unfinished games."""


class ProcessPlayers:
    """-j N: N worker processes, an engine each (worker())."""

    def __init__(self, config: RunConfig) -> None:
        """The processes, not yet started."""
        context = multiprocessing.get_context("spawn")
        self.tasks, self.results = context.Queue(), context.Queue()
        worker_config = WorkerConfig(config.spec, config.rules, os.getpid(), config.verbose)
        self.processes = [context.Process(target=worker, args=(worker_config, self.tasks, self.results), daemon=True)
                          for _ in range(config.jobs)]

    def start(self) -> None:
        """Start the processes."""
        for process in self.processes:
            process.start()

    def slots(self) -> int:
        """One game a process."""
        return len(self.processes)

    def submit(self, start: GameStart) -> None:
        """Queue a game for the first free process."""
        self.tasks.put(start)

    def next_event(self, seconds: float) -> Optional[tuple[str, Any]]:
        """The next event a process put on the results queue."""
        try:
            return self.results.get(timeout=seconds)
        except queue.Empty:
            return None

    def gone(self) -> Optional[str]:
        """Whether every process has exited."""
        return None if any(process.is_alive() for process in self.processes) else "all worker processes exited early"

    def close(self, completed: bool) -> None:
        """Tell the processes to end after a complete run, else stop them (see workers.shut_down)."""
        if completed:
            for _ in self.processes:
                self.tasks.put(None)
        shut_down(self.processes, self.tasks, self.results, graceful=completed)


def engine_name(spec: EngineSpec) -> str:
    """Dask task: start the engine on a worker (garfish.arena.cluster's pool) and tell its name."""
    from garfish.arena import cluster

    with cluster.pool().borrowed([spec], PipeEngine) as (engine,):
        return engine.name


def play_on_worker(spec: EngineSpec, rules: Rules, start: GameStart) -> list[tuple[str, Any]]:
    """Dask task: play one game with the worker's engine; the events a worker process would report for it."""
    from garfish.arena import cluster

    events: list[tuple[str, Any]] = []
    with cluster.pool().borrowed([spec], PipeEngine) as (engine,):
        play_with_retries(engine, start, rules, lambda: True, engine.restart,
                          lambda kind, payload: events.append((kind, payload)))
    return events


class ClusterPlayers:
    """--cluster ADDRESS: a Dask task a game (play_on_worker), lower numbers first; the scheduler gives the game of
    a worker that died to another, and the games lost with the scheduler itself are handed out again once it is
    back (cluster.rejoin). Games are the same wherever they are played: game N is drawn from (seed, N)."""

    def __init__(self, config: RunConfig, address: str) -> None:
        """Players on the cluster at `address`, not yet reached."""
        from garfish.arena import cluster

        self.address, self.verbose, self.rules = address, config.verbose, config.rules
        self.spec = cluster.for_workers(config.spec)
        self.stack = contextlib.ExitStack()
        self.client: Any = None
        self.finished: queue.Queue[Any] = queue.Queue()  # futures as they finish, fail or are cancelled
        self.playing: dict[Any, GameStart] = {}  # the futures handed out, and their games
        self.events: collections.deque[tuple[str, Any]] = collections.deque()
        self.run = uuid.uuid4().hex[:8]
        self.submitted = 0
        self.threads, self.counted = 1, float("-inf")

    def start(self) -> None:
        """Reach the cluster and start the engine on a worker (ClusterError, WorkerEngineError)."""
        from garfish.arena import cluster

        self.client = self.stack.enter_context(cluster.connect(self.address, self.verbose))
        self.events.append(("ready", self.client.submit(engine_name, self.spec, pure=False).result()))
        self.events.append(("note", f"cluster {self.address}: {self.slots()} worker threads"))

    def slots(self) -> int:
        """The cluster's worker threads (asked again every SLOTS_SECONDS: workers come and go)."""
        from garfish.arena import cluster

        if time.monotonic() - self.counted >= SLOTS_SECONDS:
            self.threads, self.counted = max(1, cluster.worker_threads(self.client)), time.monotonic()
        return self.threads

    def submit(self, start: GameStart) -> None:
        """Submit a game's task (a new key each time, so that a game handed out again is a task of its own)."""
        self.submitted += 1
        future = self.client.submit(play_on_worker, self.spec, self.rules, start, priority=-start.number,
                                    key=f"garfish-datagen-{self.run}-{start.number}-{self.submitted}")
        self.playing[future] = start
        future.add_done_callback(self.finished.put)

    def next_event(self, seconds: float) -> Optional[tuple[str, Any]]:
        """The next event of the games that came back. A game cancelled by the loss of the scheduler is handed out
        again once it is back, all such games at once (with `seconds` 0, after a stop, they are left)."""
        from garfish.arena import cluster

        while not self.events:
            try:
                future = self.finished.get(timeout=seconds)
            except queue.Empty:
                return None
            start = self.playing.pop(future, None)
            if start is None:  # handed out again already
                continue
            if future.cancelled():
                if seconds > 0:
                    lost = [start] + [self.playing.pop(other) for other in list(self.playing) if other.cancelled()]
                    cluster.rejoin(self.client, self.address)
                    note = f"{PROG}: lost the Dask scheduler at {self.address}; back: {len(lost)} game(s) again"
                    self.events.append(("note", note))
                    for game in sorted(lost, key=lambda game: game.number):
                        self.submit(game)
                continue
            if future.status == "error":
                return "fatal", f"game {start.number}: {cluster.task_error(future)}"
            self.events.extend(future.result())
            future.release()  # a result the cluster keeps would be computed again if its worker died later
        return self.events.popleft()

    def gone(self) -> Optional[str]:
        """Never: a cluster without workers waits for one."""
        return None

    def close(self, completed: bool) -> None:
        """Cancel the games not yet finished (those being played are finished by their workers and dropped)."""
        unfinished = [future for future in self.playing if not future.done()]
        if unfinished and self.client is not None and self.client.status == "running":
            self.client.cancel(unfinished)
        self.stack.close()


class Run:
    """The parent's side of a run: hands game starts to the players, writes the finished games, counts the rest."""

    def __init__(self, config: RunConfig, output: Output, out: Callable[[str], None]) -> None:
        """A run that has not started."""
        from tqdm import tqdm

        self.config, self.output, self.out = config, output, out
        self.state = RunState()
        self.starts = game_starts(config, output.done, self.state)
        self.queued = 0  # games handed out and not yet finished or dropped
        # Games are written in the order of their numbers, whatever order the workers finish them
        # in, so that -j or a cluster changes no byte of OUT: the numbers handed out (or taken from the
        # ahead file), oldest first, and the games that finished (None: dropped) before an older one.
        self.sent: collections.deque[int] = collections.deque()
        self.finished: dict[int, Optional[FinishedGame]] = {}
        self.announced = False
        self.bar = tqdm(total=config.games, initial=len(output.done), unit="game", file=sys.stderr,
                        dynamic_ncols=True, disable=None if config.progress else True)
        self.bar.set_postfix_str(f"{output.positions:,} positions")

    def feed(self, players: Players) -> None:
        """Hand out games until TASKS_PER_WORKER a slot are being played, but never more than are still needed; a
        game that an earlier run finished ahead is taken from the ahead file instead."""
        slots = TASKS_PER_WORKER * players.slots()
        while self.state.error is None:
            waiting = sum(game is not None for game in self.finished.values())
            if self.queued >= min(slots, self.config.games - len(self.output.done) - waiting):
                break
            try:
                start = next(self.starts)
            except ValueError as exc:  # no usable opening in the book
                self.state.error = str(exc)
                return
            self.sent.append(start.number)
            kept = self.output.ahead.pop(start.number, None)
            if kept is not None:
                self.finished[start.number] = kept
                continue
            players.submit(start)
            self.queued += 1
        self.write_in_order()

    def write_in_order(self) -> None:
        """Write the finished games whose older games are all written or dropped."""
        while self.sent and self.sent[0] in self.finished and self.state.error is None:
            game = self.finished.pop(self.sent.popleft())
            if game is not None:
                self.write(game)

    def write(self, game: FinishedGame) -> None:
        """Append a finished game to OUT and report it."""
        state, output = self.state, self.output
        try:
            output.append(game)
        except OSError as exc:
            state.error = f"cannot write '{output.path}': {exc.strerror or exc}"
            return
        state.games, state.positions = state.games + 1, state.positions + game.positions
        self.bar.update(1)
        self.bar.set_postfix_str(f"{output.positions:,} positions")
        if self.bar.disable:
            self.out(f"game {game.number}: {game.positions} positions, result {game.result} "
                     f"({game.ending}); {len(output.done)}/{self.config.games} games, "
                     f"{output.positions:,} positions")

    def awaited(self, number: int) -> bool:
        """Whether game `number` was handed out and has not come back (a game reported twice counts once)."""
        return number in self.sent and number not in self.finished

    def handle(self, kind: str, payload: Any) -> None:
        """One event of the players: the engine's name, a note, a finished, dropped or replayed game, a fatal error."""
        state = self.state
        if kind == "ready" and not self.announced:
            self.announced = True
            self.bar.write(f"engine: {payload}", file=sys.stdout)
        elif kind == "note":
            self.bar.write(payload, file=sys.stdout)
        elif kind == "game" and self.awaited(payload.number):
            self.queued -= 1
            state.drops_in_a_row = 0
            self.finished[payload.number] = payload
            self.write_in_order()
            if payload.number in self.finished:  # an older game is still being played: keep this one on disk
                try:
                    self.output.keep_ahead(payload)
                except OSError as exc:
                    state.error = f"cannot write '{ahead_path(self.output.path)}': {exc.strerror or exc}"
        elif kind == "dropped" and self.awaited(payload[0]):
            number, reason = payload
            self.queued -= 1
            self.finished[number] = None
            self.write_in_order()
            state.dropped += 1
            state.drops_in_a_row += 1
            self.bar.write(f"game {number} dropped: {reason}", file=sys.stdout)
            if state.drops_in_a_row >= MAX_DROPS_IN_A_ROW:
                state.error = f"{state.drops_in_a_row} games dropped in a row: stopping (last: {reason})"
        elif kind == "retried":
            number, reason = payload
            state.retried += 1
            self.bar.write(f"game {number} played again: {reason}", file=sys.stdout)
        elif kind == "fatal":
            state.error = payload
        sys.stdout.flush()

    def play(self, players: Players) -> RunState:
        """Play games on `players` until OUT holds config.games games (or an error or a stop)."""
        config, output, state = self.config, self.output, self.state
        stop = [False]
        completed = False
        with stop_requests(stop):
            try:
                players.start()
                self.feed(players)
                while len(output.done) < config.games and state.error is None and not stop[0]:
                    event = players.next_event(POLL_SECONDS)
                    if event is None:
                        # A SIGTERM to the whole process group (timeout, a service manager) ends the
                        # workers too: a stop, not an error, once this process has had its own.
                        if not stop[0]:
                            state.error = players.gone()
                        continue
                    self.handle(*event)
                    self.feed(players)
                state.interrupted = stop[0]
                while state.error is None and (event := players.next_event(0)) is not None:
                    self.handle(*event)  # games that finished meanwhile are kept
                completed = len(output.done) >= config.games and state.error is None
            except EngineStartError as exc:  # the cluster cannot be reached, or its engine not started
                state.error = str(exc)
            finally:
                players.close(completed)
                self.bar.close()
        return state


# --------------------------------------------------------------------------- command line
def default_engine(fallback: Path = STOCKFISH_FALLBACK) -> tuple[list[str], str]:
    """The engine when --engine is not given: Stockfish from PATH or `fallback`, else Garfish; and why."""
    found = shutil.which(STOCKFISH)
    if found:
        return [found], "the default: Stockfish found on PATH"
    if fallback.is_file() and os.access(fallback, os.X_OK):
        return [str(fallback)], f"the default: Stockfish found at {fallback}"
    return list(DEFAULT_COMMAND), f"the default: Garfish, as no Stockfish is on PATH or at {fallback}"


def missing_program(argv: list[str]) -> Optional[str]:
    """Why the engine command's program cannot be run (not found, not executable), or None."""
    program = argv[0]
    if os.sep in program or (os.altsep and os.altsep in program):
        if not os.path.isfile(program):
            return f"no such file '{program}'"
        if not os.access(program, os.X_OK):
            return f"'{program}' is not executable"
        return None
    if shutil.which(program) is None:
        return f"'{program}' is not on PATH"
    return None


def build_parser() -> argparse.ArgumentParser:
    """Command-line arguments of `garfish datagen`."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, metavar="OUT",
                        help=f"output file (gzip when it ends in .gz, a pack when it ends in {PACK_SUFFIX}); "
                             f"appended to")
    parser.add_argument("--games", type=int, required=True, metavar="N", help="games OUT should hold in total")
    parser.add_argument("--engine", metavar="CMD",
                        help=f"engine command line, shell-quoted (default: {STOCKFISH} from PATH or "
                             f"{STOCKFISH_FALLBACK}, else Garfish)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="UCI option for the engine, e.g. Hash=16 (repeatable)")
    parser.add_argument("--nodes", type=int, default=DEFAULT_NODES, metavar="N",
                        help=f"nodes a move, go nodes N (default {DEFAULT_NODES})")
    parser.add_argument("--seed", type=int, metavar="S",
                        help="seed of the openings and random plies (default: the sidecar's, else random)")
    parser.add_argument("--openings", type=Path, metavar="EPD",
                        help=f"EPD/FEN opening book (default: {DEFAULT_BOOK} in the shared data folder)")
    parser.add_argument("--random-plies", type=int, default=DEFAULT_RANDOM_PLIES, metavar="N",
                        help=f"random legal plies after the opening (default {DEFAULT_RANDOM_PLIES})")
    parser.add_argument("--max-plies", type=int, default=DEFAULT_MAX_PLIES, metavar="N",
                        help=f"a game reaching ply N is a draw (default {DEFAULT_MAX_PLIES})")
    parser.add_argument("--adjudicate-score", type=int, default=DEFAULT_ADJUDICATE_SCORE, metavar="CP",
                        help=f"the side ahead wins once |score| > CP ... "
                             f"(default {DEFAULT_ADJUDICATE_SCORE}; 0: never)")
    parser.add_argument("--adjudicate-ply", type=int, default=DEFAULT_ADJUDICATE_PLY, metavar="N",
                        help=f"... in a position after ply N (default {DEFAULT_ADJUDICATE_PLY})")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("-j", "--jobs", type=int, metavar="N",
                       help="worker processes, one engine each (default 1; OUT is the same bytes with any N)")
    where.add_argument("--cluster", metavar="ADDRESS",
                       help="play on a Dask cluster, a game a task: a scheduler address (tcp://HOST:8786) or "
                            "local[:N]; OUT is the same bytes (see garfish.arena.cluster for what each worker needs)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_STALL_TIMEOUT, metavar="S",
                        help=f"seconds without a bestmove before the engine is killed and the game dropped "
                             f"(default {DEFAULT_STALL_TIMEOUT:g})")
    parser.add_argument("--no-progress", action="store_true",
                        help="a line a game instead of the progress bar (it is off when stderr is no TTY)")
    parser.add_argument("--show-stderr", action="store_true", help="let the engine's stderr through")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="log every line sent to and read from the engines (to stderr)")
    return parser


def validate(args: argparse.Namespace) -> Optional[str]:
    """An error message for out-of-range arguments, or None."""
    checks = ((args.games >= 1, "--games must be at least 1"), (args.nodes >= 1, "--nodes must be at least 1"),
              (args.jobs is None or args.jobs >= 1, "-j must be at least 1"),
              (args.random_plies >= 0, "--random-plies must not be negative"),
              (args.max_plies >= 1, "--max-plies must be at least 1"),
              (args.adjudicate_score >= 0, "--adjudicate-score must not be negative"),
              (args.adjudicate_ply >= 0, "--adjudicate-ply must not be negative"),
              (args.timeout > 0, "--timeout must be positive"))
    return next((message for ok, message in checks if not ok), None)


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of `garfish datagen`."""
    args = build_parser().parse_args(argv)

    def warn(message: str) -> None:
        """Print a problem to stderr."""
        print(f"{PROG}: {message}", file=sys.stderr, flush=True)

    problem = validate(args)
    if problem:
        warn(problem)
        return EXIT_USAGE
    quiet_python_chess(args.verbose)
    try:
        if args.cluster is not None:
            check_cluster(args.cluster)
        if args.engine is not None:
            argv_, why = split_command(args.engine), "--engine"
        else:
            argv_, why = default_engine()
        missing = missing_program(argv_) if args.cluster is None else None  # the workers' engine: they check
        if missing:
            raise ValueError(f"engine command not found: {missing}")
        spec = EngineSpec(argv=argv_, options=parse_option_pairs(args.option), show_stderr=args.show_stderr)
        openings = args.openings
        if openings is None:
            folder = data_dir()
            if folder is None:
                raise ValueError("no shared data folder found for the default openings: set GARFISH_DATA "
                                 "or give --openings")
            openings = folder / DEFAULT_BOOK
        book = Book(openings, warn)
        seed = choose_seed(args.seed, read_settings(sidecar_path(args.out)))
        settings = {"seed": seed, "nodes": args.nodes, "random_plies": args.random_plies,
                    "max_plies": args.max_plies, "adjudicate_score": args.adjudicate_score,
                    "adjudicate_ply": args.adjudicate_ply, "openings": openings.name,
                    "openings_sha256": book.sha256[:16], "engine": shlex.join(argv_), "options": spec.options}
        output = Output(args.out, settings, warn)
    except (ValueError, OutputError) as exc:
        warn(str(exc))
        return EXIT_USAGE
    rules = Rules(nodes=args.nodes, max_plies=args.max_plies, adjudicate_score=args.adjudicate_score,
                  adjudicate_ply=args.adjudicate_ply, timeout=args.timeout)
    config = RunConfig(spec=spec, rules=rules, book=book, seed=seed, random_plies=args.random_plies,
                       games=args.games, jobs=min(args.jobs or 1, max(1, args.games - len(output.done))),
                       progress=not args.no_progress, verbose=args.verbose, cluster=args.cluster)
    try:
        return report(config, output, why, args.out)
    finally:
        output.close()


def report(config: RunConfig, output: Output, why: str, path: Path) -> int:
    """Print the plan, run, print the summary; the exit status."""
    def out(line: str) -> None:
        """Print a line and flush."""
        print(line, flush=True)

    adjudication = (f"adjudication at |score| > {config.rules.adjudicate_score} after ply "
                    f"{config.rules.adjudicate_ply}" if config.rules.adjudicate_score else "no adjudication")
    where = f"cluster {config.cluster}" if config.cluster is not None else f"{config.jobs} job(s)"
    out(f"{PROG}: engine {shlex.join(config.spec.argv)} ({why}), {config.rules.nodes} nodes a move, seed "
        f"{config.seed}, openings {config.book.path} + {config.random_plies} random plies, {adjudication}, "
        f"at most {config.rules.max_plies} plies, {where}")
    out(f"{PROG}: {path} holds {len(output.done)} of {config.games} games ({output.positions:,} positions)")
    if len(output.done) >= config.games:
        return EXIT_OK
    started = time.perf_counter()
    players: Players = ClusterPlayers(config, config.cluster) if config.cluster is not None else ProcessPlayers(config)
    state = Run(config, output, out).play(players)
    minutes = (time.perf_counter() - started) / 60
    rate = state.positions / minutes if minutes > 0 else 0.0
    out(f"{PROG}: this run {state.games} games, {state.positions:,} positions in {minutes * 60:.1f} s "
        f"({rate:,.0f} positions/minute); {state.retried} played again, {state.dropped} dropped, {state.skipped} "
        f"skipped (ended by their random plies)")
    out(f"{PROG}: {path} holds {len(output.done)} of {config.games} games ({output.positions:,} positions)")
    if state.error is not None:
        print(f"{PROG}: {state.error}", file=sys.stderr, flush=True)
        return EXIT_ENGINE
    if state.interrupted:
        print(f"{PROG}: interrupted; run the same command again to continue", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    return EXIT_OK
