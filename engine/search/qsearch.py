"""The quiescence search, compiled: one kernel call searches a node's whole quiescence subtree.

At the main search's horizon (engine.search, `_negamax`'s step 1) the node's position goes to
quiescence_kernel as bitboards, with the side to move, the en passant square, the evaluation
kernel's result for it and, with a network, the accumulators of the search's board (NetworkBoard's
state, whose slot for this ply the move that led here filled). The kernel searches every node
below it as the Python quiescence search did, in the same order with the same pruning, and so the
same tree: stand pat; in check, every evasion (engine.board.captures.evasion_list_kernel, in
python-chess's order) and mate when none is legal; else the captures and promotions of
quiescence_list_kernel (engine.board.captures: ordered by MVV-LVA, delta-pruned by piece type, SEE
tested), delta pruning against the raised alpha, losing captures and under-promotions skipped;
at the first quiescence ply, the quiet checks of quiet_checks_kernel once no capture has cut off.

A child is made by copy-make on a small state (the eight bitboards, the side to move and the en
passant square, one row per ply) by engine.board.position's make_pieces, as python-chess's push makes
it (no move of the quiescence search castles), and evaluated by the kernel the search uses after its moves
(engine.evaluation.classic.evaluate_kernel, or engine.evaluation.nnue.network_update_kernel on the next slot of the
board's own accumulators, updated incrementally from the slot before): a child whose side to move
could take the king is dropped (the evaluation's illegal flag).

The kernel returns the score, the nodes it searched and the deepest ply it reached. It cannot read
the clock or the stop flag: the caller polls after it returns (a quiescence subtree is small). A
node limit is exact: given the nodes left (budget), the kernel stops when it has searched that many
and says so, and the caller's poll then aborts the search at the same node count as before.
"""

from __future__ import annotations

import numpy as np

from garfish.engine.board.bits import NONE_YET
from garfish.engine.board.captures import (
    ATTACKER_SHIFT, CODE_MASK, GOOD_BIT, PROMOTION_BITS, TYPE_MASK, VICTIM_SHIFT, evasion_list_kernel,
    quiescence_list_kernel, quiet_checks_kernel,
)
from garfish.engine.board.flags import FLAG_BITS, FLAGS_MASK, ILLEGAL_FLAG, IN_CHECK_FLAG
from garfish.engine.board.position import (
    BISHOPS, BLACK, KINGS, KNIGHTS, PAWNS, QUEENS, ROOKS, WHITE, bitboards, make_pieces,
)
from garfish.engine.evaluation.classic import evaluate_kernel
from garfish.engine.evaluation.accumulators import network_update_kernel
from garfish.engine.kernel import kernel
from garfish.engine.types import INF, MATE, MAX_LISTED_MOVES, MAX_PLY, PIECE_VALUE

DELTA_MARGIN = 200  # delta pruning's margin, centipawns: a capture must be able to lift the score this much past alpha
_VALUE = np.array(PIECE_VALUE, dtype=np.int64)
FRAMES = MAX_PLY + 2  # rows of the work arrays: one per quiescence ply, and one more for the child of the last
# A frame (one row of `frames` per quiescence ply): the node's side to move (1: White), en passant
# square, packed evaluation, alpha, beta, whether it tries quiet checks, its best score so far, its
# stand-pat score, its list's length (in `lists`), the next entry to try, and the list it is on (0:
# captures or evasions, 1: quiet checks).
F_TURN, F_EP, F_PACKED, F_ALPHA, F_BETA, F_CHECKS, F_BEST, F_STAND, F_COUNT, F_NEXT, F_STAGE = range(11)
FRAME_FIELDS = 11
NO_RESULT = INF + 1  # no score yet: a node whose moves are still to be searched
# Rows of the state as typed values, not literals (a literal argument compiles a callee again:
# engine.board.bits.NONE_YET).
ROOT_ROW = NONE_YET  # the subtree's root

BITBOARDS = "uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, boolean"


@kernel
def _evaluate(state, row, turn, use_network, weights, params, accumulators, slot):
    """The packed evaluation of state row `row` (engine.board.flags), as the search evaluates a child."""
    if use_network:
        return network_update_kernel(*bitboards(state, row), turn, weights, params, accumulators, slot)
    return evaluate_kernel(*bitboards(state, row), turn)


@kernel
def _back(frames, q, score):
    """A child of node q scored `score` (node q's view): raise its best and alpha; whether it cuts off."""
    if score > frames[q, F_BEST]:
        frames[q, F_BEST] = score
        if score > frames[q, F_ALPHA]:
            if score >= frames[q, F_BETA]:
                return True
            frames[q, F_ALPHA] = score
    return False


@kernel
def _start(frames, turn, ep, packed, alpha, beta, checks):
    """Set up frame 0, the subtree's root: side to move, en passant square, evaluation, window, quiet checks."""
    frames[0, F_TURN] = 1 if turn else 0
    frames[0, F_EP] = ep
    frames[0, F_PACKED] = packed
    frames[0, F_ALPHA] = alpha
    frames[0, F_BETA] = beta
    frames[0, F_CHECKS] = 1 if checks else 0


@kernel
def _next_child(state, frames, lists, q, use_network, weights, params, accumulators, slot):
    """Make node q's next move worth searching into row q + 1 and set up its frame (the captures,
    then the quiet checks at the first ply; pruned and illegal moves skipped); whether there was one."""
    node_turn = frames[q, F_TURN] != 0
    while True:
        if frames[q, F_NEXT] >= frames[q, F_COUNT]:
            if frames[q, F_STAGE] == 0 and frames[q, F_CHECKS] != 0:
                # Step 6. The quiet checks, listed only once no capture has cut off.
                frames[q, F_STAGE] = 1
                frames[q, F_NEXT] = 0
                frames[q, F_COUNT] = quiet_checks_kernel(*bitboards(state, q), node_turn, lists[q])
                continue
            return False
        entry = lists[q, frames[q, F_NEXT]]
        frames[q, F_NEXT] += 1
        if entry >> ATTACKER_SHIFT:
            # Step 4. Delta pruning against the raised alpha.
            if (not entry & PROMOTION_BITS and frames[q, F_STAND] + _VALUE[(entry >> VICTIM_SHIFT) & TYPE_MASK]
                    + DELTA_MARGIN <= frames[q, F_ALPHA]):
                continue
            # Step 5. Skip captures that lose material, and under-promotions.
            if not entry & GOOD_BIT:
                continue
        child_ep = make_pieces(state, q, q + 1, node_turn, frames[q, F_EP], entry & CODE_MASK)
        child_packed = _evaluate(state, q + 1, not node_turn, use_network, weights, params, accumulators,
                                 slot + q + 1)
        if child_packed & ILLEGAL_FLAG:
            continue  # it leaves our king attacked
        frames[q + 1, F_TURN] = 0 if node_turn else 1
        frames[q + 1, F_EP] = child_ep
        frames[q + 1, F_PACKED] = child_packed
        frames[q + 1, F_ALPHA] = -frames[q, F_BETA]
        frames[q + 1, F_BETA] = -frames[q, F_ALPHA]
        frames[q + 1, F_CHECKS] = 0
        return True


@kernel
def _search(ply, use_network, weights, params, accumulators, slot, budget, state, frames, lists):
    """The quiescence search from frame 0 (set up by _start, its position in state row 0 and its
    accumulators in slot `slot`): (score, nodes, deepest ply)."""
    nodes = 0
    deepest = ply
    q = ROOT_ROW  # typed, not a literal 0: the callees are compiled once (engine.board.bits.NONE_YET)
    result = NO_RESULT
    entering = True
    while True:
        if entering:
            # A node: count it, then stand pat or list its moves.
            entering = False
            nodes += 1
            if nodes >= budget:
                return 0, nodes, deepest
            node_ply = ply + q
            if node_ply > deepest:
                deepest = node_ply
            node_packed = frames[q, F_PACKED]
            node_turn = frames[q, F_TURN] != 0
            if node_ply >= MAX_PLY - 1:
                result = node_packed >> FLAG_BITS
            elif node_packed & IN_CHECK_FLAG:
                # Step 1. In check: every evasion (no attacker in their entries: none is pruned), no
                # stand pat; no legal evasion means mate.
                frames[q, F_BEST] = -INF
                frames[q, F_STAND] = -INF
                frames[q, F_CHECKS] = 0
                frames[q, F_COUNT] = evasion_list_kernel(*bitboards(state, q), node_turn, frames[q, F_EP],
                                                         lists[q])
                frames[q, F_NEXT] = 0
                frames[q, F_STAGE] = 0
                result = NO_RESULT
            else:
                # Step 2. Stand pat: the side to move may decline every capture.
                stand_pat = node_packed >> FLAG_BITS
                result = NO_RESULT
                if stand_pat >= frames[q, F_BETA]:
                    result = stand_pat
                else:
                    if stand_pat > frames[q, F_ALPHA]:
                        frames[q, F_ALPHA] = stand_pat
                    frames[q, F_BEST] = stand_pat
                    frames[q, F_STAND] = stand_pat
                    # Step 3. Only captures of pieces that could lift the score above alpha.
                    count = quiescence_list_kernel(
                        *bitboards(state, q), node_turn, frames[q, F_EP],
                        node_packed & FLAGS_MASK, frames[q, F_ALPHA] - stand_pat - DELTA_MARGIN, lists[q])
                    if count < 0:
                        if frames[q, F_CHECKS] == 0:
                            result = stand_pat
                        count = 0
                    frames[q, F_COUNT] = count
                    frames[q, F_NEXT] = 0
                    frames[q, F_STAGE] = 0
        if result == NO_RESULT:
            # The next move of node q: make it, and enter the child if it is legal.
            if _next_child(state, frames, lists, q, use_network, weights, params, accumulators, slot):
                q += 1
                entering = True
                continue
            # Every move searched: the node's score (mate when in check without a legal evasion).
            result = frames[q, F_BEST]
            if result == -INF:
                result = ply + q - MATE
        # Node q is decided: back to its parents, as far as the cut-offs go.
        while True:
            if q == 0:
                return result, nodes, deepest
            q -= 1
            if not _back(frames, q, -result):
                break
            result = frames[q, F_BEST]
        result = NO_RESULT


@kernel(
    f"UniTuple(int64, 3)({BITBOARDS}, int64, int64, int64, int64, int64, boolean, boolean, int16[:, ::1], "
    "int64[::1], int32[:, ::1], int64, int64, uint64[:, ::1], int64[:, ::1], int64[:, ::1])", nogil=True)
def quiescence_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, ep, packed, alpha, beta,
                      ply, checks, use_network, weights, params, accumulators, slot, budget, state, frames, lists):
    """Search the quiescence subtree of the position (the module's description): (score, nodes,
    deepest ply). packed: the evaluation kernel's result for the position; ply: its ply from the
    search's root; checks: try quiet checks (the first quiescence ply); use_network: evaluate with
    network_update_kernel on weights, params and the accumulators (whose slot `slot` holds the
    position's), else evaluate_kernel (the network's arrays unused); budget: the most nodes to
    search, past which the kernel stops and its score means nothing (the caller's node limit has
    been reached). state, frames, lists: work arrays of FRAMES rows (uint64 [FRAMES, 8], int64
    [FRAMES, FRAME_FIELDS], int64 [FRAMES, MAX_LISTED_MOVES])."""
    state[0, PAWNS], state[0, KNIGHTS], state[0, BISHOPS] = pawns, knights, bishops
    state[0, ROOKS], state[0, QUEENS], state[0, KINGS] = rooks, queens, kings
    state[0, BLACK], state[0, WHITE] = black, white
    _start(frames, turn, ep, packed, alpha, beta, checks)
    return _search(ply, use_network, weights, params, accumulators, slot, budget, state, frames, lists)


class QuiescenceWork:
    """The work arrays of one searcher's quiescence_kernel calls, and what it evaluates with."""

    def __init__(self) -> None:
        self.state = np.zeros((FRAMES, 8), dtype=np.uint64)
        self.frames = np.zeros((FRAMES, FRAME_FIELDS), dtype=np.int64)
        self.lists = np.zeros((FRAMES, MAX_LISTED_MOVES), dtype=np.int64)
        # The hand-written evaluation's stand-ins for a network's arrays (unused; typed as the kernel takes them).
        self.no_weights = np.zeros((1, 1), dtype=np.int16)
        self.no_params = np.zeros(1, dtype=np.int64)
        self.no_accumulators = np.zeros((1, 1), dtype=np.int32)

