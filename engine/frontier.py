"""The frontier's move loop, compiled: a depth-1 node's moves searched by one kernel call.

At a frontier node (depth 1, not a PV node, not in check) every child is a quiescence node, unless
its move gives check or steps a pawn onto its seventh rank (the main search extends both) or
castles (the copy-make of engine.qsearch cannot castle). engine.search's `_negamax` finds the node's
draws, TT move, reverse futility pruning and capture targets as before; frontier_kernel then goes
through the picker's stages (engine.movepick.pick_moves: the TT move, the good captures, the
killers, the quiet moves, the bad captures; their lists made by the same kernels) as the Python
loop did, move by move, in the same order and with the same pruning, and so the same tree:

- step 9's pruning of quiet moves (futility, and late move pruning after LMP_MOVES moves), a quiet
  move kept only when it gives check (the check masks, made at the first need, and
  engine.checks.gives_check_kernel, as `_quiet_gives_check`);
- step 10a's leaf search: the move made on the kernel's own state and the child's quiescence
  subtree searched, as engine.qsearch.leaf_kernel does;
- the scores backed up (best, alpha, the best move), the quiet moves tried remembered, and on a
  cut-off by a quiet move the history updated (History.update's arithmetic; the killers stay the
  caller's, as Python objects).

What the kernel cannot do goes back to the caller, which calls it again to go on: a move it cannot
search (a check, a pawn onto its seventh rank, castling; a quiet move that step 9 found to give
check) comes back as NEED_MOVE, and the caller makes it on the search's board, searches it and
hands in its score (`pending`), which the kernel backs up as it backs up its own; at the killers'
stage it asks for the killers and the castling moves (NEED_KILLERS), which python-chess tests and
lists. It returns when the node's node budget is spent (BUDGET: the caller's poll ends the search
at the same node count as before), on a cut-off (CUT), and at the end of the moves (DONE).

The node's state between calls lives in a work row of its ply (NODE_ROWS rows of int64: the loop's
L_* fields, the quiet moves tried, the capture and quiet lists) and a row of check masks (uint64).
"""

from __future__ import annotations

import chess
import numpy as np
from numba import njit

from garfish.engine.bits import NONE_YET, ONE, U64
from garfish.engine.captures import CODE_MASK, GOOD_BIT, _piece_at, capture_list_kernel, quiet_list_kernel
from garfish.engine.checks import check_masks_kernel, gives_check_kernel
from garfish.engine.flags import ILLEGAL_FLAG, IN_CHECK_FLAG
from garfish.engine.moves import PROMOTION_SHIFT, SQUARE_MASK, TO_SHIFT
from garfish.engine.qsearch import (
    BISHOPS, BLACK, KINGS, KNIGHTS, PAWNS, QUEENS, ROOKS, ROOT_ROW, SPARE_ROW, WHITE, _evaluate, _make, _search, _start,
)
from garfish.engine.types import INF, MATE_BOUND, MAX_LISTED_MOVES, MAX_PLY

# The node's work row (int64[NODE_ROWS, MAX_LISTED_MOVES], one a ply): row 0 its loop's state (the
# L_* fields below), row 1 the quiet moves tried (codes), row 2 the capture list, row 3 the quiet list.
STATE_ROW, TRIED_ROW, CAPTURES_ROW, QUIETS_ROW = range(4)
NODE_ROWS = 4
# The loop's state: the window, the best score so far and its move's code (-1: none raised alpha),
# the legal moves searched, the quiet moves tried, whether the check masks are made (in the node's
# row of `masks`: check_masks_kernel's three), the stage and the next index in its list, the
# capture list's length, the quiet list's, and the code of the move handed back to the caller.
L_ALPHA, L_BETA, L_BEST, L_BEST_CODE, L_SEARCHED, L_TRIED, L_MASKS, L_STAGE, L_NEXT, L_CAPTURES, L_QUIETS, L_PENDING = range(12)
# The picker's stages (engine.movepick.Stage), as the kernel goes through them.
TT_STAGE, GOOD_STAGE, KILLER_STAGE, QUIET_STAGE, BAD_STAGE, END_STAGE = range(6)
# What a call returns first: the end of the node's moves (DONE), a cut-off (CUT, with its move's code
# and QUIET_BIT), a move for the caller to search (NEED_MOVE, with its code), the killers and the
# castling moves wanted (NEED_KILLERS), or the node budget spent (BUDGET).
DONE, CUT, NEED_MOVE, NEED_KILLERS, BUDGET = range(5)
# The same as typed values, not literals (a literal argument compiles a callee again: engine.bits.NONE_YET).
_DONE, _NEED_KILLERS, _BUDGET = np.int64(DONE), np.int64(NEED_KILLERS), np.int64(BUDGET)
STATUS_BITS = 3
STATUS_MASK = (1 << STATUS_BITS) - 1
QUIET_BIT = 1 << (STATUS_BITS + 16)  # CUT: the move that cut off is quiet (the caller records it as a killer)
NEW_NODE = INF + 1           # pending: a new node (set up the loop's state)
NO_PENDING = INF + 2         # pending: nothing to back up (the killers handed in)
PENDING_ILLEGAL = INF + 3    # pending: the move handed back left the king attacked, not searched
HISTORY_MAX = 16384          # engine.history's gravity bound (the same arithmetic as History.update)
LMP_MOVES = 4                # engine.search's LMP_BASE + depth * depth at depth 1
_PROMOTION_RANK = np.array([chess.BB_RANK_2, chess.BB_RANK_7], dtype=np.uint64)  # by colour: pawns about to promote


@njit(cache=True)
def _history_update(history, turn, code, tried, count, bonus):
    """History.update's arithmetic on its table: reward the quiet move `code` that cut off, punish the
    quiet moves tried before it (tried[:count], codes)."""
    base = 4096 if turn else 0
    i = base + (code & SQUARE_MASK) * 64 + ((code >> TO_SHIFT) & SQUARE_MASK)
    history[i] += bonus - history[i] * bonus // HISTORY_MAX
    for k in range(count):
        move = tried[k]
        j = base + (move & SQUARE_MASK) * 64 + ((move >> TO_SHIFT) & SQUARE_MASK)
        history[j] -= bonus + history[j] * bonus // HISTORY_MAX


@njit(cache=True)
def _is_quiet(code, pawns, them, ep):
    """Not a promotion, nothing on the target, and not a pawn onto the en passant square."""
    to_sq = (code >> TO_SHIFT) & SQUARE_MASK
    if code >> PROMOTION_SHIFT:
        return False
    if (ONE << U64(to_sq)) & them:
        return False
    return not (to_sq == ep and pawns & (ONE << U64(code & SQUARE_MASK)))


@njit(cache=True)
def _back_up(node, history, turn, code, quiet, score, bonus):
    """A legal move searched, scored `score` (the node's view): count it, raise best and alpha;
    whether it cuts off (the history then updated for a quiet move), else remember a quiet move tried."""
    loop = node[STATE_ROW]
    loop[L_SEARCHED] += 1
    if score > loop[L_BEST]:
        loop[L_BEST] = score
        if score > loop[L_ALPHA]:
            loop[L_BEST_CODE] = code
            if score >= loop[L_BETA]:
                if quiet:
                    _history_update(history, turn, code, node[TRIED_ROW], loop[L_TRIED], bonus)
                return True
            loop[L_ALPHA] = score
    if quiet:
        node[TRIED_ROW, loop[L_TRIED]] = code
        loop[L_TRIED] += 1
    return False


@njit(cache=True)
def _stage_entry(node, stage, index, tt_code, killer1, killer2):
    """The move code at `index` of the stage's list, -1 past its end (the TT move and the killers
    absent are skipped, and so are the entries of a capture list that belong to the other stage)."""
    loop = node[STATE_ROW]
    if stage == TT_STAGE:
        return tt_code if index == 0 else -1
    if stage == KILLER_STAGE:
        if index == 0:
            return killer1 if killer1 >= 0 else killer2
        return killer2 if index == 1 and killer1 >= 0 else -1
    if stage == QUIET_STAGE:
        return node[QUIETS_ROW, index] & CODE_MASK if index < loop[L_QUIETS] else -1
    return node[CAPTURES_ROW, index] if index < loop[L_CAPTURES] else -1


@njit(cache=True)
def _answer(status, nodes, deepest, loop):
    """frontier_kernel's result (as Python ints when interpreted)."""
    return (int(status), int(nodes), int(deepest), int(loop[L_BEST]), int(loop[L_BEST_CODE]), int(loop[L_SEARCHED]),
            int(loop[L_ALPHA]))


@njit(
    "UniTuple(int64, 7)(uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, boolean, int64, int64, "
    "uint64, uint64, uint64, uint64, boolean, int64, int64, boolean, int64, int64, int64, int64, int64, int64, "
    "boolean, boolean, int16[:, ::1], int64[::1], int32[:, ::1], int64, int64, uint64[:, ::1], int64[:, ::1], "
    "int64[:, ::1], int64[:, ::1], uint64[::1], int64[::1], int64)",
    cache=True, nogil=True,
)
def frontier_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, tt_code, capture_targets,
                    check_to, discoverers, reachers, futile, alpha, beta, have_killers, killer1, killer2, castle_a,
                    castle_b, pending, ply, checks, use_network, weights, params, accumulators, slot, budget, state,
                    frames, lists, node, masks, history, bonus):
    """Go on through the frontier node's moves (the module's description): (status | code <<
    STATUS_BITS [| QUIET_BIT], nodes searched, deepest ply, best score, its move's code (-1: none
    raised alpha), legal moves searched, alpha). pending: NEW_NODE (set up the loop from alpha, beta, futile
    and the check masks), NO_PENDING, or the score (the node's view) of the move handed back last
    time (PENDING_ILLEGAL: it was illegal), backed up first. tt_code: the TT move if pseudo-legal
    (-1: none); capture_targets: engine.search's (0: no capture stage); futile: every quiet move but
    a check is pruned (the quiet list then holds only possible checks, by the masks check_to,
    discoverers, reachers); have_killers: killer1, killer2 (pseudo-legal quiet moves, -1: none) and
    the castling moves castle_a, castle_b (-1: none) are handed in (else the kernel asks for them
    when it reaches the killers). ply: the node's; checks: the leaf searches' first-ply quiet checks;
    the evaluation, slot (the node's accumulators), budget and work arrays as
    engine.qsearch.leaf_kernel takes them; node: the node's work row (NODE_ROWS rows); masks: its
    check masks (check_masks_kernel's, made at the first need, as _quiet_gives_check); history: the
    butterfly table; bonus: the history bonus of a cut-off here."""
    # As uint64 (no-ops compiled; Python ints when the kernel runs interpreted, whose ~ is negative).
    pawns, knights, bishops, rooks, queens = U64(pawns), U64(knights), U64(bishops), U64(rooks), U64(queens)
    kings, black, white = U64(kings), U64(black), U64(white)
    check_to, discoverers, reachers = U64(check_to), U64(discoverers), U64(reachers)
    loop = node[STATE_ROW]
    nodes = NONE_YET  # typed, not literal zeros (engine.bits.NONE_YET)
    deepest = NONE_YET
    us_bb = white if turn else black
    them = black if turn else white
    seventh = _PROMOTION_RANK[1 if turn else 0]
    if pending == NEW_NODE:
        loop[L_ALPHA] = alpha
        loop[L_BETA] = beta
        loop[L_BEST] = -INF
        loop[L_BEST_CODE] = -1
        loop[L_SEARCHED] = 0
        loop[L_TRIED] = 0
        loop[L_MASKS] = 1 if futile else 0
        masks[0], masks[1], masks[2] = check_to, discoverers, reachers
        loop[L_STAGE] = TT_STAGE
        loop[L_NEXT] = 0
        loop[L_CAPTURES] = 0
        loop[L_QUIETS] = 0
    elif pending != NO_PENDING:
        code = loop[L_PENDING]
        loop[L_NEXT] += 1
        if pending != PENDING_ILLEGAL:
            quiet = _is_quiet(code, pawns, them, ep)
            if _back_up(node, history, turn, code, quiet, pending, bonus):
                return _answer(CUT | code << STATUS_BITS | (QUIET_BIT if quiet else 0), nodes, deepest, loop)
    while True:
        stage = loop[L_STAGE]
        index = loop[L_NEXT]
        if index == 0:  # a stage's start: its list
            if stage == GOOD_STAGE and capture_targets:
                loop[L_CAPTURES] = capture_list_kernel(pawns, knights, bishops, rooks, queens, kings, black, white,
                                                       turn, ep, capture_targets, node[CAPTURES_ROW])
            elif stage == KILLER_STAGE and not have_killers:
                return _answer(_NEED_KILLERS, nodes, deepest, loop)
            elif stage == QUIET_STAGE:
                loop[L_QUIETS] = quiet_list_kernel(
                    pawns, knights, bishops, rooks, queens, kings, black, white, turn, check_to, discoverers,
                    reachers, futile, castle_a, castle_b, tt_code, killer1, killer2, history, node[QUIETS_ROW])
            elif stage == END_STAGE:
                return _answer(_DONE, nodes, deepest, loop)
        entry = _stage_entry(node, stage, index, tt_code, killer1, killer2)
        if entry < 0:
            loop[L_STAGE] = stage + 1
            loop[L_NEXT] = 0
            continue
        loop[L_NEXT] = index + 1
        code = entry & CODE_MASK
        if stage == GOOD_STAGE or stage == BAD_STAGE:
            if code == tt_code or ((entry & GOOD_BIT) != 0) != (stage == GOOD_STAGE):
                continue
        from_sq = code & SQUARE_MASK
        to_sq = (code >> TO_SHIFT) & SQUARE_MASK
        from_bb = ONE << U64(from_sq)
        to_bb = ONE << U64(to_sq)
        quiet = _is_quiet(code, pawns, them, ep)
        # Step 9. Shallow-depth pruning of quiet moves (not checks) once a move has been searched.
        if quiet and loop[L_BEST] > -MATE_BOUND and (futile or loop[L_SEARCHED] >= LMP_MOVES):
            if loop[L_MASKS] == 0:  # late move pruning has begun: most quiets will go
                masks[0], masks[1], masks[2] = check_masks_kernel(pawns, knights, bishops, rooks, queens, kings,
                                                                  black, white, turn)
                loop[L_MASKS] = 1
            if not from_bb & masks[1] and not (to_bb & masks[0] and from_bb & masks[2]):
                continue
            piece = _piece_at(from_bb, pawns, knights, bishops, rooks, queens)
            if piece == 6 or not gives_check_kernel(pawns, knights, bishops, rooks, queens, kings, black, white,
                                                     turn, from_sq, to_sq, piece, 0):
                continue
            loop[L_NEXT] = index
            loop[L_PENDING] = code
            return _answer(NEED_MOVE | code << STATUS_BITS, nodes, deepest, loop)  # a check: it extends
        if (pawns | kings) & from_bb and (to_bb & seventh or to_bb & us_bb or to_sq - from_sq == 2
                                          or from_sq - to_sq == 2):
            loop[L_NEXT] = index
            loop[L_PENDING] = code
            return _answer(NEED_MOVE | code << STATUS_BITS, nodes, deepest, loop)  # it extends, or castles
        # Step 10a. The child, a quiescence node: made on the kernel's state and searched.
        state[SPARE_ROW, PAWNS], state[SPARE_ROW, KNIGHTS], state[SPARE_ROW, BISHOPS] = pawns, knights, bishops
        state[SPARE_ROW, ROOKS], state[SPARE_ROW, QUEENS], state[SPARE_ROW, KINGS] = rooks, queens, kings
        state[SPARE_ROW, BLACK], state[SPARE_ROW, WHITE] = black, white
        child_ep = _make(state, SPARE_ROW, ROOT_ROW, turn, ep, code)
        packed = _evaluate(state, ROOT_ROW, not turn, use_network, weights, params, accumulators, slot + 1)
        if packed & ILLEGAL_FLAG:
            continue
        if packed & IN_CHECK_FLAG:
            loop[L_NEXT] = index
            loop[L_PENDING] = code
            return _answer(NEED_MOVE | code << STATUS_BITS, nodes, deepest, loop)  # a check: it extends
        window = loop[L_ALPHA]
        _start(frames, not turn, child_ep, packed, -loop[L_BETA] if loop[L_SEARCHED] == 0 else -window - 1,
               -window, checks)
        score, searched, reached = _search(ply + 1, use_network, weights, params, accumulators, slot + 1,
                                           budget - nodes, state, frames, lists)
        nodes += searched
        if reached > deepest:
            deepest = reached
        if nodes >= budget:
            return _answer(_BUDGET, nodes, deepest, loop)
        if _back_up(node, history, turn, code, quiet, -score, bonus):
            return _answer(CUT | code << STATUS_BITS | (QUIET_BIT if quiet else 0), nodes, deepest, loop)


def frontier_rows() -> list[tuple[np.ndarray, np.ndarray]]:
    """The frontier nodes' work rows and check masks, one pair a ply (a check extended from a
    frontier node makes another frontier node one ply deeper, whose loop must not overwrite its
    parent's)."""
    work = np.zeros((MAX_PLY + 2, NODE_ROWS, MAX_LISTED_MOVES), dtype=np.int64)
    masks = np.zeros((MAX_PLY + 2, 3), dtype=np.uint64)
    return [(work[ply], masks[ply]) for ply in range(MAX_PLY + 2)]
