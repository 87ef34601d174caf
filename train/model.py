"""The network of engine/evaluation/network.py in PyTorch: float training in the quantized scale, the
quantization to a `Network`, and the integer forward pass of the quantized weights.

The float model works on the scale the integers stand for: an accumulator clamped to [0, 1] is
[0, QA] in the engine, a W2 weight w is w * QB, and the output o (before SCALE) is o * QA * QB.
So the evaluation is o * SCALE centipawns in both (plus the base evaluation of a network that has
one: the model adds base / SCALE to its output, so that o * SCALE is the whole evaluation), and
quantizing is rounding
W1 * QA, b1 * QA, W2 * QB and b2 * QA * QB. `clip_` keeps every weight within what int16
(W1, b1, W2) and int32 (b2) can hold after that rounding.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from garfish.engine.evaluation.network import FEATURES, NO_BASE, NO_KING_BUCKETS, SCRELU, Network, input_count
from garfish.train.data import Features
from garfish.train.layers import bag_gradient, flatten, integer_rows, output_backward, output_forward

INT16_MAX = 32767
INT32_MAX = 2**31 - 1
# Initial W1 (uniform within +-INIT_W1) and b1: the ~25 active features of a position sum to about
# +-0.15 around 0.5, so the accumulators start inside [0, 1], where both activations pass gradients.
# (Measured on the shared data, H 128, 3 epochs: validation loss 0.01157 against 0.01198 with W1
# within +-0.18 and b1 0.25.)
INIT_W1 = 0.05
INIT_B1 = 0.5


@dataclass(frozen=True)
class Architecture:
    """The network's shape and quantization constants."""

    hidden: int
    buckets: int
    activation: int  # CRELU or SCRELU (engine.evaluation.network)
    qa: int = 255
    qb: int = 64
    scale: int = 400
    base: int = NO_BASE  # NO_BASE or CLASSIC_BASE (engine.evaluation.network)
    layout: int = NO_KING_BUCKETS  # the input layout (engine.evaluation.network.LAYOUTS)


@dataclass
class Batch:
    """Network inputs as tensors: each side's features flattened for embedding_bag, where each
    position starts at the same offset in both (a position has as many features from either side)."""

    us: torch.Tensor
    them: torch.Tensor
    offsets: torch.Tensor
    bucket: torch.Tensor
    base: torch.Tensor  # float64 [N]: the base evaluation in centipawns (zeros without one)


def make_batch(inputs: Features, rows: np.ndarray) -> Batch:
    """The batch of the given rows of the feature arrays."""
    rows = np.asarray(rows, dtype=np.int64)
    count = inputs.count[rows].astype(np.int64)
    offsets = np.cumsum(count) - count
    total = int(count.sum())
    us, them = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
    flatten(inputs.us, rows, offsets, us)
    flatten(inputs.them, rows, offsets, them)
    return Batch(torch.from_numpy(us), torch.from_numpy(them), torch.from_numpy(offsets),
                 torch.from_numpy(inputs.bucket[rows]), torch.from_numpy(inputs.base[rows]))


class _BagSum(torch.autograd.Function):
    """embedding_bag's sums of W1's rows (index, offsets as its own), W1's gradient by
    train.layers.bag_gradient."""

    @staticmethod
    def forward(ctx: Any, index: torch.Tensor, offsets: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(index, offsets)
        ctx.shape = tuple(weight.shape)
        return nn.functional.embedding_bag(index, weight, offsets, mode="sum")

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[None, None, torch.Tensor]:
        index, offsets = ctx.saved_tensors
        out = np.zeros(ctx.shape, dtype=np.float32)
        bag_gradient(index.numpy(), offsets.numpy(), grad.contiguous().numpy(), out)
        return None, None, torch.from_numpy(out)


class _Output(torch.autograd.Function):
    """The output before SCALE from the two sides' sums of W1's rows: b1 added, clamped (squared
    for SCReLU), dotted with the bucket's W2 row, plus its b2 (train.layers)."""

    @staticmethod
    def forward(ctx: Any, us: torch.Tensor, them: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor,
                b2: torch.Tensor, bucket: torch.Tensor, screlu: bool) -> torch.Tensor:
        us, them = us.detach().contiguous(), them.detach().contiguous()
        out = np.empty(len(us), dtype=np.float32)
        output_forward(us.numpy(), them.numpy(), b1.detach().numpy(), w2.detach().numpy(), b2.detach().numpy(),
                       bucket.numpy(), screlu, out)
        ctx.save_for_backward(us, them, b1, w2, bucket)
        ctx.screlu, ctx.buckets = screlu, len(b2)
        return torch.from_numpy(out)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        us, them, b1, w2, bucket = ctx.saved_tensors
        d_us, d_them = np.empty(us.shape, dtype=np.float32), np.empty(them.shape, dtype=np.float32)
        d_b1, d_w2 = np.zeros(b1.shape, dtype=np.float32), np.zeros(w2.shape, dtype=np.float32)
        d_b2 = np.zeros(ctx.buckets, dtype=np.float32)
        output_backward(us.numpy(), them.numpy(), b1.detach().numpy(), w2.detach().numpy(), bucket.numpy(),
                        ctx.screlu, grad.contiguous().numpy(), d_us, d_them, d_b1, d_w2, d_b2)
        return (torch.from_numpy(d_us), torch.from_numpy(d_them), torch.from_numpy(d_b1), torch.from_numpy(d_w2),
                torch.from_numpy(d_b2), None, None)


class Model(nn.Module):
    """Perspective network: shared W1 [inputs, H] and b1 for both sides, W2 [B, 2H] and b2 [B].

    With king buckets W1 is trained factorised (as Stockfish's trainer and bullet do): each
    bucket's rows are a row of its own plus the piece-square row all buckets share (`factor`), so
    what one bucket learns of a piece on a square helps the others; the engine gets their sums.
    The factor starts as a plain W1 would, the buckets' own rows at zero."""

    def __init__(self, arch: Architecture) -> None:
        super().__init__()
        self.arch = arch
        inputs = input_count(arch.layout)
        if arch.layout == NO_KING_BUCKETS:
            self.w1 = nn.Parameter(torch.empty(inputs, arch.hidden).uniform_(-INIT_W1, INIT_W1))
        else:
            self.w1 = nn.Parameter(torch.zeros(inputs, arch.hidden))
            self.factor = nn.Parameter(torch.empty(FEATURES, arch.hidden).uniform_(-INIT_W1, INIT_W1))
        self.b1 = nn.Parameter(torch.full((arch.hidden,), INIT_B1))
        out_bound = 1.0 / np.sqrt(2 * arch.hidden)
        self.w2 = nn.Parameter(torch.empty(arch.buckets, 2 * arch.hidden).uniform_(-out_bound, out_bound))
        self.b2 = nn.Parameter(torch.zeros(arch.buckets))

    def input_weights(self) -> torch.Tensor:
        """W1 as the engine uses it: [inputs, H], the factor added to every bucket's rows."""
        if self.arch.layout == NO_KING_BUCKETS:
            return self.w1
        return self.w1 + self.factor.repeat(self.w1.shape[0] // FEATURES, 1)

    def forward(self, batch: Batch) -> torch.Tensor:
        """The output before SCALE (the evaluation is this times SCALE centipawns, the base's
        included), side to move's view."""
        w1 = self.input_weights()
        us = _BagSum.apply(batch.us, batch.offsets, w1)
        them = _BagSum.apply(batch.them, batch.offsets, w1)
        out = _Output.apply(us, them, self.b1, self.w2, self.b2, batch.bucket, self.arch.activation == SCRELU)
        if self.arch.base != NO_BASE:
            out = out + (batch.base / self.arch.scale).to(out.dtype)
        return out

    @torch.no_grad()
    def clip_(self) -> None:
        """Keep the weights within what their quantized integers can hold."""
        arch = self.arch
        if arch.layout == NO_KING_BUCKETS:
            self.w1.clamp_(-INT16_MAX / arch.qa, INT16_MAX / arch.qa)
        else:  # half the range each, so that their sums fit too
            self.w1.clamp_(-INT16_MAX / arch.qa / 2, INT16_MAX / arch.qa / 2)
            self.factor.clamp_(-INT16_MAX / arch.qa / 2, INT16_MAX / arch.qa / 2)
        self.b1.clamp_(-INT16_MAX / arch.qa, INT16_MAX / arch.qa)
        self.w2.clamp_(-INT16_MAX / arch.qb, INT16_MAX / arch.qb)
        self.b2.clamp_(-INT32_MAX / (arch.qa * arch.qb), INT32_MAX / (arch.qa * arch.qb))


def _rounded(tensor: torch.Tensor, factor: float, dtype: type) -> np.ndarray:
    """round(tensor * factor) as an integer array (ValueError if it does not fit dtype)."""
    values = torch.round(tensor.detach().double() * factor).numpy()
    limits = np.iinfo(dtype)
    if values.min(initial=0) < limits.min or values.max(initial=0) > limits.max:
        raise ValueError(f"weights out of the {np.dtype(dtype).name} range after quantization")
    return values.astype(dtype)


def quantize(model: Model, description: str = "") -> Network:
    """The model's integer network: W1 * QA, b1 * QA, W2 * QB, b2 * QA * QB, rounded."""
    arch = model.arch
    return Network(arch.activation, arch.qa, arch.qb, arch.scale,
                   _rounded(model.input_weights(), arch.qa, np.int16), _rounded(model.b1, arch.qa, np.int16),
                   _rounded(model.w2, arch.qb, np.int16), _rounded(model.b2, arch.qa * arch.qb, np.int32),
                   description, arch.base, arch.layout)


def integer_forward(network: Network, inputs: Features, rows: np.ndarray) -> torch.Tensor:
    """engine.evaluation.network.forward's evaluation (centipawns, side to move) of the given rows, as int64:
    train.layers.integer_rows (the accumulators summed from W1's integer rows, clamped to [0, QA],
    squared and floor-divided by QA for SCReLU, dotted with W2, plus b2, times SCALE floor-divided
    by QA * QB), plus the base evaluation of a network that has one (inputs.base)."""
    rows = np.asarray(rows, dtype=np.int64)
    out = np.empty(len(rows), dtype=np.int64)
    integer_rows(network.w1, network.b1, network.w2, network.b2, inputs.us, inputs.them, inputs.bucket, rows,
                 network.qa, network.qb, network.scale, network.activation == SCRELU, out)
    if network.base != NO_BASE:
        out += inputs.base[rows]
    return torch.from_numpy(out)


def merge_models(members: list[Model]) -> Model:
    """One model whose accumulators are the members' side by side and whose output is the mean of
    theirs (ValueError unless the members share every option). QB grows with the number of members,
    so that the merged W2 (each member's divided by that number) quantizes to the members' integers."""
    first = members[0].arch
    for member in members[1:]:
        if member.arch != first:
            raise ValueError(f"networks of different options: {first} and {member.arch}")
    count, hidden = len(members), first.hidden
    merged = Model(dataclasses.replace(first, hidden=hidden * count, qb=first.qb * count))
    with torch.no_grad():
        merged.w1.copy_(torch.cat([m.w1 for m in members], dim=1))
        if first.layout != NO_KING_BUCKETS:
            merged.factor.copy_(torch.cat([m.factor for m in members], dim=1))
        merged.b1.copy_(torch.cat([m.b1 for m in members]))
        halves = [m.w2[:, :hidden] for m in members] + [m.w2[:, hidden:] for m in members]
        merged.w2.copy_(torch.cat(halves, dim=1) / count)
        merged.b2.copy_(torch.stack([m.b2 for m in members]).mean(dim=0))
    return merged


def merge_networks(members: list[Network], description: str = "") -> Network:
    """The integer network of merge_models: the members' quantized weights unchanged, side by side,
    QB times the number of members and b2 their sum (ValueError if it leaves int32)."""
    first, count = members[0], len(members)
    halves = [n.w2[:, :n.hidden] for n in members] + [n.w2[:, n.hidden:] for n in members]
    b2 = np.sum([n.b2.astype(np.int64) for n in members], axis=0)
    if np.abs(b2).max(initial=0) > INT32_MAX:
        raise ValueError("the summed output biases leave the int32 range")
    return Network(first.activation, first.qa, first.qb * count, first.scale,
                   np.hstack([n.w1 for n in members]), np.concatenate([n.b1 for n in members]),
                   np.hstack(halves), b2.astype(np.int32), description, first.base, first.layout)
