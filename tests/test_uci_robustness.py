"""Raw stdin/stdout robustness: hostile input must never kill, hang or confuse Garfish.

Every test talks to the engine over pipes, bytes in and lines out, through UciPipe
(a reader thread feeds a queue, so every read has a timeout). After each hostile
input the engine must still be alive, answer `isready`, keep the position it
should have (checked with the `d` command's `Fen:` line) and play a legal move.
"""

from __future__ import annotations

import itertools
import math
import queue
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, Sequence, Union

import chess
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ENGINE_CMD, ROOT
from test_uci_engine import Session, bestmoves, session  # noqa: F401 (session: the fixture of an in-process engine)

START_FEN = chess.STARTING_FEN
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
UCI_MOVE = re.compile(r"^(?:[a-h][1-8][a-h][1-8][qrbn]?|0000)$")


class EngineDied(AssertionError):
    """The engine process ended (or closed stdout) when it should not have."""


class UciPipe:
    """One engine process: write lines or raw bytes, read stdout lines with a timeout."""

    def __init__(self, cmd: Sequence[str] = ENGINE_CMD) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(list(cmd), cwd=str(ROOT), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: queue.Queue[Optional[str]] = queue.Queue()
        self.stderr: list[str] = []
        self.history: list[str] = []  # everything read, for failure messages
        self._marks = itertools.count()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            self.stderr.append(raw.decode("utf-8", "replace").rstrip("\r\n"))

    # ------------------------------------------------------------------ writing
    def write(self, data: bytes) -> None:
        """Write raw bytes to the engine's stdin."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise EngineDied(f"cannot write to the engine ({exc}){self.describe()}") from None

    def send(self, *lines: str) -> None:
        """Send text lines (each gets a newline)."""
        self.write("".join(line + "\n" for line in lines).encode())

    # ------------------------------------------------------------------ reading
    def read_until(self, predicate: Callable[[str], bool], timeout: float) -> tuple[str, list[str]]:
        """Read lines until one satisfies predicate; return it and the lines before it."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                line = self.lines.get(timeout=max(0.0, remaining))
            except queue.Empty:
                raise AssertionError(f"no expected line within {timeout} s; last lines {seen[-8:]}"
                                     f"{self.describe()}") from None
            if line is None:
                self.lines.put(None)  # keep reporting EOF
                raise EngineDied(f"the engine closed stdout; last lines {seen[-8:]}{self.describe()}")
            self.history.append(line)
            if predicate(line):
                return line, seen
            seen.append(line)

    def drain(self) -> list[str]:
        """Lines already waiting."""
        out = []
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                return out
            if line is None:
                self.lines.put(None)
                return out
            out.append(line)

    def sync(self, timeout: float = 20.0) -> list[str]:
        """Everything the engine printed for the commands sent so far (an unknown-command echo as marker)."""
        mark = f"garfish-test-sync-{next(self._marks)}"
        self.send(mark)
        _, seen = self.read_until(lambda s: s.startswith("info string") and mark in s, timeout)
        return seen

    def isready(self, timeout: float = 30.0) -> list[str]:
        """Send isready and wait for readyok; return the lines before it."""
        self.send("isready")
        return self.read_until(lambda s: s == "readyok", timeout)[1]

    def bestmove(self, timeout: float = 30.0) -> tuple[str, list[str]]:
        """Wait for a bestmove line; return its move token and the lines before it."""
        line, seen = self.read_until(lambda s: s.startswith("bestmove"), timeout)
        return line.split()[1], seen

    def alive(self) -> bool:
        return self.proc.poll() is None

    def describe(self) -> str:
        code = self.proc.poll()
        state = "running" if code is None else f"exited with {code}"
        tail = "\n".join(self.stderr[-15:])
        return f"\n[engine {state}; stderr tail:\n{tail}]"

    def close(self) -> None:
        """Kill the process (teardown)."""
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        finally:
            for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                try:
                    stream.close()  # type: ignore[union-attr]
                except OSError:
                    pass


class EnginePool:
    """One shared engine for the module, restarted only after it died (and that test failed)."""

    def __init__(self) -> None:
        self.pipe: Optional[UciPipe] = None

    def get(self) -> UciPipe:
        if self.pipe is not None and not self.pipe.alive():
            self.pipe.close()
            self.pipe = None
        if self.pipe is None:
            self.pipe = UciPipe()
            self.pipe.send("uci")
            self.pipe.read_until(lambda s: s == "uciok", 10)
            self.pipe.isready()
        return self.pipe

    def close(self) -> None:
        if self.pipe is not None:
            self.pipe.close()


@pytest.fixture(scope="module")
def pool() -> Iterator[EnginePool]:
    engines = EnginePool()
    try:
        yield engines
    finally:
        engines.close()


@pytest.fixture
def fresh() -> Iterator[Callable[..., UciPipe]]:
    """Factory of private engine processes (the engine, or the command given), all killed at teardown."""
    started: list[UciPipe] = []

    def start(cmd: Sequence[str] = ENGINE_CMD) -> UciPipe:
        pipe = UciPipe(cmd)
        started.append(pipe)
        return pipe

    try:
        yield start
    finally:
        for pipe in started:
            pipe.close()


def reset(pipe: UciPipe) -> None:
    """Back to a quiet engine on the start position."""
    pipe.send("stop", "position startpos")
    pipe.isready()
    pipe.sync()


def assert_legal(token: str, fen: str, where: str = "") -> None:
    board = chess.Board(fen)
    if token == "0000":
        assert not any(board.legal_moves), f"bestmove 0000 with legal moves in {fen} {where}"
        return
    assert chess.Move.from_uci(token) in board.legal_moves, f"illegal bestmove {token} in {fen} {where}"


# --------------------------------------------------------------------------- hostile inputs
@dataclass
class Case:
    """A hostile input: raw bytes, whether it is an error, and the position after it."""

    id: str
    data: bytes
    error: bool
    fen: str = START_FEN
    best: Optional[str] = None  # the move a search started by this input must return

    @classmethod
    def text(cls, id: str, line: str, error: bool, fen: str = START_FEN, best: Optional[str] = None) -> "Case":
        return cls(id, (line + "\n").encode(), error, fen, best)


def long_game() -> tuple[str, str]:
    """A 4000-ply legal game of knight shuffles (a 'position' line of ~20k characters) and its FEN."""
    moves = "g1f3 g8f6 f3g1 f6g8 " * 1000
    board = chess.Board()
    for text in moves.split():
        board.push_uci(text)
    return "position startpos moves " + moves.strip(), board.fen()


LONG_GAME, LONG_GAME_FEN = long_game()
E, B = True, False  # error (an `info string` is due) or benign (no `info string error`)

INTERNAL_ERROR = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception)\b")

CASES = [
    Case.text("empty-line", "", B),
    Case.text("whitespace", "   \t  \t ", B),
    Case.text("unknown-command", "foo bar baz", E),
    Case.text("uppercase-command", "POSITION STARTPOS", E),
    Case.text("position-bare", "position", E),
    Case.text("position-fen-bare", "position fen", E),
    Case.text("position-fen-garbage", "position fen garbage", E),
    Case.text("position-fen-empty-then-moves", "position fen moves e2e4", E),
    Case.text("position-moves-only", "position moves e2e4", E),
    Case.text("fen-9-ranks", "position fen rnbqkbnr/pppppppp/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", E),
    Case.text("fen-empty-board", "position fen 8/8/8/8/8/8/8/8 w - - 0 1", E),
    Case.text("fen-no-white-king", "position fen 4k3/8/8/8/8/8/8/8 w - - 0 1", E),
    Case.text("fen-too-many-kings", "position fen 3kk3/8/8/8/8/8/8/4K3 w - - 0 1", E),
    Case.text("fen-side-not-to-move-in-check", "position fen 4k3/8/8/8/8/8/8/4RK2 w - - 0 1", E),
    Case.text("fen-pawn-on-rank-8", "position fen P3k3/8/8/8/8/8/8/4K3 w - - 0 1", E),
    Case.text("fen-pawn-on-rank-1", "position fen 4k3/8/8/8/8/8/8/p3K3 b - - 0 1", E),
    Case.text("fen-bad-side", "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", E),
    Case.text("fen-bad-piece", "position fen rnbqkbnr/ppppzppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", E),
    Case.text("fen-bad-castling-rights-cleaned", "position fen 4k3/8/8/8/8/8/8/4K3 w KQkq - 0 1", B,
              "4k3/8/8/8/8/8/8/4K3 w - - 0 1"),
    Case.text("fen-bad-ep-square-cleaned", f"position fen {START_FEN.replace('KQkq -', 'KQkq e3')}", B),
    Case.text("moves-illegal", "position startpos moves e2e5", E),
    Case.text("moves-garbage-at-end", "position startpos moves e2e4 e7e5 xyz", E),
    Case.text("moves-null", "position startpos moves 0000", E),
    Case.text("moves-castle-blocked", "position startpos moves e1g1", E),
    Case.text("moves-same-twice", "position startpos moves e2e4 e2e4", E),
    Case.text("position-foo", "position foo", E),
    Case.text("startpos-trailing", "position startpos foo", E),
    Case.text("moves-empty", "position startpos moves", B),
    Case.text("moves-e4", "position startpos moves e2e4", B, AFTER_E4),
    Case.text("tabs", "position\tstartpos\tmoves\te2e4", B, AFTER_E4),
    Case("crlf", b"position startpos moves e2e4\r\n", B, AFTER_E4),
    Case.text("long-legal-game", LONG_GAME, B, LONG_GAME_FEN),
    Case.text("go-wtime-abc", "go wtime abc", E),
    Case.text("go-depth-negative", "go depth -3", B),
    Case.text("go-depth-missing", "go depth", E),
    Case.text("go-depth-abc", "go depth abc", E),
    Case.text("go-depth-inf", "go depth inf", E),
    Case.text("go-depth-huge", "go depth 99999999999999999999999", B),
    Case.text("go-depth-float", "go depth 1.5", B),
    Case.text("go-nodes-0", "go nodes 0", B),
    Case.text("go-nodes-negative", "go nodes -5", B),
    Case.text("go-movetime-negative", "go movetime -5", B),
    Case.text("go-movetime-huge", "go movetime 99999999999999999999", B),
    Case.text("go-searchmoves-bad", "go searchmoves z9z9", E),
    Case.text("go-searchmoves-partly-bad", "go searchmoves e2e4 z9z9 depth 1", E, best="e2e4"),
    Case.text("go-unknown-param", "go foo bar", E),
    Case.text("go-mate-0", "go mate 0", B),
    Case.text("go-movestogo-0", "go movestogo 0 wtime 1000 btime 1000", B),
    Case.text("go-negative-clock", "go wtime -1000 btime -1000", B),
    Case.text("go-negative-inc", "go wtime 100 btime 100 winc -50 binc -50", B),
    Case.text("go-perft-negative", "go perft -1", E),
    Case.text("go-perft-abc", "go perft abc", E),
    Case.text("go-infinite", "go infinite", B),
    Case.text("go-bare", "go", B),
    Case.text("go-ponder", "go ponder", B),
    Case.text("go-ponder-ponderhit", "go ponder\nponderhit", B),
    Case.text("setoption-bare", "setoption", E),
    Case.text("setoption-name-only", "setoption name", E),
    Case.text("setoption-no-name", "setoption value 5", E),
    Case.text("setoption-hash-abc", "setoption name Hash value abc", E),
    Case.text("setoption-hash-0", "setoption name Hash value 0", E),
    Case.text("setoption-hash-huge", "setoption name Hash value 999999999", E),
    Case.text("setoption-hash-no-value", "setoption name Hash", E),
    Case.text("setoption-unknown", "setoption name Nope value 1", E),
    Case.text("setoption-ponder-maybe", "setoption name Ponder value maybe", E),
    Case.text("setoption-threads-0", "setoption name Threads value 0", E),
    Case.text("setoption-overhead-negative", "setoption name Move Overhead value -1", E),
    Case.text("setoption-hash-lowercase", "setoption name hash value 8", B),
    Case.text("setoption-clear-hash", "setoption name Clear Hash", B),
    Case.text("setoption-ownbook-maybe", "setoption name OwnBook value maybe", E),
    Case.text("setoption-bookfile-missing", "setoption name BookFile value /no/such/book.bin", E),
    Case.text("setoption-bookfile-directory", "setoption name BookFile value /", E),
    Case.text("setoption-bookfile-device", "setoption name BookFile value /dev/zero", E),
    Case.text("setoption-bookfile-empty", "setoption name BookFile value <empty>", B),
    Case.text("debug-maybe", "debug maybe", E),
    Case.text("debug-off", "debug off", B),
    Case.text("very-long-line", "x" * 100_000, E),
    Case("invalid-utf8", b"\xff\xfe\x80\x81 junk \xc3\x28\n", E),
    Case("invalid-utf8-in-moves", b"position startpos moves e2e4 \xff\xfe\n", E),
    Case("nul-bytes", b"\x00\x00\x00\n", E),
    Case("nul-after-command", b"isready\x00\n", E),
    Case("escape-codes", b"\x1b[31mred\x1b[0m\n", E),
    Case.text("ponderhit-idle", "ponderhit", B),
    Case.text("stop-idle", "stop", B),
    Case.text("ucinewgame-twice", "ucinewgame\nucinewgame", B),
    Case.text("isready-twice", "isready\nisready", B),
    Case.text("uci-again", "uci", B),
]


def test_enough_hostile_cases() -> None:
    """A guard on the list itself, not on the engine: the 42 cases written are all there (none lost in an
    edit) and each has its own id, so that each is run and reported by name."""
    assert len(CASES) >= 42
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_hostile_input_is_survived(pool: EnginePool, case: Case) -> None:
    pipe = pool.get()
    reset(pipe)
    pipe.write(case.data)
    # 1. Still alive and answering isready; `d` then shows the position in effect.
    pipe.send("isready", "d")
    _, seen = _read_ready_and_board(pipe)
    assert pipe.alive(), pipe.describe()
    ready = max(i for i, line in enumerate(seen) if line == "readyok")
    replies = seen[:ready]
    fen = [line for line in seen[ready:] if line.startswith("Fen: ")][-1][len("Fen: "):]
    if case.error:
        assert any(line.startswith("info string") for line in replies), f"no info string for {case.id}: {replies}"
        # Bad input is explained, not reported as an internal exception from the catch-all handler.
        internal = [line for line in replies if INTERNAL_ERROR.search(line)]
        assert not internal, internal
    else:
        errors = [line for line in replies
                  if line.startswith("info string") and ("error" in line or "unknown command" in line)]
        assert not errors, errors
    assert fen == case.fen, f"position after {case.id} is {fen}, expected {case.fen}"
    # 2. Any search this input started stops on `stop` with a legal move.
    pipe.send("stop")
    seen += pipe.isready()
    bestmoves = [line.split()[1] for line in seen if line.startswith("bestmove")]
    go_lines = sum(1 for line in case.data.split(b"\n") if line.split()[:1] == [b"go"])
    assert len(bestmoves) <= go_lines, bestmoves
    for token in bestmoves:
        assert_legal(token, case.fen, case.id)
    if case.best is not None:
        assert bestmoves == [case.best]
    # 3. And it still searches the position in effect.
    pipe.send("go depth 2")
    token, _ = pipe.bestmove(30)
    assert_legal(token, case.fen, case.id)
    assert pipe.alive(), pipe.describe()


def _read_ready_and_board(pipe: UciPipe) -> tuple[str, list[str]]:
    """Read through our readyok and the `d` output that follows it; return all lines seen."""
    seen: list[str] = []
    state = {"ready": False}

    def done(line: str) -> bool:
        seen.append(line)
        if line == "readyok":
            state["ready"] = True
        return state["ready"] and line.startswith("Checkers:")

    last, _ = pipe.read_until(done, 20)
    return last, seen


# Timed searches must end by themselves: a zero or negative movetime, or a clock given for the
# other side only, is a tiny time budget, not an infinite search. (An infinite search never ends:
# the wait for its bestmove is a guard, as long as a busy machine may need, not a time to keep.)
@pytest.mark.parametrize("line", ["go movetime 0", "go movetime -5", "go btime 1000", "go wtime 0 btime 0"])
def test_zero_movetime_still_answers(pool: EnginePool, line: str) -> None:
    pipe = pool.get()
    reset(pipe)
    pipe.send(line)
    try:
        token, _ = pipe.bestmove(30)  # a timed search: it must end without `stop`
    finally:
        pipe.send("stop")
        pipe.isready()
        pipe.sync()
    assert_legal(token, START_FEN)


def test_position_is_all_or_nothing(pool: EnginePool) -> None:
    pipe = pool.get()
    reset(pipe)
    pipe.send("position startpos moves e2e4")
    pipe.send("position startpos moves e2e4 e7e6 h1h8")
    replies = pipe.isready()
    assert any(line.startswith("info string") and "error" in line for line in replies), replies
    pipe.send("d")
    fen_line, _ = pipe.read_until(lambda s: s.startswith("Fen: "), 10)
    assert fen_line == "Fen: " + AFTER_E4
    pipe.send("go depth 1")
    token, _ = pipe.bestmove(30)
    board = chess.Board(AFTER_E4)
    assert board.turn == chess.BLACK
    assert chess.Move.from_uci(token) in board.legal_moves, token


NO_LEGAL_MOVE = ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",  # stalemate
                 "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")  # fool's mate


def test_bestmove_0000_without_legal_moves(pool: EnginePool, session: Session) -> None:
    """Stalemated or mated: `go depth 3` answers 0000; `go infinite` answers 0000 exactly once, and only after
    stop. Over the pipe: one bestmove for all that a go, two stops, isready and a sync bring (the order of a
    stop and an early answer is not seen there); in-process, the search thread's wait is watched, so an
    answer before stop is seen however busy the machine is (go_until_held)."""
    pipe = pool.get()
    reset(pipe)
    for fen in NO_LEGAL_MOVE:
        pipe.send(f"position fen {fen}", "go depth 3")
        token, _ = pipe.bestmove(10)
        assert token == "0000"
        pipe.send("go infinite")
        seen = pipe.isready()  # the go is read; its search has no move to look at
        pipe.send("stop", "stop")
        seen += pipe.isready() + pipe.sync()
        assert [line for line in seen if line.startswith("bestmove")] == ["bestmove 0000"], seen
        session.send(f"position fen {fen}")
        early = session.go_until_held("go infinite")  # until its thread waits for stop (or, wrongly, answers)
        assert not bestmoves(early), early
        assert bestmoves(early + session.send("stop")) == ["0000"]


def test_one_bestmove_per_go(pool: EnginePool) -> None:
    pipe = pool.get()
    reset(pipe)
    pipe.send("go infinite")
    pipe.read_until(lambda s: s.startswith("info depth"), 30)  # searching
    pipe.send("stop", "stop", "ponderhit", "stop")
    seen = pipe.isready() + pipe.sync()
    assert sum(line.startswith("bestmove") for line in seen) == 1, seen


def test_perft_3_from_startpos(pool: EnginePool) -> None:
    pipe = pool.get()
    reset(pipe)
    pipe.send("go perft 3")
    last, seen = pipe.read_until(lambda s: s.startswith("Nodes searched:"), 60)
    assert last == "Nodes searched: 8902"
    assert seen[-1] == ""
    counts = {}
    for line in seen[:-1]:
        move, count = line.split(": ")
        counts[move] = int(count)
    assert set(counts) == {move.uci() for move in chess.Board().legal_moves}
    assert sum(counts.values()) == 8902


# --------------------------------------------------------------------------- start and end
# Garfish's UCI loop in a process where the engine can never load: importing NumPy or Numba (which
# its search and evaluation need) blocks for ever, saying so on stderr, as the slowest first load
# (Numba compiling) would.
HELD_LOAD_START = """
import runpy, sys, threading
from importlib.machinery import ModuleSpec

class HeldLoad:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("numpy", "numba"):
            return ModuleSpec(name, self)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        print("held: import " + module.__name__, file=sys.stderr, flush=True)
        threading.Event().wait()

sys.meta_path.insert(0, HeldLoad())
runpy.run_module("garfish.uci", run_name="__main__")
"""


def test_uciok_does_not_wait_for_the_engine(fresh: Callable[..., UciPipe]) -> None:
    # A GUI waits a few seconds for uciok; the engine (Numba's kernels) may take longer to load the
    # first time. So uciok must come whatever the load does: here the load never ends. (Timing uciok
    # instead told a fast start from a slow one by how busy the machine was.)
    pipe = fresh([sys.executable, "-P", "-c", HELD_LOAD_START])
    pipe.send("uci")
    _, seen = pipe.read_until(lambda s: s == "uciok", 30)
    elapsed = time.perf_counter() - pipe.started
    print(f"uciok {elapsed:.3f} s after process start, the engine's load held (target 1 s)")
    assert seen[0].startswith("id name Garfish")
    deadline = time.monotonic() + 30
    while not any(line.startswith("held: import") for line in pipe.stderr):  # the load did start, and is held
        assert time.monotonic() < deadline and pipe.alive(), pipe.describe()
        time.sleep(0.05)


# How long quit or the end of input may take to end the process: a guard against one that never ends,
# not a time to keep (the interpreter's teardown alone took 0.8-1.2 s on a busy 2-core machine).
EXIT_TIMEOUT = 30.0


def _assert_exits(pipe: UciPipe, within: float = EXIT_TIMEOUT) -> float:
    start = time.perf_counter()
    try:
        code = pipe.proc.wait(timeout=within)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the engine did not exit within {within} s{pipe.describe()}") from None
    assert code == 0, pipe.describe()
    return time.perf_counter() - start


def _searching(pipe: UciPipe) -> None:
    pipe.send("uci")
    pipe.read_until(lambda s: s == "uciok", 10)
    pipe.isready()
    pipe.send("position startpos", "go infinite")
    pipe.read_until(lambda s: s.startswith("info depth"), 10)


@pytest.mark.parametrize("how", ["quit", "eof"])
@pytest.mark.parametrize("when", ["idle", "searching", "loading"])
def test_session_ends(fresh: Callable[[], UciPipe], how: str, when: str) -> None:
    pipe = fresh()
    if when == "searching":
        _searching(pipe)
    elif when == "idle":
        pipe.send("uci")
        pipe.read_until(lambda s: s == "uciok", 10)
        pipe.isready()
    # "loading": straight away, while the Numba engine is still loading in the background
    if how == "quit":
        pipe.send("quit")
    else:
        assert pipe.proc.stdin is not None
        pipe.proc.stdin.close()
    elapsed = _assert_exits(pipe)
    print(f"{how} while {when}: exited after {elapsed:.3f} s")
    if when == "searching":
        # The running search still reports its move, exactly once, before the engine goes.
        rest = []
        while True:
            line = pipe.lines.get(timeout=5)
            if line is None:
                break
            rest.append(line)
        assert sum(line.startswith("bestmove") for line in rest) == 1, rest[-8:]


# --------------------------------------------------------------------------- too little memory
# Address space allowed to the engine process below. Measured: the engine peaks at 0.42-0.45 GB
# of virtual memory (VmPeak; Python, NumPy, Numba and LLVM, with cached or freshly compiled
# kernels, after a depth-5 search), so 2 GiB leaves room for other versions, thread stacks and
# malloc arenas, while a 32 GiB hash table stays far out of reach.
ENGINE_ADDRESS_SPACE = 2 * 1024**3


def test_a_hash_table_too_big_for_memory_leaves_a_working_engine(fresh: Callable[..., UciPipe]) -> None:
    resource = pytest.importorskip("resource")
    assert resource.RLIMIT_AS  # Linux and most Unixes
    limit = ENGINE_ADDRESS_SPACE
    start = (f"import resource, runpy; resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit})); "
             "runpy.run_module('garfish.uci', run_name='__main__')")
    pipe = fresh([sys.executable, "-P", "-c", start])
    pipe.send("uci")
    pipe.read_until(lambda s: s == "uciok", 10)
    # Straight away, while the engine loads: asking for 32 GiB must neither break the load ...
    pipe.send("setoption name Hash value 32768")
    # The error comes before `readyok` when the engine was built by then, else (the setting kept for
    # the build, `readyok` answered at once) with the first search, which waits for the build.
    seen = pipe.isready(60)
    # ... nor the search: legal moves, full-depth searches, no further error.
    for commands, fen in ((["position startpos", "go depth 3"], START_FEN),
                          (["setoption name Clear Hash", "ucinewgame", "position startpos moves e2e4", "go depth 3"],
                           AFTER_E4),
                          (["go infinite", "stop"], AFTER_E4)):
        pipe.send(*commands)
        token, searched = pipe.bestmove(30)
        seen += searched
        assert token != "0000" and chess.Move.from_uci(token) in chess.Board(fen).legal_moves, seen
        notes = [line for line in seen if line.startswith("info string")]
        assert len(notes) == 1, notes
        assert notes[0].startswith("info string error: could not resize the hash table to 32768 MB"), notes
        assert notes[0].endswith("keeping the 16 MB table"), notes
        assert any(line.startswith("info depth 3 ") for line in searched) or "go infinite" in commands, seen
    assert pipe.alive(), pipe.describe()


# --------------------------------------------------------------------------- fuzzing
KEYWORDS = [
    "uci", "isready", "ucinewgame", "position", "startpos", "fen", "moves", "go", "stop", "ponderhit",
    "setoption", "name", "value", "debug", "on", "off", "d", "eval", "wtime", "btime", "winc", "binc",
    "movestogo", "depth", "nodes", "mate", "movetime", "infinite", "ponder", "searchmoves", "perft",
    "Hash", "Threads", "Move", "Overhead", "Clear", "Ponder", "UCI_Chess960", "true", "false",
]
COMMANDS = ["uci", "isready", "ucinewgame", "position", "go", "stop", "ponderhit", "setoption", "debug", "d",
            "eval", "position startpos", "position startpos moves", "position fen", "go infinite", "go ponder",
            "setoption name Hash value", "setoption name UCI_Chess960 value", "setoption name Clear Hash",
            "setoption name Move Overhead value", "setoption name Threads value"]
FENS = [
    START_FEN, AFTER_E4,
    "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5",
    "8/2P5/8/8/8/8/5kp1/7K w - - 0 1",  # promotions on both sides
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",  # en passant
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",  # stalemate
    "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",  # checkmate
    "rbqk3r/pppppppp/8/8/8/8/PPPPPPPP/RBQK3R w HAha - 0 1",  # chess960 castling
]
FEN_PIECES = ["rnbqkbnr/pppppppp", "8/8/8/8", "PPPPPPPP/RNBQKBNR", "w", "b", "KQkq", "HAha", "-", "e3", "0", "1",
              "99", "8", "/", "k7/8/8/8/8/8/8/K7"]
MOVES = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "e1g1", "e1h1", "d1h1", "c7c8q", "g2g1n", "e5f6", "a7a8n",
         "0000", "z9z9", "e2e4e", "a1a1", "h7h8Q"]

numbers = st.one_of(
    st.integers(-10, 10), st.integers(-(10**20), 10**20),
    st.sampled_from(["1.5", "-0", "1e3", "nan", "inf", "-inf", "0x10", "1_000", "+7", "2147483648"]),
).map(str)
squares = st.tuples(st.sampled_from("abcdefghz"), st.sampled_from("123456789"))
random_moves = st.builds(lambda a, b, p: "".join(a) + "".join(b) + p, squares, squares,
                         st.sampled_from(["", "", "q", "n", "k", "x"]))
fen_junk = st.text(alphabet="pnbrqkPNBRQK12345678/ wb-KQkq", max_size=30)
token = st.one_of(
    st.sampled_from(KEYWORDS), numbers, st.sampled_from(MOVES), random_moves, st.sampled_from(FEN_PIECES),
    st.sampled_from(FENS), fen_junk, st.text(max_size=12),
)
separator = st.sampled_from([" ", " ", " ", "  ", "\t", " \t "])


GO_PARAMS = ["wtime", "btime", "winc", "binc", "movestogo", "depth", "nodes", "mate", "movetime", "perft"]
OPTION_NAMES = ["Hash", "Clear Hash", "Threads", "Move Overhead", "Ponder", "UCI_Chess960", "OwnBook", "BookFile",
                "BookBestMove", "UCI_ShowWDL", "hash", "Nope"]
plausible = st.one_of(
    st.builds(lambda moves: " ".join(["position startpos moves"] + moves),
              st.lists(st.sampled_from(MOVES), max_size=4)),
    st.builds(lambda fen, moves: " ".join([f"position fen {fen}"] + (["moves"] + moves if moves else [])),
              st.sampled_from(FENS), st.lists(st.one_of(st.sampled_from(MOVES), random_moves), max_size=3)),
    st.builds(lambda pairs, flags: " ".join(["go"] + [f"{k} {v}" for k, v in pairs] + flags),
              st.lists(st.tuples(st.sampled_from(GO_PARAMS), numbers), max_size=3),
              st.lists(st.sampled_from(["infinite", "ponder", "searchmoves e2e4 d2d4"]), max_size=1)),
    st.builds(lambda name, value: f"setoption name {name} value {value}", st.sampled_from(OPTION_NAMES),
              st.one_of(numbers, st.sampled_from(["true", "false", "TRUE", "", "maybe"]))),
)


@st.composite
def fuzz_line(draw: st.DrawFn) -> Union[str, bytes]:
    kind = draw(st.integers(0, 19))
    if kind == 0:  # raw bytes, invalid UTF-8 included, never a command
        junk = draw(st.binary(max_size=40)).replace(b"\n", b" ").replace(b"\r", b" ")
        return b"\xff" + junk
    if kind <= 8:  # well-formed or nearly so
        return draw(plausible)
    head = draw(st.sampled_from(COMMANDS)) if kind <= 17 else draw(token)
    tokens = draw(st.lists(token, max_size=8))
    line = head
    for item in tokens:
        line += draw(separator) + item
    return line.replace("\n", " ").replace("\r", " ")


def sanitize(line: str) -> Optional[str]:
    """Keep the fuzzer away from requests that are legitimately slow or final, not hostile:
    quit, bench, deep perft, a multi-gigabyte hash table, more than two search processes."""
    tokens = line.split()
    if not tokens:
        return line
    if tokens[0] in ("quit", "bench"):
        return None
    if tokens[0] == "go" and "perft" in tokens:
        fixed = []
        for item in tokens:
            try:
                number = float(item)
            except ValueError:
                fixed.append(item)
                continue
            fixed.append("2" if math.isnan(number) or abs(number) >= 3 else item)
        return " ".join(fixed)
    if tokens[0] == "setoption" and len(tokens) > 1 and tokens[1] == "name" and "value" in tokens:
        split = tokens.index("value")
        limits = {"hash": 64, "threads": 2}
        name = " ".join(tokens[2:split]).lower()
        if name in limits:
            try:
                if int(" ".join(tokens[split + 1:]).strip()) > limits[name]:
                    return f"setoption name {name} value {limits[name]}"
            except ValueError:
                pass
    return line


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(lines=st.lists(fuzz_line(), min_size=1, max_size=8))
def test_fuzzed_command_sequences(pool: EnginePool, lines: list[Union[str, bytes]]) -> None:
    pipe = pool.get()  # a fresh one only if the last example killed it (and failed)
    reset(pipe)
    for line in lines:
        if isinstance(line, bytes):
            pipe.write(line + b"\n")
        else:
            clean = sanitize(line)
            if clean is not None:
                pipe.write(clean.encode("utf-8", "surrogatepass") + b"\n")
    # Searches started by the fuzzer (infinite ones included) end with stop.
    pipe.send("stop")
    seen = pipe.isready(30) + pipe.sync(30)
    assert pipe.alive(), pipe.describe()
    for line in seen:
        if line.startswith("bestmove"):
            parts = line.split()
            assert len(parts) in (2, 4) and UCI_MOVE.match(parts[1]), line
            if len(parts) == 4:
                assert parts[2] == "ponder" and UCI_MOVE.match(parts[3]), line
        assert "Traceback" not in line
    pipe.send("position startpos", "go depth 1")
    token_, _ = pipe.bestmove(30)
    assert chess.Move.from_uci(token_) in chess.Board().legal_moves
    assert pipe.alive(), pipe.describe()
