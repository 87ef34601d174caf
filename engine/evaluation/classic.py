"""Static evaluation: a Numba kernel over python-chess bitboards.

Terms (each with a middlegame and an endgame weight, tapered by game phase):
material and piece-square tables, mobility, pawn structure (doubled, isolated,
passed pawns by rank), king safety (pawn shield, attackers near the king),
bishop pair, rooks on open and half-open files, and a tempo bonus.

The score is computed from the side to move's point of view before tapering,
so a position and its colour mirror evaluate identically (the tests check it).
"""

from __future__ import annotations

import chess
import numpy as np

from garfish.engine.board.bits import (
    KING_ATTACKS, KNIGHT_ATTACKS, ONE, U64,
    bishop_attacks, black_pawn_attacks, lsb, popcount, rook_attacks, white_pawn_attacks,
)
from garfish.engine.board.flags import (  # noqa: F401 (the flags' names, re-exported for evaluate_kernel's callers)
    ATTACKS_BISHOP, ATTACKS_KNIGHT, ATTACKS_PAWN, ATTACKS_QUEEN, ATTACKS_ROOK, FLAG_BITS, FLAGS_MASK, ILLEGAL_FLAG,
    IN_CHECK_FLAG, PROMOTION_FLAG, attack_flags, packed_score,
)
from garfish.engine.kernel import kernel
from garfish.engine.types import bitboards

# Material and piece-square tables: PeSTO's values by Ronald Friederich
# (chessprogramming.org/PeSTO's_Evaluation_Function, RofChade, Texel-tuned).
# Written from White's side with a8 first, as published; _square_table() turns
# them into a1-first tables.
MG_VALUE = (82, 337, 365, 477, 1025, 0)
EG_VALUE = (94, 281, 297, 512, 936, 0)

_PESTO_MG = (
    (   0,   0,   0,   0,   0,   0,   0,   0,
       98, 134,  61,  95,  68, 126,  34, -11,
       -6,   7,  26,  31,  65,  56,  25, -20,
      -14,  13,   6,  21,  23,  12,  17, -23,
      -27,  -2,  -5,  12,  17,   6,  10, -25,
      -26,  -4,  -4, -10,   3,   3,  33, -12,
      -35,  -1, -20, -23, -15,  24,  38, -22,
        0,   0,   0,   0,   0,   0,   0,   0),
    (-167, -89, -34, -49,  61, -97, -15,-107,
      -73, -41,  72,  36,  23,  62,   7, -17,
      -47,  60,  37,  65,  84, 129,  73,  44,
       -9,  17,  19,  53,  37,  69,  18,  22,
      -13,   4,  16,  13,  28,  19,  21,  -8,
      -23,  -9,  12,  10,  19,  17,  25, -16,
      -29, -53, -12,  -3,  -1,  18, -14, -19,
     -105, -21, -58, -33, -17, -28, -19, -23),
    ( -29,   4, -82, -37, -25, -42,   7,  -8,
      -26,  16, -18, -13,  30,  59,  18, -47,
      -16,  37,  43,  40,  35,  50,  37,  -2,
       -4,   5,  19,  50,  37,  37,   7,  -2,
       -6,  13,  13,  26,  34,  12,  10,   4,
        0,  15,  15,  15,  14,  27,  18,  10,
        4,  15,  16,   0,   7,  21,  33,   1,
      -33,  -3, -14, -21, -13, -12, -39, -21),
    (  32,  42,  32,  51,  63,   9,  31,  43,
       27,  32,  58,  62,  80,  67,  26,  44,
       -5,  19,  26,  36,  17,  45,  61,  16,
      -24, -11,   7,  26,  24,  35,  -8, -20,
      -36, -26, -12,  -1,   9,  -7,   6, -23,
      -45, -25, -16, -17,   3,   0,  -5, -33,
      -44, -16, -20,  -9,  -1,  11,  -6, -71,
      -19, -13,   1,  17,  16,   7, -37, -26),
    ( -28,   0,  29,  12,  59,  44,  43,  45,
      -24, -39,  -5,   1, -16,  57,  28,  54,
      -13, -17,   7,   8,  29,  56,  47,  57,
      -27, -27, -16, -16,  -1,  17,  -2,   1,
       -9, -26,  -9, -10,  -2,  -4,   3,  -3,
      -14,   2, -11,  -2,  -5,   2,  14,   5,
      -35,  -8,  11,   2,   8,  15,  -3,   1,
       -1, -18,  -9,  10, -15, -25, -31, -50),
    ( -65,  23,  16, -15, -56, -34,   2,  13,
       29,  -1, -20,  -7,  -8,  -4, -38, -29,
       -9,  24,   2, -16, -20,   6,  22, -22,
      -17, -20, -12, -27, -30, -25, -14, -36,
      -49,  -1, -27, -39, -46, -44, -33, -51,
      -14, -14, -22, -46, -44, -30, -15, -27,
        1,   7,  -8, -64, -43, -16,   9,   8,
      -15,  36,  12, -54,   8, -28,  24,  14),
)
_PESTO_EG = (
    (   0,   0,   0,   0,   0,   0,   0,   0,
      178, 173, 158, 134, 147, 132, 165, 187,
       94, 100,  85,  67,  56,  53,  82,  84,
       32,  24,  13,   5,  -2,   4,  17,  17,
       13,   9,  -3,  -7,  -7,  -8,   3,  -1,
        4,   7,  -6,   1,   0,  -5,  -1,  -8,
       13,   8,   8,  10,  13,   0,   2,  -7,
        0,   0,   0,   0,   0,   0,   0,   0),
    ( -58, -38, -13, -28, -31, -27, -63, -99,
      -25,  -8, -25,  -2,  -9, -25, -24, -52,
      -24, -20,  10,   9,  -1,  -9, -19, -41,
      -17,   3,  22,  22,  22,  11,   8, -18,
      -18,  -6,  16,  25,  16,  17,   4, -18,
      -23,  -3,  -1,  15,  10,  -3, -20, -22,
      -42, -20, -10,  -5,  -2, -20, -23, -44,
      -29, -51, -23, -15, -22, -18, -50, -64),
    ( -14, -21, -11,  -8,  -7,  -9, -17, -24,
       -8,  -4,   7, -12,  -3, -13,  -4, -14,
        2,  -8,   0,  -1,  -2,   6,   0,   4,
       -3,   9,  12,   9,  14,  10,   3,   2,
       -6,   3,  13,  19,   7,  10,  -3,  -9,
      -12,  -3,   8,  10,  13,   3,  -7, -15,
      -14, -18,  -7,  -1,   4,  -9, -15, -27,
      -23,  -9, -23,  -5,  -9, -16,  -5, -17),
    (  13,  10,  18,  15,  12,  12,   8,   5,
       11,  13,  13,  11,  -3,   3,   8,   3,
        7,   7,   7,   5,   4,  -3,  -5,  -3,
        4,   3,  13,   1,   2,   1,  -1,   2,
        3,   5,   8,   4,  -5,  -6,  -8, -11,
       -4,   0,  -5,  -1,  -7, -12,  -8, -16,
       -6,  -6,   0,   2,  -9,  -9, -11,  -3,
       -9,   2,   3,  -1,  -5, -13,   4, -20),
    (  -9,  22,  22,  27,  27,  19,  10,  20,
      -17,  20,  32,  41,  58,  25,  30,   0,
      -20,   6,   9,  49,  47,  35,  19,   9,
        3,  22,  24,  45,  57,  40,  57,  36,
      -18,  28,  19,  47,  31,  34,  39,  23,
      -16, -27,  15,   6,   9,  17,  10,   5,
      -22, -23, -30, -16, -16, -23, -36, -32,
      -33, -28, -22, -43,  -5, -32, -20, -41),
    ( -74, -35, -18, -18, -11,  15,   4, -17,
      -12,  17,  14,  17,  17,  38,  23,  11,
       10,  17,  23,  15,  20,  45,  44,  13,
       -8,  22,  24,  27,  26,  33,  26,   3,
      -18,  -4,  21,  24,  27,  23,   9, -11,
      -19,  -3,  11,  21,  23,  16,   7,  -9,
      -27, -11,   4,  13,  14,   4,  -5, -17,
      -53, -34, -21, -11, -28, -14, -24, -43),
)


def _square_table(pesto: tuple, values: tuple) -> np.ndarray:
    """TABLE[piece, sq] = value + bonus for a white piece on sq (a1 = 0)."""
    table = np.zeros((6, 64), dtype=np.int64)
    for kind in range(6):
        for sq in range(64):
            table[kind, sq] = values[kind] + pesto[kind][sq ^ 56]
    return table


PST_MG = _square_table(_PESTO_MG, MG_VALUE)
PST_EG = _square_table(_PESTO_EG, EG_VALUE)

# Game phase: 24 with all minor and major pieces on the board, 0 with none.
PHASE_WEIGHT = np.array([0, 1, 1, 2, 4, 0], dtype=np.int64)
PHASE_MAX = 24

# Mobility: (squares attacked outside own pieces and enemy pawn attacks - baseline) * weight.
MOBILITY_BASE = np.array([0, 4, 6, 7, 13, 0], dtype=np.int64)
MOBILITY_MG = np.array([0, 4, 4, 2, 1, 0], dtype=np.int64)
MOBILITY_EG = np.array([0, 4, 5, 4, 2, 0], dtype=np.int64)

# Pawn structure, indexed by the pawn's rank counted from its own side (0..7).
PASSED_MG = np.array([0, 0, 5, 10, 20, 35, 60, 0], dtype=np.int64)
PASSED_EG = np.array([0, 5, 10, 18, 30, 50, 80, 0], dtype=np.int64)
DOUBLED_MG, DOUBLED_EG = 8, 20
ISOLATED_MG, ISOLATED_EG = 8, 12

# King safety: shield pawns one and two ranks ahead of a castled-side king, and
# weighted attacks of enemy pieces on the squares around the king.
SHIELD_NEAR_MG, SHIELD_FAR_MG = 12, 6
KING_ATTACK_WEIGHT = np.array([0, 2, 2, 3, 5, 0], dtype=np.int64)
KING_DANGER_MAX = 500

BISHOP_PAIR_MG, BISHOP_PAIR_EG = 25, 50
ROOK_OPEN_MG, ROOK_OPEN_EG = 25, 10
ROOK_HALF_OPEN_MG, ROOK_HALF_OPEN_EG = 12, 6
TEMPO = 10


def _file_masks() -> np.ndarray:
    """FILES[f]: all squares of file f."""
    return np.array([0x0101010101010101 << f for f in range(8)], dtype=np.uint64)


def _adjacent_files() -> np.ndarray:
    """ADJACENT_FILES[f]: the files beside file f."""
    files = [0x0101010101010101 << f for f in range(8)]
    return np.array(
        [(files[f - 1] if f > 0 else 0) | (files[f + 1] if f < 7 else 0) for f in range(8)], dtype=np.uint64
    )


def _passed_masks() -> np.ndarray:
    """PASSED[color, sq]: squares ahead on the same and adjacent files (color 0 = white)."""
    table = np.zeros((2, 64), dtype=np.uint64)
    for sq in range(64):
        f, r = sq % 8, sq // 8
        for color, ranks in ((0, range(r + 1, 8)), (1, range(0, r))):
            bb = 0
            for rr in ranks:
                for ff in (f - 1, f, f + 1):
                    if 0 <= ff < 8:
                        bb |= 1 << (rr * 8 + ff)
            table[color, sq] = bb
    return table


def _shield_masks() -> np.ndarray:
    """SHIELD[color, distance - 1, sq]: the three squares in front of a king 1 or 2 ranks ahead."""
    table = np.zeros((2, 2, 64), dtype=np.uint64)
    for sq in range(64):
        f, r = sq % 8, sq // 8
        for color, step in ((0, 1), (1, -1)):
            for dist in (1, 2):
                rr = r + step * dist
                bb = 0
                if 0 <= rr < 8:
                    for ff in (f - 1, f, f + 1):
                        if 0 <= ff < 8:
                            bb |= 1 << (rr * 8 + ff)
                table[color, dist - 1, sq] = bb
    return table


FILES = _file_masks()
ADJACENT_FILES = _adjacent_files()
PASSED = _passed_masks()
SHIELD = _shield_masks()
WHITE_TERMS, BLACK_TERMS = np.int64(0), np.int64(1)  # _side_terms' colour, typed (engine.board.bits.NONE_YET says why)


@kernel
def _side_terms(color, own, enemy, pawns, knights, bishops, rooks, queens, kings, occ, enemy_pawn_att):
    """One side's (mg, eg, phase, attacked squares) terms, from that side's point of view."""
    mg = np.int64(0)
    eg = np.int64(0)
    phase = 0
    own_pawns = pawns & own
    enemy_pawns = pawns & enemy
    mobility_area = ~(own | enemy_pawn_att)
    enemy_king_sq = lsb(kings & enemy)
    king_zone = KING_ATTACKS[enemy_king_sq] | (ONE << enemy_king_sq)
    attack_units = 0
    attackers = 0
    all_att = KING_ATTACKS[lsb(kings & own)]
    pieces = (pawns, knights, bishops, rooks, queens, kings)
    for kind in range(6):
        bb = pieces[kind] & own
        while bb:
            sq = lsb(bb)
            bb &= bb - ONE
            # Material and piece-square tables (black pieces look up the mirrored square).
            psq = sq if color == 0 else sq ^ U64(56)
            mg += PST_MG[kind, psq]
            eg += PST_EG[kind, psq]
            phase += PHASE_WEIGHT[kind]
            if kind == 0:
                f = sq & U64(7)
                rel_rank = (sq >> U64(3)) if color == 0 else U64(7) - (sq >> U64(3))
                # Passed pawn: no enemy pawn ahead on this or an adjacent file.
                if not (PASSED[color, sq] & enemy_pawns):
                    mg += PASSED_MG[rel_rank]
                    eg += PASSED_EG[rel_rank]
                # Isolated pawn: no friendly pawn on an adjacent file.
                if not (ADJACENT_FILES[f] & own_pawns):
                    mg -= ISOLATED_MG
                    eg -= ISOLATED_EG
                continue
            if kind == 5:
                continue
            if kind == 1:
                att = KNIGHT_ATTACKS[sq]
            elif kind == 2:
                att = bishop_attacks(sq, occ)
            elif kind == 3:
                att = rook_attacks(sq, occ)
                f = sq & U64(7)
                if not (FILES[f] & pawns):
                    mg += ROOK_OPEN_MG
                    eg += ROOK_OPEN_EG
                elif not (FILES[f] & own_pawns):
                    mg += ROOK_HALF_OPEN_MG
                    eg += ROOK_HALF_OPEN_EG
            else:
                att = bishop_attacks(sq, occ) | rook_attacks(sq, occ)
            all_att |= att
            # Mobility.
            mob = np.int64(popcount(att & mobility_area))
            mg += (mob - MOBILITY_BASE[kind]) * MOBILITY_MG[kind]
            eg += (mob - MOBILITY_BASE[kind]) * MOBILITY_EG[kind]
            # Attacks near the enemy king.
            near = att & king_zone
            if near:
                attackers += 1
                attack_units += KING_ATTACK_WEIGHT[kind] * np.int64(popcount(near))
    # Doubled pawns: every pawn beyond the first on a file.
    for f in range(8):
        n = np.int64(popcount(FILES[f] & own_pawns))
        if n > 1:
            mg -= DOUBLED_MG * (n - 1)
            eg -= DOUBLED_EG * (n - 1)
    # Bishop pair.
    if popcount(bishops & own) >= 2:
        mg += BISHOP_PAIR_MG
        eg += BISHOP_PAIR_EG
    # Danger we create around the enemy king (counted for us, a middlegame term).
    if attackers >= 2:
        danger = attack_units * attack_units // 4
        if not (queens & own):
            danger //= 2
        mg += min(danger, KING_DANGER_MAX)
    # Our own king's pawn shield.
    king_sq = lsb(kings & own)
    mg += SHIELD_NEAR_MG * np.int64(popcount(SHIELD[color, 0, king_sq] & own_pawns))
    mg += SHIELD_FAR_MG * np.int64(popcount(SHIELD[color, 1, king_sq] & own_pawns))
    return mg, eg, phase, all_att


@kernel(
    "int64(uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, boolean)",
    nogil=True)
def evaluate_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn):
    """Score from the side to move's view, packed with capture hints: score << FLAG_BITS | flags.

    ATTACKS_PAWN .. ATTACKS_QUEEN (bit t - 1 for python-chess type t) are set when the side
    to move attacks an enemy piece of that type, and PROMOTION_FLAG when it has a
    pawn on its seventh rank: the quiescence search skips move generation when
    no capture can matter. From the same attack maps, IN_CHECK_FLAG and
    ILLEGAL_FLAG: the search calls this right after each pseudo-legal move, so one
    call answers legality, check and the evaluation. Use evaluate() for the plain score.
    The flags are engine.board.flags' (attack_flags), shared with the network's kernels.
    """
    occ = white | black
    if not (kings & white) or not (kings & black):
        return 0  # not a real position; the search never gets here
    white_pawn_att = white_pawn_attacks(pawns & white)
    black_pawn_att = black_pawn_attacks(pawns & black)
    w_mg, w_eg, w_phase, w_att = _side_terms(WHITE_TERMS, white, black, pawns, knights, bishops, rooks, queens,
                                             kings, occ, black_pawn_att)
    b_mg, b_eg, b_phase, b_att = _side_terms(BLACK_TERMS, black, white, pawns, knights, bishops, rooks, queens,
                                             kings, occ, white_pawn_att)
    phase = w_phase + b_phase
    if turn:
        mg = w_mg - b_mg
        eg = w_eg - b_eg
    else:
        mg = b_mg - w_mg
        eg = b_eg - w_eg
    if phase > PHASE_MAX:
        phase = PHASE_MAX
    score = (mg * phase + eg * (PHASE_MAX - phase)) // PHASE_MAX
    # A side without pawns and at most a minor piece more cannot win: scale down.
    strong = white if (score > 0) == turn else black
    if not (pawns & strong):
        non_pawn = (knights | bishops | rooks | queens)
        if popcount(non_pawn & strong) <= ONE and not ((rooks | queens) & strong):
            score //= 8
    # Capture hints, check and legality for the side to move, from the attack maps built above.
    flags = attack_flags(pawns, knights, bishops, rooks, queens, kings, black, white, turn,
                         w_att | white_pawn_att, b_att | black_pawn_att)
    return ((score + TEMPO) << FLAG_BITS) | flags


def evaluate_packed(board: chess.Board) -> int:
    """evaluate_kernel's packed result for the board: score << FLAG_BITS | flags (ATTACKS_PAWN ..
    ATTACKS_QUEEN, PROMOTION_FLAG, IN_CHECK_FLAG, ILLEGAL_FLAG)."""
    return int(evaluate_kernel(*bitboards(board)))


def evaluate(board: chess.Board) -> int:
    """Static evaluation of the board in centipawns, from the side to move's view."""
    return packed_score(evaluate_packed(board))
