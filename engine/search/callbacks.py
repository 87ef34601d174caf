"""The compiled search's calls back into Python, the only Python it reaches below the root.

The search kernel (engine.search.tree) runs without the GIL. Two things it needs are Python objects:
every few hundred nodes (C_NEXT_POLL) it polls whoever runs it (the clock's hard limit, the caller's stop
flag, a helper's node count), and with tablebases set it probes them at nodes of few pieces. A kernel
cannot hold a Python object, so both go through an object-mode block (numba.objmode) to the *host*
that `hosting` made current for the kernel's run: the kernel runs in the thread that called it, and
the host is that thread's (a context variable), not an entry of a registry found by a handle. Two
searches in two threads each reach their own host.

A host (KernelHost) is engine.search.Searcher; a test may give any object with `poll` and
`tablebase`. With no host (a kernel called outside `hosting`, as the perft and picker kernels are),
the poll says go on and every probe misses.

The cost (`scripts/kernel_calls.py` times it): an object-mode block takes the GIL and converts its
arguments, 2.7 us a poll on the project's machine (busy); the poll runs once every POLL_INTERVAL (256)
nodes (engine.search.driver), about 0.01 us a node, under 1% of a node's time. A probe (10 us with tables
that answer at once, the board built in Python) runs only at nodes of few pieces with tables set.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator, Optional, Protocol

import chess
from numba import objmode

from garfish.engine.kernel import kernel

NO_WDL = 99  # probe_wdl: the position is not in the tables (or no tables)


class WdlTables(Protocol):
    """Tables the search probes (engine.services.syzygy.Tablebases)."""

    def probe_wdl(self, board: chess.Board) -> Optional[int]:
        """The WDL of the side to move (-2 to 2), None when no table holds the position."""
        ...


class KernelHost(Protocol):
    """What the compiled search calls back: its poll and its tables."""

    @property
    def tablebase(self) -> Optional[WdlTables]:
        """The tables the search probes (None: none)."""
        ...

    def poll(self, nodes: int) -> bool:
        """Called with the search's node count every few hundred nodes: whether it must stop now."""
        ...


_HOST: ContextVar[Optional[KernelHost]] = ContextVar("garfish_kernel_host", default=None)


@contextmanager
def hosting(host: KernelHost) -> Iterator[None]:
    """The kernels this thread runs inside the block call back `host` (the one before it again after)."""
    token = _HOST.set(host)
    try:
        yield
    finally:
        _HOST.reset(token)


def poll_object(nodes: int) -> int:
    """The host's poll at `nodes`: 1 when the search must stop, else 0 (0 without a host)."""
    host = _HOST.get()
    return 0 if host is None else int(host.poll(int(nodes)))


def probe_wdl_object(pawns: int, knights: int, bishops: int, rooks: int, queens: int, kings: int, black: int,
                     white: int, turn: bool, ep: int, halfmove: int) -> int:
    """The host's tables' WDL of the position (engine.services.syzygy.Tablebases.probe_wdl), NO_WDL when it
    is not in them (or there are no tables). The position has no castling rights (the search probes only
    those)."""
    host = _HOST.get()
    tablebase = None if host is None else host.tablebase
    if tablebase is None:
        return NO_WDL
    board = chess.Board(None)
    board.pawns, board.knights, board.bishops = int(pawns), int(knights), int(bishops)
    board.rooks, board.queens, board.kings = int(rooks), int(queens), int(kings)
    board.occupied_co[chess.BLACK], board.occupied_co[chess.WHITE] = int(black), int(white)
    board.occupied = int(black) | int(white)
    board.turn = bool(turn)
    board.castling_rights = 0
    board.ep_square = int(ep) if ep >= 0 else None
    board.halfmove_clock = int(halfmove)
    wdl = tablebase.probe_wdl(board)
    return NO_WDL if wdl is None else int(wdl)


@kernel
def poll(nodes):
    """poll_object from compiled code: whether the search must stop."""
    with objmode(stop="int64"):
        stop = poll_object(nodes)
    return stop != 0


@kernel
def probe_wdl(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, halfmove):
    """probe_wdl_object from compiled code (rare: few pieces, tables set)."""
    with objmode(wdl="int64"):
        wdl = probe_wdl_object(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, halfmove)
    return wdl
