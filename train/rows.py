"""The trainer's per-position work in Numba: a batch's network inputs and base evaluations, made
from the positions' bitboards when the batch is needed; the in-check flag of parsed positions; a
pack's records walked and their moves played (train.data.pack_positions).

A training run keeps its positions once (112 bytes each) and, for each side of the split, which
rows it uses and whether each is the row's file mirror (train.data.Split): 40 million positions
fit in a few GB, where their inputs made in advance (152 bytes a row, mirrors included) did not.
feature_rows writes the inputs of chosen rows exactly as the vectorised features() before it
(af27423) did: the same features in the same order (piece planes in PLANES order, squares
ascending), so that a batch, and so a training run, is the same number for number. _mirror is the
file mirror (a and h swapped) of a bitboard; chess is the same seen in it when no side can castle.

Loaded only by the trainer (Numba compiles these on first use and caches them).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from garfish.engine.board.bits import ONE, U64, lsb, msb, popcount
from garfish.engine.board.checks import attackers_kernel
from garfish.engine.evaluation.classic import FLAG_BITS, evaluate_kernel
from garfish.engine.evaluation.network import FEATURES

OK = np.int64(-1)  # feature_rows' row when every row was fine
BAD_KINGS, TOO_MANY_PIECES = np.int64(1), np.int64(2)  # feature_rows' reasons for a bad row
_FILES_1, _FILES_2, _FILES_4 = U64(0x5555555555555555), U64(0x3333333333333333), U64(0x0F0F0F0F0F0F0F0F)


@njit(cache=True)
def _mirror(bb):
    """A bitboard seen in the mirror between the a and h files (each rank's bits reversed)."""
    bb = ((bb >> U64(1)) & _FILES_1) | ((bb & _FILES_1) << U64(1))
    bb = ((bb >> U64(2)) & _FILES_2) | ((bb & _FILES_2) << U64(2))
    return ((bb >> U64(4)) & _FILES_4) | ((bb & _FILES_4) << U64(4))


@njit(cache=True)
def _plane(pieces, row, plane, mirror):
    """One piece plane of a row, mirrored when asked."""
    bb = U64(pieces[row, plane])
    return _mirror(bb) if mirror else bb


@njit(cache=True)
def feature_rows(pieces, turn, rows, mirror, perspective, king_map, bucketed, us, them, count):
    """Write the inputs of positions rows[i] (their file mirrors where mirror[i]) into row i of us,
    them (int16 [n, 32], PAD-filled by the caller) and count: for each piece, in plane and square
    order, its feature from the side to move's view and from the other side's (perspective: the
    int16 [2, 768] table of train.data.PERSPECTIVE; king_map: the layout's
    engine.evaluation.network.KING_BUCKET_MAPS entry, read when bucketed). Returns (OK, 0), or the first bad
    row's index i and why (BAD_KINGS, TOO_MANY_PIECES), the rows before it written."""
    limit = us.shape[1]
    for i in range(len(rows)):
        row = rows[i]
        flip = mirror[i]
        offset_white = offset_black = flip_white = flip_black = np.int64(0)
        if bucketed:
            white_king = _plane(pieces, row, 5, flip)
            black_king = _plane(pieces, row, 11, flip)
            if popcount(white_king) != 1 or popcount(black_king) != 1:
                return np.int64(i), BAD_KINGS
            entry = king_map[np.int64(lsb(white_king))]
            offset_white, flip_white = (entry >> 3) * FEATURES, entry & 7
            entry = king_map[np.int64(lsb(black_king)) ^ 56]
            offset_black, flip_black = (entry >> 3) * FEATURES, entry & 7
        white_to_move = turn[row]
        n = 0
        for plane in range(12):
            bb = _plane(pieces, row, plane, flip)
            while bb:
                if n == limit:
                    return np.int64(i), TOO_MANY_PIECES
                square = np.int64(lsb(bb))
                bb &= bb - ONE
                seen_by_white = offset_white + perspective[1, plane * 64 + (square ^ flip_white)]
                seen_by_black = offset_black + perspective[0, plane * 64 + (square ^ flip_black)]
                us[i, n] = seen_by_white if white_to_move else seen_by_black
                them[i, n] = seen_by_black if white_to_move else seen_by_white
                n += 1
        count[i] = n
    return OK, np.int64(0)


@njit(cache=True)
def classic_rows(pieces, turn, rows, mirror, out):
    """The hand-written evaluation (engine.evaluation.classic's kernel, the side to move's view) of positions
    rows[i], their file mirrors where mirror[i], into out[i]."""
    kinds = np.empty(6, dtype=np.uint64)
    for i in range(len(rows)):
        row = rows[i]
        flip = mirror[i]
        white = black = U64(0)
        for kind in range(6):
            own = _plane(pieces, row, kind, flip)
            other = _plane(pieces, row, kind + 6, flip)
            white |= own
            black |= other
            kinds[kind] = own | other
        out[i] = evaluate_kernel(kinds[0], kinds[1], kinds[2], kinds[3], kinds[4], kinds[5], black, white,
                                 turn[row]) >> FLAG_BITS


@njit(cache=True)
def in_check_rows(pieces, turn, start, end, out):
    """Whether the side to move is in check, for rows start to end - 1, as python-chess decides it on
    the bitboards (BaseBoard.king: the highest square of its kings; none, no check)."""
    for i in range(start, end):
        white = black = U64(0)
        for kind in range(6):
            white |= U64(pieces[i, kind])
            black |= U64(pieces[i, kind + 6])
        kings = U64(pieces[i, 5]) if turn[i] else U64(pieces[i, 11])
        if not kings:
            out[i] = False
            continue
        king = ONE << U64(msb(kings))
        out[i] = attackers_kernel(U64(pieces[i, 0] | pieces[i, 6]), U64(pieces[i, 1] | pieces[i, 7]),
                                  U64(pieces[i, 2] | pieces[i, 8]), U64(pieces[i, 3] | pieces[i, 9]),
                                  U64(pieces[i, 4] | pieces[i, 10]), U64(pieces[i, 5] | pieces[i, 11]),
                                  black, white, not turn[i], king) != 0


# --------------------------------------------------------------------------- packs
# A pack's records (garfish.arena.pack) walked and played without their text: train.data.pack_positions.
EMPTY_SQUARE = ord(".")
PAWN_LETTERS, KING_LETTERS = (ord("P"), ord("p")), (ord("K"), ord("k"))


@njit(cache=True)
def scan_records(raw, fens, plies, codes_at, scores_at, results):
    """Walk the records of a pack's decompressed bytes: each one's FEN bytes' offset, plies,
    offsets of its move codes and of its varint scores, and result code. The number of records,
    or -1 when they are cut short, hold a record of no ply or a result code that is none, or are
    more than the arrays hold."""
    at, size, count = np.int64(0), raw.shape[0], 0
    while at < size:
        if count == fens.shape[0] or at + 3 > size:
            return -1
        if raw[at] > 2:  # no result code
            return -1
        results[count] = raw[at]
        length = np.int64(raw[at + 1]) | (np.int64(raw[at + 2]) << 8)
        fens[count] = at + 3
        at += 3 + length
        if at + 2 > size:
            return -1
        n = np.int64(raw[at]) | (np.int64(raw[at + 1]) << 8)
        if n == 0:
            return -1
        plies[count] = n
        codes_at[count] = at + 2
        at += 2 + 2 * n
        scores_at[count] = at
        for _ in range(n):
            while True:
                if at >= size:
                    return -1
                byte = raw[at]
                at += 1
                if byte < 0x80:
                    break
        count += 1
    return count


@njit(cache=True)
def play_records(raw, count, plies, codes_at, scores_at, results, first, white, halfmoves, fullmoves, promoted,
                 letters, board, turn, halfmove, fullmove, score, result, move):
    """Every record's rows: its first board (first[r], 64 squares in python-chess's order), then each
    move made as pack.Position.push makes it (the rook beside a king that moves two files, the pawn
    taken en passant, the promotion in the mover's colour, the clocks); the scores from their
    zigzag varints. False when a promotion code is none of n, b, r, q (the text path decides)."""
    row = 0
    for r in range(count):
        square = first[r].copy()
        side, half, full = white[r], halfmoves[r], fullmoves[r]
        at = scores_at[r]
        value = np.int64(0)
        for ply in range(plies[r]):
            code = np.int64(raw[codes_at[r] + 2 * ply]) | (np.int64(raw[codes_at[r] + 2 * ply + 1]) << 8)
            origin, target, kind = code & 63, (code >> 6) & 63, code >> 12
            if kind == 1 or kind > 5:
                return False
            delta, shift = np.int64(0), 0
            while True:
                byte = np.int64(raw[at])
                at += 1
                delta |= (byte & 0x7F) << shift
                if byte < 0x80:
                    break
                shift += 7
            value += (delta >> 1) if not delta & 1 else -((delta + 1) >> 1)
            board[row] = square
            turn[row], halfmove[row], fullmove[row] = side, half, full
            score[row], result[row] = value, results[r]
            move[row, 0], move[row, 1], move[row, 2] = origin, target, letters[kind]
            row += 1
            # pack.Position.push
            piece = square[origin]
            capture = square[target] != EMPTY_SQUARE
            pawn = piece == PAWN_LETTERS[0] or piece == PAWN_LETTERS[1]
            if pawn and (origin ^ target) & 7 and not capture:
                square[(origin & ~7) | (target & 7)] = EMPTY_SQUARE
                capture = True
            if (piece == KING_LETTERS[0] or piece == KING_LETTERS[1]) and abs((origin & 7) - (target & 7)) == 2:
                rank = origin & ~7
                if target & 7 == 6:
                    rook_from, rook_to = rank + 7, rank + 5
                else:
                    rook_from, rook_to = rank, rank + 3
                square[rook_to] = square[rook_from]
                square[rook_from] = EMPTY_SQUARE
            square[origin] = EMPTY_SQUARE
            square[target] = promoted[1 if side else 0, kind] if kind else piece
            half = 0 if pawn or capture else half + 1
            full += not side
            side = not side
    return True
