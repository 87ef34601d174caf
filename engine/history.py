"""Move-ordering memory: killer moves per ply and the butterfly history of quiet moves."""

from __future__ import annotations

from array import array
from typing import Optional

import chess
import numpy as np

from garfish.engine.moves import encode
from garfish.engine.types import MAX_PLY

HISTORY_MAX = 16384  # history scores stay within +-HISTORY_MAX ("gravity" update)
HISTORY_BONUS_CAP = 1200


def history_bonus(depth: int) -> int:
    """Reward for a quiet move that caused a cut-off at this depth."""
    return min(depth * depth * 8, HISTORY_BONUS_CAP)


class History:
    """Killers (two per ply) and history[colour][from][to] for quiet moves.

    butterfly: the history as an array of int64 (indexed colour * 4096 + from * 64 + to), read and
    updated from Python as fast as a list; table: a NumPy view of the same memory, which the move
    picker's quiet kernel (engine.captures.quiet_list_kernel) sorts by."""

    def __init__(self) -> None:
        self.butterfly = array("q")
        self.table = np.zeros(0, dtype=np.int64)
        self.killers: list[list[Optional[chess.Move]]] = []
        self.killer_codes: list[list[int]] = []  # the killers' move codes (engine.moves; -1: none), for the kernels
        self.clear()

    def clear(self) -> None:
        """Forget everything (a new game)."""
        self.butterfly = array("q", bytes(8 * 2 * 64 * 64))
        self.table = np.frombuffer(self.butterfly, dtype=np.int64)
        self.clear_killers()

    def clear_killers(self) -> None:
        """Forget the killers (a new search: plies no longer match)."""
        self.killers = [[None, None] for _ in range(MAX_PLY + 2)]
        self.killer_codes = [[-1, -1] for _ in range(MAX_PLY + 2)]

    def update(self, color: bool, best: chess.Move, tried: list[chess.Move], depth: int, ply: int) -> None:
        """Reward the quiet move that cut off, punish the quiets tried before it, record the killer."""
        bonus = history_bonus(depth)
        table = self.butterfly
        base = 4096 if color else 0
        i = base + best.from_square * 64 + best.to_square
        table[i] += bonus - table[i] * bonus // HISTORY_MAX
        for move in tried:
            if move is not best:  # never in tried (the search adds a move after its cut-off test); no Move.__eq__
                j = base + move.from_square * 64 + move.to_square
                table[j] -= bonus + table[j] * bonus // HISTORY_MAX
        self.record_killer(best, ply)

    def record_killer(self, best: chess.Move, ply: int) -> None:
        """A quiet move cut off at this ply: the first killer, the old first the second (unless the same)."""
        killers = self.killers[ply]
        if killers[0] != best:
            killers[1] = killers[0]
            killers[0] = best
            codes = self.killer_codes[ply]
            codes[1] = codes[0]
            codes[0] = encode(best)
