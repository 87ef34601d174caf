"""Move-ordering memory: killer moves per ply and the butterfly history of quiet moves."""

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


KILLER_ROWS = MAX_PLY + 4  # a row of killers per ply the search reaches (engine.search.tree's ROWS)


class History:
    """Killers (two per ply) and history[colour][from][to] for quiet moves, as the compiled search
    (engine.search.tree) reads and updates them.

    table: the butterfly history, int64 indexed colour * 4096 + from * 64 + to; killers: int64
    [KILLER_ROWS, 2], the two killers' move codes (engine.board.moves) per ply, -1 for none."""

    def __init__(self) -> None:
        self.table = np.zeros(2 * 64 * 64, dtype=np.int64)
        self.killers = np.full((KILLER_ROWS, 2), -1, dtype=np.int64)

    def clear(self) -> None:
        """Forget everything (a new game)."""
        self.table[:] = 0
        self.clear_killers()

    def clear_killers(self) -> None:
        """Forget the killers (a new search: plies no longer match)."""
        self.killers[:] = -1
