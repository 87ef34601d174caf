"""The search below the driver, compiled: one Numba kernel searches every node of the tree.

engine.search's Searcher keeps the driver (iterative deepening, aspiration windows, MultiPV and
searchmoves, the time manager, the info lines, the strength limit, the tablebase root, pondering);
each of its root searches is one call of search_kernel, which searches the root and every node
below it (negamax, principal variation search, fail-soft) in the `# Step N.` order below, on its
own bitboard state, with the quiescence search of engine.search.qsearch at the horizon. Nothing below the
root calls Python but the poll and a Syzygy probe (engine.search.callbacks).

The state. A pair of rows per ply, one of `pos` and one of `posi`, holds a position as
engine.board.position lays it out (the eight bitboards, the castling rights, the key; the side to
move, en passant square, halfmove clock and the evaluation kernel's packed result). A child is made
by that module's copy-make (make_move) from its parent's row and evaluated into its ply's
accumulators (engine.evaluation.nnue, slot = ply) or by the hand-written kernel; a child whose side to
move could take the king is dropped. The move picker (engine.search.movepick) works in the node's
work rows, one set a ply; the killers, the butterfly history and the TT are the driver's arrays,
which persist between calls.

The control array `ctl` (C_* fields) carries what the driver and the kernel tell each other: the
node count, the deepest ply, the tablebase hits and the root's best move so far (the kernel's),
the node limit, the tablebase settings, the table's generation (the driver's), and C_STOP, which
the driver sets from any thread while the kernel runs without the GIL (Searcher.stop, a ponderhit
past the time): the kernel reads it at every node. Every few hundred nodes (C_NEXT_POLL) the
kernel polls its host, the driver (engine.search.callbacks: the clock's hard limit, the caller's stop
flag, a helper's node count), as the Python search polled. A node limit is exact: the search stops at the
node that reaches it (C_ABORTED set), and its result then means nothing.

The steps and their order are those of the Python search they replaced (0.2.0's engine/search.py, at
340eb74): `bench` searched the same tree, node for node, when this kernel replaced it (docs/history.md).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

import chess
import numpy as np
from numba import types

from garfish.engine.board.bits import NONE_YET, ONE, U64, ZERO, popcount
from garfish.engine.board.captures import (
    CODE_MASK, _piece_at, capture_list_kernel, evasion_order_kernel, quiet_list_kernel,
)
from garfish.engine.board.checks import gives_check_kernel, threats_kernel
from garfish.engine.board.flags import FLAG_BITS, ILLEGAL_FLAG, IN_CHECK_FLAG
from garfish.engine.board.moves import SQUARE_MASK, TO_SHIFT, decode
from garfish.engine.board.position import (
    CASTLING, KEY, KING, P_EP, P_HALFMOVE, P_PACKED, P_TURN, PAWNS, POS_FIELDS, POSI_FIELDS, BLACK, WHITE, ROOKS,
    QUEENS, KINGS, bitboards, castling_codes, insufficient_material, is_quiet, make_move, make_null, position_key,
)
from garfish.engine.kernel import kernel
from garfish.engine.search.callbacks import NO_WDL, poll, probe_wdl
from garfish.engine.search.history import NO_CONTINUATION, PIECE_TO, history_bonus
from garfish.engine.search.movepick import (
    L_MASKS, L_TRIED, M_CHECK_SQUARES, M_DISCOVERERS, M_MOVERS, MASK_FIELDS, NODE_ROWS, QUIETS_ROW,
    STATE_ROW, TRIED_ROW, capture_targets, cont_update, history_update, make_masks, move_row, next_move, piece_to,
    record_killer, start_picker,
)
from garfish.engine.search.qsearch import QuiescenceWork, _evaluate, _search, _start
from garfish.engine.search.tt import (
    entry_fields, prefetch_entry, probe_kernel, store_kernel, value_from_tt, value_to_tt,
)
from garfish.engine.types import (
    DRAW, EXACT, INF, LOWER, MATE, MATE_BOUND, MAX_LISTED_MOVES, MAX_PLY, PIECE_VALUE, TB_WIN, UPPER,
)

if TYPE_CHECKING:
    from garfish.engine.board.searchboard import SearchBoard
    from garfish.engine.search.history import History
    from garfish.engine.search.tt import TranspositionTable

# The search's tuned constants (each step's own, named where it is used).
RFP_DEPTH = 6              # reverse futility pruning up to this depth ...
RFP_MARGIN = 110           # ... when eval - margin * depth - (our best piece en prise) still beats beta:
RFP_MINOR_RISK = 300       # a queen or rook en prise counts its PIECE_VALUE, a knight or bishop this round figure
NMP_DEPTH = 3              # null-move pruning from this depth
FUTILITY_DEPTH = 5         # futility pruning of quiet moves up to this depth ...
FUTILITY_MARGIN = 110      # ... when eval + margin * depth cannot reach alpha
LMP_BASE = 3               # late move pruning (not in PV nodes): quiets after LMP_BASE + depth^2 moves
LMR_DEPTH = 3              # late move reductions from this depth ...
LMR_MOVES = 3              # ... after this many moves, a ply less (more) for each LMR_HISTORY of the
LMR_HISTORY = 12288        # move's butterfly and continuation histories together
CONT_PRUNE_DEPTH = 4       # quiet moves pruned up to this depth when their continuation histories
CONT_PRUNE_MARGIN = 2048   # are below -margin * depth (Stockfish's step 14)
IIR_DEPTH = 4              # internal iterative reduction from this depth
SINGULAR_DEPTH = 4         # singular extensions from this depth (SINGULAR_DEPTH_PV in PV nodes) ...
SINGULAR_DEPTH_PV = 6
SINGULAR_MARGIN = 3        # ... testing the other moves against the TT score less this a ply
QS_CHECKS = True           # quiet checks at the first quiescence ply (delta pruning's margin: engine.search.qsearch)
TB_DEPTH_BONUS = 6         # a tablebase score goes to the TT this much deeper than the node (Stockfish's)
NO_BUDGET = 1 << 62        # the quiescence kernel's node budget without a node limit

# LMR table: reduction for (depth, move number), the usual log * log shape.
LMR_TABLE = np.array([[int(0.75 + math.log(d) * math.log(m) / 2.25) if d and m else 0 for m in range(64)]
                      for d in range(64)], dtype=np.int64)

ROWS = MAX_PLY + 4  # plies of the state arrays: the deepest node is at MAX_PLY - 1, its children one more

# The control array (int64): written by the kernel (C_NODES .. C_ABORTED), by the driver (the rest).
(C_NODES, C_SELDEPTH, C_TBHITS, C_ROOT_BEST, C_ABORTED, C_STOP, C_NODE_LIMIT, C_AGE, C_GAME_KEYS, C_NETWORK,
 C_CHESS960, C_TB_PIECES, C_TB_DEPTH, C_TB_RULE50, C_ROOT_MOVES, C_NEXT_POLL) = range(16)
CONTROL_FIELDS = 16


_NO_CODE = np.int64(-1)
_TRUE, _FALSE = np.bool_(True), np.bool_(False)  # typed, not literals (engine.board.bits.NONE_YET)
_ONE = np.int64(1)
_NO_CONT = np.int64(NO_CONTINUATION)
_QS_CHECKS = np.bool_(QS_CHECKS)
_ALL = U64(chess.BB_ALL)
_PROMOTION_RANK = np.array([chess.BB_RANK_2, chess.BB_RANK_7], dtype=np.uint64)  # by colour: pawns about to promote
_QUEEN_VALUE, _ROOK_VALUE = np.int64(PIECE_VALUE[chess.QUEEN]), np.int64(PIECE_VALUE[chess.ROOK])


@kernel(allocates=True)
def has_legal_move(pos, posi, ply, chess960, scratch, use_network, weights, params, accumulators):
    """python-chess's any(generate_legal_moves()) for row ply: some pseudo-legal move (captures and
    promotions, quiet moves, castling; evasions in check) that leaves the king safe, each made in
    row ply + 1 and tested by the evaluation's legality flag (its accumulators' slot then holds it)."""
    pawns, knights, bishops, rooks, queens, kings, black, white = bitboards(pos, ply)
    turn = posi[ply, P_TURN] != 0
    ep = posi[ply, P_EP]
    for part in range(2):
        if posi[ply, P_PACKED] & IN_CHECK_FLAG:
            if part == 1:
                break
            _, _, count = evasion_order_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep,
                                               scratch)
        elif part == 0:
            count = capture_list_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, _ALL,
                                        scratch)
        else:
            first, second = castling_codes(pos, posi, ply, chess960)
            no_cont = np.zeros(PIECE_TO, dtype=np.int16)
            count = quiet_list_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ZERO, ZERO,
                                      ZERO, False, first, second, _NO_CODE, _NO_CODE, _NO_CODE,
                                      np.zeros(8192, dtype=np.int64), no_cont, no_cont, scratch)
        for i in range(count):
            make_move(pos, posi, ply, scratch[i] & CODE_MASK, chess960)
            packed = _evaluate(pos, ply + 1, posi[ply + 1, P_TURN] != 0, use_network, weights, params, accumulators,
                               ply + 1)
            if not packed & ILLEGAL_FLAG:
                return True
    return False


# ---------------------------------------------------------------------------- the node count

@kernel
def _count(ctl, nodes):
    """Add nodes to the search's count; whether it must stop now (ctl[C_ABORTED] then set): the
    node limit reached, a stop (C_STOP, set by the driver), or the poll's verdict when one is due."""
    ctl[C_NODES] += nodes
    limit = ctl[C_NODE_LIMIT]
    if (limit and ctl[C_NODES] >= limit) or ctl[C_STOP] or (ctl[C_NODES] >= ctl[C_NEXT_POLL] and poll(ctl[C_NODES])):
        ctl[C_ABORTED] = 1
        return True
    return False


# --------------------------------------------------------------------------------- the search

@kernel
def _qsearch(w, ply, alpha, beta):
    """The quiescence search of row ply (engine.search.qsearch), with the first ply's quiet checks: its score;
    its nodes counted (the search aborted at the node limit)."""
    pos, posi, qstate, qframes = w.pos, w.posi, w.qstate, w.qframes
    qlists, weights, params, accumulators, ctl = w.qlists, w.weights, w.params, w.accumulators, w.ctl
    for i in range(8):
        qstate[0, i] = pos[ply, i]
    _start(qframes, posi[ply, P_TURN] != 0, posi[ply, P_EP], posi[ply, P_PACKED], alpha, beta, _QS_CHECKS)
    limit = ctl[C_NODE_LIMIT]
    budget = limit - ctl[C_NODES] if limit else NO_BUDGET
    score, nodes, deepest = _search(ply, ctl[C_NETWORK] != 0, weights, params, accumulators, ply, budget, qstate,
                                    qframes, qlists)
    if deepest > ctl[C_SELDEPTH]:
        ctl[C_SELDEPTH] = deepest
    _count(ctl, nodes)
    return score


@kernel
def _value_at_risk(pos, posi, ply):
    """Step 5: what the side to move stands to lose at once, its most valuable piece en prise
    (threats_kernel): a queen or rook by PIECE_VALUE, a minor RFP_MINOR_RISK; 0 if none."""
    threatened = threats_kernel(*bitboards(pos, ply), posi[ply, P_TURN] != 0)
    if not threatened:
        return NONE_YET
    if threatened & pos[ply, QUEENS]:
        return _QUEEN_VALUE
    return _ROOK_VALUE if threatened & pos[ply, ROOKS] else np.int64(RFP_MINOR_RISK)


@kernel
def _quiet_gives_check(code, masks, pos, posi, ply):
    """Step 9: does this quiet move give check? Only a move of a discoverer, or of a reacher onto a
    checking square (the node's check masks), may; those are tested by gives_check_kernel (a king
    never: castling's rook is not looked at)."""
    from_sq = code & SQUARE_MASK
    to_sq = (code >> TO_SHIFT) & SQUARE_MASK
    from_bb = ONE << U64(from_sq)
    to_bb = ONE << U64(to_sq)
    if not from_bb & masks[M_DISCOVERERS] and not (to_bb & masks[M_CHECK_SQUARES] and from_bb & masks[M_MOVERS]):
        return False
    pawns, knights, bishops, rooks, queens, kings, black, white = bitboards(pos, ply)
    piece = _piece_at(from_bb, pawns, knights, bishops, rooks, queens)
    if piece == KING:
        return False
    return gives_check_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, posi[ply, P_TURN] != 0,
                              from_sq, to_sq, piece, NONE_YET)


@kernel
def _node_entry(w, ply, in_check, key, barrier):
    """Step 2 of a node below the root: a draw by repetition (against the game's keys and the
    tree's, back to the last irreversible move or null move), by the fifty-move rule or by bare
    material: True when it is one."""
    pos, posi, keys, rows = w.pos, w.posi, w.keys, w.rows
    weights, params, accumulators, ctl = w.weights, w.params, w.accumulators, w.ctl
    halfmove = posi[ply, P_HALFMOVE]
    if halfmove >= 4:
        n = ctl[C_GAME_KEYS] + ply
        lowest = max(n - halfmove, barrier)
        i = n - 4
        while i >= lowest:
            if keys[i] == key:
                return True
            i -= 2
        if halfmove >= 100 and (not in_check or has_legal_move(pos, posi, ply, ctl[C_CHESS960] != 0,
                                                               rows[ply, QUIETS_ROW], ctl[C_NETWORK] != 0, weights,
                                                               params, accumulators)):
            return True
    return popcount(pos[ply, WHITE] | pos[ply, BLACK]) <= 4 and insufficient_material(pos, ply)


@kernel
def _tablebase_score(ctl, pos, posi, ply, depth):
    """Step 3b's probe of row ply: the tables' score and its bound (a win TB_WIN - ply, a lower
    bound; a loss, an upper bound; a draw 0, exact, or +-2 for a win or loss the fifty-move rule
    turns into a draw); bound 0 when the node is not probed (too many pieces, castling rights, at the
    probe limit below SyzygyProbeDepth) or not in the tables."""
    pieces = np.int64(popcount(pos[ply, WHITE] | pos[ply, BLACK]))
    if (pieces > ctl[C_TB_PIECES] or pos[ply, CASTLING]
            or (pieces == ctl[C_TB_PIECES] and depth < ctl[C_TB_DEPTH])):
        return NONE_YET, NONE_YET
    wdl = probe_wdl(*bitboards(pos, ply), posi[ply, P_TURN] != 0, posi[ply, P_EP], posi[ply, P_HALFMOVE])
    if wdl == NO_WDL:
        return NONE_YET, NONE_YET
    ctl[C_TBHITS] += 1
    draw = 1 if ctl[C_TB_RULE50] else 0  # with the rule, 1 and -1 are draws
    if wdl > draw:
        return np.int64(TB_WIN - ply), np.int64(LOWER)
    if wdl < -draw:
        return np.int64(ply - TB_WIN), np.int64(UPPER)
    return np.int64(DRAW + 2 * wdl * draw), np.int64(EXACT)


@kernel
def _null_move_reduction(pos, posi, ply, depth, beta, static_eval, null_ok):
    """Step 6's test: the reduction of a null-move search of this node (outside the PV, not in
    check), or -1 when it gets none: no free move twice in a row, too shallow, below beta, or with
    pawns and at most one minor piece, where zugzwang is common (a lone bishop whose every move lets
    a mate in: the passing move would hide it)."""
    if not null_ok or depth < NMP_DEPTH or static_eval < beta:
        return np.int64(-1)
    pieces = (pos[ply, WHITE] if posi[ply, P_TURN] != 0 else pos[ply, BLACK]) & ~(pos[ply, PAWNS] | pos[ply, KINGS])
    if not (pieces & (pieces - ONE) or pieces & (pos[ply, ROOKS] | pos[ply, QUEENS])):
        return np.int64(-1)
    return np.int64(3 + depth // 4 + min((static_eval - beta) // 200, 3))


@kernel
def _key_row(w, ply):
    """Row ply's Zobrist key into pos[ply, KEY], once, as the row is made (the root, a move, a null move), and
    its TT bucket asked of the CPU at once: the probe at the row's node, after its evaluation, then finds it in
    the cache (a third of negamax's own time was that load missing it)."""
    key = position_key(w.pos, w.posi, ply)
    w.pos[ply, KEY] = key
    prefetch_entry(w.tt_keys, w.tt_data, key)


@kernel
def negamax(w, depth, alpha, beta, ply, pv_node, null_ok, barrier, excluded):
    """Fail-soft principal variation search of row ply; the score from its side to move's view
    (meaningless once ctl[C_ABORTED] is set). barrier: the first index of `keys` a repetition may
    reach (past the last null move). excluded: a move not to search (-1: none; step 7b's test of the
    TT move): the node is searched without it, with no TT move, cut-off or store and no null move."""
    pos, posi, ctl, keys = w.pos, w.posi, w.ctl, w.keys
    tt_keys, tt_data, history, killers, cont, moved = w.tt_keys, w.tt_data, w.history, w.killers, w.cont, w.moved
    pv, pv_len, rows, masks, root_moves = w.pv, w.pv_len, w.rows, w.masks, w.root_moves
    weights, params, accumulators = w.weights, w.params, w.accumulators
    # Step 1. At the horizon, resolve captures with the quiescence search.
    if depth <= 0:
        return _qsearch(w, ply, alpha, beta)
    if _count(ctl, _ONE):
        return 0
    if pv_node:
        pv_len[ply] = 0
        if ply > ctl[C_SELDEPTH]:
            ctl[C_SELDEPTH] = ply
    root = ply == 0
    packed = posi[ply, P_PACKED]
    in_check = (packed & IN_CHECK_FLAG) != 0
    turn = posi[ply, P_TURN] != 0
    chess960 = ctl[C_CHESS960] != 0
    key = pos[ply, KEY]  # made with the row (_key_row), its TT bucket already on its way
    tb_floor = -INF  # the tablebases' bounds on a PV node's score (step 3b)
    tb_cap = INF

    # Step 2. Draws (repetition, fifty moves, bare material) and mate-distance pruning.
    if not root:
        if _node_entry(w, ply, in_check, key, barrier):
            return DRAW
        if ply >= MAX_PLY - 1:
            return packed >> FLAG_BITS
        if alpha < ply - MATE:  # mated_in(ply): no line here can be worse
            alpha = ply - MATE
        if beta > MATE - ply - 1:  # mate_in(ply + 1): nor better
            beta = MATE - ply - 1
        if alpha >= beta:
            return alpha

    # Step 3. Transposition table: a cut-off outside PV nodes, else a move to try first.
    entry = probe_kernel(tt_keys, tt_data, key) if excluded < 0 else ZERO  # a singular test uses none
    tt_code, tt_score, tt_depth, tt_bound = entry_fields(entry)
    if entry and not pv_node and tt_depth >= depth:
        tt_score = value_from_tt(tt_score, ply)
        if (tt_bound == EXACT or (tt_bound == LOWER and tt_score >= beta)
                or (tt_bound == UPPER and tt_score <= alpha)):
            return tt_score

    # Step 3b. Tablebases (Stockfish's step 5): right after a capture or pawn move, with few enough
    # pieces, the WDL tables score the node; the score is returned when its bound cuts off, and
    # bounds the search of a PV node otherwise.
    if ctl[C_TB_PIECES] and posi[ply, P_HALFMOVE] == 0 and not root:
        value, bound = _tablebase_score(ctl, pos, posi, ply, depth)
        if bound and (bound == EXACT or (value >= beta if bound == LOWER else value <= alpha)):
            store_kernel(tt_keys, tt_data, key, NONE_YET, value_to_tt(value, ply),
                         min(MAX_PLY - 1, depth + TB_DEPTH_BONUS), bound, ctl[C_AGE])
            return value
        if bound and pv_node:
            if bound == LOWER:
                tb_floor = value
                alpha = max(alpha, value)
            else:
                tb_cap = value

    # Step 4. Static evaluation, for the pruning decisions below.
    static_eval = -INF if in_check else packed >> FLAG_BITS

    if not pv_node and not in_check:
        # Step 5. Reverse futility pruning: far above beta at low depth, even after losing our best
        # piece en prise, assume a cut.
        if depth <= RFP_DEPTH and beta > -MATE_BOUND:
            surplus = static_eval - RFP_MARGIN * depth - beta
            if surplus >= 0 and surplus >= _value_at_risk(pos, posi, ply):
                return static_eval
        # Step 6. Null move pruning: give a free move; if still >= beta, cut.
        reduction = _null_move_reduction(pos, posi, ply, depth, beta, static_eval, null_ok) if excluded < 0 else -1
        if reduction >= 0:
            keys[ctl[C_GAME_KEYS] + ply] = key
            moved[ply] = NO_CONTINUATION
            make_null(pos, posi, ply)
            _key_row(w, ply + 1)
            posi[ply + 1, P_PACKED] = _evaluate(pos, ply + 1, not turn, ctl[C_NETWORK] != 0, weights, params,
                                                accumulators, ply + 1)
            score = -negamax(w, depth - 1 - reduction, -beta, -beta + 1, ply + 1, _FALSE, _FALSE,
                             ctl[C_GAME_KEYS] + ply + 1, _NO_CODE)
            if ctl[C_ABORTED]:
                return 0
            if score >= beta:
                return beta if score >= MATE_BOUND else score

    # Step 7. Internal iterative reduction: without a TT move, search a ply less.
    if tt_code == 0 and depth >= IIR_DEPTH and excluded < 0:
        depth -= 1

    # Step 7b. Singular extension (Stockfish 15.1's): when the TT move's lower bound is deep enough
    # and every other move fails low against it less a margin in a search of half the depth, the TT
    # move is extended; when even that search beats beta, so does the node (multi-cut).
    singular = False
    if tt_code and not root and depth >= (SINGULAR_DEPTH_PV if pv_node else SINGULAR_DEPTH):
        entry = probe_kernel(tt_keys, tt_data, key)  # as the searches since step 3 left it
        _, tt_score, tt_depth, tt_bound = entry_fields(entry)
        tt_score = value_from_tt(tt_score, ply)
        if entry and tt_depth >= depth - 3 and tt_bound != UPPER and abs(tt_score) < MATE_BOUND:
            singular_beta = tt_score - SINGULAR_MARGIN * depth
            value = negamax(w, (depth - 1) // 2, singular_beta - 1, singular_beta, ply, _FALSE, _FALSE, barrier,
                            tt_code)
            if ctl[C_ABORTED]:
                return 0
            if value < singular_beta:
                singular = True
            elif singular_beta >= beta:
                return singular_beta

    # Step 8. The move loop, its moves by the picker (the capture hints after the cut-offs above,
    # which need none).
    node = rows[ply]
    node_masks = masks[ply]
    futile = not root and not in_check and depth <= FUTILITY_DEPTH and static_eval + FUTILITY_MARGIN * depth <= alpha
    # Every quiet move of a futile node but a check will be pruned: its quiet stage lists only possible checks.
    cont1 = moved[ply - 1] if ply >= 1 else np.int64(NO_CONTINUATION)
    cont2 = moved[ply - 2] if ply >= 2 else np.int64(NO_CONTINUATION)
    start_picker(node, node_masks, pos, posi, ply, tt_code, capture_targets(pos, posi, ply), futile, chess960, cont1,
                 cont2)
    loop = node[STATE_ROW]
    alpha_orig = alpha
    best_score = -INF
    best_code = _NO_CODE
    searched = 0  # legal moves searched (pruned and illegal ones are not counted)
    prune_ok = not root and not in_check
    lmp_limit = LMP_BASE + depth * depth
    keys[ctl[C_GAME_KEYS] + ply] = key
    us_seventh = _PROMOTION_RANK[1 if turn else 0]
    root_count = ctl[C_ROOT_MOVES]
    network = ctl[C_NETWORK] != 0
    while True:
        code = next_move(node, node_masks, pos, posi, ply, killers, history, cont, chess960)
        if code < 0:
            break
        if code == excluded:
            continue
        if root and root_count >= 0:
            wanted = False
            for i in range(root_count):
                if root_moves[i] == code:
                    wanted = True
                    break
            if not wanted:
                continue
        quiet = is_quiet(code, pos, posi, ply)
        column = piece_to(pos, ply, code)
        cont_score = np.int64(cont[cont1, column]) + np.int64(cont[cont2, column]) if quiet else NONE_YET
        # Step 9. Shallow-depth pruning of quiet moves (not checks) once a move has been searched: a futile
        # node's, late moves', and those whose continuation histories are bad.
        if (prune_ok and quiet and best_score > -MATE_BOUND
                and (futile or (depth <= 3 and not pv_node and searched >= lmp_limit)
                     or (depth <= CONT_PRUNE_DEPTH and searched and cont_score < -CONT_PRUNE_MARGIN * depth))):
            if loop[L_MASKS] == 0:  # late move pruning has begun: most quiets will go
                make_masks(node_masks, pos, posi, ply)
                loop[L_MASKS] = 1
            if not _quiet_gives_check(code, node_masks, pos, posi, ply):
                continue
        make_move(pos, posi, ply, code, chess960)
        _key_row(w, ply + 1)
        child = _evaluate(pos, ply + 1, not turn, network, weights, params, accumulators, ply + 1)
        if child & ILLEGAL_FLAG:  # pseudo-legal, and it leaves our king attacked
            continue
        moved[ply] = (PIECE_TO if turn else 0) + column
        posi[ply + 1, P_PACKED] = child
        gives_check = (child & IN_CHECK_FLAG) != 0
        if pv_node:
            pv_len[ply + 1] = 0
        # Extensions: a check, and a pawn stepping onto its seventh rank (it stands on its square now).
        to_bb = ONE << U64((code >> TO_SHIFT) & SQUARE_MASK)
        extend = (gives_check or ((to_bb & us_seventh) != ZERO and (pos[ply + 1, PAWNS] & to_bb) != ZERO)
                  or (singular and code == tt_code))
        new_depth = depth - 1 + (1 if extend else 0)
        if searched == 0:
            score = -negamax(w, new_depth, -beta, -alpha, ply + 1, pv_node, _TRUE, barrier, _NO_CODE)
        else:
            # Step 10. Late move reductions, then a null-window search, re-searched on success.
            reduction = 0
            if depth >= LMR_DEPTH and searched >= LMR_MOVES and quiet and not in_check and not gives_check:
                reduction = LMR_TABLE[min(depth, 63), min(searched, 63)]
                if pv_node:
                    reduction -= 1
                if code == killers[ply, 0] or code == killers[ply, 1]:
                    reduction -= 1
                from_to = (code & SQUARE_MASK) * 64 + ((code >> TO_SHIFT) & SQUARE_MASK)
                reduction -= (history[(4096 if turn else 0) + from_to] + cont_score) // LMR_HISTORY
                reduction = max(0, min(reduction, new_depth - 1))
            score = -negamax(w, new_depth - reduction, -alpha - 1, -alpha, ply + 1, _FALSE, _TRUE, barrier,
                             _NO_CODE)
            if ctl[C_ABORTED]:
                return 0
            if score > alpha and reduction:
                score = -negamax(w, new_depth, -alpha - 1, -alpha, ply + 1, _FALSE, _TRUE, barrier, _NO_CODE)
                if ctl[C_ABORTED]:
                    return 0
            if pv_node and alpha < score < beta:
                score = -negamax(w, new_depth, -beta, -alpha, ply + 1, _TRUE, _TRUE, barrier, _NO_CODE)
        if ctl[C_ABORTED]:
            return 0
        searched += 1

        if score > best_score:
            best_score = score
            if score > alpha:
                best_code = code
                if pv_node:
                    pv[ply, 0] = code
                    length = pv_len[ply + 1]
                    for i in range(length):
                        pv[ply, i + 1] = pv[ply + 1, i]
                    pv_len[ply] = length + 1
                if root:
                    ctl[C_ROOT_BEST] = code
                if score >= beta:
                    if quiet:
                        bonus = history_bonus(depth)
                        history_update(history, turn, code, node[TRIED_ROW], loop[L_TRIED], bonus)
                        cont_update(cont, cont1, cont2, pos, ply, code, node[TRIED_ROW], loop[L_TRIED], bonus)
                        record_killer(killers, ply, code)
                    break
                alpha = score
        if quiet:
            node[TRIED_ROW, loop[L_TRIED]] = code
            loop[L_TRIED] += 1

    # Step 11. No legal move: mate or stalemate. (A futile node saw only some quiet moves: if it
    # saw none at all, ask whether any legal move exists.)
    if searched == 0:
        if excluded >= 0:
            return alpha  # only the excluded move: the test fails
        if futile and has_legal_move(pos, posi, ply, chess960, node[QUIETS_ROW], network, weights, params,
                                     accumulators):
            return static_eval
        return ply - MATE if in_check else DRAW
    if pv_node:
        best_score = min(max(best_score, tb_floor), tb_cap)

    # Step 12. Remember the result.
    if best_score >= beta:
        bound = LOWER
    elif best_code >= 0 and best_score > alpha_orig:
        bound = EXACT
    else:
        bound = UPPER
    if excluded < 0:
        store_kernel(tt_keys, tt_data, key, best_code if best_code >= 0 else NONE_YET,
                     value_to_tt(best_score, ply), depth, np.int64(bound), ctl[C_AGE])
    return best_score


class SearchArrays(NamedTuple):
    """The compiled search's work arrays, the one argument its kernels take, read by name (TreeWork.arrays).
    Each field's type is ARRAYS_TYPE's, in the same order."""

    pos: np.ndarray           # uint64 [ROWS, POS_FIELDS]: the positions, a pair of rows a ply (engine.board.position)
    posi: np.ndarray          # int64 [ROWS, POSI_FIELDS]
    tt_keys: np.ndarray       # uint64: the transposition table's keys and data (engine.search.tt)
    tt_data: np.ndarray       # uint64
    history: np.ndarray       # int64: the butterfly history (engine.search.history)
    killers: np.ndarray       # int64 [KILLER_ROWS, 2]: two killers a ply
    cont: np.ndarray          # int16 [CONT_ROWS, PIECE_TO]: the continuation history
    moved: np.ndarray         # int64 [ROWS]: the continuation row of the move made at each ply (NO_CONTINUATION)
    keys: np.ndarray          # uint64: the game's keys, then the tree's (C_GAME_KEYS of the game's): repetitions
    pv: np.ndarray            # int64 [ROWS, ROWS]: the principal variation of each ply ...
    pv_len: np.ndarray        # int64 [ROWS]: ... and its length
    rows: np.ndarray          # int64 [ROWS, NODE_ROWS, MAX_LISTED_MOVES]: each node's picker (engine.search.movepick)
    masks: np.ndarray         # uint64 [ROWS, MASK_FIELDS]: each node's masks (M_*)
    qstate: np.ndarray        # uint64 [FRAMES, 8]: the quiescence search's work (engine.search.qsearch)
    qframes: np.ndarray       # int64 [FRAMES, FRAME_FIELDS]
    qlists: np.ndarray        # int64 [FRAMES, MAX_LISTED_MOVES]
    weights: np.ndarray       # int16 [2, ...]: the network's weights, parameters and accumulators
    params: np.ndarray        # int64            (stand-ins of these types with the hand-written evaluation)
    accumulators: np.ndarray  # int32 [slots, ...]: a slot a ply
    root_moves: np.ndarray    # int64 [MAX_LISTED_MOVES]: the root moves to search, ctl[C_ROOT_MOVES] of them
    ctl: np.ndarray           # int64 [CONTROL_FIELDS]: the control array (C_*)


ARRAYS_TYPE = types.NamedTuple((
    types.uint64[:, ::1], types.int64[:, ::1], types.uint64[::1], types.uint64[::1], types.int64[::1],
    types.int64[:, ::1], types.int16[:, ::1], types.int64[::1], types.uint64[::1], types.int64[:, ::1], types.int64[::1], types.int64[:, :, ::1],
    types.uint64[:, ::1], types.uint64[:, ::1], types.int64[:, ::1], types.int64[:, ::1], types.int16[:, ::1],
    types.int64[::1], types.int32[:, ::1], types.int64[::1], types.int64[::1]), SearchArrays)


@kernel(types.int64(ARRAYS_TYPE, types.int64, types.int64, types.int64), nogil=True)
def search_kernel(w, depth, alpha, beta):
    """Search the root (row 0 of the state, its packed evaluation in posi[0, P_PACKED] and its
    accumulators in slot 0) to `depth` within (alpha, beta), as a PV node: its score (meaningless
    when ctl[C_ABORTED] is set). w: the work arrays (SearchArrays, TreeWork.arrays)."""
    _key_row(w, NONE_YET)
    return negamax(w, depth, alpha, beta, NONE_YET, _TRUE, _FALSE, NONE_YET, _NO_CODE)


@kernel(types.int64(ARRAYS_TYPE, types.int64, types.int64, types.uint64, types.boolean, types.int64, types.int64,
                    types.int64[::1]), nogil=True)
def picker_kernel(w, ply, tt_code, targets, masked, cont1, cont2, out):
    """The moves of row ply in the picker's order (start_picker's arguments; the killers and the
    histories as the arrays hold them), written into out: their number. The search's first move at
    the root, and the picker's test against its Python reference."""
    pos, posi, history, killers, rows, masks, ctl = w.pos, w.posi, w.history, w.killers, w.rows, w.masks, w.ctl
    chess960 = ctl[C_CHESS960] != 0
    start_picker(rows[ply], masks[ply], pos, posi, ply, tt_code, targets, masked, chess960, cont1, cont2)
    count = NONE_YET
    while True:
        code = next_move(rows[ply], masks[ply], pos, posi, ply, killers, history, w.cont, chess960)
        if code < 0:
            return count
        out[count] = code
        count += 1


@kernel
def _perft(w, ply, depth, hints, recent):
    """perft_kernel's recursion at row ply (its evaluation in posi[ply, P_PACKED])."""
    pos, posi, history, killers, rows = w.pos, w.posi, w.history, w.killers, w.rows
    masks, weights, params, accumulators, ctl = w.masks, w.weights, w.params, w.accumulators, w.ctl
    chess960 = ctl[C_CHESS960] != 0
    tt_code = _NO_CODE
    killers[ply, 0] = killers[ply, 1] = _NO_CODE
    if hints and ply >= 2:
        tt_code = recent[ply - 2, 0]
        killers[ply, 0] = recent[ply - 2, 1]
        killers[ply, 1] = recent[ply - 2, 2]
    start_picker(rows[ply], masks[ply], pos, posi, ply, tt_code, _ALL, _FALSE, chess960, _NO_CONT, _NO_CONT)
    nodes = NONE_YET
    turn = posi[ply, P_TURN] != 0
    while True:
        code = next_move(rows[ply], masks[ply], pos, posi, ply, killers, history, w.cont, chess960)
        if code < 0:
            return nodes
        make_move(pos, posi, ply, code, chess960)
        child = _evaluate(pos, ply + 1, not turn, _FALSE, weights, params, accumulators, ply + 1)
        if child & ILLEGAL_FLAG:
            continue
        posi[ply + 1, P_PACKED] = child
        nodes += _perft(w, ply + 1, depth - 1, hints, recent) if depth > 1 else 1
        if hints:
            recent[ply, 2] = recent[ply, 1]
            recent[ply, 1] = recent[ply, 0]
            recent[ply, 0] = code


@kernel(types.int64(ARRAYS_TYPE, types.int64, types.boolean, types.int64[:, ::1]), nogil=True)
def perft_kernel(w, depth, hints, recent):
    """Perft of row 0 (its evaluation by the hand-written kernel in posi[0, P_PACKED]) through the
    search's own move path: the picker's stages (every capture target), make_move, and the
    evaluation kernel's legality test. hints: each node gets a TT move and two killers as the
    search would, the moves played two plies up (recent: int64 [ROWS, 3], -1), so that the
    picker's validation and de-duplication are counted too."""
    if depth <= 0:
        return np.int64(1)
    return _perft(w, NONE_YET, depth, hints, recent)


class TreeWork:
    """One searcher's arrays for search_kernel: the state, the picker's rows, the principal
    variations, the keys, the control array, engine.search.qsearch's work, and the evaluation's (the
    network's accumulators, or stand-ins of the right types for the hand-written evaluation)."""

    def __init__(self, history: "History") -> None:
        self.history = history
        self.pos = np.zeros((ROWS, POS_FIELDS), dtype=np.uint64)
        self.posi = np.zeros((ROWS, POSI_FIELDS), dtype=np.int64)
        self.pv = np.zeros((ROWS, ROWS), dtype=np.int64)
        self.pv_len = np.zeros(ROWS, dtype=np.int64)
        self.rows = np.zeros((ROWS, NODE_ROWS, MAX_LISTED_MOVES), dtype=np.int64)
        self.masks = np.zeros((ROWS, MASK_FIELDS), dtype=np.uint64)
        self.keys = np.zeros(ROWS, dtype=np.uint64)
        self.moved = np.full(ROWS, NO_CONTINUATION, dtype=np.int64)
        self.root_moves = np.zeros(MAX_LISTED_MOVES, dtype=np.int64)
        self.ctl = np.zeros(CONTROL_FIELDS, dtype=np.int64)
        self.quiescence = QuiescenceWork()
        self.accumulators = self.quiescence.no_accumulators
        self.arrays: SearchArrays  # made by begin()
        self.root: "SearchBoard | None" = None

    def begin(self, tt: "TranspositionTable", root: "SearchBoard", game_keys: list[int], network: bool) -> None:
        """Set up a search of the root with the table tt: its position in row 0 (the board's castling
        rights, clean), the game's keys (the positions before it), a fresh control array (a stop
        meant for the last search stays with it), the evaluation (network: the root board's)."""
        self.root = root
        needed = len(game_keys) + ROWS
        if self.keys.shape[0] < needed:
            self.keys = np.zeros(needed, dtype=np.uint64)
        self.keys[:len(game_keys)] = game_keys
        self.ctl = ctl = np.zeros(CONTROL_FIELDS, dtype=np.int64)
        ctl[C_ROOT_BEST] = -1
        ctl[C_ROOT_MOVES] = -1
        ctl[C_AGE] = tt.age
        ctl[C_GAME_KEYS] = len(game_keys)
        ctl[C_NETWORK] = 1 if network else 0
        ctl[C_CHESS960] = 1 if root.chess960 else 0
        black, white = root.occupied_co
        self.pos[0, :8] = (root.pawns, root.knights, root.bishops, root.rooks, root.queens, root.kings, black, white)
        self.pos[0, CASTLING] = root.castling_rights
        ep = root.ep_square
        self.posi[0, :3] = (1 if root.turn else 0, -1 if ep is None else ep, root.halfmove_clock)
        quiescence = self.quiescence
        if network:
            weights, params, self.accumulators = root.weights, root.params, root.state  # type: ignore[attr-defined]
        else:
            weights, params, self.accumulators = quiescence.no_weights, quiescence.no_params, quiescence.no_accumulators
        self.arrays = SearchArrays(self.pos, self.posi, tt.keys, tt.data, self.history.table, self.history.killers,
                                   self.history.continuation, self.moved, self.keys, self.pv, self.pv_len, self.rows, self.masks, quiescence.state,
                                   quiescence.frames, quiescence.lists, weights, params, self.accumulators,
                                   self.root_moves, ctl)

    def set_root(self) -> None:
        """The root's evaluation (its accumulators made in slot 0), before a search of it."""
        assert self.root is not None  # begin() set it
        self.posi[0, P_PACKED] = self.root.evaluate_packed()

    def picker_order(self, tt_code: int) -> list[chess.Move]:
        """The root's pseudo-legal moves in the picker's order (its TT move `tt_code`, 0: none; every
        capture target; the killers as they are): the search's move before depth 1 has one."""
        self.set_root()
        codes = np.zeros(MAX_LISTED_MOVES, dtype=np.int64)
        count = picker_kernel(self.arrays, 0, tt_code or -1, _ALL, False, _NO_CONT, _NO_CONT, codes)
        return [decode(code) for code in codes[:count].tolist()]
