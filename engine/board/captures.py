"""The moves quiescence and the move picker's capture stage need, listed by Numba in python-chess's order.

capture_list_kernel lists the pseudo-legal captures onto a mask (en passant when the mask holds
its square) and every non-capturing promotion, in exactly the order that python-chess's
`generate_pseudo_legal_captures` and `generate_pseudo_legal_moves` give them, sorted (stably) by
MVV-LVA (_mvv_lva), each with its attacker, its victim and whether it is a good capture (_good:
SEE, queen promotions), as the picker's python-chess stage did (capture_moves and is_good_capture,
kept as the tests' references in tests/reference_movepick.py). Where that stage paid a
python-chess generator, a Move object per move, two piece look-ups per move and a SEE call per
move tried, the kernel pays one call: the search reads move codes off an array and takes each
Move from the table of prebuilt ones (engine.board.moves.MOVE_TABLE).
quiescence_list_kernel gives the quiescence search the same list for the enemy pieces worth
capturing, choosing them from the evaluation's flags and the delta-pruning margin itself.

quiet_checks_kernel lists, in python-chess's order, the quiet moves that give check without
losing the checking piece by SEE (the first quiescence ply's checks, Searcher._quiet_checks).
quiet_list_kernel is the picker's quiet stage: the quiet moves in python-chess's order (castling
listed by python-chess and handed in), sorted by history as sort_quiets sorts them.
evasion_list_kernel lists the evasions of a side in check in the order of python-chess's legal
generator (the quiescence search's; the reference: evasion_moves in tests/reference_movepick.py),
and evasion_order_kernel groups and sorts them for the picker's stages.

They write into the caller's int64 array and return how many they wrote; tests compare them,
move for move, with the python-chess paths they replace.
"""

from __future__ import annotations

import chess
import numpy as np

from garfish.engine.board.bits import (
    KING_ATTACKS, KNIGHT_ATTACKS, NONE_YET, ONE, PAWN_ATTACKS, RANK_1, RANK_2, RANK_3_4, RANK_4, RANK_5, RANK_5_6,
    RANK_7, RANK_8, U64, ZERO, bishop_attacks, lsb, msb, rook_attacks,
)
from garfish.engine.board.checks import check_masks_kernel, evasion_kernel, gives_check_kernel, threats_kernel
from garfish.engine.board.flags import (
    ATTACKS_BISHOP, ATTACKS_KNIGHT, ATTACKS_PAWN, ATTACKS_QUEEN, ATTACKS_ROOK, PROMOTION_FLAG,
)
from garfish.engine.board.moves import MOVE_TABLE, TO_SHIFT
from garfish.engine.board.see import see_ge_kernel
from garfish.engine.kernel import kernel
from garfish.engine.types import MAX_LISTED_MOVES, PIECE_VALUE

# An entry: the move's 16-bit code (from | to << 6 | promotion << 12, engine.board.moves.encode),
# then the attacker's and the victim's python-chess piece types, then the good-capture bit.
CODE_MASK = 0xFFFF
ATTACKER_SHIFT = 16
VICTIM_SHIFT = 19
TYPE_MASK = 7
GOOD_BIT = 1 << 22
PROMOTION_SHIFT = 12
PROMOTION_BITS = 7 << PROMOTION_SHIFT



def entry_move(entry: int) -> chess.Move:
    """The move of a capture entry (from the prebuilt table: engine.board.moves.MOVE_TABLE)."""
    return MOVE_TABLE[entry & CODE_MASK]  # type: ignore[return-value]  # every listed move is in the table


def entry_is_capture(entry: int) -> bool:
    """Whether an entry is a capture or promotion (an attacker in it), not a quiet check."""
    return entry >> ATTACKER_SHIFT != 0


def entry_victim(entry: int) -> int:
    """The python-chess piece type an entry's move takes (a pawn for en passant and promotions)."""
    return (entry >> VICTIM_SHIFT) & TYPE_MASK


def entry_promotes(entry: int) -> bool:
    """Whether an entry's move is a promotion."""
    return entry & PROMOTION_BITS != 0


def entry_is_good(entry: int) -> bool:
    """Whether an entry's capture does not lose material by SEE (or is a queen promotion)."""
    return entry & GOOD_BIT != 0


_VALUE = np.array(PIECE_VALUE, dtype=np.int64)
_BACK_RANKS = RANK_1 | RANK_8
PAWN_KIND, NO_PROMOTION = np.int64(1), NONE_YET  # typed constant arguments (engine.board.bits.NONE_YET)
NO_CODE = np.int64(-1)  # no move: a typed constant argument
CHECKS_ONLY, EVERY_QUIET = np.bool_(True), np.bool_(False)  # _add_quiets' checks argument, typed

BITBOARDS = "uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, boolean"


@kernel
def _piece_at(sq_bb, pawns, knights, bishops, rooks, queens):
    """The python-chess piece type on a square (its bit), 6 (king) when none of the others; the
    square must hold a piece."""
    if sq_bb & pawns:
        return 1
    if sq_bb & knights:
        return 2
    if sq_bb & bishops:
        return 3
    if sq_bb & rooks:
        return 4
    if sq_bb & queens:
        return 5
    return 6


@kernel
def _attacks(sq, kind, occ):
    """python-chess's attacks_mask for a non-pawn piece of the given type on sq."""
    if kind == 2:
        return KNIGHT_ATTACKS[sq]
    if kind == 3:
        return bishop_attacks(sq, occ)
    if kind == 4:
        return rook_attacks(sq, occ)
    if kind == 5:
        return bishop_attacks(sq, occ) | rook_attacks(sq, occ)
    return KING_ATTACKS[sq]


@kernel
def _good(pawns, knights, bishops, rooks, queens, kings, black, white, from_sq, to_sq, attacker, victim, promotion):
    """Whether a capture is good (tests/reference_movepick.py's is_good_capture): a queen
    promotion, a capture of a piece worth at least its attacker (or by the king), or one that does
    not lose material by SEE."""
    if promotion:
        return promotion == 5
    if _VALUE[attacker] <= _VALUE[victim] or attacker == 6:
        return True
    return see_ge_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, from_sq, to_sq,
                         attacker, victim, 0)


@kernel
def _mvv_lva(victim, attacker, promotion):
    """The MVV-LVA sort key of a capture or promotion (tests/reference_movepick.py's _capture_key):
    a promotion adds its new piece as a second victim (promotion: 0 for none; a promotion push's
    victim is a pawn)."""
    return _VALUE[victim] * 8 - _VALUE[attacker] // 100 + (_VALUE[promotion] * 8 if promotion else 0)


@kernel(allocates=True)
def _list_captures(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, to_mask, out):
    """capture_list_kernel's work (its bitboards uint64)."""
    own = white if turn else black
    them = black if turn else white
    occ = own | them
    targets = them & to_mask
    keys = np.empty(MAX_LISTED_MOVES, np.int64)
    n = 0
    # Pieces (king included), from the highest square down, each onto its targets from the highest down.
    pieces = own & ~pawns
    while pieces:
        from_sq = np.int64(msb(pieces))
        from_bb = ONE << U64(from_sq)
        pieces ^= from_bb
        kind = _piece_at(from_bb, pawns, knights, bishops, rooks, queens)
        moves = _attacks(from_sq, kind, occ) & targets
        while moves:
            to_sq = np.int64(msb(moves))
            to_bb = ONE << U64(to_sq)
            moves ^= to_bb
            victim = _piece_at(to_bb, pawns, knights, bishops, rooks, queens)
            out[n] = from_sq | (to_sq << 6) | (kind << ATTACKER_SHIFT) | (victim << VICTIM_SHIFT)
            if _good(pawns, knights, bishops, rooks, queens, kings, black, white, from_sq, to_sq, kind, victim,
                     NO_PROMOTION):
                out[n] |= GOOD_BIT
            keys[n] = _mvv_lva(victim, kind, NO_PROMOTION)
            n += 1
    # Pawn captures, promotions as queen, rook, bishop, knight.
    own_pawns = pawns & own
    side = 1 if turn else 0
    movers = own_pawns
    while movers:
        from_sq = np.int64(msb(movers))
        from_bb = ONE << U64(from_sq)
        movers ^= from_bb
        moves = PAWN_ATTACKS[side, from_sq] & targets
        while moves:
            to_sq = np.int64(msb(moves))
            to_bb = ONE << U64(to_sq)
            moves ^= to_bb
            victim = _piece_at(to_bb, pawns, knights, bishops, rooks, queens)
            base = from_sq | (to_sq << 6) | (1 << ATTACKER_SHIFT) | (victim << VICTIM_SHIFT)
            if to_bb & _BACK_RANKS:
                for promotion in (5, 4, 3, 2):
                    out[n] = base | (promotion << PROMOTION_SHIFT)
                    if promotion == 5:
                        out[n] |= GOOD_BIT
                    keys[n] = _mvv_lva(victim, PAWN_KIND, promotion)
                    n += 1
            else:
                out[n] = base
                if _good(pawns, knights, bishops, rooks, queens, kings, black, white, from_sq, to_sq, PAWN_KIND, victim,
                         NO_PROMOTION):
                    out[n] |= GOOD_BIT
                keys[n] = _mvv_lva(victim, PAWN_KIND, NO_PROMOTION)
                n += 1
    # En passant, when the mask holds its (empty) square.
    if ep >= 0:
        ep_bb = ONE << U64(ep)
        if ep_bb & to_mask and not ep_bb & occ:
            movers = own_pawns & PAWN_ATTACKS[1 - side, ep] & (RANK_5 if turn else RANK_4)
            while movers:
                from_sq = np.int64(msb(movers))
                movers ^= ONE << U64(from_sq)
                out[n] = from_sq | (ep << 6) | (1 << ATTACKER_SHIFT) | (1 << VICTIM_SHIFT) | GOOD_BIT
                keys[n] = _mvv_lva(PAWN_KIND, PAWN_KIND, NO_PROMOTION)
                n += 1
    # Promotions by a step forward, whatever the mask.
    if turn:
        steps = ((own_pawns & RANK_7) << U64(8)) & ~occ
    else:
        steps = ((own_pawns & RANK_2) >> U64(8)) & ~occ
    while steps:
        to_sq = np.int64(msb(steps))
        steps ^= ONE << U64(to_sq)
        from_sq = to_sq - 8 if turn else to_sq + 8
        base = from_sq | (to_sq << 6) | (1 << ATTACKER_SHIFT) | (1 << VICTIM_SHIFT)
        for promotion in (5, 4, 3, 2):
            out[n] = base | (promotion << PROMOTION_SHIFT)
            if promotion == 5:
                out[n] |= GOOD_BIT
            keys[n] = _mvv_lva(PAWN_KIND, PAWN_KIND, promotion)
            n += 1
    # Best first, stable: an insertion sort (a few entries).
    for i in range(1, n):
        key = keys[i]
        entry = out[i]
        j = i - 1
        while j >= 0 and keys[j] < key:
            keys[j + 1] = keys[j]
            out[j + 1] = out[j]
            j -= 1
        keys[j + 1] = key
        out[j + 1] = entry
    return n


@kernel(f"int64({BITBOARDS}, int64, uint64, int64[::1])", nogil=True)
def capture_list_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, to_mask, out):
    """Write the pseudo-legal captures onto to_mask (en passant when to_mask holds the en passant
    square ep, -1 for none) and the non-capturing promotions into out, best MVV-LVA first; return
    their number. Each entry: code | attacker << ATTACKER_SHIFT | victim << VICTIM_SHIFT | GOOD_BIT
    if it is a good capture (the victim of en passant and of a promotion push is a pawn)."""
    # As uint64 (no-ops compiled; Python ints when the kernel runs interpreted, whose ~ is negative).
    return _list_captures(U64(pawns), U64(knights), U64(bishops), U64(rooks), U64(queens), U64(kings), U64(black),
                          U64(white), turn, ep, U64(to_mask), out)


@kernel("uint64(int64, int64, uint64, uint64, uint64, uint64, uint64)", nogil=True)
def attacked_pieces_kernel(flags, need, pawns, knights, bishops, rooks, queens):
    """The squares of every piece (of either colour) of a kind that the evaluation's flags
    (engine.board.flags: ATTACKS_PAWN .. ATTACKS_QUEEN) say the side to move attacks, and worth more than
    need: the targets of the search's capture stages (need below every value) and of the quiescence
    search's (delta pruning by piece type)."""
    mask = U64(0)
    if flags & ATTACKS_QUEEN and need < _VALUE[5]:
        mask |= U64(queens)
    if flags & ATTACKS_ROOK and need < _VALUE[4]:
        mask |= U64(rooks)
    if flags & ATTACKS_BISHOP and need < _VALUE[3]:
        mask |= U64(bishops)
    if flags & ATTACKS_KNIGHT and need < _VALUE[2]:
        mask |= U64(knights)
    if flags & ATTACKS_PAWN and need < _VALUE[1]:
        mask |= U64(pawns)
    return mask


@kernel(f"int64({BITBOARDS}, int64, int64, int64, int64[::1])", nogil=True)
def quiescence_list_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, flags, need, out):
    """The quiescence search's captures: capture_list_kernel's list for the enemy pieces of the
    kinds the evaluation's flags (engine.board.flags) say the side to move attacks and worth more than
    need (delta pruning by piece type), every capture when it has a pawn about to promote; -1
    (nothing written) when no piece qualifies."""
    pawns, knights, bishops, rooks, queens = U64(pawns), U64(knights), U64(bishops), U64(rooks), U64(queens)
    kings, black, white = U64(kings), U64(black), U64(white)
    if flags & PROMOTION_FLAG:
        mask = ~U64(0)
    else:
        mask = attacked_pieces_kernel(flags, need, pawns, knights, bishops, rooks, queens)
        if not mask:
            return -1
        mask &= black if turn else white
    return _list_captures(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, mask, out)


@kernel
def pawn_pushes(own_pawns, occ, turn):
    """(single, double, step): the squares the pawns own_pawns of the side `turn` can step to one and
    two squares ahead on the occupancy occ (python-chess's advance generation), and a step's square
    difference (8 for White, -8 for Black)."""
    if turn:
        single = (own_pawns << U64(8)) & ~occ
        return single, (single << U64(8)) & ~occ & RANK_3_4, 8
    single = (own_pawns >> U64(8)) & ~occ
    return single, (single >> U64(8)) & ~occ & RANK_5_6, -8


ESCAPE_BONUS = 1 << 20  # above any history score: the quiet moves of a piece en prise go first
_SORT_BIAS = 1 << 22  # a sort key plus this is positive (three histories, each within +-HISTORY_MAX)
_INDEX_SHIFT = 16
_KEY_SHIFT = 24


@kernel
def _add_quiets(pawns, knights, bishops, rooks, queens, kings, black, white, turn, from_mask, to_mask, checks,
                castle_a, castle_b, seen_a, seen_b, seen_c, out, n):
    """Append to out (n entries so far) the quiet moves from from_mask onto to_mask (empty squares)
    in the order of python-chess's generate_pseudo_legal_moves: piece moves, the castling moves
    castle_a and castle_b (codes python-chess listed; -1: none), pawn steps and double steps;
    leaving out the codes seen_a, seen_b and seen_c; checks: only those that give check and do not
    lose the moved piece by SEE. The new count."""
    own = white if turn else black
    occ = white | black
    pieces = own & ~pawns & from_mask
    while pieces:
        from_sq = np.int64(msb(pieces))
        from_bb = ONE << U64(from_sq)
        pieces ^= from_bb
        kind = _piece_at(from_bb, pawns, knights, bishops, rooks, queens)
        moves = _attacks(from_sq, kind, occ) & to_mask
        while moves:
            to_sq = np.int64(msb(moves))
            moves ^= ONE << U64(to_sq)
            if _wanted(pawns, knights, bishops, rooks, queens, kings, black, white, turn, from_sq, to_sq, kind,
                       checks, seen_a, seen_b, seen_c):
                out[n] = from_sq | (to_sq << 6)
                n += 1
    for code in (castle_a, castle_b):
        if code >= 0 and code != seen_a and code != seen_b and code != seen_c:
            out[n] = code
            n += 1
    own_pawns = pawns & own & from_mask
    if not own_pawns:
        return n
    single, double, step = pawn_pushes(own_pawns, occ, turn)
    for pushes, distance in ((single & to_mask, step), (double & to_mask, 2 * step)):
        while pushes:
            to_sq = np.int64(msb(pushes))
            pushes ^= ONE << U64(to_sq)
            from_sq = to_sq - distance
            if _wanted(pawns, knights, bishops, rooks, queens, kings, black, white, turn, from_sq, to_sq, PAWN_KIND,
                       checks, seen_a, seen_b, seen_c):
                out[n] = from_sq | (to_sq << 6)
                n += 1
    return n


@kernel
def _wanted(pawns, knights, bishops, rooks, queens, kings, black, white, turn, from_sq, to_sq, kind, checks, seen_a,
            seen_b, seen_c):
    """Whether _add_quiets lists the quiet move: not one of the codes seen, and with checks, one that
    gives check and does not lose the moved piece (of type kind) by SEE."""
    code = from_sq | (to_sq << 6)
    if code == seen_a or code == seen_b or code == seen_c:
        return False
    return not checks or (
        gives_check_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, from_sq, to_sq, kind, 0)
        and see_ge_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, from_sq, to_sq, kind, 0, 0))


@kernel
def _possible_checks(pawns, knights, bishops, rooks, queens, kings, black, white, turn, check_to, discoverers,
                     reachers, checks, seen_a, seen_b, seen_c, out):
    """Write into out the quiet moves (no king move, promotion or castling) that may give check by
    check_masks_kernel's masks, as _add_quiets lists them: first the moves of the pieces that could
    check directly onto the squares they would check from, then every move of the pieces whose
    departure could uncover a check; their number."""
    movers = (white if turn else black) & ~kings & ~(pawns & (RANK_7 if turn else RANK_2))
    empty = ~(white | black)
    n = _add_quiets(pawns, knights, bishops, rooks, queens, kings, black, white, turn, movers & reachers & ~discoverers,
                    empty & check_to, checks, NO_CODE, NO_CODE, seen_a, seen_b, seen_c, out, NONE_YET)
    if movers & discoverers:
        n = _add_quiets(pawns, knights, bishops, rooks, queens, kings, black, white, turn, movers & discoverers, empty,
                        checks, NO_CODE, NO_CODE, seen_a, seen_b, seen_c, out, n)
    return n


@kernel(f"int64({BITBOARDS}, int64[::1])", nogil=True)
def quiet_checks_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, out):
    """Write into out the quiet moves (no capture, promotion, castling or king move) that give
    check and do not lose the moved piece by SEE, as Searcher._quiet_checks yields them: first the
    moves of the pieces that could check directly onto the squares they would check from, then
    every move of the pieces whose departure could uncover a check; return their number."""
    # As uint64 (no-ops compiled; Python ints when the kernel runs interpreted, whose ~ is negative).
    pawns, knights, bishops, rooks, queens = U64(pawns), U64(knights), U64(bishops), U64(rooks), U64(queens)
    kings, black, white = U64(kings), U64(black), U64(white)
    check_to, discoverers, reachers = check_masks_kernel(pawns, knights, bishops, rooks, queens, kings, black,
                                                         white, turn)
    return _possible_checks(pawns, knights, bishops, rooks, queens, kings, black, white, turn, check_to, discoverers,
                            reachers, CHECKS_ONLY, NO_CODE, NO_CODE, NO_CODE, out)


@kernel
def _sort_packed(out, n):
    """Sort the packed entries out[:n] (sort key, generation index, code) best first, by an
    insertion sort (a few dozen entries), and leave only their codes."""
    for i in range(1, n):
        entry = out[i]
        j = i - 1
        while j >= 0 and out[j] < entry:
            out[j + 1] = out[j]
            j -= 1
        out[j + 1] = entry
    for i in range(n):
        out[i] &= CODE_MASK


@kernel(f"int64({BITBOARDS}, uint64, uint64, uint64, boolean, int64, int64, int64, int64, int64, int64[::1], "
      "int16[::1], int16[::1], int64[::1])", nogil=True)
def quiet_list_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, check_to, discoverers,
                      reachers, masked, castle_a, castle_b, seen_a, seen_b, seen_c, history, cont1, cont2, out):
    """The move picker's quiet stage (tests/reference_picker.py's pick_moves): write into out the codes of the
    quiet moves of the side to move (not promotions, captures or en passant), in python-chess's
    generation order stably sorted as sort_quiets sorts them (the moves of a piece en prise
    first, then by history[colour * 4096 + from * 64 + to] + cont1[piece_to] + cont2[piece_to], best
    first, piece_to = (piece type - 1) * 64 + to: the continuation histories' rows of the moves one and
    two plies before, engine.search.history); return their number.
    castle_a, castle_b: the castling moves' codes (python-chess's generate_castling_moves; -1:
    none), listed after the piece moves as python-chess lists them. seen_a..c: codes already
    yielded (the TT move, the killers; -1: none), left out. masked: only the moves that might give
    check, as check_masks_kernel's (check_to, discoverers, reachers) allow: the pieces that could
    check directly onto the squares they would check from, then every move of the pieces whose
    departure could uncover a check (never the king, so never castling)."""
    pawns, knights, bishops, rooks, queens = U64(pawns), U64(knights), U64(bishops), U64(rooks), U64(queens)
    kings, black, white = U64(kings), U64(black), U64(white)
    check_to, discoverers, reachers = U64(check_to), U64(discoverers), U64(reachers)
    if masked:
        n = _possible_checks(pawns, knights, bishops, rooks, queens, kings, black, white, turn, check_to, discoverers,
                             reachers, EVERY_QUIET, seen_a, seen_b, seen_c, out)
    else:
        own = white if turn else black
        n = _add_quiets(pawns, knights, bishops, rooks, queens, kings, black, white, turn,
                        own & ~(pawns & (RANK_7 if turn else RANK_2)), ~(white | black), EVERY_QUIET, castle_a,
                        castle_b, seen_a, seen_b, seen_c, out, NONE_YET)
    if n < 2:
        return n
    # Sort keys packed above the codes: key, then the generation index (earlier first: a stable
    # sort), then the code.
    threatened = threats_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn)
    base = 4096 if turn else 0
    for i in range(n):
        code = out[i]
        from_sq = code & 63
        from_bb = ONE << U64(from_sq)
        piece_to = (_piece_at(from_bb, pawns, knights, bishops, rooks, queens) - 1) * 64 + (code >> 6)
        key = history[base + from_sq * 64 + (code >> 6)] + np.int64(cont1[piece_to]) + np.int64(cont2[piece_to])
        key += _SORT_BIAS
        if threatened & from_bb:
            key += ESCAPE_BONUS
        out[i] = (key << _KEY_SHIFT) | ((255 - i) << _INDEX_SHIFT) | code
    _sort_packed(out, n)
    return n


RANK_1_OR_8 = RANK_1 | RANK_8  # a pawn arriving there promotes
PROMOTION_ORDER = (5, 4, 3, 2)  # python-chess generates promotions queen, rook, bishop, knight


@kernel
def _add_pawn_move(out, n, from_sq, to_sq):
    """Write a pawn move (the four promotions, queen first, onto the last rank) at out[n]; the new count."""
    if (ONE << U64(to_sq)) & RANK_1_OR_8:
        for piece in PROMOTION_ORDER:
            out[n] = from_sq | (to_sq << TO_SHIFT) | (piece << PROMOTION_SHIFT)
            n += 1
    else:
        out[n] = from_sq | (to_sq << TO_SHIFT)
        n += 1
    return n


@kernel
def _add_en_passant(pawns, own, occ, turn, ep, from_mask, to_mask, out, n):
    """python-chess's generate_pseudo_legal_ep: the captures onto the en passant square ep (-1: none)."""
    if ep < 0:
        return n
    ep_bb = ONE << U64(ep)
    if not ep_bb & to_mask or ep_bb & occ:
        return n
    capturers = pawns & own & from_mask & PAWN_ATTACKS[0 if turn else 1, ep] & (RANK_5 if turn else RANK_4)
    while capturers:
        from_sq = np.int64(msb(capturers))
        capturers ^= ONE << U64(from_sq)
        out[n] = from_sq | (ep << TO_SHIFT)
        n += 1
    return n


@kernel(f"int64({BITBOARDS}, int64, int64[::1])", nogil=True)
def evasion_list_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, out):
    """Write into out the codes of the evasions of a side in check (tests/reference_movepick.py's
    evasion_moves), in python-chess's evasion order (pseudo-legal: a pinned piece's move is listed,
    the search drops it), and return their number: king steps to squares not attacked, then python-chess's
    generate_pseudo_legal_moves(blockers, block) (pieces, pawn captures, pushes, double pushes, en
    passant), then an en passant capture of the checking pawn."""
    pawns, knights, bishops, rooks, queens = U64(pawns), U64(knights), U64(bishops), U64(rooks), U64(queens)
    kings, black, white = U64(kings), U64(black), U64(white)
    checkers, king_to, block, blockers = evasion_kernel(pawns, knights, bishops, rooks, queens, kings, black, white,
                                                        turn)
    own = white if turn else black
    them = black if turn else white
    occ = white | black
    n = 0
    ksq = np.int64(lsb(kings & own))
    while king_to:
        to_sq = np.int64(msb(king_to))
        king_to ^= ONE << U64(to_sq)
        out[n] = ksq | (to_sq << TO_SHIFT)
        n += 1
    if blockers:
        pieces = own & ~pawns & blockers
        while pieces:
            from_sq = np.int64(msb(pieces))
            from_bb = ONE << U64(from_sq)
            pieces ^= from_bb
            if from_bb & knights:
                targets = KNIGHT_ATTACKS[from_sq]
            elif from_bb & bishops:
                targets = bishop_attacks(from_sq, occ)
            elif from_bb & rooks:
                targets = rook_attacks(from_sq, occ)
            elif from_bb & queens:
                targets = bishop_attacks(from_sq, occ) | rook_attacks(from_sq, occ)
            else:
                targets = KING_ATTACKS[from_sq]
            targets &= ~own & block
            while targets:
                to_sq = np.int64(msb(targets))
                targets ^= ONE << U64(to_sq)
                out[n] = from_sq | (to_sq << TO_SHIFT)
                n += 1
        own_pawns = pawns & own & blockers
        if own_pawns:
            capturers = own_pawns
            while capturers:
                from_sq = np.int64(msb(capturers))
                capturers ^= ONE << U64(from_sq)
                targets = PAWN_ATTACKS[1 if turn else 0, from_sq] & them & block
                while targets:
                    to_sq = np.int64(msb(targets))
                    targets ^= ONE << U64(to_sq)
                    n = _add_pawn_move(out, n, from_sq, to_sq)
            single, double, step = pawn_pushes(own_pawns, occ, turn)
            single &= block
            double &= block
            while single:
                to_sq = np.int64(msb(single))
                single ^= ONE << U64(to_sq)
                n = _add_pawn_move(out, n, to_sq - step, to_sq)
            while double:
                to_sq = np.int64(msb(double))
                double ^= ONE << U64(to_sq)
                out[n] = (to_sq - 2 * step) | (to_sq << TO_SHIFT)
                n += 1
            n = _add_en_passant(pawns, own, occ, turn, ep, blockers, block, out, n)
    if block and ep >= 0 and not (ONE << U64(ep)) & block and ep + (-8 if turn else 8) == np.int64(msb(checkers)):
        n = _add_en_passant(pawns, own, occ, turn, ep, ~ZERO, ~ZERO, out, n)
    return n


_GROUP_SHIFT = 56  # evasion_order_kernel's sort: the group above the key


@kernel("UniTuple(int64, 3)(uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, boolean, int64, "
      "int64[::1])", nogil=True)
def evasion_order_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, out):
    """The picker's stages over the evasions of a side in check (tests/reference_picker.py's pick_evasions):
    write into out the codes of evasion_list_kernel's moves regrouped: the good captures and
    promotions (_good) by MVV-LVA (_mvv_lva, stably), then the quiet
    moves in their generation order (the picker sorts them by the history only when it reaches
    them: the moves before them may change it), then the other captures and promotions by MVV-LVA;
    return (good, good + quiet, every one): where each group ends."""
    pawns, knights, bishops, rooks, queens = U64(pawns), U64(knights), U64(bishops), U64(rooks), U64(queens)
    kings, black, white = U64(kings), U64(black), U64(white)
    n = evasion_list_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, out)
    them = black if turn else white
    good = quiet = 0
    for i in range(n):
        code = out[i]
        from_sq = code & 63
        to_sq = (code >> TO_SHIFT) & 63
        promotion = code >> PROMOTION_SHIFT
        from_bb = ONE << U64(from_sq)
        to_bb = ONE << U64(to_sq)
        step = abs(to_sq - from_sq)
        en_passant = to_sq == ep and (from_bb & pawns) != ZERO and (step == 7 or step == 9)
        key = 0
        if promotion != 0 or (to_bb & them) != ZERO or en_passant:
            attacker = _piece_at(from_bb, pawns, knights, bishops, rooks, queens)
            victim = _piece_at(to_bb, pawns, knights, bishops, rooks, queens) if to_bb & them else np.int64(1)
            key = _mvv_lva(victim, attacker, promotion)
            if _good(pawns, knights, bishops, rooks, queens, kings, black, white, from_sq, to_sq, attacker, victim,
                     promotion):
                group = 2
                good += 1
            else:
                group = 0
        else:
            group = 1
            quiet += 1
        out[i] = (group << _GROUP_SHIFT) | ((key + _SORT_BIAS) << _KEY_SHIFT) | ((255 - i) << _INDEX_SHIFT) | code
    _sort_packed(out, n)
    return good, good + quiet, n
