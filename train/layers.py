"""The network's training passes in Numba: what PyTorch's autograd did through a dozen tensor
operations a step, in three kernels.

The model's forward pass is: each side's accumulator, the sum of W1's rows of its active features
plus b1 (embedding_bag); the two clamped to [0, 1] (squared for SCReLU) side by side, dotted with
the output bucket's W2 row, plus its b2. PyTorch made a tensor of every step of that (the bias added,
the two sides joined, clamped, squared, W2's row gathered for every position, multiplied, summed)
and as many again backwards, each a pass over N x 2H floats; W1's gradient came from
embedding_bag's own backward, which sorts the indices first. On one thread, H 256, batch 4096,
those took about 60 ms a step, most of a training run's time.

Here the embedding_bag forward stays PyTorch's (it is the fast part); `flatten` lays a batch's
features out for it (the boolean mask of PyTorch before took 2 ms a batch); `bag_gradient` adds each
position's accumulator gradient to its features' W1 rows, `output_forward` and `output_backward`
do the rest in one pass each over the batch. Each runs on one thread in a fixed order, so a run
repeats byte for byte; the float sums run in another order than PyTorch's, so the gradients agree
with autograd's to float rounding (tests/test_train.py), not bit for bit.

The clamp's gradient follows torch.clamp's: it passes where 0 <= x <= 1, the ends included.
`integer_rows` is the quantized network's integer pass (engine.evaluation.network.forward's numbers), with which
a run measures its quantized network on the validation positions.
Loaded only by the trainer (Numba compiles these on first use and caches them).
"""

from __future__ import annotations

import numpy as np
from numba import njit

LANES = 8  # output_forward's running sums


@njit(cache=True)
def _activation(x, screlu):
    """The clamped (squared for SCReLU) value of an accumulator and its slope there."""
    if x < 0.0:
        return 0.0, 0.0
    if x > 1.0:
        return 1.0, 0.0
    if screlu:
        return x * x, 2.0 * x
    return x, 1.0


@njit(cache=True)
def bag_gradient(index, offsets, gradient, out):
    """W1's gradient: out[index[j]] += gradient[the bag of j], bags in order (offsets as
    embedding_bag's: where each bag's indices start). out starts at zero."""
    bags, total, width = gradient.shape[0], index.shape[0], gradient.shape[1]
    for bag in range(bags):
        end = offsets[bag + 1] if bag + 1 < bags else total
        for j in range(offsets[bag], end):
            row = index[j]
            for h in range(width):
                out[row, h] += gradient[bag, h]


@njit(cache=True)
def output_forward(us, them, b1, w2, b2, bucket, screlu, out):
    """out[n]: the output before SCALE of position n, from its two sides' summed W1 rows (us, them:
    [N, H], b1 not added), the bias b1 [H], W2 [B, 2H], b2 [B] and its output bucket. The dot
    product is summed in LANES running sums, an order the compiler can vectorise (10 times faster
    than one sum, without fastmath, so the same on every machine)."""
    hidden = us.shape[1]
    whole = hidden - hidden % LANES
    lanes = np.zeros(LANES, dtype=np.float32)
    low, high = np.float32(0.0), np.float32(1.0)
    for n in range(us.shape[0]):
        b = bucket[n]
        lanes[:] = low
        for start in range(0, whole, LANES):
            for k in range(LANES):
                h = start + k
                x = min(max(us[n, h] + b1[h], low), high)
                y = min(max(them[n, h] + b1[h], low), high)
                if screlu:
                    x, y = x * x, y * y
                lanes[k] += x * w2[b, h] + y * w2[b, hidden + h]
        for h in range(whole, hidden):  # the rest, when H is no multiple of LANES
            x = min(max(us[n, h] + b1[h], low), high)
            y = min(max(them[n, h] + b1[h], low), high)
            if screlu:
                x, y = x * x, y * y
            lanes[0] += x * w2[b, h] + y * w2[b, hidden + h]
        out[n] = lanes.sum() + b2[b]


@njit(cache=True)
def output_backward(us, them, b1, w2, bucket, screlu, grad, d_us, d_them, d_b1, d_w2, d_b2):
    """The gradients of output_forward's outputs, given grad [N] (the loss's gradient of each):
    d_us and d_them [N, H] are written, d_b1 [H], d_w2 [B, 2H] and d_b2 [B] (zero at the start)
    summed over the positions in order."""
    hidden = us.shape[1]
    for n in range(us.shape[0]):
        b, g = bucket[n], grad[n]
        d_b2[b] += g
        for h in range(hidden):
            value, slope = _activation(us[n, h] + b1[h], screlu)
            d_w2[b, h] += g * value
            d_us[n, h] = g * w2[b, h] * slope
            d_b1[h] += d_us[n, h]
        for h in range(hidden):
            value, slope = _activation(them[n, h] + b1[h], screlu)
            d_w2[b, hidden + h] += g * value
            d_them[n, h] = g * w2[b, hidden + h] * slope
            d_b1[h] += d_them[n, h]


@njit(cache=True)
def flatten(table, rows, offsets, out):
    """The chosen rows' features one after the other, as embedding_bag takes them: out[offsets[i]:]
    holds the first count (the next offset less this one; the rest of out for the last) of
    table[rows[i]]."""
    for i in range(rows.shape[0]):
        end = offsets[i + 1] if i + 1 < rows.shape[0] else out.shape[0]
        row = rows[i]
        for j in range(end - offsets[i]):
            out[offsets[i] + j] = table[row, j]


@njit(cache=True)
def integer_rows(w1, b1, w2, b2, us, them, bucket, rows, qa, qb, scale, screlu, out):
    """engine.evaluation.network.forward's integer evaluation (centipawns, side to move, the base not added) of
    rows[i] of the padded feature tables (us, them: [N, 32], negative after the last), into out[i]:
    each side's accumulator b1 plus its features' W1 rows, clamped to [0, QA] (squared and the sum
    floor-divided by QA for SCReLU), dotted with the bucket's W2 row, plus b2, times SCALE
    floor-divided by QA * QB. All in int64, so exactly the engine's numbers."""
    hidden = b1.shape[0]
    accumulator = np.empty(2 * hidden, dtype=np.int64)
    for i in range(rows.shape[0]):
        row, b = rows[i], bucket[rows[i]]
        for h in range(hidden):
            accumulator[h] = b1[h]
            accumulator[hidden + h] = b1[h]
        for j in range(us.shape[1]):
            feature = us[row, j]
            if feature >= 0:  # not PAD
                for h in range(hidden):
                    accumulator[h] += w1[feature, h]
        for j in range(them.shape[1]):
            feature = them[row, j]
            if feature >= 0:
                for h in range(hidden):
                    accumulator[hidden + h] += w1[feature, h]
        total = np.int64(0)
        for h in range(2 * hidden):
            value = min(max(accumulator[h], np.int64(0)), np.int64(qa))
            total += (value * value if screlu else value) * np.int64(w2[b, h])
        if screlu:
            total = total // qa
        out[i] = (total + np.int64(b2[b])) * scale // (qa * qb)
