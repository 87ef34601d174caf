"""SearchBoard: a python-chess Board with a lean make/unmake for the search.

python-chess's push builds a _BoardState object, cleans the castling rights,
converts the move to and from Chess960 form and appends to the move stack on
every call; the search needs none of that. SearchBoard.push keeps the position
exactly as python-chess would (bitboards, promoted mask, castling rights, en
passant square, clocks, turn) but records only a tuple of the previous state in
its own undo list; pop restores it. Move generation, is_check, is_legal and the
rest are python-chess's own, reading the same fields.

The board's move_stack is left as it was at creation (the search keeps its own
key history), so python-chess methods that replay the stack (root, repetition
claims) see only the search's root. Chess960 boards use python-chess's push.
"""

from __future__ import annotations

from typing import Optional, Self

import chess
import numpy as np

from garfish.engine.board.bits import entry_point
from garfish.engine.board.flags import ILLEGAL_FLAG
from garfish.engine.evaluation.classic import evaluate_kernel, evaluate_packed
from garfish.engine.types import MAX_LISTED_MOVES

BB_SQUARES = chess.BB_SQUARES
_evaluate = entry_point(evaluate_kernel)  # the compiled entry: no dispatcher on the way (engine.board.bits.entry_point)
_NULL_MOVE = chess.Move.null()  # what pop returns: the search keeps no move stack
BB_RANK_1 = chess.BB_RANK_1
BB_RANK_8 = chess.BB_RANK_8
# Castling in standard notation (king two squares): the rook's from and to squares.
CASTLING_ROOK = {
    (chess.E1, chess.G1): (chess.H1, chess.F1),
    (chess.E1, chess.C1): (chess.A1, chess.D1),
    (chess.E8, chess.G8): (chess.H8, chess.F8),
    (chess.E8, chess.C8): (chess.A8, chess.D8),
}


class SearchBoard(chess.Board):
    """A Board whose push/pop are cheap; for positions searched from a fixed root."""

    def __init__(self, fen: Optional[str] = chess.STARTING_FEN, *, chess960: bool = False) -> None:
        super().__init__(fen, chess960=chess960)
        self._undo: list[tuple] = []
        # Where engine.board.captures' kernels write the moves they list (read at once, so one array serves every ply).
        self.codes = np.empty(MAX_LISTED_MOVES, dtype=np.int64)

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

    def push(self, move: chess.Move) -> None:
        """Make a legal (or null) move; same resulting position as chess.Board.push."""
        if self.chess960 or move.drop:
            chess.Board.push(self, move)
            return
        occupied_co = self.occupied_co
        turn = self.turn
        ep_square = self.ep_square
        self._undo.append((self.pawns, self.knights, self.bishops, self.rooks, self.queens, self.kings,
                           occupied_co[0], occupied_co[1], self.occupied, self.promoted, turn,
                           self.castling_rights, ep_square, self.halfmove_clock, self.fullmove_number))
        self.ep_square = None
        self.halfmove_clock += 1
        if not turn:
            self.fullmove_number += 1
        self.turn = not turn
        from_square = move.from_square
        to_square = move.to_square
        if from_square == to_square:
            return  # a null move (a1a1, no Move.__bool__ call): only the turn, clocks and en passant square change

        from_bb = BB_SQUARES[from_square]
        to_bb = BB_SQUARES[to_square]
        move_bb = from_bb | to_bb
        them = not turn
        self.castling_rights &= ~move_bb
        occupied_co[turn] ^= move_bb
        self.occupied ^= from_bb

        # The captured piece (en passant handled with the pawns).
        if occupied_co[them] & to_bb:
            self.halfmove_clock = 0
            occupied_co[them] ^= to_bb
            if self.pawns & to_bb:
                self.pawns ^= to_bb
            elif self.knights & to_bb:
                self.knights ^= to_bb
            elif self.bishops & to_bb:
                self.bishops ^= to_bb
            elif self.rooks & to_bb:
                self.rooks ^= to_bb
            else:
                self.queens ^= to_bb  # never a king: the move is legal
            self.promoted &= ~to_bb
        else:
            self.occupied |= to_bb

        # The moving piece.
        if self.pawns & from_bb:
            self.halfmove_clock = 0
            self.pawns ^= from_bb
            promotion = move.promotion
            if promotion:
                self.promoted |= to_bb
                if promotion == chess.QUEEN:
                    self.queens |= to_bb
                elif promotion == chess.KNIGHT:
                    self.knights |= to_bb
                elif promotion == chess.ROOK:
                    self.rooks |= to_bb
                else:
                    self.bishops |= to_bb
            else:
                self.pawns |= to_bb
                diff = to_square - from_square
                if diff == 16 or diff == -16:
                    self.ep_square = from_square + diff // 2
                elif to_square == ep_square and diff != 8 and diff != -8:
                    captured_bb = BB_SQUARES[to_square - 8 if turn else to_square + 8]
                    self.pawns ^= captured_bb
                    occupied_co[them] ^= captured_bb
                    self.occupied ^= captured_bb
        elif self.knights & from_bb:
            self.knights ^= move_bb
        elif self.bishops & from_bb:
            self.bishops ^= move_bb
        elif self.rooks & from_bb:
            self.rooks ^= move_bb
        elif self.queens & from_bb:
            self.queens ^= move_bb
        else:
            self.kings ^= move_bb
            self.castling_rights &= ~(BB_RANK_1 if turn else BB_RANK_8)
            rook = CASTLING_ROOK.get((from_square, to_square))
            if rook is not None:
                rook_bb = BB_SQUARES[rook[0]] | BB_SQUARES[rook[1]]
                self.rooks ^= rook_bb
                occupied_co[turn] ^= rook_bb
                self.occupied ^= rook_bb
                return
        if self.promoted & from_bb:
            self.promoted ^= move_bb

    def push_legal(self, move: chess.Move) -> Optional[int]:
        """Make a pseudo-legal move and return evaluate_kernel's packed result for the new position;
        or, when the move leaves the mover's king attacked (ILLEGAL_FLAG), unmake it and return None."""
        self.push(move)
        occupied_co = self.occupied_co
        packed = _evaluate(self.pawns, self.knights, self.bishops, self.rooks, self.queens, self.kings,
                           occupied_co[0], occupied_co[1], self.turn)
        if packed & ILLEGAL_FLAG:
            self.pop()
            return None
        return packed

    def slot(self) -> int:
        """The position's ply from the search's root, where a NetworkBoard keeps its accumulators: the
        depth of the undo list, or of python-chess's move stack on a Chess960 board, whose moves
        python-chess makes."""
        return len(self._undo or self.move_stack)

    def evaluate_packed(self) -> int:
        """evaluate_kernel's packed result for the position, as push_legal returns it."""
        return evaluate_packed(self)

    def pop(self) -> chess.Move:
        """Unmake the last push. (Returns the null move: the search does not keep a move stack.)"""
        if self.chess960:
            return chess.Board.pop(self)
        (self.pawns, self.knights, self.bishops, self.rooks, self.queens, self.kings, black, white,
         self.occupied, self.promoted, self.turn, self.castling_rights, self.ep_square, self.halfmove_clock,
         self.fullmove_number) = self._undo.pop()
        self.occupied_co[0] = black  # python-chess's order: index 0 is chess.BLACK
        self.occupied_co[1] = white
        return _NULL_MOVE
