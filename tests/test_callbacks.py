"""The compiled search's calls back into Python (engine.search.callbacks): the host `hosting` makes current is
the one its kernels poll and probe, in its own thread only, and a search stops at the very node whose poll says so."""

from __future__ import annotations

import threading
from typing import Optional

import chess
import numpy as np

from garfish.engine import Limits, Searcher
from garfish.engine.search.callbacks import NO_WDL, hosting, poll, probe_wdl
from garfish.engine.search.tt import TranspositionTable
from garfish.engine.types import bitboards

THREAD_TIMEOUT = 60.0  # seconds a test waits for its threads (a guard, not a measure)


class Tables:
    """A stand-in for the Syzygy tables: the WDL it is told, and the boards it was asked about."""

    def __init__(self, wdl: Optional[int]) -> None:
        self.wdl = wdl
        self.asked: list[str] = []

    def probe_wdl(self, board: chess.Board) -> Optional[int]:
        self.asked.append(board.fen())
        return self.wdl


class Host:
    """A host that records the node counts it is polled with and says stop from the `stop_at`-th poll on."""

    def __init__(self, stop_at: int = 0, tablebase: Optional[Tables] = None) -> None:
        self.polled: list[int] = []
        self.stop_at = stop_at
        self.tablebase = tablebase

    def poll(self, nodes: int) -> bool:
        self.polled.append(nodes)
        return bool(self.stop_at) and len(self.polled) >= self.stop_at


def probe(board: chess.Board) -> int:
    """probe_wdl (compiled) on a board's position, as the search calls it."""
    ep = board.ep_square if board.ep_square is not None else -1
    *boards, turn = bitboards(board)
    return int(probe_wdl(*(np.uint64(bb) for bb in boards), turn, np.int64(ep), np.int64(board.halfmove_clock)))


def test_the_poll_reaches_the_current_host_and_none_without_one() -> None:
    assert not poll(np.int64(5))  # no host: go on
    outer, inner = Host(), Host(stop_at=1)
    with hosting(outer):
        assert not poll(np.int64(10))
        with hosting(inner):
            assert poll(np.int64(20))
        assert not poll(np.int64(30))  # the outer host again
    assert not poll(np.int64(40))
    assert outer.polled == [10, 30] and inner.polled == [20]


def test_each_thread_polls_its_own_host() -> None:
    hosts = [Host() for _ in range(2)]
    ready = threading.Barrier(2, timeout=THREAD_TIMEOUT)

    def run(index: int) -> None:
        with hosting(hosts[index]):
            ready.wait()  # both hosts current at once, one a thread
            for nodes in range(100):
                poll(np.int64(1000 * index + nodes))

    threads = [threading.Thread(target=run, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(THREAD_TIMEOUT)
    assert hosts[0].polled == list(range(100)) and hosts[1].polled == list(range(1000, 1100))


def test_a_probe_reaches_the_hosts_tables_with_the_position() -> None:
    board = chess.Board("8/8/8/4k3/8/8/2P5/4K3 b - - 7 1")  # the move number is not passed: 1
    assert probe(board) == NO_WDL  # no host
    with hosting(Host()):
        assert probe(board) == NO_WDL  # a host without tables
    tables = Tables(wdl=-2)
    with hosting(Host(tablebase=tables)):
        assert probe(board) == -2
        tables.wdl = None
        assert probe(board) == NO_WDL  # not in the tables
    assert tables.asked == [board.fen()] * 2


def test_a_search_stops_at_the_node_whose_poll_says_so() -> None:
    """The driver is the host of its own search: the third poll's stop ends the search at that poll's node
    count (no node searched after it), and the move is still a legal one."""
    searcher = Searcher(TranspositionTable(16))
    polled: list[int] = []

    def poll_three_times(nodes: int) -> bool:
        polled.append(nodes)
        return len(polled) >= 3

    searcher.poll = poll_three_times  # type: ignore[method-assign]
    board = chess.Board()
    result = searcher.search(board, Limits(depth=30))
    assert len(polled) == 3 and polled[0] < polled[1] < polled[2]
    assert result.nodes == polled[2] and result.move in board.legal_moves
