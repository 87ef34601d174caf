"""The flags packed with every evaluation: what the side to move attacks, check and legality.

An evaluation kernel returns score << FLAG_BITS | flags: the search reads legality, check and
the capture hints from the flags. The hand-written kernel (engine.evaluation.classic) builds both sides'
attack maps as it scores mobility and hands them to attack_flags; the network's (engine.evaluation.nnue),
which has none of its own, builds them with side_attacks: the same flags for the same position.
"""

from __future__ import annotations

import numpy as np

from garfish.engine.board.bits import (
    KING_ATTACKS, KNIGHT_ATTACKS, ONE, bishop_attacks, black_pawn_attacks, lsb, rook_attacks, white_pawn_attacks,
)
from garfish.engine.kernel import kernel

# An evaluation kernel's result packs the score and eight flags: score << FLAG_BITS | flags.
FLAG_BITS = 8
FLAGS_MASK = (1 << FLAG_BITS) - 1
ATTACKS_PAWN = 1     # the side to move attacks an enemy pawn ...
ATTACKS_KNIGHT = 2   # ... knight
ATTACKS_BISHOP = 4   # ... bishop
ATTACKS_ROOK = 8     # ... rook
ATTACKS_QUEEN = 16   # ... queen: python-chess piece type t is bit t - 1
PROMOTION_FLAG = 32  # the side to move has a pawn on its seventh rank
IN_CHECK_FLAG = 64   # the side to move is in check
ILLEGAL_FLAG = 128   # the side to move attacks the other king: the last move was illegal
RANK_2 = np.uint64(0xFF00)
RANK_7 = np.uint64(0x00FF000000000000)


def packed_score(packed: int) -> int:
    """The score of an evaluation kernel's result: centipawns from the side to move's view."""
    return packed >> FLAG_BITS


def packed_flags(packed: int) -> int:
    """The flags of an evaluation kernel's result (ATTACKS_PAWN .. ILLEGAL_FLAG)."""
    return packed & FLAGS_MASK


@kernel
def attack_flags(pawns, knights, bishops, rooks, queens, kings, black, white, turn, white_att, black_att):
    """The flags for the side to move (turn: True for White), given every square each side
    attacks (white_att, black_att: pawns, pieces and king, on the board's occupancy)."""
    if turn:
        att = white_att
        enemy_att = black_att
        victims = black
        own = white
        promoting = pawns & white & RANK_7
    else:
        att = black_att
        enemy_att = white_att
        victims = white
        own = black
        promoting = pawns & black & RANK_2
    flags = 0
    if att & kings & victims:
        flags |= ILLEGAL_FLAG
    if enemy_att & kings & own:
        flags |= IN_CHECK_FLAG
    pieces = (pawns, knights, bishops, rooks, queens)
    for kind in range(5):
        if att & victims & pieces[kind]:
            flags |= ATTACKS_PAWN << kind
    if promoting:
        flags |= PROMOTION_FLAG
    return flags



@kernel
def side_attacks(white_side, own, pawns, knights, bishops, rooks, queens, kings, occ):
    """Every square the pieces of one side (own; white_side: is it White) attack, as attack_flags
    takes them: pawn captures, knights, sliders on the occupancy occ, and the king."""
    att = white_pawn_attacks(pawns & own) if white_side else black_pawn_attacks(pawns & own)
    bb = kings & own
    if bb:
        att |= KING_ATTACKS[lsb(bb)]
    bb = knights & own
    while bb:
        att |= KNIGHT_ATTACKS[lsb(bb)]
        bb &= bb - ONE
    bb = (bishops | queens) & own
    while bb:
        att |= bishop_attacks(lsb(bb), occ)
        bb &= bb - ONE
    bb = (rooks | queens) & own
    while bb:
        att |= rook_attacks(lsb(bb), occ)
        bb &= bb - ONE
    return att
