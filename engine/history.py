"""Move-ordering memory for quiet moves: killers per ply, counter moves, the butterfly
history and a one-ply continuation history.

Pieces are indexed by colour and kind, 1-6 white pawn..king and 7-12 black, so
that (piece, to-square) names "what moved where" in a single int: piece * 64 + to.
"""

from __future__ import annotations

from typing import Optional

import chess

from engine.types import MAX_PLY

HISTORY_MAX = 16384  # history scores stay within +-HISTORY_MAX ("gravity" update)
HISTORY_BONUS_CAP = 1200


def history_bonus(depth: int) -> int:
    """Reward for a quiet move that caused a cut-off at this depth."""
    return min(depth * depth * 8, HISTORY_BONUS_CAP)


PIECE_SQUARES = 13 * 64  # (coloured piece, square) slots; piece 0 is unused


def piece_square(color: bool, piece_type: int, square: int) -> int:
    """The (coloured piece, square) slot of a piece of this colour and kind standing on square."""
    return (piece_type + (0 if color else 6)) * 64 + square


class History:
    """Killers (two per ply), counter moves, history[colour][from][to], and the
    continuation history [previous move's piece-square][this move's piece-square]."""

    def __init__(self) -> None:
        self.butterfly: list[int] = []
        self.continuation: list[int] = []
        self.counter: list[Optional[chess.Move]] = []
        self.killers: list[list[Optional[chess.Move]]] = []
        self.clear()

    def clear(self) -> None:
        """Forget everything (a new game)."""
        self.butterfly = [0] * (2 * 64 * 64)
        self.continuation = [0] * (PIECE_SQUARES * PIECE_SQUARES)
        self.counter = [None] * PIECE_SQUARES
        self.killers = [[None, None] for _ in range(MAX_PLY + 2)]

    def clear_killers(self) -> None:
        """Forget the killers (a new search: plies no longer match)."""
        self.killers = [[None, None] for _ in range(MAX_PLY + 2)]

    @staticmethod
    def index(color: bool, move: chess.Move) -> int:
        """Slot of a move in the butterfly table."""
        return (4096 if color else 0) + move.from_square * 64 + move.to_square

    def update(self, board: chess.Board, best: chess.Move, tried: list[chess.Move], depth: int, ply: int,
               previous: int) -> None:
        """Reward the quiet move that cut off, punish the quiets tried before it, record the
        killer and the counter move. previous: the piece-square slot of the opponent's last
        move (its piece on its to-square), or -1 when there is none (root, null move)."""
        color = board.turn
        piece_type_at = board.piece_type_at
        bonus = history_bonus(depth)
        table = self.butterfly
        cont = self.continuation
        base = 4096 if color else 0
        offset = 0 if color else 6
        cbase = previous * PIECE_SQUARES
        i = base + best.from_square * 64 + best.to_square
        table[i] += bonus - table[i] * bonus // HISTORY_MAX
        if previous >= 0:
            self.counter[previous] = best
            i = cbase + (piece_type_at(best.from_square) + offset) * 64 + best.to_square
            cont[i] += bonus - cont[i] * bonus // HISTORY_MAX
        for move in tried:
            if move != best:
                j = base + move.from_square * 64 + move.to_square
                table[j] -= bonus + table[j] * bonus // HISTORY_MAX
                if previous >= 0:
                    j = cbase + (piece_type_at(move.from_square) + offset) * 64 + move.to_square
                    cont[j] -= bonus + cont[j] * bonus // HISTORY_MAX
        killers = self.killers[ply]
        if killers[0] != best:
            killers[1] = killers[0]
            killers[0] = best
