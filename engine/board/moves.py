"""The move codec: a move as a 16-bit code, and the prebuilt Move of every code a game can use.

    bits  0-5   from square
    bits  6-11  to square
    bits 12-14  promotion piece type (python-chess's, 0: none)

The transposition table, the capture kernels (engine.board.captures) and the search store moves as
these codes; MOVE_TABLE turns a code back into a python-chess Move without building one.
"""

from __future__ import annotations

from typing import Optional

import chess

BB_SQUARES = chess.BB_SQUARES
TO_SHIFT = 6
PROMOTION_SHIFT = 12
SQUARE_MASK = 63


def encode(move: chess.Move) -> int:
    """16-bit code of a move: from | to << 6 | promotion << 12."""
    return move.from_square | (move.to_square << TO_SHIFT) | ((move.promotion or 0) << PROMOTION_SHIFT)


def _moves_by_code() -> dict[int, chess.Move]:
    """Every move a game can encode, by code: each step along a line (a queen's move, which
    covers the king's, the pawns' and castling) or a knight's jump, and the promotions of a
    pawn stepping or capturing onto the last rank."""
    moves = [chess.Move(from_square, to_square) for from_square in chess.SQUARES for to_square in chess.SQUARES
             if from_square != to_square and (chess.BB_RAYS[from_square][to_square]
                                              or chess.BB_KNIGHT_ATTACKS[from_square] & BB_SQUARES[to_square])]
    for from_square in chess.SquareSet(chess.BB_RANK_2 | chess.BB_RANK_7):
        ahead = from_square + (8 if chess.square_rank(from_square) == 6 else -8)
        for to_square in (ahead - 1, ahead, ahead + 1):
            if chess.square_distance(from_square, to_square) == 1:  # not round the board's edge
                moves.extend(chess.Move(from_square, to_square, piece)
                             for piece in (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN))
    return {encode(move): move for move in moves}


# Built once at import and never changed, so searchers share them safely.
MOVES_BY_CODE = _moves_by_code()
# The same moves as a list indexed by code (None for codes no game encodes): the search reads
# capture_list_kernel's codes with a list index, cheaper than a dict look-up.
MOVE_TABLE: list[Optional[chess.Move]] = [None] * (1 << 16)  # every 16-bit code
for _code, _move in MOVES_BY_CODE.items():
    MOVE_TABLE[_code] = _move


def decode(code: int) -> chess.Move:
    """The move with this 16-bit code (from MOVE_TABLE: building a Move costs more than a lookup)."""
    move = MOVE_TABLE[code]
    if move is None:  # no game encodes it
        move = chess.Move(code & SQUARE_MASK, (code >> TO_SHIFT) & SQUARE_MASK, (code >> PROMOTION_SHIFT) or None)
    return move
