"""Threads: Lazy SMP helper processes on a shared transposition table (engine/smp.py, engine/tt.py)."""

from __future__ import annotations

import os
import signal
import time
from typing import Iterator

import chess
import pytest

from garfish.engine.bench import BENCH_FENS
from garfish.engine.search import Searcher
from garfish.engine.smp import SKIP_PHASE, SKIP_SIZE, HelperSearcher
from garfish.engine.tt import TranspositionTable, unpack
from garfish.engine.types import Limits
from conftest import children, wait_gone
from test_uci_robustness import UciPipe

READY_TIMEOUT = 60.0  # seconds for a helper process to start (imports and Numba's cache) on a busy machine
READY_WAIT = 3.0  # seconds that are plenty for a helper to start on an idle machine


@pytest.fixture
def warnings() -> list[str]:
    return []


@pytest.fixture
def threaded(warnings: list[str]) -> Iterator[Searcher]:
    """A searcher with one helper process, started and ready."""
    searcher = Searcher(16)
    searcher.set_threads(2, warnings.append)
    assert searcher.helpers is not None and searcher.helpers.wait_ready(READY_TIMEOUT)
    yield searcher
    searcher.close()


def test_a_torn_entry_fails_its_key_check() -> None:
    tt = TranspositionTable(1, shared=True)
    try:
        reader = TranspositionTable.attach(tt.block.name, 1)  # type: ignore[union-attr]
        key = 0x123456789ABCDEF
        tt.store(key, 100, 37, 9, 1)
        assert unpack(reader.probe(key)) == (100, 37, 9, 1)
        slot = next(i for i in range(len(tt.data)) if tt.data[i])
        # Another writer's data under this key word (its key word not yet written): ignored.
        tt.data[slot] = tt.data[slot] ^ (5 << 48)
        assert reader.probe(key) == 0 and tt.probe(key) == 0
        # Written whole again, it is found again.
        tt.store(key, 100, 37, 9, 1)
        assert unpack(reader.probe(key)) == (100, 37, 9, 1)
        reader.close()
    finally:
        tt.close()


def test_the_helpers_skip_iterations_as_stockfish_9_did() -> None:
    skipped = []
    for index in range(4):
        helper = HelperSearcher.__new__(HelperSearcher)
        helper.skip_size, helper.skip_phase, helper.game_ply = SKIP_SIZE[index], SKIP_PHASE[index], 0
        skipped.append([depth for depth in range(1, 9) if helper.skip_iteration(depth)])
    assert skipped == [[3, 5, 7], [2, 4, 6, 8], [2, 3, 6, 7], [2, 5, 6]]
    assert not Searcher(1).skip_iteration(5)


def test_helpers_search_with_the_main_search_and_share_its_table(threaded: Searcher, warnings: list[str]) -> None:
    board = chess.Board(BENCH_FENS[3])
    result = threaded.search(board, Limits(movetime=1.5))
    assert result.move in board.legal_moves
    helper_nodes = threaded.helpers.nodes()  # type: ignore[union-attr]
    assert helper_nodes > 1000 and result.nodes == threaded.nodes + helper_nodes
    # The helpers wrote into the table: it holds more entries than the main search stored alone.
    alone = Searcher(16)
    alone.search(board, Limits(nodes=threaded.nodes))
    assert threaded.tt.hashfull() > alone.tt.hashfull()
    # searchmoves binds the helpers' root too; the result comes from the main search.
    wanted = [chess.Move.from_uci(next(iter(board.legal_moves)).uci())]
    assert threaded.search(board, Limits(movetime=0.3, searchmoves=wanted)).move == wanted[0]
    assert warnings == []


def test_resizing_the_table_and_a_new_game_reach_the_helpers(threaded: Searcher, warnings: list[str]) -> None:
    board = chess.Board()
    threaded.search(board, Limits(movetime=0.5))
    threaded.resize_hash(8)
    assert threaded.tt.megabytes == 8 and threaded.tt.block is not None
    threaded.new_game()
    assert threaded.tt.hashfull() == 0
    result = threaded.search(board, Limits(movetime=1.0))
    assert result.move in board.legal_moves and threaded.helpers.nodes() > 1000  # type: ignore[union-attr]
    assert warnings == []


def test_a_helper_that_dies_is_reported_and_started_again(threaded: Searcher, warnings: list[str]) -> None:
    pool = threaded.helpers
    assert pool is not None
    pool.helpers[0].process.kill()  # type: ignore[union-attr]
    pool.helpers[0].process.join(5)  # type: ignore[union-attr]
    board = chess.Board(BENCH_FENS[5])
    result = threaded.search(board, Limits(movetime=0.3))
    assert result.move in board.legal_moves
    assert len(warnings) == 1 and "search helper 1 failed" in warnings[0] and "died" in warnings[0]
    assert pool.wait_ready(READY_TIMEOUT)
    result = threaded.search(board, Limits(movetime=1.0))
    assert result.move in board.legal_moves and pool.nodes() > 1000 and len(warnings) == 1


def test_threads_one_is_a_private_table_again(warnings: list[str]) -> None:
    searcher = Searcher(4)
    searcher.set_threads(3, warnings.append)
    assert searcher.helpers is not None and searcher.helpers.count == 2 and searcher.tt.block is not None
    pids = [helper.process.pid for helper in searcher.helpers.helpers]  # type: ignore[union-attr]
    searcher.set_threads(1, warnings.append)
    assert searcher.helpers is None and searcher.tt.block is None and searcher.tt.megabytes == 4
    assert wait_gone(pids, 5.0) == []
    assert searcher.search(chess.Board(), Limits(depth=4)).move is not None


def uci_with_helpers(threads: int) -> tuple[UciPipe, list[int]]:
    """An engine process with Threads set, after a search (so its helpers are up); its children."""
    pipe = UciPipe()
    pipe.send("uci", f"setoption name Threads value {threads}", "position startpos", "go movetime 500")
    move, seen = pipe.bestmove(READY_TIMEOUT)
    assert move != "0000" and not [line for line in seen if "error" in line]
    deadline = time.monotonic() + READY_TIMEOUT
    while len(children(pipe.proc.pid)) < threads - 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    return pipe, children(pipe.proc.pid)


def test_quit_leaves_no_process_behind() -> None:
    pipe, kids = uci_with_helpers(3)
    try:
        assert len(kids) >= 2  # the helpers (and multiprocessing's resource tracker)
        pipe.send("go infinite")
        time.sleep(0.5)
        started = time.monotonic()
        pipe.send("stop")
        pipe.bestmove(5)
        assert time.monotonic() - started < 1.0
        pipe.send("quit")
        assert pipe.proc.wait(10) == 0
        assert wait_gone(kids, 5.0) == []
    finally:
        pipe.close()


@pytest.mark.parametrize("how", ["killed", "stdin closed"])
def test_helpers_do_not_outlive_a_killed_engine_or_a_vanished_gui(how: str) -> None:
    pipe, kids = uci_with_helpers(2)
    try:
        assert kids
        pipe.send("go infinite")  # the helpers are searching when it happens
        time.sleep(0.5)
        if how == "killed":
            os.kill(pipe.proc.pid, signal.SIGKILL)
        else:
            assert pipe.proc.stdin is not None
            pipe.proc.stdin.close()
        assert wait_gone(kids, 5.0) == []
    finally:
        pipe.close()


def test_hash_changes_while_the_helpers_start_are_not_errors() -> None:
    # The helpers attach to the table by name; a Hash set before they are up replaces that table.
    pipe = UciPipe()
    try:
        pipe.send("uci", "setoption name Threads value 2", "setoption name Hash value 8",
                  "setoption name Hash value 4", "position startpos", "go movetime 300")
        pipe.bestmove(READY_TIMEOUT)
        time.sleep(READY_WAIT)
        pipe.send("go movetime 1000")
        move, seen = pipe.bestmove(READY_TIMEOUT)
        assert move != "0000" and not [line for line in pipe.history if "error" in line], pipe.history
        nodes = [int(line.split(" nodes ")[1].split()[0]) for line in seen if " nodes " in line]
        assert nodes and nodes[-1] > 0
    finally:
        pipe.close()
