"""Bitboard primitives for the Numba kernels: bit counting, attack tables, sliding attacks.

Squares are numbered as in python-chess (a1 = 0, h8 = 63). Every bitboard is a
`uint64`; the kernels never mix it with signed integers. The helpers here are
`@kernel`, so each kernel that uses them compiles them in.
Under `NUMBA_DISABLE_JIT=1` the bit intrinsics fall back to plain Python.
Every kernel module imports this one first, and this one engine.kernel, which chooses where the compiled
kernels are cached before any kernel is compiled.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from numba import config, types
from numba.extending import intrinsic

from garfish.engine.kernel import kernel  # first: it chooses where Numba caches


U64 = np.uint64
ZERO = np.uint64(0)
ONE = np.uint64(1)
# Constant arguments to a kernel's callees are typed values, not literals: Numba compiles a callee once
# more for every literal argument it is given, and a first start waits for each compile
# (tests/test_warmup.py checks that every kernel compiles once).
NONE_YET = np.int64(0)  # an int64 zero: a count, index or piece type that starts at none

FILE_A = np.uint64(0x0101010101010101)
FILE_H = np.uint64(0x8080808080808080)
RANK_1 = np.uint64(0xFF)
RANK_2 = np.uint64(0x000000000000FF00)
RANK_3_4 = np.uint64(0x00000000FFFF0000)
RANK_4 = np.uint64(0x00000000FF000000)
RANK_5 = np.uint64(0x000000FF00000000)
RANK_5_6 = np.uint64(0x0000FFFF00000000)
RANK_7 = np.uint64(0x00FF000000000000)
RANK_8 = np.uint64(0xFF00000000000000)

if getattr(config, "DISABLE_JIT"):  # pragma: no cover - exercised by the interpreter-mode test

    def popcount(x):
        """Number of set bits."""
        return np.uint64(int(x).bit_count())

    def lsb(x):
        """Index of the lowest set bit (x != 0)."""
        v = int(x)
        return np.uint64((v & -v).bit_length() - 1)

    def msb(x):
        """Index of the highest set bit (x != 0)."""
        return np.uint64(int(x).bit_length() - 1)

    def prefetch(array, index):
        """A hint to the CPU, nothing to the interpreter."""

else:
    from llvmlite import ir
    from numba.core import cgutils

    @intrinsic
    def prefetch(typingctx, array, index):
        """Ask the CPU to bring array[index]'s cache line in (LLVM's prefetch: a read, kept in every level) while
        other work goes on: a hint, which changes no result. index must be within the array (unchecked)."""
        sig = types.void(array, index)

        def codegen(context, builder, signature, args):
            array_type = signature.args[0]
            data = context.make_array(array_type)(context, builder, args[0])
            pointer = cgutils.get_item_pointer(context, builder, array_type, data, [args[1]], wraparound=False)
            byte_pointer = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            function = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]), "llvm.prefetch.p0")
            builder.call(function, [builder.bitcast(pointer, byte_pointer), i32(0), i32(3), i32(1)])
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def popcount(typingctx, x):
        """Number of set bits (LLVM ctpop)."""
        sig = types.uint64(types.uint64)

        def codegen(context, builder, signature, args):
            return builder.ctpop(args[0])

        return sig, codegen

    @intrinsic
    def lsb(typingctx, x):
        """Index of the lowest set bit (LLVM cttz); x must not be 0."""
        sig = types.uint64(types.uint64)

        def codegen(context, builder, signature, args):
            return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

        return sig, codegen

    @intrinsic
    def msb(typingctx, x):
        """Index of the highest set bit (63 - LLVM ctlz); x must not be 0."""
        sig = types.uint64(types.uint64)

        def codegen(context, builder, signature, args):
            lz = builder.ctlz(args[0], ir.Constant(ir.IntType(1), 1))
            return builder.sub(ir.Constant(ir.IntType(64), 63), lz)

        return sig, codegen


def entry_point(kernel: Callable) -> Callable:
    """The compiled entry of a kernel declared with one explicit signature, for the search's hot
    calls: it converts the arguments to that signature's types itself, without the dispatcher's
    matching of their types to a signature first (measured with timeit, CPython 3.11: a
    threats_kernel call ~0.2-0.35 us against ~0.55-0.7 us through the dispatcher). Its arguments
    must already be of those kinds (a negative int for a uint64 raises OverflowError, where the
    dispatcher would wrap it). The kernel itself when it has no single compiled overload
    (NUMBA_DISABLE_JIT=1: plain Python)."""
    overloads = getattr(kernel, "overloads", None)
    if not overloads or len(overloads) != 1:
        return kernel
    return next(iter(overloads.values())).entry_point


def _leaper_table(deltas: list[tuple[int, int]]) -> np.ndarray:
    """Attack table for a piece that jumps by the given (file, rank) steps."""
    table = np.zeros(64, dtype=np.uint64)
    for sq in range(64):
        f, r = sq % 8, sq // 8
        bb = 0
        for df, dr in deltas:
            nf, nr = f + df, r + dr
            if 0 <= nf < 8 and 0 <= nr < 8:
                bb |= 1 << (nr * 8 + nf)
        table[sq] = bb
    return table


# Ray directions: the first four increase the square index, the last four decrease it.
_DIRECTIONS = [(0, 1), (1, 1), (1, 0), (-1, 1), (0, -1), (-1, -1), (-1, 0), (1, -1)]


def _ray_table() -> np.ndarray:
    """RAYS[d, sq]: the squares from sq (exclusive) to the edge in direction d."""
    table = np.zeros((8, 64), dtype=np.uint64)
    for d, (df, dr) in enumerate(_DIRECTIONS):
        for sq in range(64):
            f, r = sq % 8 + df, sq // 8 + dr
            bb = 0
            while 0 <= f < 8 and 0 <= r < 8:
                bb |= 1 << (r * 8 + f)
                f, r = f + df, r + dr
            table[d, sq] = bb
    return table


KNIGHT_ATTACKS = _leaper_table([(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)])
KING_ATTACKS = _leaper_table([(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)])
# PAWN_ATTACKS[0] for black pawns, PAWN_ATTACKS[1] for white pawns (python-chess colour order).
PAWN_ATTACKS = np.stack([_leaper_table([(-1, -1), (1, -1)]), _leaper_table([(-1, 1), (1, 1)])])
RAYS = _ray_table()


@kernel("uint64(int64, int64, uint64)")
def ray_attacks(d: int, sq: int | np.int64, occ: np.uint64) -> np.uint64:
    """Attacks along one ray from sq, stopping at (and including) the first blocker."""
    ray = RAYS[d, sq]
    blockers = ray & occ
    if blockers:
        if d < 4:
            b = lsb(blockers)
        else:
            b = msb(blockers)
        ray ^= RAYS[d, b]
    return ray


@kernel("uint64(int64, uint64)")
def bishop_attacks(sq: int | np.int64, occ: np.uint64) -> np.uint64:
    """Diagonal attacks from sq on the given occupancy."""
    return ray_attacks(1, sq, occ) | ray_attacks(3, sq, occ) | ray_attacks(5, sq, occ) | ray_attacks(7, sq, occ)


@kernel("uint64(int64, uint64)")
def rook_attacks(sq: int | np.int64, occ: np.uint64) -> np.uint64:
    """Orthogonal attacks from sq on the given occupancy."""
    return ray_attacks(0, sq, occ) | ray_attacks(2, sq, occ) | ray_attacks(4, sq, occ) | ray_attacks(6, sq, occ)


@kernel
def white_pawn_attacks(pawns: np.uint64) -> np.uint64:
    """All squares attacked by a set of white pawns."""
    return ((pawns & ~FILE_A) << U64(7)) | ((pawns & ~FILE_H) << U64(9))


@kernel
def black_pawn_attacks(pawns: np.uint64) -> np.uint64:
    """All squares attacked by a set of black pawns."""
    return ((pawns & ~FILE_A) >> U64(9)) | ((pawns & ~FILE_H) >> U64(7))
