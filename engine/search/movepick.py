"""The move picker of the compiled search: a node's moves in stages, lazily, each pseudo-legal move once.

The stages are tests/reference_picker.py's (its Python reference): the TT move (kept only if
pseudo-legal here), the good captures (MVV-LVA, SEE), the killers, the quiet moves (sorted by the
butterfly and continuation histories, listed only when reached), the bad captures; in check the evasions, grouped the
same way (pick_evasions). A node's picker works in its own rows (one set a ply, engine.search.tree's
`rows` and `masks`): its state (the L_* fields), the quiet moves it tried, its capture (or evasion)
list and its quiet list; its masks are check_masks_kernel's three, then the capture targets. The
killers and the histories are the driver's arrays, updated here when a quiet move cuts off.
"""

from __future__ import annotations

import chess
import numpy as np

from garfish.engine.board.bits import NONE_YET, ONE, U64
from garfish.engine.board.captures import (
    _INDEX_SHIFT, _KEY_SHIFT, _SORT_BIAS, CODE_MASK, ESCAPE_BONUS, GOOD_BIT, _piece_at, _sort_packed,
    attacked_pieces_kernel,
    capture_list_kernel, evasion_order_kernel, quiet_list_kernel,
)
from garfish.engine.board.checks import check_masks_kernel, threats_kernel
from garfish.engine.board.flags import FLAGS_MASK, IN_CHECK_FLAG, PROMOTION_FLAG
from garfish.engine.board.moves import PROMOTION_SHIFT, SQUARE_MASK, TO_SHIFT
from garfish.engine.board.position import (
    BISHOPS, BLACK, CASTLING, KNIGHTS, P_EP, P_PACKED, P_TURN, PAWNS, QUEENS, ROOKS, WHITE, bitboards, castling_codes,
    is_capture, pseudo_legal,
)
from garfish.engine.kernel import kernel
from garfish.engine.search.history import HISTORY_MAX, NO_CONTINUATION, PIECE_TO
from garfish.engine.types import INF

# A node's work rows (int64[NODE_ROWS, MAX_LISTED_MOVES], one set a ply): row 0 its picker's state
# (the L_* fields), row 1 the quiet moves tried (codes), row 2 the capture (or evasion) list, row 3
# the quiet list.
STATE_ROW, TRIED_ROW, CAPTURES_ROW, QUIETS_ROW = range(4)
NODE_ROWS = 4
MASK_FIELDS = 4
# The picker's state: the stage and the next index in its list, the TT move's code (-1: none, or
# not pseudo-legal here), the killers the killers' stage yields (-1: none), the capture list's
# length, the quiet list's, in check where the evasion list's good captures and quiet moves end,
# whether the node is in check (evasions), whether its check masks are made, the quiet moves tried,
# the continuation history's rows of the moves one and two plies before (engine.search.history).
(L_STAGE, L_NEXT, L_TT, L_KILLER1, L_KILLER2, L_CAPTURES, L_QUIETS, L_GOOD_END, L_QUIET_END, L_EVASIONS, L_MASKS,
 L_TRIED, L_CONT1, L_CONT2) = range(14)
# The picker's stages (tests/reference_picker.py's Stage).
TT_STAGE, GOOD_STAGE, KILLER_STAGE, QUIET_STAGE, BAD_STAGE, END_STAGE = range(6)
# A node's row of `masks` (uint64): check_masks_kernel's three (the squares a piece could check
# from, the pieces whose move could uncover a check, the pieces that could move onto a checking
# square), then the capture targets (a superset of the squares the node can capture on).
M_CHECK_SQUARES, M_DISCOVERERS, M_MOVERS, M_TARGETS = range(4)

_NO_CODE = np.int64(-1)
_ALL = U64(chess.BB_ALL)
_RANK_1, _RANK_8 = U64(chess.BB_RANK_1), U64(chess.BB_RANK_8)


@kernel
def history_update(history, turn, code, tried, count, bonus):
    """engine.search.history's arithmetic: reward the quiet move `code` that cut off, punish the quiet
    moves tried before it (tried[:count], codes)."""
    base = 4096 if turn else 0
    i = base + (code & SQUARE_MASK) * 64 + ((code >> TO_SHIFT) & SQUARE_MASK)
    history[i] += bonus - history[i] * bonus // HISTORY_MAX
    for k in range(count):
        move = tried[k]
        j = base + (move & SQUARE_MASK) * 64 + ((move >> TO_SHIFT) & SQUARE_MASK)
        history[j] -= bonus + history[j] * bonus // HISTORY_MAX


@kernel
def record_killer(killers, ply, code):
    """A quiet move cut off at this ply: the first killer, the old first the second (unless the same)."""
    if killers[ply, 0] != code:
        killers[ply, 1] = killers[ply, 0]
        killers[ply, 0] = code


@kernel
def capture_targets(pos, posi, ply):
    """Step 8's capture hints for row ply: only enemy pieces of the kinds the evaluation says are
    attacked can be captured (and the en passant square); every square in check or with a pawn
    about to promote."""
    packed = posi[ply, P_PACKED]
    flags = packed & FLAGS_MASK
    if packed & IN_CHECK_FLAG or flags & PROMOTION_FLAG:
        return _ALL
    turn = posi[ply, P_TURN] != 0
    targets = attacked_pieces_kernel(flags, -INF, pos[ply, PAWNS], pos[ply, KNIGHTS], pos[ply, BISHOPS],
                                     pos[ply, ROOKS], pos[ply, QUEENS]) & (pos[ply, BLACK] if turn else pos[ply, WHITE])
    if posi[ply, P_EP] >= 0:
        targets |= ONE << U64(posi[ply, P_EP])
    return targets


@kernel
def cont_update(cont, row1, row2, pos, ply, code, tried, count, bonus):
    """The continuation histories' share of history_update: in the rows row1 and row2 (the moves one
    and two plies before; NO_CONTINUATION is left as it is), reward the quiet move `code` of row ply's
    side to move and punish the quiet moves tried before it (tried[:count])."""
    for which in range(2):
        row = row1 if which == 0 else row2
        if row == NO_CONTINUATION:
            continue
        table = cont[row]
        i = piece_to(pos, ply, code)
        table[i] += bonus - np.int64(table[i]) * bonus // HISTORY_MAX
        for k in range(count):
            j = piece_to(pos, ply, tried[k])
            table[j] -= bonus + np.int64(table[j]) * bonus // HISTORY_MAX


@kernel
def piece_to(pos, ply, code):
    """A move's column in the continuation history: its piece type (from row ply) and destination."""
    from_bb = ONE << U64(code & SQUARE_MASK)
    piece = _piece_at(from_bb, pos[ply, PAWNS], pos[ply, KNIGHTS], pos[ply, BISHOPS], pos[ply, ROOKS],
                      pos[ply, QUEENS])
    return (piece - 1) * 64 + ((code >> TO_SHIFT) & SQUARE_MASK)


@kernel
def move_row(pos, posi, ply, code):
    """The continuation history's row of row ply's move `code` (its side, piece and destination)."""
    return (PIECE_TO if posi[ply, P_TURN] != 0 else 0) + piece_to(pos, ply, code)


@kernel
def start_picker(node, masks, pos, posi, ply, tt_code, targets, masked, chess960, cont1, cont2):
    """Set up the picker of the node at row ply (its evaluation's in-check flag chooses the
    evasions): the TT move (-1: none) kept if pseudo-legal, the capture targets (a superset of the
    squares it can capture on), and with `masked` the check masks, so that the quiet stage lists
    only the moves that may give check; cont1, cont2: the continuation history's rows of the moves
    one and two plies before (NO_CONTINUATION: none)."""
    loop = node[STATE_ROW]
    loop[L_CONT1] = cont1
    loop[L_CONT2] = cont2
    loop[L_STAGE] = TT_STAGE
    loop[L_NEXT] = 0
    loop[L_CAPTURES] = 0
    loop[L_QUIETS] = 0
    loop[L_TRIED] = 0
    loop[L_KILLER1] = -1
    loop[L_KILLER2] = -1
    loop[L_EVASIONS] = 1 if posi[ply, P_PACKED] & IN_CHECK_FLAG else 0
    loop[L_TT] = tt_code if tt_code > 0 and pseudo_legal(tt_code, pos, posi, ply, chess960, node[QUIETS_ROW]) else -1
    masks[M_TARGETS] = targets
    loop[L_MASKS] = 0
    if masked:
        make_masks(masks, pos, posi, ply)
        loop[L_MASKS] = 1


@kernel
def make_masks(masks, pos, posi, ply):
    """The node's check masks (check_masks_kernel's three) into its row of masks."""
    masks[M_CHECK_SQUARES], masks[M_DISCOVERERS], masks[M_MOVERS] = check_masks_kernel(*bitboards(pos, ply),
                                                                                        posi[ply, P_TURN] != 0)


@kernel
def _usable_killer(code, tt_code, pos, posi, ply, chess960, scratch):
    """tests/reference_picker.py's usable_killer: the killer `code` (-1: none) when its stage yields it (not the
    TT move, quiet, pseudo-legal here), else -1."""
    if code < 0 or code == tt_code or code >> PROMOTION_SHIFT or is_capture(code, pos, posi, ply):
        return _NO_CODE
    return code if pseudo_legal(code, pos, posi, ply, chess960, scratch) else _NO_CODE


@kernel
def _evasion_quiets(node, loop, tt_code, pos, posi, ply, history, cont):
    """pick_evasions' quiet stage: the quiet evasions left (not the TT move nor a killer) into the
    quiet row, sorted as tests/reference_picker.py's sort_quiets sorts them (stably: a piece en prise first,
    then by the histories); their number."""
    turn = posi[ply, P_TURN] != 0
    cont1, cont2 = cont[loop[L_CONT1]], cont[loop[L_CONT2]]
    threatened = threats_kernel(*bitboards(pos, ply), turn)
    base = 4096 if turn else 0
    count = NONE_YET
    for i in range(loop[L_GOOD_END], loop[L_QUIET_END]):
        code = node[CAPTURES_ROW, i]
        if code < 0 or code == tt_code:
            continue
        from_sq = code & SQUARE_MASK
        column = piece_to(pos, ply, code)
        key = (history[base + from_sq * 64 + ((code >> TO_SHIFT) & SQUARE_MASK)] + np.int64(cont1[column])
               + np.int64(cont2[column]))
        if threatened & (ONE << U64(from_sq)):
            key += ESCAPE_BONUS
        node[QUIETS_ROW, count] = ((key + _SORT_BIAS) << _KEY_SHIFT) | ((255 - count) << _INDEX_SHIFT) | code
        count += 1
    _sort_packed(node[QUIETS_ROW], count)
    return count


@kernel
def _stage_start(node, masks, pos, posi, ply, killers, history, cont, chess960):
    """Make the list of the stage the node's picker has just entered (tests/reference_picker.py's, lazily: the
    quiet moves are listed and sorted only when reached, the history then as the moves before left it)."""
    loop = node[STATE_ROW]
    stage = loop[L_STAGE]
    evasions = loop[L_EVASIONS] != 0
    tt_code = loop[L_TT]
    pawns, knights, bishops, rooks, queens, kings, black, white = bitboards(pos, ply)
    turn = posi[ply, P_TURN] != 0
    ep = posi[ply, P_EP]
    if stage == GOOD_STAGE:
        if evasions:  # the evasions, grouped (tests/reference_picker.py's pick_evasions)
            loop[L_GOOD_END], loop[L_QUIET_END], loop[L_CAPTURES] = evasion_order_kernel(
                pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, node[CAPTURES_ROW])
        elif masks[M_TARGETS]:
            loop[L_CAPTURES] = capture_list_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn,
                                                   ep, masks[M_TARGETS], node[CAPTURES_ROW])
    elif stage == KILLER_STAGE:
        killer1 = killers[ply, 0]
        killer2 = killers[ply, 1]
        if evasions:  # the killers that are quiet evasions (not the TT move), taken out of them
            found1 = found2 = _NO_CODE
            for which in range(2):
                killer = killer1 if which == 0 else killer2
                if killer < 0 or killer == tt_code:
                    continue
                for i in range(loop[L_GOOD_END], loop[L_QUIET_END]):
                    if node[CAPTURES_ROW, i] == killer:
                        node[CAPTURES_ROW, i] = _NO_CODE
                        if found1 < 0:
                            found1 = killer
                        else:
                            found2 = killer
                        break
            loop[L_KILLER1], loop[L_KILLER2] = found1, found2
        else:
            first = _usable_killer(killer1, tt_code, pos, posi, ply, chess960, node[QUIETS_ROW])
            second = _NO_CODE
            if killer2 != first:
                second = _usable_killer(killer2, tt_code, pos, posi, ply, chess960, node[QUIETS_ROW])
            loop[L_KILLER1], loop[L_KILLER2] = first, second
    elif stage == QUIET_STAGE:
        if evasions:
            loop[L_QUIETS] = _evasion_quiets(node, loop, tt_code, pos, posi, ply, history, cont)
        else:
            castle_a = castle_b = _NO_CODE
            masked = loop[L_MASKS] != 0
            if not masked and pos[ply, CASTLING] & (_RANK_1 if turn else _RANK_8):
                castle_a, castle_b = castling_codes(pos, posi, ply, chess960)
            loop[L_QUIETS] = quiet_list_kernel(
                pawns, knights, bishops, rooks, queens, kings, black, white, turn, masks[M_CHECK_SQUARES],
                masks[M_DISCOVERERS], masks[M_MOVERS], masked, castle_a, castle_b, tt_code, loop[L_KILLER1],
                loop[L_KILLER2], history, cont[loop[L_CONT1]], cont[loop[L_CONT2]], node[QUIETS_ROW])


@kernel
def next_move(node, masks, pos, posi, ply, killers, history, cont, chess960):
    """The node's next move by the picker's stages (tests/reference_picker.py's pick_moves, pick_evasions in
    check), every pseudo-legal move once; -1 when none is left."""
    loop = node[STATE_ROW]
    evasions = loop[L_EVASIONS] != 0
    tt_code = loop[L_TT]
    while True:
        stage = loop[L_STAGE]
        index = loop[L_NEXT]
        if stage == END_STAGE:
            return _NO_CODE
        if index == 0:
            _stage_start(node, masks, pos, posi, ply, killers, history, cont, chess960)
        loop[L_NEXT] = index + 1
        code = -1
        if stage == TT_STAGE:
            if index == 0:
                code = tt_code
            else:
                code = -2  # the stage's end
        elif stage == GOOD_STAGE:
            end = loop[L_GOOD_END] if evasions else loop[L_CAPTURES]
            if index >= end:
                code = -2
            else:
                entry = node[CAPTURES_ROW, index]
                if evasions or entry & GOOD_BIT:
                    code = entry & CODE_MASK
        elif stage == KILLER_STAGE:
            if index == 0:
                code = loop[L_KILLER1]
            elif index == 1:
                code = loop[L_KILLER2]
            else:
                code = -2
        elif stage == QUIET_STAGE:
            code = node[QUIETS_ROW, index] & CODE_MASK if index < loop[L_QUIETS] else -2
        else:  # BAD_STAGE
            at = loop[L_QUIET_END] + index if evasions else index
            if at >= loop[L_CAPTURES]:
                code = -2
            else:
                entry = node[CAPTURES_ROW, at]
                if evasions or not entry & GOOD_BIT:
                    code = entry & CODE_MASK
        if code == -2:
            loop[L_STAGE] = stage + 1
            loop[L_NEXT] = 0
            continue
        if code < 0:
            continue
        if (stage == GOOD_STAGE or stage == BAD_STAGE) and code == tt_code:
            continue
        return code
