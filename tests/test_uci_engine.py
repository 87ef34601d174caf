"""The protocol layer in-process: `go` parsing into Limits, and a UciEngine driven through string streams."""

from __future__ import annotations

import io
import subprocess
import sys
import threading
import time
from typing import Iterator, Optional

import chess
import numpy as np
import pytest

import garfish.engine.search.tt
from garfish.engine.engine import fallback_move
from garfish.engine.search.skill import ELO_MAX, skill_level_elo
from garfish.engine.evaluation.evalfile import DEFAULT_EVAL_FILE
from garfish.engine.search.driver import SearchResult
from garfish.engine.types import Limits
from garfish.uci.options import OptionError, Spin
from garfish.uci.protocol import UciEngine, parse_go


def go(line: str, board: chess.Board | None = None) -> tuple[Limits, int | None, list[str]]:
    """parse_go on a `go` line's arguments: the limits, the perft depth and the warnings."""
    warnings: list[str] = []
    limits, perft = parse_go(line.split(), board or chess.Board(), warnings.append)
    return limits, perft, warnings


def test_go_clock_arrives_in_seconds() -> None:
    limits, perft, warnings = go("wtime 60000 btime 59000 winc 1000 binc 500 movestogo 20")
    assert (limits.wtime, limits.btime, limits.winc, limits.binc) == (60.0, 59.0, 1.0, 0.5)
    assert limits.movestogo == 20 and not limits.infinite and perft is None and not warnings


@pytest.mark.parametrize(("line", "expected"), [
    ("", Limits(infinite=True)),  # a bare `go` searches until stop
    ("btime 1000", Limits(wtime=0.0, btime=1.0)),  # the missing clock counts as empty
    ("wtime -5 btime -1 winc -3", Limits(wtime=0.0, btime=0.0)),  # negative times: none left
    ("movetime 1.5e3", Limits(movetime=1.5)),
    ("movetime 99999999999999999999", Limits(movetime=1e17)),
    ("depth 0 nodes -5 mate 0", Limits(depth=1, nodes=1, mate=1)),  # the smallest search, not none
    ("depth 2.9", Limits(depth=2)),
    ("movestogo 0 wtime 1000 btime 1000", Limits(wtime=1.0, btime=1.0)),  # sudden death
    ("ponder wtime 1000 btime 1000", Limits(wtime=1.0, btime=1.0, ponder=True)),
    ("infinite", Limits(infinite=True)),
])
def test_go_values_without_warnings(line: str, expected: Limits) -> None:
    limits, perft, warnings = go(line)
    assert limits == expected and perft is None and not warnings


@pytest.mark.parametrize(("line", "expected", "warning"), [
    ("depth", Limits(infinite=True), "go depth needs a number"),
    ("depth inf", Limits(infinite=True), "go depth needs a finite number, not 'inf'"),
    ("wtime abc btime 1000", Limits(wtime=0.0, btime=1.0), "go wtime needs a finite number, not 'abc'"),
    ("foo depth 3", Limits(depth=3), "unknown go parameter 'foo'"),
    ("searchmoves e2e4 z9z9 depth 1", Limits(depth=1, searchmoves=[chess.Move.from_uci("e2e4")]),
     "searchmoves: 'z9z9' is not a legal move here"),
    ("searchmoves e2e5", Limits(infinite=True), "searchmoves: 'e2e5' is not a legal move here"),
])
def test_go_reports_and_skips_what_it_cannot_read(line: str, expected: Limits, warning: str) -> None:
    limits, perft, warnings = go(line)
    assert limits == expected and perft is None and warnings == [warning]


def test_go_perft_comes_back_beside_the_limits() -> None:
    assert go("perft 3")[1] == 3
    assert go("perft -1")[1] == -1  # run_perft refuses it with a message
    _, perft, warnings = go("perft abc")
    assert perft is None and warnings == ["go perft needs a finite number, not 'abc'"]


# --------------------------------------------------------------------------- a UciEngine on string streams
# How long a test waits for a search thread to reach a point or end: a guard against one that never
# does (the thing tested), never a time the search must keep to (a busy machine may take long).
THREAD_TIMEOUT = 60.0


class WatchedEvent(threading.Event):
    """A threading.Event that records that a thread has begun waiting on it, and whether it was set by then."""

    def __init__(self) -> None:
        super().__init__()
        self.waited = threading.Event()
        self.set_before_wait = False

    def wait(self, timeout: Optional[float] = None) -> bool:
        if not self.waited.is_set():
            self.set_before_wait = self.is_set()
        self.waited.set()
        return super().wait(timeout)


class Session:
    """One UciEngine writing to a string: send it lines, read back what it printed since last time."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        self.engine = UciEngine(self.out)
        self.read = 0

    def send(self, *lines: str) -> list[str]:
        """Handle the lines, let a search they started finish (stopping an infinite one), return the output."""
        for line in lines:
            self.engine.handle(line)
        self.engine.engine.wait()
        return self.output()

    def built(self) -> list[str]:
        """Wait for the engine's build (`isready` no longer does: it answers at once while the engine
        builds), then send `isready`: what it printed, the build's errors and `readyok`."""
        assert self.engine.engine._loaded.wait(THREAD_TIMEOUT), "the engine was not built in time"
        return self.send("isready")

    def output(self) -> list[str]:
        """Lines printed since the last call."""
        with self.engine.out_lock:
            text = self.out.getvalue()
        new, self.read = text[self.read:], len(text)
        return new.splitlines()

    def go_until_held(self, command: str) -> list[str]:
        """Handle a `go` that may print no bestmove before `stop` or `ponderhit`; return what it has
        printed once its thread waits for one of them (its move chosen), or once it reports a search
        under way, or has ended (having printed a bestmove it should not have, for the caller to find).
        Waiting for these points, not for a time, keeps a busy machine from passing a broken engine."""
        release = WatchedEvent()  # the flag the search thread waits on before its bestmove
        self.engine.engine.release = release
        self.engine.handle(command)
        thread = self.engine.engine.search_thread
        assert thread is not None
        lines: list[str] = []
        deadline = time.monotonic() + THREAD_TIMEOUT
        while not (release.waited.is_set() or not thread.is_alive()
                   or any(line.startswith("info depth") for line in lines)):
            assert time.monotonic() < deadline, f"the search thread neither waited nor searched: {lines}"
            time.sleep(0.01)
            lines += self.output()
        return lines + self.output()


@pytest.fixture
def session() -> Iterator[Session]:
    started = Session()
    started.built()
    try:
        yield started
    finally:
        started.engine.handle("quit")


def errors(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("info string error")]


def bestmoves(lines: list[str]) -> list[str]:
    return [line.split()[1] for line in lines if line.startswith("bestmove")]


def test_options_are_listed_from_their_declarations(session: Session) -> None:
    lines = session.send("uci")
    assert [line for line in lines if line.startswith("option")] == [
        "option name Hash type spin default 16 min 1 max 32768",
        "option name Clear Hash type button",
        "option name Threads type spin default 1 min 1 max 512",
        "option name Move Overhead type spin default 30 min 0 max 5000",
        "option name Ponder type check default false",
        "option name UCI_Chess960 type check default false",
        "option name OwnBook type check default false",
        "option name BookFile type string default <empty>",
        "option name BookBestMove type check default false",
        "option name UCI_ShowWDL type check default false",
        "option name UCI_AnalyseMode type check default false",
        "option name MultiPV type spin default 1 min 1 max 256",
        "option name UCI_LimitStrength type check default false",
        f"option name UCI_Elo type spin default {ELO_MAX} min 1350 max {ELO_MAX}",
        "option name Skill Level type spin default 20 min 0 max 20",
        "option name SyzygyPath type string default <empty>",
        "option name SyzygyProbeDepth type spin default 1 min 1 max 100",
        "option name Syzygy50MoveRule type check default true",
        "option name SyzygyProbeLimit type spin default 7 min 0 max 7",
        f"option name EvalFile type string default {DEFAULT_EVAL_FILE}",
    ]
    assert lines[-1] == "uciok"


def test_setoption_carries_out_the_value_through_the_declared_handler(session: Session) -> None:
    uci = session.engine
    engine = uci.engine
    assert engine.searcher is not None
    assert not errors(session.send("setoption name hash value 2"))
    assert uci.options.hash.value == 2 and engine.searcher.tt.megabytes == 2
    lines = session.send("setoption name Hash value 0", "setoption name Hash value x")
    assert len(errors(lines)) == 2 and uci.options.hash.value == 2 and engine.searcher.tt.megabytes == 2
    assert not errors(session.send("setoption name UCI_Chess960 value true"))
    assert uci.chess960 and uci.board.chess960
    assert session.send("setoption name Threads value 3") == []
    assert engine.helpers is not None and engine.helpers.count == 2
    assert engine.searcher.tt is engine.tt and engine.tt.megabytes == 2 and engine.tt.block is not None
    assert session.send("setoption name Threads value 1") == [] and engine.helpers is None


def limits_seen(session: Session, monkeypatch: pytest.MonkeyPatch) -> list[Limits]:
    """The Limits of every search the session's searcher runs from now on (it still searches)."""
    searcher = session.engine.engine.searcher
    assert searcher is not None
    seen: list[Limits] = []
    search = searcher.search

    def spy(board: chess.Board, limits: Limits, **kwargs: object) -> SearchResult:
        seen.append(limits)
        return search(board, limits, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(searcher, "search", spy)
    return seen


def test_move_overhead_reaches_the_search_in_its_limits(session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = limits_seen(session, monkeypatch)
    session.send("setoption name Move Overhead value 120", "go depth 1")
    assert seen[-1].move_overhead == pytest.approx(0.12) and seen[-1].depth == 1


def test_multipv_reaches_the_search(session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = limits_seen(session, monkeypatch)
    session.engine.handle("setoption name MultiPV value 2")
    session.engine.handle("go depth 2")
    assert session.engine.engine.search_thread is not None  # started (it may have ended already)
    assert session.engine.engine.wait_done()  # to its end: Session.send would stop it
    lines = session.output()
    assert seen[-1].multipv == 2
    infos = [line.split() for line in lines if line.startswith("info depth 2 ")]
    assert [words[words.index("multipv") + 1] for words in infos] == ["1", "2"]
    assert bestmoves(lines) == [infos[0][infos[0].index("pv") + 1]]  # bestmove is line 1


def test_the_strength_limit_reaches_the_search(session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = limits_seen(session, monkeypatch)
    session.send("go depth 2")
    assert seen[-1].elo is None
    session.send("setoption name UCI_Elo value 1500", "go depth 2")
    assert seen[-1].elo is None  # UCI_Elo alone does not limit
    session.send("setoption name UCI_LimitStrength value true", "go depth 2")
    assert seen[-1].elo == 1500
    session.send("setoption name UCI_LimitStrength value false", "go depth 2")
    assert seen[-1].elo is None
    # Skill Level: Stockfish's Elo for the level, on the same scale; UCI_LimitStrength overrides it.
    session.send("setoption name Skill Level value 0", "go depth 2")
    assert seen[-1].elo == skill_level_elo(0) == 1350
    session.send("setoption name Skill Level value 3", "go depth 2")
    assert seen[-1].elo == skill_level_elo(3) == round(1346.6 + 143.4 * 3 ** 0.806)
    session.send("setoption name UCI_LimitStrength value true", "go depth 2")
    assert seen[-1].elo == 1500
    session.send("setoption name UCI_LimitStrength value false", "setoption name Skill Level value 20", "go depth 2")
    assert seen[-1].elo is None


def test_a_failed_effect_keeps_the_previous_value() -> None:
    def refuse(value: int) -> None:
        raise OptionError(f"cannot use {value}")

    option = Spin("Size", 4, on_change=refuse, min=1, max=9)
    with pytest.raises(OptionError):
        option.set(option.parse("8"))
    assert option.value == 4


# --------------------------------------------------------------------------- failures leave a working engine
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


def assert_plays_legal_moves(session: Session) -> list[str]:
    """go depth 2 and go infinite + stop answer legal moves (never 0000 here); return all output."""
    lines = session.send("position startpos moves e2e4", "go depth 2")
    early = session.go_until_held("go infinite")
    assert not bestmoves(early), early  # UCI: no bestmove before stop, even without a search
    lines += early + session.send("stop")
    moves = bestmoves(lines)
    assert len(moves) == 2 and all(chess.Move.from_uci(m) in chess.Board(AFTER_E4).legal_moves for m in moves), lines
    return lines


def test_a_search_that_raises_still_plays_a_legal_move(session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> SearchResult:
        raise RuntimeError("a bug in the search")

    monkeypatch.setattr(session.engine.engine.searcher, "search", broken)
    lines = assert_plays_legal_moves(session)
    assert any("search failed" in line and "RuntimeError: a bug in the search" in line for line in errors(lines))


def test_an_engine_that_failed_to_load_still_plays_legal_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    import garfish.engine.search.driver

    def unloadable(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the kernels did not compile")

    monkeypatch.setattr(garfish.engine.search.driver, "Searcher", unloadable)
    session = Session()
    try:
        lines = session.built()
        assert errors(lines) == ["info string error: the engine failed to load: RuntimeError: the kernels did not "
                                 "compile"] and lines[-1] == "readyok"
        # Options, a new game and Clear Hash say why they do nothing, but fail no command.
        lines = session.send("setoption name Hash value 8", "setoption name Clear Hash", "ucinewgame")
        assert len(errors(lines)) == 3 and all("failed to load" in line for line in lines)
        assert_plays_legal_moves(session)
    finally:
        session.engine.handle("quit")


def test_without_memory_for_the_hash_the_engine_starts_with_the_smallest(monkeypatch: pytest.MonkeyPatch) -> None:
    real = garfish.engine.search.tt.TranspositionTable

    class Tight(real):  # type: ignore[valid-type, misc]
        def __init__(self, megabytes: int = 16, shared: bool = False) -> None:
            if megabytes > 1:
                raise MemoryError(f"Unable to allocate {megabytes} MB")
            super().__init__(megabytes, shared)

    monkeypatch.setattr(garfish.engine.search.tt, "TranspositionTable", Tight)
    session = Session()
    try:
        lines = session.built()
        assert errors(lines) == ["info string error: no memory for a 16 MB hash table (Unable to allocate 16 MB); "
                                 "using 1 MB"]
        searcher = session.engine.engine.searcher
        assert searcher is not None and searcher.tt.megabytes == 1 and session.engine.options.hash.value == 1
        assert not errors(assert_plays_legal_moves(session))
    finally:
        session.engine.handle("quit")


def test_a_hash_that_cannot_be_allocated_keeps_the_old_table(session: Session,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    searcher = session.engine.engine.searcher
    assert searcher is not None
    table = searcher.tt
    session.send("go depth 3")
    filled = table.keys.copy()
    assert filled.any()

    def no_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError("Unable to allocate 32.0 GiB")

    monkeypatch.setattr(garfish.engine.search.tt.np, "zeros", no_memory)
    lines = session.send("setoption name Hash value 32768")
    assert errors(lines) == ["info string error: could not resize the hash table to 32768 MB (Unable to allocate "
                             "32.0 GiB); keeping the 16 MB table"]
    assert session.engine.options.hash.value == 16 and table.megabytes == 16 and (table.keys == filled).all()
    slot = int(np.flatnonzero(filled)[0])
    stored = int(filled[slot] ^ table.data[slot])  # a key word holds key ^ data (engine.tt)
    assert table.probe(stored), "the table no longer finds its entries"
    monkeypatch.undo()
    assert not errors(session.send("setoption name Clear Hash", "ucinewgame"))
    assert not errors(assert_plays_legal_moves(session))


@pytest.mark.parametrize(("fen", "best"), [
    ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "a1a8"),  # mate in one
    ("4k3/8/8/3p4/4Q3/8/8/4K3 w - - 0 1", "e4d5"),  # a free pawn
    ("4k3/8/2p5/3p4/8/8/3Q4/4K3 w - - 0 1", None),  # the pawn is defended: not Qxd5
    ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", None),  # stalemate: no legal move at all
])
def test_fallback_move_is_a_cheap_sensible_choice(fen: str, best: str | None) -> None:
    board = chess.Board(fen)
    move = fallback_move(board)
    if board.legal_moves.count() == 0:
        assert move is None
    elif best is not None:
        assert move == chess.Move.from_uci(best)
    else:
        assert move is not None and move in board.legal_moves and move != chess.Move.from_uci("d2d5")


def test_go_ponder_answers_only_after_ponderhit(session: Session) -> None:
    """`go ponder depth 2`: the search done, its move waits for ponderhit, which nothing has given yet (the
    thread's wait watched, not timed: the same on a busy machine); after ponderhit it comes, once."""
    session.send("position startpos moves e2e4")
    release = WatchedEvent()
    session.engine.engine.release = release
    session.engine.handle("go ponder depth 2")
    thread = session.engine.engine.search_thread
    assert thread is not None
    deadline = time.monotonic() + THREAD_TIMEOUT
    while not (release.waited.is_set() or not thread.is_alive()):
        assert time.monotonic() < deadline, "the search thread neither waited nor ended"
        time.sleep(0.01)
    early = session.output()
    assert release.waited.is_set() and not release.set_before_wait and not bestmoves(early), early
    session.engine.handle("ponderhit")
    assert session.engine.engine.wait_done(THREAD_TIMEOUT)
    lines = early + session.output()
    assert any(line.startswith("info depth 2 ") for line in lines) and len(bestmoves(lines)) == 1, lines


def test_a_ponderhit_before_the_search_thread_starts_is_not_lost(session: Session,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # A fast GUI can send ponderhit before the new search thread has run a line: the search must
    # then start on the normal clock, not ponder on until stop (a loss on time).
    searcher = session.engine.engine.searcher
    assert searcher is not None
    gate = threading.Event()
    search = searcher.search

    def late_start(board: chess.Board, limits: Limits, **kwargs: object) -> SearchResult:
        gate.wait()
        return search(board, limits, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(searcher, "search", late_start)
    session.engine.handle("go ponder wtime 300 btime 300")
    session.engine.handle("ponderhit")
    gate.set()
    # A lost ponderhit ponders on until stop: it would never end.
    assert session.engine.engine.wait_done(THREAD_TIMEOUT), "the search ponders on after ponderhit"
    assert len(bestmoves(session.output())) == 1


def test_the_protocol_loads_no_engine_module_before_uciok() -> None:
    # uciok must not wait for Numba: the engine is imported on a background thread, and the
    # protocol's types on the engine boundary are imported for type checking only.
    code = ("import sys, garfish.cli, garfish.uci.protocol; "
            "print(sorted(m for m in sys.modules if m.startswith(('numba', 'numpy', 'garfish.engine'))))")
    loaded = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]", loaded.stdout
