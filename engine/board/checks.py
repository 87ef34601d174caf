"""Numba kernels that spare python-chess work: does a move give check (~5x cheaper than
push + is_check + pop), which pieces could check, which pieces can capture."""

from __future__ import annotations

import chess
import numpy as np

from garfish.engine.board.bits import (
    KING_ATTACKS, KNIGHT_ATTACKS, ONE, PAWN_ATTACKS, RANK_4, RANK_5, U64, ZERO, bishop_attacks, black_pawn_attacks,
    entry_point, lsb, popcount, rook_attacks, white_pawn_attacks,
)
from garfish.engine.kernel import kernel
from garfish.engine.types import bitboards


@kernel
def piece_attacks(sq, bb, knights, bishops, rooks, queens, occ):
    """Attacks of the non-pawn piece on sq (bb = its bit): a king when it is none of the others."""
    if bb & knights:
        return KNIGHT_ATTACKS[sq]
    if bb & bishops:
        return bishop_attacks(sq, occ)
    if bb & rooks:
        return rook_attacks(sq, occ)
    if bb & queens:
        return bishop_attacks(sq, occ) | rook_attacks(sq, occ)
    return KING_ATTACKS[sq]


@kernel
def _reaching(pieces, targets, knights, bishops, rooks, queens, occ):
    """Those of the given non-pawn pieces that attack at least one target square."""
    found = ZERO
    while pieces:
        sq = lsb(pieces)
        bb = ONE << sq
        pieces &= pieces - ONE
        if piece_attacks(sq, bb, knights, bishops, rooks, queens, occ) & targets:
            found |= bb
    return found


def _between_table() -> np.ndarray:
    """BETWEEN[a, b]: the squares strictly between a and b on a shared line (else empty)."""
    table = np.zeros((64, 64), dtype=np.uint64)
    for a in range(64):
        for df, dr in ((1, 0), (0, 1), (1, 1), (1, -1), (-1, 0), (0, -1), (-1, -1), (-1, 1)):
            f, r, bb = a % 8 + df, a // 8 + dr, 0
            while 0 <= f < 8 and 0 <= r < 8:
                table[a, r * 8 + f] = bb
                bb |= 1 << (r * 8 + f)
                f, r = f + df, r + dr
    return table


BETWEEN = _between_table()


@kernel(
    "boolean(uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, boolean, int64, int64, int64, int64)",
    nogil=True)
def gives_check_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn,
                       from_sq, to_sq, piece, promotion):
    """True when moving `piece` (python-chess type) from from_sq to to_sq checks the enemy king.

    Covers quiet moves, captures and promotions, with direct and discovered
    checks. Not for castling or en passant (callers ask python-chess for those).
    """
    from_bb = ONE << U64(from_sq)
    to_bb = ONE << U64(to_sq)
    own = white if turn else black
    enemy = black if turn else white
    king = kings & enemy
    if not king:
        return False
    ksq = lsb(king)
    occ = ((white | black) & ~from_bb) | to_bb
    own_after = (own & ~from_bb) | to_bb
    kind = promotion if promotion else piece
    # Direct check by the moved (or promoted) piece.
    if kind == 1:
        if PAWN_ATTACKS[1 if turn else 0, to_sq] & king:
            return True
    elif kind == 2:
        if KNIGHT_ATTACKS[to_sq] & king:
            return True
    elif kind == 3 or kind == 5:
        if bishop_attacks(to_sq, occ) & king:
            return True
    if kind == 4 or kind == 5:
        if rook_attacks(to_sq, occ) & king:
            return True
    # Discovered check by a slider that was behind the moved piece.
    diag = (bishops | queens) & own_after & ~to_bb
    orth = (rooks | queens) & own_after & ~to_bb
    if bishop_attacks(ksq, occ) & diag:
        return True
    if rook_attacks(ksq, occ) & orth:
        return True
    return False


@kernel(
    "UniTuple(uint64, 3)(uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, boolean)",
    nogil=True)
def check_masks_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn):
    """(targets, discoverers, movers): squares a non-king piece of the side to move could
    check from, its pieces whose departure could uncover a check by a slider behind them,
    and its non-king pieces that could move onto an empty target square (all its pawns).

    A quiet check is a move of a discoverer, or a move of a mover onto `targets` (then
    confirmed by gives_check_kernel): generating only those is much cheaper than all quiets.
    """
    # As uint64 (no-ops compiled; Python ints when the kernel runs interpreted, whose ~ is negative).
    pawns, knights, bishops, rooks, queens = U64(pawns), U64(knights), U64(bishops), U64(rooks), U64(queens)
    kings, black, white = U64(kings), U64(black), U64(white)
    own = white if turn else black
    enemy = black if turn else white
    king = kings & enemy
    if not king:
        return ZERO, ZERO, ZERO
    ksq = lsb(king)
    occ = white | black
    diag_from_king = bishop_attacks(ksq, occ)
    orth_from_king = rook_attacks(ksq, occ)
    targets = ZERO
    if knights & own:
        targets |= KNIGHT_ATTACKS[ksq]
    if (bishops | queens) & own:
        targets |= diag_from_king
    if (rooks | queens) & own:
        targets |= orth_from_king
    if pawns & own:
        targets |= PAWN_ATTACKS[0 if turn else 1, ksq]  # where one of our pawns would attack the king
    discoverers = ZERO
    snipers = ((bishop_attacks(ksq, ZERO) & (bishops | queens)) | (rook_attacks(ksq, ZERO) & (rooks | queens))) & own
    while snipers:
        sq = lsb(snipers)
        snipers &= snipers - ONE
        blockers = BETWEEN[ksq, sq] & occ
        if blockers and popcount(blockers) == ONE and blockers & own:
            discoverers |= blockers
    movers = (pawns & own) | _reaching(own & ~pawns & ~kings, targets & ~occ, knights, bishops, rooks, queens, occ)
    return targets, discoverers, movers


def gives_check(board: chess.Board, move: chess.Move) -> bool:
    """True when the (legal) move checks the opponent's king."""
    piece = board.piece_type_at(move.from_square)
    if piece == chess.KING or piece is None or board.is_en_passant(move):
        return board.gives_check(move)
    return bool(gives_check_kernel(*bitboards(board), move.from_square, move.to_square, piece, move.promotion or 0))


@kernel(
    "uint64(uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, boolean, uint64)",
    nogil=True)
def attackers_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, targets):
    """The pieces of the side to move that attack at least one of the target squares.

    Passed as the from-mask of python-chess's capture generation, so that it loops
    over the few pieces that can capture instead of every piece.
    """
    own = white if turn else black
    occ = white | black
    if turn:
        found = black_pawn_attacks(targets) & pawns & own  # a white pawn attacks t iff a black one on t attacks it
    else:
        found = white_pawn_attacks(targets) & pawns & own
    return found | _reaching(own & ~pawns, targets, knights, bishops, rooks, queens, occ)


@kernel
def _attacks_of(pieces, knights, bishops, rooks, queens, occ):
    """Union of the attacks of the given non-pawn pieces."""
    att = ZERO
    while pieces:
        sq = lsb(pieces)
        bb = ONE << sq
        pieces &= pieces - ONE
        att |= piece_attacks(sq, bb, knights, bishops, rooks, queens, occ)
    return att


@kernel(
    "uint64(uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, boolean)",
    nogil=True)
def threats_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn):
    """Pieces of the side to move that are en prise: attacked by a cheaper enemy piece
    (a minor by a pawn, a rook by a pawn or minor, a queen by a pawn, minor or rook) or
    attacked and undefended. Moving them away is ordered first among quiet moves."""
    own = white if turn else black
    enemy = black if turn else white
    occ = white | black
    if turn:
        pawn_att = black_pawn_attacks(pawns & enemy)
        defended = white_pawn_attacks(pawns & own)
    else:
        pawn_att = white_pawn_attacks(pawns & enemy)
        defended = black_pawn_attacks(pawns & own)
    minor_att = _attacks_of((knights | bishops) & enemy, knights, bishops, rooks, queens, occ)
    rook_att = _attacks_of(rooks & enemy, knights, bishops, rooks, queens, occ)
    other_att = _attacks_of((queens | kings) & enemy, knights, bishops, rooks, queens, occ)
    defended |= _attacks_of(own & ~pawns, knights, bishops, rooks, queens, occ)
    lesser = pawn_att
    threatened = (knights | bishops) & own & lesser
    lesser |= minor_att
    threatened |= rooks & own & lesser
    lesser |= rook_att
    threatened |= queens & own & lesser
    attacked = lesser | other_att
    threatened |= own & ~pawns & ~kings & attacked & ~defended
    return threatened


@kernel(
    "UniTuple(uint64, 4)(uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, boolean)",
    nogil=True)
def evasion_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn):
    """(checkers, king_to, block, blockers): for the side to move, the enemy pieces giving
    check, the squares its king can step to without being attacked (sliders see through
    the king's old square), and, against a single checker, the squares where capturing or
    interposing ends the check and the non-king pieces that might get there (a superset:
    pawns one or two steps behind a block square or attacking one, which covers en passant
    onto it, and pieces attacking one); the last two are 0 in double check."""
    own = white if turn else black
    enemy = black if turn else white
    king = kings & own
    if not king:
        return ZERO, ZERO, ZERO, ZERO
    ksq = lsb(king)
    occ = white | black
    checkers = ((PAWN_ATTACKS[1 if turn else 0, ksq] & pawns) | (KNIGHT_ATTACKS[ksq] & knights)
                | (bishop_attacks(ksq, occ) & (bishops | queens)) | (rook_attacks(ksq, occ) & (rooks | queens))) & enemy
    without_king = occ & ~king
    if turn:
        attacked = black_pawn_attacks(pawns & enemy)
    else:
        attacked = white_pawn_attacks(pawns & enemy)
    attacked |= _attacks_of(enemy & ~pawns, knights, bishops, rooks, queens, without_king)
    king_to = KING_ATTACKS[ksq] & ~own & ~attacked
    block = ZERO
    blockers = ZERO
    if checkers and not checkers & (checkers - ONE):
        block = BETWEEN[ksq, lsb(checkers)] | checkers
        if turn:
            pushers = (block >> U64(8)) | ((block & RANK_4) >> U64(16))
            takers = black_pawn_attacks(block)  # a white pawn attacks b iff a black one on b attacks it
        else:
            pushers = (block << U64(8)) | ((block & RANK_5) << U64(16))
            takers = white_pawn_attacks(block)
        blockers = (pawns & own & (pushers | takers)) | _reaching(own & ~pawns & ~kings, block, knights, bishops,
                                                                 rooks, queens, occ)
    return checkers, king_to, block, blockers


# threats_kernel's compiled entry (engine.board.bits.entry_point), for the picker's and the search's hot calls.
threats_entry = entry_point(threats_kernel)
