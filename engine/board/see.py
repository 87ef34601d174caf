"""Static exchange evaluation: does a capture sequence on one square win material?"""

from __future__ import annotations

import chess
import numpy as np

from garfish.engine.board.bits import KING_ATTACKS, KNIGHT_ATTACKS, ONE, PAWN_ATTACKS, U64, bishop_attacks, lsb, rook_attacks
from garfish.engine.kernel import kernel
from garfish.engine.types import PIECE_VALUE

# A king that captures is worth more than anything it could win: the exchange only
# lets it take when nothing recaptures.
SEE_KING_VALUE = 20000
# Piece values for exchanges, indexed by python-chess piece type (0 = none).
SEE_VALUE = np.array(PIECE_VALUE[:chess.KING] + (SEE_KING_VALUE,), dtype=np.int64)
PAWN, KNIGHT, BISHOP, ROOK, QUEEN = chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN


@kernel
def _attackers_to(sq, occ, pawns, knights, bishops, rooks, queens, kings, black, white):
    """Every piece of either colour attacking sq with the given occupancy."""
    return (
        (PAWN_ATTACKS[0, sq] & pawns & white)
        | (PAWN_ATTACKS[1, sq] & pawns & black)
        | (KNIGHT_ATTACKS[sq] & knights)
        | (KING_ATTACKS[sq] & kings)
        | (bishop_attacks(sq, occ) & (bishops | queens))
        | (rook_attacks(sq, occ) & (rooks | queens))
    )


@kernel(
    "boolean(uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, int64, int64, int64, int64, int64)",
    nogil=True)
def see_ge_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, from_sq, to_sq,
                  attacker, victim, threshold):
    """True when capturing on to_sq from from_sq wins at least `threshold` after best replies.

    `attacker` and `victim` are python-chess piece types (victim 0 for a quiet
    move, pawn for en passant). Pins are ignored, as in most engines.
    """
    swap = SEE_VALUE[victim] - threshold
    if swap < 0:
        return False
    swap = SEE_VALUE[attacker] - swap
    if swap <= 0:
        return True
    from_bb = ONE << U64(from_sq)
    occ = (white | black) ^ from_bb ^ (ONE << U64(to_sq))
    stm_white = (white & from_bb) != 0
    attackers = _attackers_to(to_sq, occ, pawns, knights, bishops, rooks, queens, kings, black, white) & occ
    diag = bishops | queens
    orth = rooks | queens
    res = 1
    while True:
        stm_white = not stm_white
        attackers &= occ
        own = white if stm_white else black
        stm_attackers = attackers & own
        if not stm_attackers:
            break
        res ^= 1
        # Capture with the least valuable attacker; uncover x-ray attackers behind it.
        bb = stm_attackers & pawns
        if bb:
            swap = SEE_VALUE[PAWN] - swap
            if swap < res:
                break
            occ ^= ONE << lsb(bb)
            attackers |= bishop_attacks(to_sq, occ) & diag
            continue
        bb = stm_attackers & knights
        if bb:
            swap = SEE_VALUE[KNIGHT] - swap
            if swap < res:
                break
            occ ^= ONE << lsb(bb)
            continue
        bb = stm_attackers & bishops
        if bb:
            swap = SEE_VALUE[BISHOP] - swap
            if swap < res:
                break
            occ ^= ONE << lsb(bb)
            attackers |= bishop_attacks(to_sq, occ) & diag
            continue
        bb = stm_attackers & rooks
        if bb:
            swap = SEE_VALUE[ROOK] - swap
            if swap < res:
                break
            occ ^= ONE << lsb(bb)
            attackers |= rook_attacks(to_sq, occ) & orth
            continue
        bb = stm_attackers & queens
        if bb:
            swap = SEE_VALUE[QUEEN] - swap
            if swap < res:
                break
            occ ^= ONE << lsb(bb)
            attackers |= (bishop_attacks(to_sq, occ) & diag) | (rook_attacks(to_sq, occ) & orth)
            continue
        # Only the king is left: it may capture only if the other side has no attacker left.
        other = black if stm_white else white
        if attackers & other:
            res ^= 1
        break
    return res == 1


def see_ge(board: chess.Board, move: chess.Move, threshold: int = 0) -> bool:
    """True when `move` wins at least `threshold` centipawns by static exchange."""
    black, white = board.occupied_co
    attacker = board.piece_type_at(move.from_square) or 0
    if board.is_en_passant(move):
        victim = chess.PAWN
    else:
        victim = board.piece_type_at(move.to_square) or 0
    return bool(
        see_ge_kernel(
            board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
            black, white, move.from_square, move.to_square, attacker, victim, threshold,
        )
    )
