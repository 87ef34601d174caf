"""The evaluation network's file format, its features and its exact integer forward pass.

This module is the contract between the trainer (`garfish train`, which writes networks) and
the engine (whose Numba kernels must give exactly `forward()`'s result). It needs NumPy only.

Architecture (a perspective network, as in Stockfish's NNUE and the bullet trainer's simple nets):

- Features: 768 per perspective. For the perspective of colour P, a piece of colour C and type
  T (python-chess 1..6, pawn..king) on square S is feature `feature_index(P, C, T, S)` =
  (0 if C == P else 384) + (T - 1) * 64 + (S if P is White else S ^ 56): the board is seen from
  P's side, with P's own pieces first.
- Input layout (king buckets): with layout KING_BUCKETS_4 each perspective's 768 features are
  repeated for 4 buckets of its own king's square, and the board is seen in a mirror between the
  a and h files when that king stands on the e-h files (seen from P's side), as in Stockfish's
  HalfKA networks and bullet's king-bucketed ones. The input of a piece is then
  768 * bucket + feature_index(P, C, T, S ^ 7 if mirrored else S), where the bucket is read from
  KING_BUCKET_MAPS on the king's relative square (after the mirror): 0 ranks 1-2 on files a-b,
  1 ranks 1-2 on files c-d, 2 ranks 3-4, 3 ranks 5-8 (so 3,072 inputs). Layout NO_KING_BUCKETS
  (0) is the plain 768 (one bucket, no mirror).
- Hidden layer: one accumulator of H int32 per perspective, acc_P = b1 + the sum of W1's rows
  of P's active inputs (W1: int16 [inputs, H], b1: int16 [H], the same weights for both sides).
- Activation, on each accumulator value x: c = clamp(x, 0, QA); CReLU uses c, SCReLU c * c.
- Output bucket: b = min(B - 1, (pieces on the board - 2) * B // 32) for B buckets.
- Output: the side to move's activations, then the other side's (2H values), dotted with
  W2[b] (int16 [B, 2H]) in int64. SCReLU's sum is then floor-divided by QA. Then
  out = that + b2[b] (int32 [B], on the QA * QB scale), and the evaluation in centipawns,
  from the side to move's view, is floor(out * SCALE / (QA * QB)) (Python's floor division).
- Base: a network with base CLASSIC_BASE learns a correction to the hand-written evaluation: its
  evaluation is that floor plus engine.evaluation.classic.evaluate(board), both on the hand-written
  evaluation's centipawn scale (as sunfish's experimental network is a residual over its
  piece-square tables). Base NO_BASE (0) adds nothing.

A position and its colour mirror get the same evaluation by construction (the tests check it).

File (little-endian), named `nn-<the first 12 hex digits of the file's SHA-256>.gfnn`:
    header  MAGIC b"GFNN", then u16 version (1, or 2 for a king-bucketed layout),
            u8 activation (0 CReLU, 1 SCReLU),
            u8 base (0 none, 1 the hand-written evaluation; 0 in files made before bases),
            u16 H, u16 B, u16 QA, u16 QB, u16 SCALE, u16 input layout (0 in version 1),
            u32 length of the description, then the description (UTF-8: data, command, loss)
    body    W1 int16 [inputs][H], b1 int16 [H], W2 int16 [B][2H], b2 int32 [B]
    trailer the SHA-256 (32 bytes) of everything before it
Version 1 files (all made before king buckets) keep their bytes and names; an engine that only
reads version 1 refuses a version 2 file by its version.
`read_network` refuses a file that is short, long, of another magic or version, out of
range (H 1-4096, B 1-64, QA, QB and SCALE non-zero, a known base and layout) or whose checksum does not match, with a
NetworkError saying why.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Union

import chess
import numpy as np

MAGIC = b"GFNN"
VERSION = 2  # the newest format this engine reads; version 1 files have no input layout
PLAIN_VERSION = 1  # what a network without king buckets is written as (the bytes of older files)
CRELU, SCRELU = 0, 1
ACTIVATIONS = {CRELU: "CReLU", SCRELU: "SCReLU"}
NO_BASE, CLASSIC_BASE = 0, 1
BASES = {NO_BASE: "none", CLASSIC_BASE: "classic"}  # what the network's output is added to
FEATURES = 768  # piece-square features per perspective and king bucket
NO_KING_BUCKETS, KING_BUCKETS_4 = 0, 1
LAYOUTS = {NO_KING_BUCKETS: "768", KING_BUCKETS_4: "4 king buckets x 768, mirrored"}


def _king_bucket_map(layout: int) -> np.ndarray:
    """int64 [64]: for the perspective's own king on a relative square (before any mirror), its
    bucket times 8 plus the square XOR of the mirror (7, or 0 when there is none)."""
    table = np.zeros(64, dtype=np.int64)
    if layout == KING_BUCKETS_4:
        for square in range(64):
            flip = 7 if square % 8 >= 4 else 0
            rank, file = (square ^ flip) // 8, (square ^ flip) % 8
            bucket = (0 if file < 2 else 1) if rank < 2 else (2 if rank < 4 else 3)
            table[square] = bucket * 8 + flip
    return table


KING_BUCKET_MAPS = {layout: _king_bucket_map(layout) for layout in LAYOUTS}
MAX_HIDDEN = 4096
MAX_BUCKETS = 64
HEADER = struct.Struct("<4sHBBHHHHHHI")  # magic, version, activation, base, H, B, QA, QB, SCALE, layout, len
CHECKSUM_SIZE = 32
SUFFIX = ".gfnn"


class NetworkError(ValueError):
    """A network file that cannot be used, with the reason."""


@dataclass(frozen=True)
class Network:
    """A quantized network: integer weights and the constants of its forward pass."""

    activation: int
    qa: int
    qb: int
    scale: int
    w1: np.ndarray  # int16 [inputs, H]: 768 times the layout's king buckets
    b1: np.ndarray  # int16 [H]
    w2: np.ndarray  # int16 [B, 2H]
    b2: np.ndarray  # int32 [B]
    description: str = ""
    base: int = NO_BASE  # CLASSIC_BASE: the output is a correction added to the hand-written evaluation
    layout: int = NO_KING_BUCKETS  # the input layout (LAYOUTS)

    @property
    def hidden(self) -> int:
        return int(self.w1.shape[1])

    @property
    def buckets(self) -> int:
        return int(self.w2.shape[0])


def feature_index(perspective: chess.Color, color: chess.Color, piece_type: int, square: int) -> int:
    """The feature of a piece seen from one side (see the module's description)."""
    relative = square if perspective == chess.WHITE else square ^ 56
    return (0 if color == perspective else 384) + (piece_type - 1) * 64 + relative


def input_count(layout: int) -> int:
    """The inputs per perspective of a layout: 768 per king bucket."""
    return FEATURES * (int(KING_BUCKET_MAPS[layout].max()) // 8 + 1)


def king_view(layout: int, perspective: chess.Color, king: int) -> tuple[int, int]:
    """(the first input of the bucket, the square XOR of the mirror) for the perspective whose own
    king stands on square king."""
    entry = int(KING_BUCKET_MAPS[layout][king if perspective == chess.WHITE else king ^ 56])
    return FEATURES * (entry >> 3), entry & 7


def active_features(board: chess.Board, perspective: chess.Color, layout: int = NO_KING_BUCKETS) -> list[int]:
    """The active inputs of a board from one side in a layout, in square order."""
    king = board.king(perspective)
    offset, flip = king_view(layout, perspective, king if king is not None else chess.E1)
    return [offset + feature_index(perspective, piece.color, piece.piece_type, square ^ flip)
            for square, piece in board.piece_map().items()]


def output_bucket(pieces: int, buckets: int) -> int:
    """The output bucket for a board with this many pieces (kings included)."""
    return min(buckets - 1, max(pieces - 2, 0) * buckets // 32)


def forward(network: Network, board: chess.Board, base: Optional[Callable[[chess.Board], int]] = None) -> int:
    """The network's evaluation of the board in centipawns, from the side to move's view: the
    reference integer forward pass that the engine's kernels must match exactly. A network on the
    hand-written evaluation's base adds `base(board)`, which the caller passes
    (garfish.engine.evaluation.classic.evaluate): this module needs NumPy only, not the Numba
    evaluation."""
    accumulators = []
    for perspective in (board.turn, not board.turn):
        acc = network.b1.astype(np.int64)
        for feature in active_features(board, perspective, network.layout):
            acc = acc + network.w1[feature].astype(np.int64)
        accumulators.append(np.clip(acc, 0, network.qa))
    active = np.concatenate(accumulators)
    bucket = output_bucket(chess.popcount(board.occupied), network.buckets)
    weights = network.w2[bucket].astype(np.int64)
    if network.activation == SCRELU:
        total = int(np.dot(active * active, weights)) // network.qa
    else:
        total = int(np.dot(active, weights))
    out = total + int(network.b2[bucket])
    score = out * network.scale // (network.qa * network.qb)
    if network.base == CLASSIC_BASE:
        if base is None:
            raise ValueError("this network is added to the hand-written evaluation: pass "
                             "base=garfish.engine.evaluation.classic.evaluate")
        score += base(board)
    return score


def encode_network(network: Network) -> bytes:
    """The file's bytes for a network."""
    description = network.description.encode("utf-8")
    version = PLAIN_VERSION if network.layout == NO_KING_BUCKETS else VERSION
    header = HEADER.pack(MAGIC, version, network.activation, network.base, network.hidden, network.buckets, network.qa,
                         network.qb, network.scale, network.layout, len(description))
    body = b"".join([
        np.ascontiguousarray(network.w1, dtype="<i2").tobytes(),
        np.ascontiguousarray(network.b1, dtype="<i2").tobytes(),
        np.ascontiguousarray(network.w2, dtype="<i2").tobytes(),
        np.ascontiguousarray(network.b2, dtype="<i4").tobytes(),
    ])
    content = header + description + body
    return content + hashlib.sha256(content).digest()


def network_name(data: bytes) -> str:
    """The file name a network's bytes are stored under: nn-<12 hex digits of SHA-256>.gfnn."""
    return f"nn-{hashlib.sha256(data).hexdigest()[:12]}{SUFFIX}"


def write_network(network: Network, folder: Union[str, Path]) -> Path:
    """Write the network into folder under its content-hash name; the path written."""
    data = encode_network(network)
    path = Path(folder) / network_name(data)
    path.write_bytes(data)
    return path


def decode_network(data: bytes) -> Network:
    """A network from a file's bytes (NetworkError if they are not a valid network)."""
    if len(data) < HEADER.size + CHECKSUM_SIZE:
        raise NetworkError(f"too short for a network file ({len(data)} bytes)")
    magic, version, activation, base, hidden, buckets, qa, qb, scale, layout, text_length = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise NetworkError(f"not a Garfish network (magic {magic!r}, expected {MAGIC!r})")
    if version not in (PLAIN_VERSION, VERSION):
        raise NetworkError(f"network format version {version}, this engine reads versions {PLAIN_VERSION}-{VERSION}")
    if layout not in LAYOUTS or (version == PLAIN_VERSION and layout != NO_KING_BUCKETS):
        raise NetworkError(f"unknown input layout {layout} (in a version {version} file)")
    if activation not in ACTIVATIONS:
        raise NetworkError(f"unknown activation {activation}")
    if base not in BASES:
        raise NetworkError(f"unknown base evaluation {base}")
    if not (1 <= hidden <= MAX_HIDDEN and 1 <= buckets <= MAX_BUCKETS and qa and qb and scale):
        raise NetworkError(f"sizes out of range (H {hidden}, B {buckets}, QA {qa}, QB {qb}, SCALE {scale})")
    inputs = input_count(layout)
    sizes = [inputs * hidden * 2, hidden * 2, buckets * 2 * hidden * 2, buckets * 4]
    expected = HEADER.size + text_length + sum(sizes) + CHECKSUM_SIZE
    if len(data) != expected:
        raise NetworkError(f"{len(data)} bytes where the header implies {expected} (truncated or padded)")
    content, checksum = data[:-CHECKSUM_SIZE], data[-CHECKSUM_SIZE:]
    if hashlib.sha256(content).digest() != checksum:
        raise NetworkError("checksum mismatch (the file is corrupt)")
    offset = HEADER.size
    try:
        description = data[offset:offset + text_length].decode("utf-8")
    except UnicodeDecodeError:
        raise NetworkError("the description is not UTF-8") from None
    offset += text_length
    arrays = []
    for size, dtype, shape in zip(sizes, ("<i2", "<i2", "<i2", "<i4"),
                                  ((inputs, hidden), (hidden,), (buckets, 2 * hidden), (buckets,))):
        arrays.append(np.frombuffer(data, dtype=dtype, count=size // np.dtype(dtype).itemsize,
                                    offset=offset).reshape(shape).astype(dtype[1:]))
        offset += size
    w1, b1, w2, b2 = arrays
    return Network(activation, qa, qb, scale, w1, b1, w2, b2, description, base, layout)


def read_network(path: Union[str, Path]) -> Network:
    """Read a network file (NetworkError with the reason if it cannot be used)."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise NetworkError(f"cannot read {path}: {error.strerror or error}") from None
    return decode_network(data)
