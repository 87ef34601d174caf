"""The frontier nodes, compiled: a depth-1 node searched by kernel calls, from its TT probe on.

At a frontier node (depth 1, not a PV node) every child is a quiescence node, unless
its move gives check or steps a pawn onto its seventh rank (the main search extends both) or
castles (the copy-make of engine.qsearch cannot castle). engine.search's `_negamax` counts the node
and finds its draws and mate distance; frontier_kernel then does the rest of _negamax's steps as
they were done in Python, in the same order, and so searches the same tree:

- step 3, the TT probe (engine.tt's layout): a cut-off, else the TT move, tested as python-chess's
  is_pseudo_legal tests it (_tt_move_test; a king's move that may castle is asked of python-chess);
- step 5, reverse futility pruning (the risk of our best piece en prise, threats_kernel);
- step 8, the capture targets from the evaluation's flags, and a futile node's check masks;
- the picker's stages (engine.movepick.pick_moves: the TT move, the good captures, the killers,
  tested as movepick.usable_killer does, the quiet moves, the bad captures; their lists made by
  the same kernels), and in check pick_evasions' (evasion_order_kernel's groups, the killers that
  are quiet evasions, the other quiet evasions sorted when reached, as sort_quiets sorts them);
- step 9's pruning of quiet moves (futility, and late move pruning), a quiet move kept only when it
  gives check (the check masks and engine.checks.gives_check_kernel, as `_quiet_gives_check`);
- step 10a's leaf searches: the move made on the kernel's own state and the child's quiescence
  subtree searched, as engine.qsearch.leaf_kernel does;
- the scores backed up (best, alpha, the best move), the quiet moves tried remembered, and on a
  cut-off by a quiet move the history updated (History.update's arithmetic; the killers stay the
  caller's, with their codes in History.killer_codes). The caller stores the result (step 12).

made_frontier_kernel goes one step up: at a depth-2 node it makes a move (not castling, not a pawn
onto its seventh rank) on its own state, as SearchBoard.push makes it (castling rights, en passant
square, halfmove clock), evaluates the child, counts it, finds its key and its draws (repetitions
against the keys the caller lists, the fifty-move rule), and searches it as above, without the
search's board.

What the kernels cannot do goes back to the caller, which calls frontier_kernel again to go on: a
move it cannot search (a check, a pawn onto its seventh rank, castling; a quiet move that step 9
found to give check) comes back as NEED_MOVE, and the caller makes it on the search's board,
searches it and hands in its score (`pending`), which the kernel backs up as it backs up its own;
a TT move that may castle comes back as NEED_TT_TEST; at the killers' stage, when castling is
possible or a killer may castle, NEED_KILLERS asks for the killers' and castling moves' codes,
which python-chess tests and lists. A node made by made_frontier_kernel is made on the board first
(its accumulators are the kernel's). The kernels return when the node budget is spent (BUDGET: the
caller's poll ends the search at the same node count as before), on a cut-off (CUT, TT_CUT,
RFP_CUT), and at the end of the moves (DONE).

The node's state between calls lives in a work row of its ply (NODE_ROWS rows of int64: the loop's
L_* fields, the quiet moves tried, the capture and quiet lists) and a row of `masks` (uint64: the
check masks and the capture targets).
"""

from __future__ import annotations

import chess
import numpy as np
from numba import njit

from garfish.engine.bits import NONE_YET, ONE, U64, ZERO, popcount
from garfish.engine.captures import (
    _INDEX_SHIFT, _KEY_SHIFT, _SORT_BIAS, CODE_MASK, ESCAPE_BONUS, GOOD_BIT, _attacks, _piece_at, _sort_packed,
    attacked_pieces_kernel, capture_list_kernel, evasion_order_kernel, quiet_list_kernel,
)
from garfish.engine.checks import check_masks_kernel, gives_check_kernel, threats_kernel
from garfish.engine.flags import FLAG_BITS, FLAGS_MASK, ILLEGAL_FLAG, IN_CHECK_FLAG, PROMOTION_FLAG
from garfish.engine.moves import PROMOTION_SHIFT, SQUARE_MASK, TO_SHIFT
from garfish.engine.qsearch import (
    BISHOPS, BLACK, KINGS, KNIGHTS, PAWNS, QUEENS, ROOKS, ROOT_ROW, SPARE_ROW, WHITE, _evaluate, _make, _search, _start,
    code_squares,
)
from garfish.engine.tt import (
    BOUND_MASK, BOUND_SHIFT, BUCKET_SIZE, DEPTH_MASK, DEPTH_SHIFT, MOVE_MASK, SCORE_MASK, SCORE_SHIFT, VALUE_OFFSET,
)
from garfish.engine.types import (EXACT, INF, LOWER, MATE_BOUND, MAX_LISTED_MOVES, MAX_PLY, PIECE_VALUE, TB_WIN_BOUND,
                                  UPPER)
from garfish.engine.zobrist import zobrist_kernel

# The node's work row (int64[NODE_ROWS, MAX_LISTED_MOVES], one a ply): row 0 its loop's state (the
# L_* fields below), row 1 the quiet moves tried (codes), row 2 the capture list, row 3 the quiet list.
STATE_ROW, TRIED_ROW, CAPTURES_ROW, QUIETS_ROW = range(4)
NODE_ROWS = 4
MASK_FIELDS = 4  # a row of `masks`: check_masks_kernel's three, then the capture targets
# The loop's state: the window, the best score so far and its move's code (-1: none raised alpha),
# the legal moves searched, the quiet moves tried, whether the check masks are made (in the node's
# row of `masks`: check_masks_kernel's three), the stage and the next index in its list, the
# capture list's length, the quiet list's, the code of the move handed back to the caller, and the
# TT move's code (-1: none, or not pseudo-legal here), whether the killers' stage is set up, its
# killers' codes and the castling moves' (-1: none), and in check where the evasion list's good
# captures and quiet moves end (evasion_order_kernel's groups). The node's row of `masks` holds the check
# masks and, fourth, the squares its captures can land on.
(L_ALPHA, L_BETA, L_BEST, L_BEST_CODE, L_SEARCHED, L_TRIED, L_MASKS, L_STAGE, L_NEXT, L_CAPTURES, L_QUIETS, L_PENDING,
 L_TT, L_KILLERS, L_KILLER1, L_KILLER2, L_CASTLE_A, L_CASTLE_B, L_GOOD_END, L_QUIET_END) = range(20)
# The picker's stages (engine.movepick.Stage), as the kernel goes through them.
TT_STAGE, GOOD_STAGE, KILLER_STAGE, QUIET_STAGE, BAD_STAGE, END_STAGE = range(6)
# What a call returns first: the end of the node's moves (DONE), a cut-off (CUT, with its move's code
# and QUIET_BIT), a move for the caller to search (NEED_MOVE, with its code), the killers and the
# castling moves wanted (NEED_KILLERS), or the node budget spent (BUDGET).
DONE, CUT, NEED_MOVE, NEED_KILLERS, BUDGET, TT_CUT, RFP_CUT, NEED_TT_TEST = range(8)
# made_frontier_kernel's own: the move is illegal (ILLEGAL_MOVE), it checks (CHECKING_MOVE: the search
# extends it), the child is the caller's to search whole (NEED_NODE: few pieces, tablebases, the last
# plies), or the child's score is known at its entry (ENTRY_SCORE: a draw, mate distance).
ILLEGAL_MOVE, CHECKING_MOVE, NEED_NODE, ENTRY_SCORE = range(8, 12)
# The same as typed values, not literals (a literal argument compiles a callee again: engine.bits.NONE_YET).
_DONE, _NEED_KILLERS, _BUDGET, _RFP_CUT = np.int64(DONE), np.int64(NEED_KILLERS), np.int64(BUDGET), np.int64(RFP_CUT)
_NEED_TT_TEST = np.int64(NEED_TT_TEST)
_NEW_NODE, _NOT_ASKED, _NO_CODE, _NO_KILLERS = np.int64(INF + 1), np.int64(-1), np.int64(-1), np.bool_(False)
_ONE_NODE = np.int64(1)
_ASK = np.int64(-2)  # _usable_killer: python-chess must tell
_NOT_IN_CHECK = np.bool_(False)
_ILLEGAL_MOVE, _CHECKING_MOVE = np.int64(ILLEGAL_MOVE), np.int64(CHECKING_MOVE)
_NEED_NODE, _ENTRY_SCORE = np.int64(NEED_NODE), np.int64(ENTRY_SCORE)
STATUS_BITS = 4
STATUS_MASK = (1 << STATUS_BITS) - 1
QUIET_BIT = 1 << (STATUS_BITS + 16)  # CUT: the move that cut off is quiet (the caller records it as a killer)
NEW_NODE = INF + 1           # pending: a new node (set up the loop's state)
NO_PENDING = INF + 2         # pending: nothing to back up (the killers handed in)
PENDING_ILLEGAL = INF + 3    # pending: the move handed back left the king attacked, not searched
HISTORY_MAX = 16384          # engine.history's gravity bound (the same arithmetic as History.update)
_PROMOTION_RANK = np.array([chess.BB_RANK_2, chess.BB_RANK_7], dtype=np.uint64)  # by colour: pawns about to promote
_PAWN_RANK = np.array([chess.BB_RANK_7, chess.BB_RANK_2], dtype=np.uint64)  # by colour: pawns not yet moved
_LAST_RANKS = U64(chess.BB_RANK_1 | chess.BB_RANK_8)
_ALL = U64(chess.BB_ALL)
_LOW_32 = U64(0xFFFFFFFF)
_RANK_1, _RANK_8 = U64(chess.BB_RANK_1), U64(chess.BB_RANK_8)
_BACK_RANK = np.array([chess.BB_RANK_8, chess.BB_RANK_1], dtype=np.uint64)  # by colour: where its castling rooks stand
_QUEEN_VALUE, _ROOK_VALUE = np.int64(PIECE_VALUE[chess.QUEEN]), np.int64(PIECE_VALUE[chess.ROOK])


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
def _stage_entry(node, stage, index, tt_code, killer1, killer2, evasions):
    """The entry at `index` of the stage's list, -1 past its end (the killers absent are skipped; in
    check, the stages' groups of the evasion list)."""
    loop = node[STATE_ROW]
    if evasions and stage == GOOD_STAGE:
        return node[CAPTURES_ROW, index] if index < loop[L_GOOD_END] else -1
    if evasions and stage == BAD_STAGE:
        at = loop[L_QUIET_END] + index
        return node[CAPTURES_ROW, at] if at < loop[L_CAPTURES] else -1
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
def _evasion_killers(node, loop, killer1, killer2, tt_code):
    """pick_evasions' killers' stage: each killer (in order; -1: none) that is one of the quiet
    evasions (not the TT move) is taken out of them (its entry made -1) and yielded."""
    found1 = found2 = _NO_CODE
    for killer in (killer1, killer2):
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
    loop[L_CASTLE_A], loop[L_CASTLE_B] = _NO_CODE, _NO_CODE


@njit(cache=True)
def _evasion_quiets(node, loop, tt_code, pawns, knights, bishops, rooks, queens, kings, black, white, turn, history):
    """pick_evasions' quiet stage: the quiet evasions left (not the TT move nor a killer) into the
    quiet row, sorted as engine.movepick.sort_quiets sorts them (stably: a piece en prise first,
    then by history); their number."""
    threatened = threats_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn)
    base = 4096 if turn else 0
    count = NONE_YET
    for i in range(loop[L_GOOD_END], loop[L_QUIET_END]):
        code = node[CAPTURES_ROW, i]
        if code < 0 or code == tt_code:
            continue
        from_sq = code & SQUARE_MASK
        key = history[base + from_sq * 64 + ((code >> TO_SHIFT) & SQUARE_MASK)]
        if threatened & (ONE << U64(from_sq)):
            key += ESCAPE_BONUS
        node[QUIETS_ROW, count] = ((key + _SORT_BIAS) << _KEY_SHIFT) | ((255 - count) << _INDEX_SHIFT) | code
        count += 1
    _sort_packed(node[QUIETS_ROW], count)
    return count


@njit(cache=True)
def _answer(status, nodes, deepest, loop):
    """frontier_kernel's result (as Python ints when interpreted)."""
    return (int(status), int(nodes), int(deepest), int(loop[L_BEST]), int(loop[L_BEST_CODE]), int(loop[L_SEARCHED]),
            int(loop[L_ALPHA]))


@njit(cache=True)
def _tt_move_test(code, pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, scratch):
    """python-chess's is_pseudo_legal for the TT move `code` (a key collision can store any move): 1
    yes, 0 no, -1 when it may be castling (a king's move by two squares or onto its own piece), which
    python-chess decides. A pawn's capture, en passant or promotion is looked up in
    capture_list_kernel's list (written into scratch)."""
    from_sq, to_sq, promotion, from_bb, to_bb = code_squares(code)
    own = white if turn else black
    if not own & from_bb:
        return 0
    occ = white | black
    piece = _piece_at(from_bb, pawns, knights, bishops, rooks, queens)
    if piece == 6 and (to_bb & own or to_sq - from_sq == 2 or from_sq - to_sq == 2):
        return -1
    if to_bb & own or (promotion and piece != 1):
        return 0
    if piece != 1:
        return 1 if _attacks(from_sq, piece, occ) & to_bb else 0
    if not promotion and not to_bb & occ and not to_bb & _LAST_RANKS:
        step = 8 if turn else -8
        if to_sq == from_sq + step:
            return 1
        if (to_sq == from_sq + 2 * step and from_bb & _PAWN_RANK[1 if turn else 0]
                and not (ONE << U64(from_sq + step)) & occ):
            return 1
    count = capture_list_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, _ALL, scratch)
    for i in range(count):
        if scratch[i] & CODE_MASK == code:
            return 1
    return 0


@njit(cache=True)
def _usable_killer(code, tt_code, pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, scratch):
    """engine.movepick.usable_killer for the killer `code` (-1: none): the code when the killers'
    stage yields it (not the TT move, quiet, pseudo-legal), -1 when not, _ASK when python-chess must
    tell (a king's move by two squares or onto its own piece: castling)."""
    if code < 0 or code == tt_code or code >> PROMOTION_SHIFT:
        return _NO_CODE
    from_sq, to_sq, _, from_bb, to_bb = code_squares(code)
    them = black if turn else white
    if (from_bb | to_bb) & them:  # python-chess's is_capture: either square an enemy's
        return _NO_CODE
    if to_sq == ep and pawns & from_bb and not (white | black) & to_bb and (
            to_sq - from_sq in (7, 9, -7, -9)):  # en passant
        return _NO_CODE
    verdict = _tt_move_test(code, pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, scratch)
    if verdict < 0:
        return _ASK
    return code if verdict else _NO_CODE


@njit(cache=True)
def _capture_targets(packed, pawns, knights, bishops, rooks, queens, them, ep):
    """engine.search's capture targets of a node not in check: every square with a pawn about to
    promote, else the enemy pieces of the kinds the evaluation's flags say are attacked, and the
    en passant square."""
    flags = packed & FLAGS_MASK
    if flags & PROMOTION_FLAG:
        return _ALL
    mask = attacked_pieces_kernel(flags, -INF, pawns, knights, bishops, rooks, queens) & them
    if ep >= 0:
        mask |= ONE << U64(ep)
    return mask


@njit(cache=True)
def _frontier_search(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, castling, evasions, key,
                     packed, tt_keys, tt_data, futile, alpha, beta, tt_verdict, have_killers, killer1, killer2,
                     castle_a, castle_b, pending, ply, checks, rfp, rfp_margin, rfp_minor, lmp, use_network, weights,
                     params, accumulators, slot, budget, state, frames, lists, node, masks, history, bonus, nodes):
    """frontier_kernel's search, its bitboards uint64 and `nodes` the nodes already counted."""
    loop = node[STATE_ROW]
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
        loop[L_STAGE] = TT_STAGE
        loop[L_NEXT] = 0
        loop[L_CAPTURES] = 0
        loop[L_QUIETS] = 0
        loop[L_TT] = -1
        loop[L_KILLERS] = 0
        # Step 3. The transposition table (engine.tt's probe): a cut-off, else a move to try first.
        i = np.int64(((key & _LOW_32) * U64(tt_keys.shape[0] // BUCKET_SIZE)) >> U64(32)) * BUCKET_SIZE
        entry = ZERO
        if tt_keys[i] ^ tt_data[i] == key:
            entry = tt_data[i]
        elif tt_keys[i + 1] ^ tt_data[i + 1] == key:
            entry = tt_data[i + 1]
        if entry:
            if np.int64((entry >> U64(DEPTH_SHIFT)) & U64(DEPTH_MASK)) >= 1:
                score = np.int64((entry >> U64(SCORE_SHIFT)) & U64(SCORE_MASK)) - VALUE_OFFSET
                if score >= TB_WIN_BOUND:  # value_from_tt
                    score -= ply
                elif score <= -TB_WIN_BOUND:
                    score += ply
                bound = np.int64((entry >> U64(BOUND_SHIFT)) & U64(BOUND_MASK))
                if bound == EXACT or (bound == LOWER and score >= beta) or (bound == UPPER and score <= alpha):
                    loop[L_BEST] = score
                    return _answer(TT_CUT | np.int64(entry & U64(MOVE_MASK)) << STATUS_BITS, nodes, deepest, loop)
            loop[L_TT] = np.int64(entry & U64(MOVE_MASK)) if entry & U64(MOVE_MASK) else -1
        # Step 5. Reverse futility pruning (engine.search's _negamax and _value_at_risk).
        static_eval = packed >> FLAG_BITS
        if rfp and beta > -MATE_BOUND:
            surplus = static_eval - rfp_margin - beta
            if surplus >= 0:
                threatened = threats_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn)
                risk = NONE_YET
                if threatened & queens:
                    risk = _QUEEN_VALUE
                elif threatened & rooks:
                    risk = _ROOK_VALUE
                elif threatened:
                    risk = rfp_minor
                if surplus >= risk:
                    loop[L_BEST] = static_eval
                    return _answer(_RFP_CUT, nodes, deepest, loop)
        # Step 8. The capture stages' targets, and the check masks of a futile node's quiet stage.
        masks[3] = _capture_targets(packed, pawns, knights, bishops, rooks, queens, them, ep)
        loop[L_MASKS] = 1 if futile else 0
        if futile:
            masks[0], masks[1], masks[2] = check_masks_kernel(pawns, knights, bishops, rooks, queens, kings, black,
                                                              white, turn)
        # Stage.TT_MOVE: only when pseudo-legal (the kernel or push_legal tests the king's safety).
        if loop[L_TT] >= 0:
            verdict = _tt_move_test(loop[L_TT], pawns, knights, bishops, rooks, queens, kings, black, white, turn,
                                    ep, node[CAPTURES_ROW])
            if verdict < 0:
                return _answer(_NEED_TT_TEST | loop[L_TT] << STATUS_BITS, nodes, deepest, loop)
            if verdict == 0:
                loop[L_TT] = -1
    elif pending != NO_PENDING:
        code = loop[L_PENDING]
        loop[L_NEXT] += 1
        if pending != PENDING_ILLEGAL:
            quiet = _is_quiet(code, pawns, them, ep)
            if _back_up(node, history, turn, code, quiet, pending, bonus):
                return _answer(CUT | code << STATUS_BITS | (QUIET_BIT if quiet else 0), nodes, deepest, loop)
    elif tt_verdict == 0 and loop[L_STAGE] == TT_STAGE and loop[L_NEXT] == 0:
        loop[L_TT] = -1  # python-chess's answer after NEED_TT_TEST
    tt_code = loop[L_TT]
    capture_targets = masks[3]
    while True:
        stage = loop[L_STAGE]
        index = loop[L_NEXT]
        if index == 0:  # a stage's start: its list
            if stage == GOOD_STAGE and evasions:  # in check: the evasions, grouped (engine.movepick.pick_evasions)
                loop[L_GOOD_END], loop[L_QUIET_END], loop[L_CAPTURES] = evasion_order_kernel(
                    pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, node[CAPTURES_ROW])
            elif stage == GOOD_STAGE and capture_targets:
                loop[L_CAPTURES] = capture_list_kernel(pawns, knights, bishops, rooks, queens, kings, black, white,
                                                       turn, ep, capture_targets, node[CAPTURES_ROW])
            elif stage == KILLER_STAGE and loop[L_KILLERS] == 0:
                if evasions:  # the killers that are quiet evasions, taken out of the quiet ones
                    _evasion_killers(node, loop, killer1, killer2, tt_code)
                elif have_killers:  # the caller's, after NEED_KILLERS
                    loop[L_KILLER1], loop[L_KILLER2] = killer1, killer2
                    loop[L_CASTLE_A], loop[L_CASTLE_B] = castle_a, castle_b
                else:
                    # killer1, killer2: the ply's killers, untested (-1: none). Castling, or a killer
                    # that may castle, is python-chess's to decide.
                    if not futile and castling & _BACK_RANK[1 if turn else 0]:
                        return _answer(_NEED_KILLERS | (tt_code + 1) << STATUS_BITS, nodes, deepest, loop)
                    first = _usable_killer(killer1, tt_code, pawns, knights, bishops, rooks, queens, kings, black,
                                           white, turn, ep, node[QUIETS_ROW])
                    second = _NO_CODE
                    if killer2 != killer1 or first < 0:
                        second = _usable_killer(killer2, tt_code, pawns, knights, bishops, rooks, queens, kings,
                                                black, white, turn, ep, node[QUIETS_ROW])
                    if first == _ASK or second == _ASK:
                        return _answer(_NEED_KILLERS | (tt_code + 1) << STATUS_BITS, nodes, deepest, loop)
                    loop[L_KILLER1], loop[L_KILLER2] = first, second
                    loop[L_CASTLE_A], loop[L_CASTLE_B] = _NO_CODE, _NO_CODE
                loop[L_KILLERS] = 1
            elif stage == QUIET_STAGE and evasions:
                loop[L_QUIETS] = _evasion_quiets(node, loop, tt_code, pawns, knights, bishops, rooks, queens, kings,
                                                 black, white, turn, history)
            elif stage == QUIET_STAGE:
                loop[L_QUIETS] = quiet_list_kernel(
                    pawns, knights, bishops, rooks, queens, kings, black, white, turn, masks[0], masks[1], masks[2],
                    futile, loop[L_CASTLE_A], loop[L_CASTLE_B], tt_code, loop[L_KILLER1], loop[L_KILLER2], history,
                    node[QUIETS_ROW])
            elif stage == END_STAGE:
                return _answer(_DONE, nodes, deepest, loop)
        entry = _stage_entry(node, stage, index, tt_code, loop[L_KILLER1], loop[L_KILLER2], evasions)
        if entry < 0:
            loop[L_STAGE] = stage + 1
            loop[L_NEXT] = 0
            continue
        loop[L_NEXT] = index + 1
        code = entry & CODE_MASK
        if stage == GOOD_STAGE or stage == BAD_STAGE:
            if code == tt_code or (not evasions and ((entry & GOOD_BIT) != 0) != (stage == GOOD_STAGE)):
                continue
        from_sq, to_sq, _, from_bb, to_bb = code_squares(code)
        quiet = _is_quiet(code, pawns, them, ep)
        # Step 9. Shallow-depth pruning of quiet moves (not checks) once a move has been searched;
        # none in check (_negamax's prune_ok).
        if quiet and not evasions and loop[L_BEST] > -MATE_BOUND and (futile or loop[L_SEARCHED] >= lmp):
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


@njit(
    "UniTuple(int64, 7)(uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, boolean, int64, uint64, "
    "boolean, uint64, int64, uint64[::1], uint64[::1], boolean, int64, int64, int64, boolean, int64, int64, int64, "
    "int64, int64, int64, boolean, boolean, int64, int64, int64, boolean, int16[:, ::1], int64[::1], int32[:, ::1], "
    "int64, int64, uint64[:, ::1], int64[:, ::1], int64[:, ::1], int64[:, ::1], uint64[::1], int64[::1], int64)",
    cache=True, nogil=True,
)
def frontier_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, castling, evasions, key,
                    packed, tt_keys, tt_data, futile, alpha, beta, tt_verdict, have_killers, killer1, killer2,
                    castle_a, castle_b, pending, ply, checks, rfp, rfp_margin, rfp_minor, lmp, use_network, weights,
                    params, accumulators, slot, budget, state, frames, lists, node, masks, history, bonus):
    """Search the frontier node on from where it stopped (the module's description): (status | code
    << STATUS_BITS [| QUIET_BIT], nodes searched, deepest ply, best score (TT_CUT, RFP_CUT: the
    node's score), its move's code (-1: none raised alpha), legal moves searched, alpha).

    pending: NEW_NODE (a new node: its TT probe with `key` in tt_keys and tt_data, reverse futility
    pruning when `rfp` (margin rfp_margin, a minor piece en prise rfp_minor), its capture targets from
    the evaluation's result `packed`, the check masks when `futile`), NO_PENDING, or the score (the
    node's view) of the move handed back last time (PENDING_ILLEGAL: it was illegal), backed up
    first. tt_verdict: python-chess's answer whether the TT move is pseudo-legal (1, 0; -1: not
    asked), after NEED_TT_TEST. futile: every quiet move but a check is pruned (the quiet list then
    holds only possible checks); lmp: the quiet moves searched after which late move pruning
    begins (neither prunes in check: `evasions`). killer1, killer2: the ply's killers, untested
    (-1: none), which the kernel tests as
    engine.movepick.usable_killer does, unless castling is possible or a killer may castle: then it
    asks (NEED_KILLERS) and the caller hands in have_killers, the tested killers and the castling
    moves castle_a, castle_b (-1: none). ply: the node's; checks: the leaf searches' first-ply quiet checks; the
    evaluation, slot (the node's accumulators), budget and work arrays as
    engine.qsearch.leaf_kernel takes them; node: the node's work row (NODE_ROWS rows); masks: its
    check masks (check_masks_kernel's, made at the first need, as _quiet_gives_check) and capture
    targets; history: the butterfly table; bonus: the history bonus of a cut-off here."""
    # As uint64 (no-ops compiled; Python ints when the kernel runs interpreted, whose ~ is negative).
    pawns, knights, bishops, rooks, queens = U64(pawns), U64(knights), U64(bishops), U64(rooks), U64(queens)
    kings, black, white, key = U64(kings), U64(black), U64(white), U64(key)
    return _frontier_search(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, U64(castling),
                            evasions, key, packed, tt_keys, tt_data, futile, alpha, beta, tt_verdict, have_killers,
                            killer1, killer2, castle_a, castle_b, pending, ply, checks, rfp, rfp_margin, rfp_minor, lmp,
                            use_network, weights, params, accumulators, slot, budget, state, frames, lists, node, masks,
                            history, bonus, NONE_YET)


@njit(cache=True)
def _with_child(answer, key, packed):
    """made_frontier_kernel's result: frontier_kernel's answer, then the child's key (high and low
    32 bits) and its evaluation kernel's result."""
    return answer + (int(key >> U64(32)), int(key & _LOW_32), int(packed))


@njit(cache=True)
def _made_answer(status, nodes, deepest, loop, key, packed):
    """made_frontier_kernel's result for a status of its own (_with_child of _answer's)."""
    return _with_child(_answer(status, nodes, deepest, loop), key, packed)


@njit(
    "UniTuple(int64, 10)(uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, boolean, int64, uint64, "
    "int64, int64, uint64[::1], int64, int64, uint64[::1], uint64[::1], boolean, int64, int64, int64, int64, "
    "boolean, boolean, int64, int64, int64, int64, int64, boolean, int16[:, ::1], int64[::1], int32[:, ::1], int64, "
    "int64, uint64[:, ::1], int64[:, ::1], int64[:, ::1], int64[:, ::1], uint64[::1], int64[::1], int64)",
    cache=True, nogil=True,
)
def made_frontier_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, castling, halfmove,
                         code, repeats, repeat_count, tb_pieces, tt_keys, tt_data, futility, futility_margin, alpha,
                         beta, ply, checks, rfp, rfp_margin, rfp_minor, lmp, killer1, killer2, use_network, weights,
                         params, accumulators, slot, budget, state, frames, lists, node, masks, history, bonus):
    """The move `code` (not castling, not a pawn onto its seventh rank) of a depth-2 node (the
    position given, with its castling rights and halfmove clock), made on the kernel's state, and
    its child, a frontier node (not a PV node; alpha, beta its window after mate-distance pruning,
    ply its ply), searched as _negamax searches it: its node counted, its draws (repeats[:repeat_count]:
    the keys it repeats if its halfmove clock goes on, engine.search's), then frontier_kernel's
    search (futility: FUTILITY_DEPTH reaches depth 1, futility_margin its margin). frontier_kernel's
    result, then the child's key (high and low 32 bits) and evaluation; a status of its own when
    the move is illegal (ILLEGAL_MOVE), checks (CHECKING_MOVE), or the child needs the Python search
    (NEED_NODE: nothing counted, few pieces or tablebases or the last plies), or when its entry
    scores it (ENTRY_SCORE: the score as the best). killer1, killer2: the child's ply's killers
    (untested codes, -1: none). The rest as frontier_kernel takes it, slot the depth-2 node's."""
    # As uint64 (no-ops compiled; Python ints when the kernel runs interpreted, whose ~ is negative).
    pawns, knights, bishops, rooks, queens = U64(pawns), U64(knights), U64(bishops), U64(rooks), U64(queens)
    kings, black, white, castling = U64(kings), U64(black), U64(white), U64(castling)
    loop = node[STATE_ROW]
    from_sq, to_sq, _, from_bb, to_bb = code_squares(code)
    them = black if turn else white
    reset = (pawns & from_bb) or (them & to_bb)
    child_halfmove = 0 if reset else halfmove + 1
    state[SPARE_ROW, PAWNS], state[SPARE_ROW, KNIGHTS], state[SPARE_ROW, BISHOPS] = pawns, knights, bishops
    state[SPARE_ROW, ROOKS], state[SPARE_ROW, QUEENS], state[SPARE_ROW, KINGS] = rooks, queens, kings
    state[SPARE_ROW, BLACK], state[SPARE_ROW, WHITE] = black, white
    child_ep = _make(state, SPARE_ROW, ROOT_ROW, turn, ep, code)
    c_pawns, c_knights, c_bishops = state[ROOT_ROW, PAWNS], state[ROOT_ROW, KNIGHTS], state[ROOT_ROW, BISHOPS]
    c_rooks, c_queens, c_kings = state[ROOT_ROW, ROOKS], state[ROOT_ROW, QUEENS], state[ROOT_ROW, KINGS]
    c_black, c_white = state[ROOT_ROW, BLACK], state[ROOT_ROW, WHITE]
    pieces = np.int64(popcount(c_black | c_white))
    if pieces <= 4 or (tb_pieces and child_halfmove == 0 and pieces <= tb_pieces) or ply >= MAX_PLY - 1:
        return _made_answer(_NEED_NODE, NONE_YET, NONE_YET, loop, ZERO, NONE_YET)
    packed = _evaluate(state, ROOT_ROW, not turn, use_network, weights, params, accumulators, slot + 1)
    if packed & ILLEGAL_FLAG:
        return _made_answer(_ILLEGAL_MOVE, NONE_YET, NONE_YET, loop, ZERO, packed)
    if packed & IN_CHECK_FLAG:
        return _made_answer(_CHECKING_MOVE, NONE_YET, NONE_YET, loop, ZERO, packed)
    # The child: counted, then its key and draws (SearchBoard.push's castling rights).
    if _ONE_NODE >= budget:
        return _made_answer(_BUDGET, _ONE_NODE, NONE_YET, loop, ZERO, packed)
    castling &= ~(from_bb | to_bb)
    if kings & from_bb:
        castling &= ~(_RANK_1 if turn else _RANK_8)
    key = zobrist_kernel(c_pawns, c_knights, c_bishops, c_rooks, c_queens, c_kings, c_black, c_white, not turn,
                         castling, child_ep)
    if child_halfmove >= 4:
        for k in range(repeat_count):
            if repeats[k] == key:
                loop[L_BEST] = 0
                return _made_answer(_ENTRY_SCORE, _ONE_NODE, NONE_YET, loop, key, packed)
        if child_halfmove >= 100:
            loop[L_BEST] = 0
            return _made_answer(_ENTRY_SCORE, _ONE_NODE, NONE_YET, loop, key, packed)
    if alpha >= beta:
        loop[L_BEST] = alpha
        return _made_answer(_ENTRY_SCORE, _ONE_NODE, NONE_YET, loop, key, packed)
    futile = futility and (packed >> FLAG_BITS) + futility_margin <= alpha
    answer = _frontier_search(c_pawns, c_knights, c_bishops, c_rooks, c_queens, c_kings, c_black, c_white, not turn,
                              child_ep, castling, _NOT_IN_CHECK, key, packed, tt_keys, tt_data, futile, alpha, beta,
                              _NOT_ASKED, _NO_KILLERS, killer1, killer2, _NO_CODE, _NO_CODE, _NEW_NODE, ply, checks,
                              rfp, rfp_margin, rfp_minor, lmp, use_network, weights, params, accumulators, slot + 1,
                              budget, state, frames, lists, node, masks, history, bonus, _ONE_NODE)
    return _with_child(answer, key, packed)


def frontier_rows() -> list[tuple[np.ndarray, np.ndarray]]:
    """The frontier nodes' work rows and check masks, one pair a ply (a check extended from a
    frontier node makes another frontier node one ply deeper, whose loop must not overwrite its
    parent's)."""
    work = np.zeros((MAX_PLY + 2, NODE_ROWS, MAX_LISTED_MOVES), dtype=np.int64)
    masks = np.zeros((MAX_PLY + 2, MASK_FIELDS), dtype=np.uint64)
    return [(work[ply], masks[ply]) for ply in range(MAX_PLY + 2)]
