"""SearchBoard: the root's board for the search, a python-chess Board as the search takes it.

Its castling rights are clean and it has no move stack (from_board takes the position, not the game);
the search's key history is its own. evaluate_packed gives the root's packed evaluation by the
hand-written kernel (a NetworkBoard's by the network, into its accumulators' slot). Below the root the
compiled search makes its moves on its own state (engine.board.position): the Python make and unmake
this class had before that search, now only a reference for tests, is tests/reference_board.py's.
"""

from __future__ import annotations

from typing import Optional, Self

import chess

from garfish.engine.evaluation.classic import evaluate_packed


class SearchBoard(chess.Board):
    """A Board for positions searched from a fixed root: the root's position, evaluated as the search's
    kernels evaluate it."""

    def __init__(self, fen: Optional[str] = chess.STARTING_FEN, *, chess960: bool = False) -> None:
        super().__init__(fen, chess960=chess960)

    @classmethod
    def from_board(cls, board: chess.Board) -> Self:
        """The board's current position (not its move stack), ready to search."""
        self = cls(None, chess960=board.chess960)
        self.pawns, self.knights, self.bishops = board.pawns, board.knights, board.bishops
        self.rooks, self.queens, self.kings = board.rooks, board.queens, board.kings
        self.occupied_co = [board.occupied_co[chess.BLACK], board.occupied_co[chess.WHITE]]
        self.occupied = board.occupied
        self.promoted = board.promoted
        self.turn = board.turn
        self.castling_rights = board.clean_castling_rights()
        self.ep_square = board.ep_square
        self.halfmove_clock = board.halfmove_clock
        self.fullmove_number = board.fullmove_number
        return self

    def slot(self) -> int:
        """The position's ply from the search's root, where a NetworkBoard keeps its accumulators: the
        depth of python-chess's move stack (0 at a root made by from_board)."""
        return len(self.move_stack)

    def evaluate_packed(self) -> int:
        """evaluate_kernel's packed result for the position (engine.board.flags), as the search's kernels
        evaluate a child."""
        return evaluate_packed(self)
