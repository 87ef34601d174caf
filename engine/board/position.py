"""The search's board: the layout of a position's row in the kernels' state arrays, and the kernels that
make a move on it (the one copy-make, which the tree and the quiescence search both call), list castling,
test a move's pseudo-legality, key a row and find bare material.

A position is two rows, one of `pos` (uint64) and one of `posi` (int64), a pair per ply of the search
(engine.search.tree's ROWS): `pos` holds python-chess's eight bitboards in the order below, then the
castling rights (python-chess's raw castling_rights, as the board had them) and the Zobrist key; `posi`
the side to move (1: White), the en passant square (-1: none), the halfmove clock and the evaluation
kernel's packed result (engine.board.flags). The quiescence search's state (engine.search.qsearch) is
the first eight columns alone. A child is made by copy-make from its parent's row, exactly as
python-chess's push makes it (castling in both chesses, en passant, the rights, the clocks).
"""

from __future__ import annotations

import chess
import numpy as np

from garfish.engine.board.bits import ONE, U64, ZERO, lsb, msb, popcount
from garfish.engine.board.captures import CODE_MASK, _attacks, _piece_at, capture_list_kernel
from garfish.engine.board.checks import BETWEEN
from garfish.engine.board.moves import PROMOTION_SHIFT, SQUARE_MASK, TO_SHIFT
from garfish.engine.board.see import _attackers_to
from garfish.engine.board.zobrist import zobrist_kernel
from garfish.engine.kernel import kernel

# A row of `pos` (uint64): the eight bitboards, the castling rights, the key.
PAWNS, KNIGHTS, BISHOPS, ROOKS, QUEENS, KINGS, BLACK, WHITE = range(8)
CASTLING, KEY = 8, 9
POS_FIELDS = 10
# A row of `posi` (int64): the side to move (1: White), the en passant square, the halfmove clock,
# the evaluation kernel's packed result.
P_TURN, P_EP, P_HALFMOVE, P_PACKED = 0, 1, 2, 3
POSI_FIELDS = 4
PAWN, KING = chess.PAWN, chess.KING  # python-chess's piece types, as _piece_at gives them

_NO_CODE = np.int64(-1)
_ALL = U64(chess.BB_ALL)
_RANK_1, _RANK_8 = U64(chess.BB_RANK_1), U64(chess.BB_RANK_8)
_E1, _E8 = U64(chess.BB_E1), U64(chess.BB_E8)
_A1_H1, _A8_H8 = U64(chess.BB_A1 | chess.BB_H1), U64(chess.BB_A8 | chess.BB_H8)
_DARK, _LIGHT = U64(chess.BB_DARK_SQUARES), U64(chess.BB_LIGHT_SQUARES)
_PAWN_RANK = np.array([chess.BB_RANK_7, chess.BB_RANK_2], dtype=np.uint64)  # by colour: pawns not yet moved
_LAST_RANKS = U64(chess.BB_RANK_1 | chess.BB_RANK_8)


RowBitboards = tuple[np.uint64, np.uint64, np.uint64, np.uint64, np.uint64, np.uint64, np.uint64, np.uint64]


@kernel
def bitboards(pos, ply) -> RowBitboards:
    """Row ply's eight bitboards, in the kernels' argument order: pawns, knights, bishops, rooks, queens,
    kings, black, white."""
    # Indexed in place: a row view (pos[ply]) would be an array object of its own, reference-counted at
    # every call (3% of bench's speed).
    return (pos[ply, PAWNS], pos[ply, KNIGHTS], pos[ply, BISHOPS], pos[ply, ROOKS], pos[ply, QUEENS], pos[ply, KINGS],
            pos[ply, BLACK], pos[ply, WHITE])


@kernel
def code_squares(code):
    """A move code's (from square, to square, promotion piece type (0: none), from bit, to bit)."""
    from_sq = code & SQUARE_MASK
    to_sq = (code >> TO_SHIFT) & SQUARE_MASK
    return from_sq, to_sq, code >> PROMOTION_SHIFT, ONE << U64(from_sq), ONE << U64(to_sq)


@kernel
def make_pieces(state, parent, child, turn, ep, code):
    """Copy-make of the eight bitboards: state row `child` is row `parent` after the move `code` (never
    castling) by the side `turn`, as python-chess's push makes it; returns the child's en passant square
    (-1: none). make_move's piece move, and the quiescence search's whole make (none of its moves castles)."""
    for i in range(8):
        state[child, i] = state[parent, i]
    from_sq, to_sq, promotion, from_bb, to_bb = code_squares(code)
    us = WHITE if turn else BLACK
    them = BLACK if turn else WHITE
    state[child, us] ^= from_bb | to_bb
    if state[child, them] & to_bb:  # the captured piece (never a king: the move is legal)
        state[child, them] ^= to_bb
        for kind in range(QUEENS + 1):
            if state[child, kind] & to_bb:
                state[child, kind] ^= to_bb
                break
    child_ep = -1
    if state[child, PAWNS] & from_bb:
        state[child, PAWNS] ^= from_bb
        if promotion:
            state[child, promotion - 1] |= to_bb
        else:
            state[child, PAWNS] |= to_bb
            diff = to_sq - from_sq
            if diff == 16 or diff == -16:
                child_ep = from_sq + diff // 2
            elif to_sq == ep and diff != 8 and diff != -8:  # en passant: the pawn passed by goes
                captured = ONE << U64(to_sq - 8 if turn else to_sq + 8)
                state[child, PAWNS] ^= captured
                state[child, them] ^= captured
        return child_ep
    for kind in range(KNIGHTS, KINGS + 1):
        if state[child, kind] & from_bb:
            state[child, kind] ^= from_bb | to_bb
            break
    return child_ep


@kernel
def clean_rights(castling, rooks, kings, black, white, chess960):
    """python-chess's clean_castling_rights for a board with no move stack: the rights whose rook
    and king stand where castling needs them (e1/e8 and the corners in standard chess)."""
    rights = castling & rooks
    white_rights = rights & _RANK_1 & white
    black_rights = rights & _RANK_8 & black
    if not chess960:
        white_rights &= _A1_H1
        black_rights &= _A8_H8
        if not white & kings & _E1:
            white_rights = ZERO
        if not black & kings & _E8:
            black_rights = ZERO
        return white_rights | black_rights
    clean = ZERO
    for side in range(2):
        own_rights = white_rights if side == 0 else black_rights
        king = (white & _RANK_1 if side == 0 else black & _RANK_8) & kings
        if not king or not own_rights:
            continue
        a_side = own_rights & (~own_rights + ONE)
        h_side = ONE << msb(own_rights)
        if msb(a_side) > msb(king):
            a_side = ZERO
        if msb(h_side) < msb(king):
            h_side = ZERO
        clean |= a_side | h_side
    return clean


@kernel
def castling_codes(pos, posi, ply, chess960):
    """python-chess's generate_castling_moves for the side to move of row `ply`, in its order (the
    h-side first): the two codes (-1: none), as python-chess writes them (e1g1 in standard chess,
    the king onto its rook in Chess960)."""
    pawns, knights, bishops, rooks, queens, kings, black, white = bitboards(pos, ply)
    turn = posi[ply, P_TURN] != 0
    first = second = _NO_CODE
    backrank = _RANK_1 if turn else _RANK_8
    own = white if turn else black
    enemy = black if turn else white
    king = own & kings & backrank
    if not king:
        return first, second
    king &= ~king + ONE
    king_sq = np.int64(lsb(king))
    occ = white | black
    candidates = clean_rights(pos[ply, CASTLING], rooks, kings, black, white, chess960) & backrank
    while candidates:
        candidate = np.int64(msb(candidates))
        rook = ONE << U64(candidate)
        candidates ^= rook
        a_side = rook < king
        king_to_sq = (2 if a_side else 6) + (0 if turn else 56)
        rook_to_sq = (3 if a_side else 5) + (0 if turn else 56)
        king_to = ONE << U64(king_to_sq)
        rook_to = ONE << U64(rook_to_sq)
        king_path = BETWEEN[king_sq, king_to_sq]
        rook_path = BETWEEN[candidate, rook_to_sq]
        if (occ ^ king ^ rook) & (king_path | rook_path | king_to | rook_to):
            continue
        attacked = False
        path = king_path | king
        while path:
            sq = np.int64(msb(path))
            path ^= ONE << U64(sq)
            if _attackers_to(sq, occ ^ king, pawns, knights, bishops, rooks, queens, kings, black, white) & enemy:
                attacked = True
                break
        if attacked or _attackers_to(king_to_sq, occ ^ king ^ rook ^ rook_to, pawns, knights, bishops, rooks, queens,
                                     kings, black, white) & enemy:
            continue
        to_sq = candidate
        if not chess960 and (king_sq == 4 or king_sq == 60):  # python-chess's _from_chess960
            if candidate == king_sq + 3:
                to_sq = king_sq + 2
            elif candidate == king_sq - 4:
                to_sq = king_sq - 2
        code = king_sq | (to_sq << TO_SHIFT)
        if first < 0:
            first = code
        else:
            second = code
    return first, second


@kernel
def _is_castling(code, kings, own):
    """Whether a king's move is castling: onto its own rook (Chess960's form) or by two squares."""
    from_sq = code & SQUARE_MASK
    to_sq = (code >> TO_SHIFT) & SQUARE_MASK
    if not kings & (ONE << U64(from_sq)):
        return False
    return bool(own & (ONE << U64(to_sq))) or to_sq - from_sq == 2 or from_sq - to_sq == 2


@kernel
def make_move(pos, posi, ply, code, chess960):
    """Copy-make: row ply + 1 is row ply after the move `code` (pseudo-legal), as python-chess's push
    makes it (and tests/reference_board.py's PushBoard.push, the Python make it replaced): bitboards,
    castling rights, side to move, en passant square and halfmove clock (the key and evaluation are the
    caller's)."""
    child = ply + 1
    turn = posi[ply, P_TURN] != 0
    us = WHITE if turn else BLACK
    them = BLACK if turn else WHITE
    from_sq = code & SQUARE_MASK
    to_sq = (code >> TO_SHIFT) & SQUARE_MASK
    from_bb = ONE << U64(from_sq)
    to_bb = ONE << U64(to_sq)
    castling = pos[ply, CASTLING]
    if chess960:
        castling = clean_rights(castling, pos[ply, ROOKS], pos[ply, KINGS], pos[ply, BLACK], pos[ply, WHITE], chess960)
    castling &= ~(from_bb | to_bb)
    ep = posi[ply, P_EP]
    halfmove = posi[ply, P_HALFMOVE] + 1
    posi[child, P_TURN] = 0 if turn else 1
    if pos[ply, KINGS] & from_bb:
        castling &= ~(_RANK_1 if turn else _RANK_8)
        if _is_castling(code, pos[ply, KINGS], pos[ply, us]):
            for i in range(8):
                pos[child, i] = pos[ply, i]
            a_side = to_sq < from_sq
            back = 0 if turn else 56
            rook_sq = to_sq if pos[ply, us] & to_bb else (back if a_side else back + 7)
            rook_bb = ONE << U64(rook_sq)
            king_to = ONE << U64(back + (2 if a_side else 6))
            rook_to = ONE << U64(back + (3 if a_side else 5))
            pos[child, KINGS] = (pos[child, KINGS] & ~from_bb) | king_to  # either may not move (Chess960)
            pos[child, ROOKS] = (pos[child, ROOKS] & ~rook_bb) | rook_to
            pos[child, us] = (pos[child, us] & ~(from_bb | rook_bb)) | king_to | rook_to
            pos[child, CASTLING] = castling
            posi[child, P_EP] = -1
            posi[child, P_HALFMOVE] = halfmove
            return
    if pos[ply, them] & to_bb or pos[ply, PAWNS] & from_bb:  # a capture or a pawn's move
        halfmove = 0
    child_ep = make_pieces(pos, ply, child, turn, ep, code)
    pos[child, CASTLING] = castling
    posi[child, P_EP] = child_ep
    posi[child, P_HALFMOVE] = halfmove


@kernel
def make_null(pos, posi, ply):
    """Row ply + 1 is row ply after a null move: the other side to move, no en passant square."""
    for i in range(POS_FIELDS):
        pos[ply + 1, i] = pos[ply, i]
    posi[ply + 1, P_TURN] = 1 - posi[ply, P_TURN]
    posi[ply + 1, P_EP] = -1
    posi[ply + 1, P_HALFMOVE] = posi[ply, P_HALFMOVE] + 1


@kernel
def position_key(pos, posi, ply):
    """The Zobrist key of row ply (engine.board.zobrist, from its raw castling rights as the search's board has
    them)."""
    return zobrist_kernel(*bitboards(pos, ply), posi[ply, P_TURN] != 0, pos[ply, CASTLING], posi[ply, P_EP])


@kernel
def insufficient_material(pos, ply):
    """python-chess's is_insufficient_material (both sides, by material and bishop colours)."""
    pawns, knights, bishops, rooks, queens, kings, black, white = bitboards(pos, ply)
    for side in range(2):
        own = white if side == 0 else black
        other = black if side == 0 else white
        if own & (pawns | rooks | queens):
            return False
        if own & knights:
            if popcount(own) > 2 or other & ~kings & ~queens:
                return False
        elif own & bishops:
            same_colour = not bishops & _DARK or not bishops & _LIGHT
            if not same_colour or pawns != ZERO or knights != ZERO:
                return False
    return True


@kernel
def pseudo_legal(code, pos, posi, ply, chess960, scratch):
    """python-chess's is_pseudo_legal for the move `code` in row ply (a TT move or a killer comes from
    another position): castling by its rules, a pawn's capture, en passant or promotion looked up in
    capture_list_kernel's list (written into scratch)."""
    pawns, knights, bishops, rooks, queens, kings, black, white = bitboards(pos, ply)
    turn = posi[ply, P_TURN] != 0
    from_sq = code & SQUARE_MASK
    to_sq = (code >> TO_SHIFT) & SQUARE_MASK
    promotion = code >> PROMOTION_SHIFT
    from_bb = ONE << U64(from_sq)
    to_bb = ONE << U64(to_sq)
    if code == 0:
        return False
    own = white if turn else black
    if not own & from_bb:
        return False
    occ = white | black
    piece = _piece_at(from_bb, pawns, knights, bishops, rooks, queens)
    if promotion and (piece != PAWN or not to_bb & (_RANK_8 if turn else _RANK_1)):
        return False
    if piece == KING:
        first, second = castling_codes(pos, posi, ply, chess960)
        if code == first or code == second:
            return True
    if to_bb & own:
        return False
    if piece != PAWN:
        return (_attacks(from_sq, piece, occ) & to_bb) != ZERO
    if not promotion and not to_bb & occ and not to_bb & _LAST_RANKS:
        step = 8 if turn else -8
        if to_sq == from_sq + step:
            return True
        if (to_sq == from_sq + 2 * step and from_bb & _PAWN_RANK[1 if turn else 0]
                and not (ONE << U64(from_sq + step)) & occ):
            return True
    if promotion and not to_bb & occ and to_sq == from_sq + (8 if turn else -8):
        return True
    count = capture_list_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, posi[ply, P_EP],
                                _ALL, scratch)
    for i in range(count):
        if scratch[i] & CODE_MASK == code:
            return True
    return False


@kernel
def is_quiet(code, pos, posi, ply):
    """Not a promotion, nothing on the target, and not a pawn onto the en passant square."""
    to_sq = (code >> TO_SHIFT) & SQUARE_MASK
    if code >> PROMOTION_SHIFT:
        return False
    turn = posi[ply, P_TURN] != 0
    if (ONE << U64(to_sq)) & (pos[ply, BLACK] if turn else pos[ply, WHITE]):
        return False
    return not (to_sq == posi[ply, P_EP] and pos[ply, PAWNS] & (ONE << U64(code & SQUARE_MASK)))


@kernel
def is_capture(code, pos, posi, ply):
    """python-chess's is_capture: either square an enemy's, or en passant."""
    from_sq = code & SQUARE_MASK
    to_sq = (code >> TO_SHIFT) & SQUARE_MASK
    from_bb = ONE << U64(from_sq)
    to_bb = ONE << U64(to_sq)
    them = pos[ply, BLACK] if posi[ply, P_TURN] != 0 else pos[ply, WHITE]
    if (from_bb | to_bb) & them:
        return True
    diff = to_sq - from_sq
    return (to_sq == posi[ply, P_EP] and (pos[ply, PAWNS] & from_bb) != ZERO
            and not (pos[ply, WHITE] | pos[ply, BLACK]) & to_bb and (diff == 7 or diff == 9 or diff == -7
                                                                     or diff == -9))
