"""Move-ordering memory: killer moves per ply, the butterfly history of quiet moves, and their
continuation histories (what followed the move one and two plies before)."""

from __future__ import annotations

import numpy as np

from garfish.engine.kernel import kernel
from garfish.engine.types import MAX_PLY

HISTORY_MAX = 16384  # history scores stay within +-HISTORY_MAX ("gravity" update)
HISTORY_BONUS_CAP = 1200


@kernel
def history_bonus(depth: int) -> int:
    """Reward for a quiet move that caused a cut-off at this depth."""
    return min(depth * depth * 8, HISTORY_BONUS_CAP)


# Continuation history (Stockfish's continuationHistory): for the move that led to a node (its
# colour, piece and destination: a row, colour * PIECE_TO + column) a score for each reply (the
# mover's piece and destination: a column, engine.search.movepick's piece_to), read for the moves one and two plies before the node. Row NO_CONTINUATION stays zero: a
# node with no such move (the root's first plies, after a null move) reads it.
PIECE_TO = 6 * 64          # a column: (piece type - 1) * 64 + destination
NO_CONTINUATION = 2 * PIECE_TO
CONT_ROWS = NO_CONTINUATION + 1


KILLER_ROWS = MAX_PLY + 4  # a row of killers per ply the search reaches (engine.search.tree's ROWS)


class History:
    """Killers (two per ply) and history[colour][from][to] for quiet moves, as the compiled search
    (engine.search.tree) reads and updates them.

    table: the butterfly history, int64 indexed colour * 4096 + from * 64 + to; killers: int64
    [KILLER_ROWS, 2], the two killers' move codes (engine.board.moves) per ply, -1 for none;
    continuation: int16 [CONT_ROWS, PIECE_TO], the continuation history (576 KB)."""

    def __init__(self) -> None:
        self.table = np.zeros(2 * 64 * 64, dtype=np.int64)
        self.killers = np.full((KILLER_ROWS, 2), -1, dtype=np.int64)
        self.continuation = np.zeros((CONT_ROWS, PIECE_TO), dtype=np.int16)

    def clear(self) -> None:
        """Forget everything (a new game)."""
        self.table[:] = 0
        self.continuation[:] = 0
        self.clear_killers()

    def clear_killers(self) -> None:
        """Forget the killers (a new search: plies no longer match)."""
        self.killers[:] = -1
