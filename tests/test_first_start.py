"""A start answers at once: while the kernels compile (a first start: engine.services.warmup, in child processes),
the engine says so on stderr, answers `readyok`, plays legal moves from the quick search (engine.services.quick)
within their time, and keeps the settings it is given for when it is built; while they load from the cache (a
warm start, a second or less) it answers `readyok` at once too, keeps the settings, and a `go` waits for them."""

from __future__ import annotations

import threading
from typing import Iterator

import chess
import pytest

import garfish.engine.services.warmup as warmup
from garfish.engine.services.quick import quick_move
from test_uci_engine import Session, bestmoves, errors

THREAD_TIMEOUT = 120.0  # seconds a test waits for the building it released (a guard, not a measure)


def held(monkeypatch: pytest.MonkeyPatch, cached: bool) -> Iterator[threading.Event]:
    """Engines started now find the cache cold (cached False) and 'compile', or warm and load the kernels,
    until the event is set (the kernels are in fact cached: the building then takes its usual second)."""
    done = threading.Event()
    monkeypatch.setattr(warmup, "kernels_cached", lambda: cached)
    if cached:
        load = warmup.load_kernels
        monkeypatch.setattr(warmup, "load_kernels", lambda: (done.wait(THREAD_TIMEOUT), load())[-1])
    else:
        monkeypatch.setattr(warmup, "compile_kernels", lambda: done.wait(THREAD_TIMEOUT))
    yield done
    done.set()


@pytest.fixture
def compiling(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """A first start's compile, held until the event is set."""
    yield from held(monkeypatch, cached=False)


def test_a_first_start_answers_and_plays_while_it_compiles(compiling: threading.Event) -> None:
    session = Session()
    try:
        assert session.send("uci")[-1] == "uciok"
        assert session.send("isready") == ["readyok"]  # not after the compile: at once
        assert session.engine.engine.compiling
        lines = session.send("position startpos moves e2e4", "go movetime 200")
        assert any("still compiling" in line and "quick search" in line for line in lines), lines
        assert chess.Move.from_uci(bestmoves(lines)[0]) in chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR "
                                                                         "b KQkq - 0 1").legal_moves
        # Settings given while compiling are kept, then carried out once the engine is built.
        assert not errors(session.send("setoption name Hash value 2", "setoption name EvalFile value <classic>",
                                       "setoption name Threads value 2", "ucinewgame", "setoption name Clear Hash"))
        assert session.engine.engine.searcher is None
        compiling.set()
        assert session.engine.engine.wait_ready()  # the building, once the compile is done
        assert session.send("isready") == ["readyok"]
        engine = session.engine.engine
        assert not engine.compiling and engine.searcher is not None
        assert engine.tt is not None and engine.tt.megabytes == 2 and engine.evaluator is None
        assert engine.helpers is not None and engine.helpers.count == 1
        session.engine.handle("go depth 3")
        assert engine.wait_done(THREAD_TIMEOUT)  # to its end: Session.send would stop it
        lines = session.output()
        assert any(line.startswith("info depth 3") for line in lines) and not any("quick" in line for line in lines)
    finally:
        session.engine.handle("quit")


@pytest.fixture
def loading(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """A warm start's load of the kernels, held until the event is set."""
    yield from held(monkeypatch, cached=True)


def test_a_warm_start_answers_readyok_before_its_kernels_load(loading: threading.Event) -> None:
    session = Session()
    try:
        assert session.send("uci")[-1] == "uciok"
        assert session.send("isready") == ["readyok"]  # before the kernels have loaded
        engine = session.engine.engine
        assert engine.building and not engine.compiling and engine.searcher is None
        assert not errors(session.send("setoption name Hash value 2", "setoption name Threads value 2", "ucinewgame",
                                       "position startpos moves e2e4"))
        session.engine.handle("go depth 3")  # waits for the kernels: no quick search on a warm start
        assert engine.searching and engine.searcher is None
        loading.set()
        assert engine.wait_done(THREAD_TIMEOUT)
        lines = session.output()
        assert any(line.startswith("info depth 3") for line in lines) and not any("quick" in line for line in lines)
        assert chess.Move.from_uci(bestmoves(lines)[0]) in chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR "
                                                                         "b KQkq - 0 1").legal_moves
        assert engine.tt is not None and engine.tt.megabytes == 2  # the settings kept, carried out by the build
        assert engine.helpers is not None and engine.helpers.count == 1 and not engine.building
        assert session.send("isready") == ["readyok"]
    finally:
        session.engine.handle("quit")


def test_a_warm_start_still_loading_past_a_moves_time_plays_from_the_quick_search(loading: threading.Event) -> None:
    """A game's clock runs from readyok: a `go` with a clock waits for the kernels for at most a quarter
    of it, then (their load held back here) gets a legal move from the quick search instead of losing
    on time. (A `go` without a clock, or with a movetime, waits for them: test_a_warm_start_answers...)"""
    session = Session()
    try:
        assert session.send("isready") == ["readyok"]
        lines = session.send("position startpos moves e2e4", "go wtime 2000 btime 2000")
        assert any("still loading" in line and "quick search" in line for line in lines), lines
        # Each of its finished depths as a line, as a GUI or python-chess reads a search's (multipv 1).
        assert any(line.startswith("info depth 1 seldepth 1 multipv 1 score cp ") and " pv " in line
                   for line in lines), lines
        assert chess.Move.from_uci(bestmoves(lines)[0]) in chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR "
                                                                         "b KQkq - 0 1").legal_moves
        assert session.engine.engine.building and session.engine.engine.searcher is None  # never waited for it
        loading.set()
        assert session.built() == ["readyok"]
        session.engine.handle("go depth 2")
        assert session.engine.engine.wait_done(THREAD_TIMEOUT)  # to its end: Session.send would stop it
        lines = session.output()
        assert any(line.startswith("info depth 2") for line in lines) and not any("quick" in line for line in lines)
    finally:
        session.engine.handle("quit")


def test_go_infinite_while_compiling_waits_for_stop(compiling: threading.Event) -> None:
    session = Session()
    try:
        session.send("isready")
        early = session.go_until_held("go infinite")
        assert not bestmoves(early), early  # UCI: no bestmove before stop, quick search or not
        assert len(bestmoves(early + session.send("stop"))) == 1
    finally:
        session.engine.handle("quit")


@pytest.mark.parametrize(("fen", "best"), [
    ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "a1a8"),  # mate in one
    ("4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1", "e4d5"),  # a free queen
    ("k7/8/1K6/8/8/8/8/2Q5 w - - 0 1", "c1c8"),  # mate, where Qc7 would stalemate
])
def test_the_quick_search_takes_what_is_free_and_mates(fen: str, best: str | None) -> None:
    board = chess.Board(fen)
    move = quick_move(board, 0.5, max_depth=4)
    assert move is not None and move in board.legal_moves
    if best is not None:
        assert move == chess.Move.from_uci(best)
    board.push(move)
    assert not board.is_stalemate()


def test_the_quick_search_has_nothing_to_play_in_mate_or_stalemate() -> None:
    assert quick_move(chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"), 0.1) is None
