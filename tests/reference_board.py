"""The Python make and unmake of the search's board before the compiled search (engine.board.position's
make_move replaced it below the root): PushBoard, a SearchBoard whose push keeps the position exactly as
python-chess's push would (bitboards, promoted mask, castling rights, en passant square, clocks, turn) but
records only a tuple of the previous state, and pop restores it; push_legal scores the move with the
evaluation's kernel as the search does, and takes it back when it leaves the king attacked. The tests hold
the compiled make, the picker and the quiescence search to it, and it to python-chess. NetworkPushBoard
does the same with a network, its accumulators updated a ply at a time (network_board makes one).

The board's move_stack is left as it was at creation (the search keeps its own key history), so
python-chess methods that replay the stack see only the root. Chess960 boards use python-chess's push.
"""

from __future__ import annotations

from typing import Optional

import chess
import numpy as np

from garfish.engine.board.bits import entry_point
from garfish.engine.board.flags import ILLEGAL_FLAG
from garfish.engine.board.searchboard import SearchBoard
from garfish.engine.evaluation.accumulators import network_update_kernel
from garfish.engine.evaluation.classic import evaluate_kernel
from garfish.engine.evaluation.nnue import NetworkBoard, NetworkEvaluator
from garfish.engine.types import MAX_LISTED_MOVES

BB_SQUARES = chess.BB_SQUARES
_evaluate = entry_point(evaluate_kernel)  # the compiled entry: no dispatcher on the way (engine.board.bits.entry_point)
_network_update = entry_point(network_update_kernel)
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


class PushBoard(SearchBoard):
    """A SearchBoard whose push/pop are cheap (the search's Python make and unmake before it was compiled)."""

    def __init__(self, fen: Optional[str] = chess.STARTING_FEN, *, chess960: bool = False) -> None:
        super().__init__(fen, chess960=chess960)
        self._undo: list[tuple] = []
        # Where engine.board.captures' kernels write the moves they list (read at once, so one array serves every ply).
        self.codes = np.empty(MAX_LISTED_MOVES, dtype=np.int64)

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
        """The position's ply from the root: the depth of the undo list, or of python-chess's move stack on
        a Chess960 board, whose moves python-chess makes."""
        return len(self._undo or self.move_stack)

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


class NetworkPushBoard(PushBoard, NetworkBoard):
    """A PushBoard that evaluates with a network: push_legal runs network_update_kernel on the board's own
    accumulators (one pair per ply; make and unmake do no network work)."""

    def push_legal(self, move: chess.Move) -> Optional[int]:
        """PushBoard.push_legal with the network's evaluation. (The kernel is called here as in
        evaluate_packed, not through it: a Python call less per node.)"""
        self.push(move)
        occupied_co = self.occupied_co
        packed = _network_update(self.pawns, self.knights, self.bishops, self.rooks, self.queens, self.kings,
                                 occupied_co[0], occupied_co[1], self.turn, self.weights, self.params, self.state,
                                 len(self._undo or self.move_stack))
        if packed & ILLEGAL_FLAG:
            self.pop()
            return None
        return packed


def network_board(evaluator: NetworkEvaluator, board: chess.Board) -> NetworkPushBoard:
    """The board's position as a NetworkPushBoard on the evaluator's network, with fresh accumulators."""
    pushed = NetworkPushBoard.from_board(board)
    pushed.use_network(evaluator)
    return pushed
