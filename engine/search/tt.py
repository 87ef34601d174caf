"""Transposition table: two NumPy arrays of packed 64-bit entries.

Layout. The table is `n_buckets` buckets of BUCKET_SIZE (2) entries. An entry is
two uint64 words: `data[i]` packs the search result, `keys[i]` holds the full 64-bit
Zobrist key XOR data[i] (the key check):

    bits  0-15  best move      from | to << 6 | promotion << 12 (0: none)
    bits 16-31  score + 32768  node-relative mate scores (value_to_tt)
    bits 32-47  unused (0)
    bits 48-55  depth          0..255 plies
    bits 56-57  bound          engine.types.Bound (never 0 in a used entry)
    bits 58-63  age            search generation, modulo 64

Each field is read as (entry >> FIELD_SHIFT) & FIELD_MASK (the move needs no shift,
the age no mask: it is the top field); outside the kernel, entry_code() reads the
move and unpack() all four fields, and store() writes an entry.

A bucket is chosen by the key's low 32 bits scaled to the bucket count (so any
size in MB works, not only powers of two).

Sharing. With Threads > 1 the table lives in a multiprocessing.shared_memory block
(shared=True; helper processes attach() to it by name) and every search process
reads and writes it without locks. An entry is two separate 8-byte stores, so a
reader may meet a torn one (one process's data under another's key word, or a
key word not yet rewritten): the XOR makes such an entry fail its key check
(keys[i] ^ data[i] != key), so it is ignored, never trusted (Hyatt's lockless
hashing, as in Stockfish before 2017 and Ethereal). An 8-byte aligned store is
atomic on the machines Python runs on, so a word itself is never torn.

The arrays are read from Python through memoryviews: an element comes back as a
plain int in ~40 ns, and a probe costs ~0.2-0.3 us. A store, whose replacement
policy reads both slots, is a Numba kernel called through its compiled entry
(engine.board.bits.entry_point): ~0.2-0.4 us against ~0.5-0.8 us for the same code in
Python (timeit; through Numba's dispatcher, array arguments cost ~1.3 us a call).

Replacement policy. An entry with the same key is overwritten unless the new
data is a non-exact bound searched 4+ plies shallower in the same generation
(the old best move is kept when the new one is empty). Otherwise the new entry
goes to an empty slot, or else replaces the slot of least value, where value =
depth - 8 * (generations since it was written): old and shallow entries go first.
"""

from __future__ import annotations

import os
from multiprocessing import shared_memory
from typing import Optional

import numpy as np

from garfish.engine.board.bits import entry_point, prefetch
from garfish.engine.kernel import kernel
from garfish.engine.types import EXACT, TB_WIN_BOUND

ENTRY_BYTES = 16
BUCKET_SIZE = 2  # probe and store test the two slots one after the other, not in a loop (faster)

MOVE_MASK = 0xFFFF
SCORE_SHIFT = 16
SCORE_MASK = 0xFFFF
VALUE_OFFSET = 32768  # added to a score to store it unsigned
DEPTH_SHIFT = 48
DEPTH_MASK = 255
BOUND_SHIFT = 56
BOUND_MASK = 3
AGE_SHIFT = 58
AGE_MASK = 63
KEEP_DEPTH_MARGIN = 4
AGE_PENALTY = 8


@kernel
def bucket(keys, key):
    """The first slot of key's bucket (its low 32 bits scaled to the number of buckets)."""
    return np.int64(((key & np.uint64(0xFFFFFFFF)) * np.uint64(keys.shape[0] // BUCKET_SIZE)) >> np.uint64(32)) \
        * BUCKET_SIZE


@kernel
def prefetch_entry(keys, data, key):
    """Have the CPU fetch key's bucket while other work goes on (the search asks as soon as a row is made, before
    its evaluation, and probes at the row's node): the probe then finds it in the cache."""
    i = bucket(keys, key)
    prefetch(keys, i)
    prefetch(data, i)


@kernel("void(uint64[::1], uint64[::1], uint64, int64, int64, int64, int64, int64)", nogil=True)
def store_kernel(keys, data, key, move, score, depth, bound, age):
    """Write an entry for key into the table's arrays by the replacement policy (the module's
    docstring); score node-relative, depth clamped to 0..DEPTH_MASK, age the current generation."""
    i = bucket(keys, key)
    second = i + 1
    depth = min(max(depth, 0), DEPTH_MASK)
    a = data[i]
    b = data[second]
    if keys[i] ^ a == key or keys[second] ^ b == key:
        old = a if keys[i] ^ a == key else b
        if keys[i] ^ a != key:
            i = second
        if old:
            if (bound != EXACT and depth + KEEP_DEPTH_MARGIN < np.int64((old >> np.uint64(DEPTH_SHIFT)) & DEPTH_MASK)
                    and np.int64(old >> np.uint64(AGE_SHIFT)) == age):
                return
            if not move:
                move = np.int64(old & MOVE_MASK)
    elif a:
        # Empty slot first, else the one of least depth - AGE_PENALTY * age difference.
        if not b:
            i = second
        else:
            value_a = (np.int64((a >> np.uint64(DEPTH_SHIFT)) & DEPTH_MASK)
                       - AGE_PENALTY * ((age - np.int64(a >> np.uint64(AGE_SHIFT))) & AGE_MASK))
            value_b = (np.int64((b >> np.uint64(DEPTH_SHIFT)) & DEPTH_MASK)
                       - AGE_PENALTY * ((age - np.int64(b >> np.uint64(AGE_SHIFT))) & AGE_MASK))
            if value_a > value_b:
                i = second
    entry = (np.uint64(move) | (np.uint64(score + VALUE_OFFSET) << np.uint64(SCORE_SHIFT))
             | (np.uint64(depth) << np.uint64(DEPTH_SHIFT)) | (np.uint64(bound) << np.uint64(BOUND_SHIFT))
             | (np.uint64(age) << np.uint64(AGE_SHIFT)))
    data[i] = entry
    keys[i] = key ^ entry




@kernel("uint64(uint64[::1], uint64[::1], uint64)", nogil=True)
def probe_kernel(keys, data, key):
    """The packed entry for key (0 when absent): the bucket's two slots, the first whose key check passes."""
    i = bucket(keys, key)
    if keys[i] ^ data[i] == key:
        return data[i]
    if keys[i + 1] ^ data[i + 1] == key:
        return data[i + 1]
    return np.uint64(0)


@kernel
def value_to_tt(score, ply):
    """Make a mate or tablebase score relative to the node (not the root) before storing it."""
    if score >= TB_WIN_BOUND:
        return score + ply
    if score <= -TB_WIN_BOUND:
        return score - ply
    return score


@kernel
def value_from_tt(score, ply):
    """Turn a node-relative mate or tablebase score from the table back into a root-relative one."""
    if score >= TB_WIN_BOUND:
        return score - ply
    if score <= -TB_WIN_BOUND:
        return score + ply
    return score


@kernel
def entry_fields(entry):
    """(move code, node-relative score, depth, bound) of a packed entry (the module's layout)."""
    return (np.int64(entry & np.uint64(MOVE_MASK)),
            np.int64((entry >> np.uint64(SCORE_SHIFT)) & np.uint64(SCORE_MASK)) - VALUE_OFFSET,
            np.int64((entry >> np.uint64(DEPTH_SHIFT)) & np.uint64(DEPTH_MASK)),
            np.int64((entry >> np.uint64(BOUND_SHIFT)) & np.uint64(BOUND_MASK)))


store_entry = entry_point(store_kernel)  # the compiled entries: no dispatcher on the way
probe_entry = entry_point(probe_kernel)


def entry_code(entry: int) -> int:
    """The move code of a packed entry (engine.board.moves; 0: none)."""
    return entry & MOVE_MASK


def unpack(entry: int) -> tuple[int, int, int, int]:
    """Split a packed entry into (move code, score, depth, bound)."""
    return (
        entry & MOVE_MASK,
        ((entry >> SCORE_SHIFT) & SCORE_MASK) - VALUE_OFFSET,
        (entry >> DEPTH_SHIFT) & DEPTH_MASK,
        (entry >> BOUND_SHIFT) & BOUND_MASK,
    )


def entry_count(megabytes: int) -> int:
    """How many entries (a whole number of buckets) a table of this many megabytes holds."""
    return max(BUCKET_SIZE, megabytes * 1024 * 1024 // ENTRY_BYTES) // BUCKET_SIZE * BUCKET_SIZE


class TranspositionTable:
    """A fixed-size hash table of search results, sized in megabytes; in shared memory when shared."""

    def __init__(self, megabytes: int = 16, shared: bool = False) -> None:
        self.age = 0
        self.shared = shared
        self.block: Optional[shared_memory.SharedMemory] = None  # the shared block, when shared
        self.owner = True  # this process made the block (and unlinks it); False for attach()
        self.resize(megabytes)

    @classmethod
    def attach(cls, name: str, megabytes: int) -> "TranspositionTable":
        """The table of another process's shared block (TranspositionTable(shared=True).block.name)."""
        table = cls.__new__(cls)
        table.age = 0
        table.shared, table.owner = True, False
        block = shared_memory.SharedMemory(name=name)
        if block.size < entry_count(megabytes) * ENTRY_BYTES:
            block.close()
            raise ValueError(f"shared table {name} holds {block.size} bytes, less than {megabytes} MB")
        table._use(block, entry_count(megabytes), megabytes)
        return table

    def resize(self, megabytes: int) -> None:
        """Reallocate (and so clear) the table to use about this many megabytes. The new arrays
        are allocated before the old ones are dropped: on MemoryError (or OSError for shared
        memory) the old table is intact."""
        entries = entry_count(megabytes)
        if self.shared:
            block = shared_memory.SharedMemory(create=True, size=entries * ENTRY_BYTES)
            try:
                # Reserve the pages now: a tmpfs too small would otherwise kill the process
                # (SIGBUS) at the first write to a page it cannot back.
                os.posix_fallocate(block._fd, 0, entries * ENTRY_BYTES)  # type: ignore[attr-defined]
            except OSError as exc:
                release(block, unlink=True)
                raise MemoryError(f"no shared memory for {megabytes} MB ({exc.strerror or exc})") from None
            old = self.block
            self._use(block, entries, megabytes)
            self.owner = True
            if old is not None:
                release(old, unlink=True)
            self.clear()
            return
        keys = np.zeros(entries, dtype=np.uint64)
        data = np.zeros(entries, dtype=np.uint64)
        self._set_arrays(keys, data, megabytes)

    def _use(self, block: shared_memory.SharedMemory, entries: int, megabytes: int) -> None:
        """Take the arrays from a shared block: keys first, then data."""
        keys = np.ndarray(entries, dtype=np.uint64, buffer=block.buf)
        data = np.ndarray(entries, dtype=np.uint64, buffer=block.buf, offset=entries * 8)
        self.block = block
        self._set_arrays(keys, data, megabytes)

    def _set_arrays(self, keys: np.ndarray, data: np.ndarray, megabytes: int) -> None:
        self.n_buckets, self.keys, self.data = len(keys) // BUCKET_SIZE, keys, data
        self._keys = keys.data  # memoryviews: an element comes back as a plain int
        self._data = data.data
        self.megabytes = megabytes

    def close(self) -> None:
        """Give the shared block back (unlinking it if this process made it); a private table
        has nothing to give back. The table is unusable afterwards."""
        if self.block is not None:
            block, self.block = self.block, None
            self._set_arrays(np.zeros(BUCKET_SIZE, dtype=np.uint64), np.zeros(BUCKET_SIZE, dtype=np.uint64), 0)
            release(block, unlink=self.owner)

    def clear(self) -> None:
        """Forget every entry."""
        self.keys.fill(0)
        self.data.fill(0)
        self.age = 0

    def new_search(self) -> None:
        """Start a new generation, so entries of earlier searches age."""
        self.age = (self.age + 1) & AGE_MASK

    def probe(self, key: int) -> int:
        """The packed entry for key (see unpack), or 0 when absent (probe_kernel, the search's own)."""
        return int(probe_entry(self.keys, self.data, key))

    def store(self, key: int, move: int, score: int, depth: int, bound: int) -> None:
        """Record a search result for key (score already node-relative), by the replacement policy
        (store_kernel)."""
        store_entry(self.keys, self.data, key, move, score, depth, bound, self.age)

    def hashfull(self) -> int:
        """How full the table is, in entries per thousand, counting this generation's entries."""
        n = min(1000, len(self._data))
        age = self.age
        used = sum(1 for d in self._data[:n] if d and (d >> AGE_SHIFT) == age)
        return used * 1000 // n


def release(block: shared_memory.SharedMemory, unlink: bool) -> None:
    """Close a shared block (and unlink it: its memory goes when the last process closes it)."""
    try:
        block.close()
    except BufferError:
        pass  # a view of it is still alive somewhere; the mapping goes with the process
    if unlink:
        try:
            block.unlink()
        except FileNotFoundError:
            pass  # already unlinked
