"""The network's kernels in Numba: engine.evaluation.network's forward pass from the board's bitboards.

engine/evaluation/nnue.py's NetworkEvaluator holds a network's weights as these kernels take
them, and its NetworkBoard keeps their accumulators (the compiled search keeps its own). Both
kernels return what evaluate_kernel returns, score << FLAG_BITS | flags, with the very same
flags (engine.board.flags), and a score equal to engine.evaluation.network.forward(network, board): exact in
integers (the bounds are in _output's comments). A network on the hand-written base
(CLASSIC_BASE) calls evaluate_kernel, adds its score to the network's and takes its flags.

One kernel, two uses:
- network_kernel computes both accumulators from scratch (evaluate_packed for any board): it is
  network_update_kernel on a one-slot state;
- network_update_kernel, the search's, keeps one accumulator pair per ply in the board's
  NetworkBoard, together with the bitboards it was made from, and makes a ply's pair from the
  ply before's by subtracting the rows of the pieces gone and adding those of the pieces come
  (from the two positions' bitboards: 2 to 4 rows for a move, none for a null move), or from
  scratch when more than two pieces went or came. With king buckets (engine.evaluation.network), a
  perspective whose king moved into another bucket or across the d-e line (its mirror) is made
  from scratch, the other one still updated. It never trusts the search to keep the plies in
  step: whatever a slot holds, the update is exact.

From scratch or incremental (the issue's question), measured by `.venv/bin/python
scripts/nnue_speed.py --rounds 15 [--activation crelu]`: the cost of one evaluation, Python call
included, over every move and reply of the 31 bench positions (29,878 evaluations; process CPU
time, the kernels alternating position by position; the machine's 2 cores were shared with
other work, so the ratios to the hand-written kernel, paired round by round, are the figures):

    H                      8     64    128    256      (2026-11-23, 8 buckets)
    SCReLU from scratch  1.53x  1.97x  2.19x  2.66x    the hand-written kernel: 1.51 us
    SCReLU incremental   1.65x  1.73x  1.80x  1.89x
    CReLU from scratch          1.68x  2.09x  2.52x    (1.66 us)
    CReLU incremental           1.72x  1.74x  1.86x

From scratch pays a row per piece and perspective; incremental pays one more array argument and
the ply (len() of the board's undo list), a row per changed piece, and a state of
130 x (2H + 16) int32 per search, but no Python work in make or unmake. It is as fast at H = 64
and faster from H = 128 on (29% less per evaluation at 256): the search uses it.
"""

from __future__ import annotations

import numpy as np

from garfish.engine.board.bits import NONE_YET, ONE, lsb, popcount
from garfish.engine.board.flags import FLAG_BITS, FLAGS_MASK, ILLEGAL_FLAG, attack_flags, packed_score, side_attacks
from garfish.engine.evaluation.classic import evaluate_kernel
from garfish.engine.evaluation.network import CLASSIC_BASE, FEATURES, KING_BUCKET_MAPS, NO_KING_BUCKETS, SCRELU, Network
from garfish.engine.kernel import kernel
from garfish.engine.types import MAX_PLY, TB_WIN_BOUND, bitboards

# The kernels' weight matrix, int16 [inputs + 3 + 2B, H]: W1's rows (768 per king bucket), b1, a
# row of zeros, then for each output bucket b the side to move's half of W2[b] and the other
# side's half. Its row numbers past W1 are counted from params[INPUTS].
# The kernels' int64 parameters: activation, QA, QB, SCALE, base, the number of inputs, whether the
# accumulators are int16 (NARROW: 1 where no accumulator of the network can leave int16, narrow_fits), the
# layout's king map (64 entries, engine.evaluation.network.KING_BUCKET_MAPS: bucket * 8 + mirror XOR for the
# perspective's own king on a relative square), then b2 (one per output bucket).
ACTIVATION, QA, QB, SCALE, BASE, INPUTS, NARROW, KING_MAP = 0, 1, 2, 3, 4, 5, 6, 7
OUTPUT_BIAS = KING_MAP + 64
# A score at or beyond TB_WIN_BOUND would read as a tablebase win: a network's is held below it
# (no realistic network comes near; forward() itself is not bounded).
SCORE_LIMIT = TB_WIN_BOUND - 1
# Accumulator pairs kept per search: one per ply (the deepest position the search makes is at
# MAX_PLY); a deeper ply, should one come, shares the last slot (still exact, most likely made
# from scratch).
STATE_PLIES = MAX_PLY + 2
OWN, ENEMY = 0, 384  # the first feature of the perspective's own pieces, and of the other side's
NO_PARENT = 0  # network_kernel's ply: slot 0, no parent
# Typed constant arguments, not literals (engine.board.bits.NONE_YET says why).
WHITE_SIDE, BLACK_SIDE = np.bool_(True), np.bool_(False)
WHITE_VIEW, BLACK_VIEW = np.int64(0), np.int64(56)  # _king_view's relative for each perspective
WHITE_ACC = np.uint64(0)  # where White's accumulator starts in a slot's row (Black's: at H)

BITBOARDS = "uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, boolean"
UPDATE_SIGNATURE = f"int64({BITBOARDS}, int16[:, ::1], int64[::1], int32[:, ::1], int64)"


@kernel
def _network_flags(pawns, knights, bishops, rooks, queens, kings, black, white, turn):
    """evaluate_kernel's flags for the position, from attack maps built here."""
    occ = white | black
    return attack_flags(pawns, knights, bishops, rooks, queens, kings, black, white, turn,
                        side_attacks(WHITE_SIDE, white, pawns, knights, bishops, rooks, queens, kings, occ),
                        side_attacks(BLACK_SIDE, black, pawns, knights, bishops, rooks, queens, kings, occ))


@kernel
def _king_view(params, king, relative):
    """(first input of the king's bucket, square XOR) of the perspective whose king stands on
    square king; relative: 56 for Black's perspective (its board seen from its side), 0 for White's."""
    entry = params[KING_MAP + (np.int64(lsb(king)) ^ relative)]
    return (entry >> 3) * FEATURES, (entry & 7) ^ relative


@kernel
def _refresh(acc, first, pieces, own, weights, bias_row, offset, xor):
    """One perspective's accumulator, acc[first:first + H], from scratch: b1 plus the rows of every piece's
    input (own: that side's pieces; offset, xor: its king view, _king_view). acc is a slot's row, int32 or
    its int16 view (network_update_kernel); indexed in place, with unsigned indexes (see _update)."""
    hidden = np.uint64(weights.shape[1])
    for j in range(hidden):
        acc[first + j] = weights[bias_row, j]
    for kind in range(6):
        bb = pieces[kind]
        while bb:
            sq = np.int64(lsb(bb))
            side = OWN if (ONE << np.uint64(sq)) & own else ENEMY
            bb &= bb - ONE
            row = offset + kind * 64 + side + (sq ^ xor)
            for j in range(hidden):
                acc[first + j] += weights[row, j]


@kernel
def _update(acc, source, first, weights, gone1, gone2, came1, came2):
    """One perspective's accumulator, acc[first:first + H], from its parent's (source[first:first + H]),
    less the rows of the pieces gone and plus those come (row numbers; the zero row where fewer changed),
    in one pass. The indexes are unsigned: Numba tests a signed index for a negative value (from the end),
    and a test on every element keeps LLVM from loading the row as one vector (it gathered element by
    element). In int16 (the network's accumulators fit, narrow_fits) the sums wrap as the int16 lanes
    do, and the result is exact: every accumulator, and so each one's final value, fits."""
    for j in range(np.uint64(weights.shape[1])):
        acc[first + j] = (source[first + j] - weights[gone1, j] - weights[gone2, j]
                          + weights[came1, j] + weights[came2, j])


@kernel
def _collect(squares, base_white, xor_white, base_black, xor_black, count, first, second):
    """Add the rows of the pieces on squares (inputs base + (square ^ xor), White's and Black's)
    to a list of at most two (first, second: (White's row, Black's row), count of them so far); the
    new count, -1 when there would be more than two."""
    while squares:
        if count == 2:
            return -1, first, second
        sq = np.int64(lsb(squares))
        squares &= squares - ONE
        if count == 0:
            first = (base_white + (sq ^ xor_white), base_black + (sq ^ xor_black))
        else:
            second = (base_white + (sq ^ xor_white), base_black + (sq ^ xor_black))
        count += 1
    return count, first, second


@kernel
def _changes(parent, pieces, white, black, zero_row, view_white, view_black):
    """The input rows that turn the parent position's accumulators into this position's (each
    perspective in its king view of this position, view_white and view_black: (offset, xor)): two
    pieces gone and two come, each as (White's row, Black's row), zero_row where fewer changed; or
    None when more than two pieces left or came (a move moves at most two each way), the
    accumulators then to be made from scratch."""
    none = (zero_row, zero_row)
    gone, gone1, gone2 = NONE_YET, none, none
    came, came1, came2 = NONE_YET, none, none
    for kind in range(6):
        for is_white in (True, False):
            before = parent[kind] & (parent[7] if is_white else parent[6])
            after = pieces[kind] & (white if is_white else black)
            if before == after:
                continue
            base_white = view_white[0] + kind * 64 + (OWN if is_white else ENEMY)
            base_black = view_black[0] + kind * 64 + (ENEMY if is_white else OWN)
            stayed = before & after
            gone, gone1, gone2 = _collect(before ^ stayed, base_white, view_white[1], base_black, view_black[1],
                                          gone, gone1, gone2)
            came, came1, came2 = _collect(after ^ stayed, base_white, view_white[1], base_black, view_black[1],
                                          came, came1, came2)
            if gone < 0 or came < 0:
                return None
    return gone1, gone2, came1, came2


@kernel
def _output(acc, us, them, occ, weights, params):
    """The network's output in centipawns from the side to move's accumulator (acc[us:us + H]) and the
    other side's (at them): forward()'s steps from the activation on, before any base."""
    hidden = np.uint64(weights.shape[1])  # unsigned indexes (us, them too): no negative-index test a lane (_update)
    buckets = params.shape[0] - OUTPUT_BIAS
    qa = params[QA]
    bucket = min(buckets - 1, max(np.int64(popcount(occ)) - 2, 0) * buckets // 32)
    output_row = params[INPUTS] + 2  # past W1, b1 and the zero row
    row_us = output_row + 2 * bucket
    row_them = row_us + 1
    # Exact in integers (QA, QB, SCALE <= 65535, |w| <= 32768, 2H <= 8192): c = clamp(x, 0, QA)
    # fits int32; a CReLU product c * w is at most 65535 * 32768 < 2^31, and an SCReLU one
    # c * c * w at most 2^31 when QA <= 256: those are multiplied in int32 (the truncations say
    # so to LLVM, whose 32-bit lanes are twice as many) and summed in int64. With a larger QA,
    # SCReLU multiplies in int64 (|c * c * w| < 2^47, the sum < 2^60).
    zero = np.int32(0)
    qa32 = np.int32(qa)
    total = np.int64(0)
    if params[ACTIVATION] == SCRELU:
        if qa <= 256:
            for j in range(hidden):
                c = min(max(np.int32(acc[us + j]), zero), qa32)
                total += np.int32(np.int32(c * c) * weights[row_us, j])
            for j in range(hidden):
                c = min(max(np.int32(acc[them + j]), zero), qa32)
                total += np.int32(np.int32(c * c) * weights[row_them, j])
        else:
            for j in range(hidden):
                wide = np.int64(min(max(np.int32(acc[us + j]), zero), qa32))
                total += wide * wide * weights[row_us, j]
            for j in range(hidden):
                wide = np.int64(min(max(np.int32(acc[them + j]), zero), qa32))
                total += wide * wide * weights[row_them, j]
        total //= qa
    else:
        for j in range(hidden):
            total += np.int32(min(max(np.int32(acc[us + j]), zero), qa32) * weights[row_us, j])
        for j in range(hidden):
            total += np.int32(min(max(np.int32(acc[them + j]), zero), qa32) * weights[row_them, j])
    # |total| < 8192 * 65535 * 32768 < 2^44 and |b2| < 2^31: times SCALE it stays below 2^60.
    return (total + params[OUTPUT_BIAS + bucket]) * params[SCALE] // (qa * params[QB])


@kernel
def _accumulate(acc, source, parent, has_parent, pieces, black, white, turn, weights, params):
    """network_update_kernel's accumulators and output: each perspective's accumulator in acc (a slot's
    row: White's at 0, Black's at H) made from source (the slot before's row, made from the bitboards
    parent, 8 uint64; when has_parent) or from scratch; the network's output in centipawns."""
    black_acc = np.uint64(weights.shape[1])  # where Black's accumulator starts
    kings = pieces[5]
    bias_row = params[INPUTS]
    view_white = _king_view(params, kings & white, WHITE_VIEW)
    view_black = _king_view(params, kings & black, BLACK_VIEW)
    fresh_white = fresh_black = True
    parent_kings_white, parent_kings_black = parent[5] & parent[7], parent[5] & parent[6]
    if has_parent and parent_kings_white and parent_kings_black:
        # A perspective whose king changed bucket or mirror is made from scratch; the other
        # is updated from the parent's, less the rows of the pieces gone, plus those come.
        same_white = _king_view(params, parent_kings_white, WHITE_VIEW) == view_white
        same_black = _king_view(params, parent_kings_black, BLACK_VIEW) == view_black
        changes = _changes(parent, pieces, white, black, bias_row + 1, view_white, view_black)
        if changes is not None:
            gone1, gone2, came1, came2 = changes
            if same_white:
                fresh_white = False
                _update(acc, source, WHITE_ACC, weights, gone1[0], gone2[0], came1[0], came2[0])
            if same_black:
                fresh_black = False
                _update(acc, source, black_acc, weights, gone1[1], gone2[1], came1[1], came2[1])
    if fresh_white:
        _refresh(acc, WHITE_ACC, pieces, white, weights, bias_row, view_white[0], view_white[1])
    if fresh_black:
        _refresh(acc, black_acc, pieces, black, weights, bias_row, view_black[0], view_black[1])
    if turn:
        return _output(acc, WHITE_ACC, black_acc, white | black, weights, params)
    return _output(acc, black_acc, WHITE_ACC, white | black, weights, params)


@kernel(UPDATE_SIGNATURE, nogil=True)
def network_update_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, weights, params,
                          state, ply):
    """network_kernel's result, with the accumulators of slot `ply` made from those of slot
    ply - 1. state: int32 [plies, 2H + 16], per slot White's accumulator, Black's (int32 each, or with
    params[NARROW] both int16 in the row's first H int32), and the bitboards they were made from (pawns ..
    kings, black, white as 8 uint64, from column 2H); the kernel writes a slot's accumulators and bitboards
    together, so every slot is self-consistent."""
    if not (kings & white) or not (kings & black):
        return 0  # not a real position; the search never gets here
    base = np.int64(0)
    if params[BASE] == CLASSIC_BASE:
        packed = evaluate_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn)
        flags = packed & FLAGS_MASK
        base = packed >> FLAG_BITS
    else:
        flags = _network_flags(pawns, knights, bishops, rooks, queens, kings, black, white, turn)
    if flags & ILLEGAL_FLAG:
        return flags
    hidden = weights.shape[1]
    slot = min(ply, state.shape[0] - 1)
    pieces = (pawns, knights, bishops, rooks, queens, kings)
    # A slot's row as the accumulators' type: int32, or (NARROW) its first H int32 seen as 2H int16 (White's
    # H, then Black's H); its bitboards as 8 uint64 from column 2H. Slot 0 has no slot before (has_parent).
    row, source = state[slot], state[max(slot - 1, 0)]
    parent = source[2 * hidden:].view(np.uint64)
    if params[NARROW]:
        score = base + _accumulate(row.view(np.int16), source.view(np.int16), parent, slot > 0, pieces, black, white,
                                   turn, weights, params)
    else:
        score = base + _accumulate(row, source, parent, slot > 0, pieces, black, white, turn, weights, params)
    record = row[2 * hidden:].view(np.uint64)
    for kind in range(6):
        record[kind] = pieces[kind]
    record[6] = black
    record[7] = white
    score = min(max(score, -SCORE_LIMIT), SCORE_LIMIT)
    return (score << FLAG_BITS) | flags



def network_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, weights, params) -> int:
    """The network's score from the side to move's view packed with evaluate_kernel's flags:
    score << FLAG_BITS | flags, the accumulators computed from scratch. A position whose side
    to move could take the king (ILLEGAL_FLAG: the search drops it) scores 0. It is
    network_update_kernel on a state of one slot (slot 0 has no parent to update from), so that a
    first start compiles one network kernel, not two."""
    state = np.empty((1, 2 * weights.shape[1] + 16), np.int32)
    return network_update_kernel(pawns, knights, bishops, rooks, queens, kings, black, white, turn, weights, params,
                                 state, NO_PARENT)


ACCUMULATOR_BITS = 16  # NARROW's accumulators: int16, as Stockfish's


def narrow_fits(weights: np.ndarray, inputs: int) -> bool:
    """Whether every accumulator of the network (weights as the kernels take them, its first `inputs` rows
    W1, then b1) stays within int16 whatever the position: |b1| plus the 32 largest |W1| of each column
    (a position has at most 32 pieces, each one row of its perspective's bucket) at most 32767. Then the
    kernels keep the accumulators in int16 (params[NARROW]): half the memory and twice the lanes of int32,
    with the same sums."""
    w1 = np.abs(weights[:inputs].astype(np.int64))
    largest = np.partition(w1, inputs - 32, axis=0)[inputs - 32:] if inputs > 32 else w1
    bound = np.abs(weights[inputs].astype(np.int64)) + largest.sum(axis=0)
    return bool(bound.max() < 1 << (ACCUMULATOR_BITS - 1))
