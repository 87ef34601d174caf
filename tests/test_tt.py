"""Transposition table: store/probe, mate scores, replacement, hashfull, resizing."""

from __future__ import annotations

import random

import chess
import numpy as np

from garfish.engine.board.moves import decode, encode
from garfish.engine.search.tt import (
    BUCKET_SIZE, TranspositionTable, bucket, prefetch_entry, unpack, value_from_tt, value_to_tt,
)
from garfish.engine.types import MATE, Bound, mate_in, mated_in


def test_store_then_probe_returns_every_field() -> None:
    tt = TranspositionTable(1)
    key = 0xDEADBEEF12345678
    move = chess.Move.from_uci("e7e8q")
    tt.store(key, encode(move), -123, 9, Bound.LOWER)
    code, score, depth, bound = unpack(tt.probe(key))
    assert decode(code) == move and score == -123 and depth == 9 and bound == Bound.LOWER
    assert tt.probe(key ^ 1) == 0


def test_mate_scores_are_ply_relative_in_the_table() -> None:
    tt = TranspositionTable(1)
    key = 42
    # Found at ply 5: we mate at ply 9 (root-relative MATE - 9).
    score_at_node = mate_in(9)
    tt.store(key, 0, value_to_tt(score_at_node, 5), 4, Bound.EXACT)
    stored = unpack(tt.probe(key))[1]
    assert stored == MATE - 4  # mate 4 plies below the node
    # The same position reached at ply 3 is a mate at ply 7 from the root.
    assert value_from_tt(stored, 3) == mate_in(7)
    tt.store(key, 0, value_to_tt(mated_in(10), 6), 4, Bound.EXACT)
    assert value_from_tt(unpack(tt.probe(key))[1], 2) == mated_in(6)


def test_same_key_keeps_deeper_entry_from_this_search_unless_exact() -> None:
    tt = TranspositionTable(1)
    key = 7
    tt.store(key, 100, 10, 12, Bound.LOWER)
    tt.store(key, 0, 20, 3, Bound.UPPER)  # much shallower bound: rejected
    assert unpack(tt.probe(key))[2] == 12
    tt.store(key, 0, 30, 3, Bound.EXACT)  # exact always replaces, keeping the old move
    code, score, depth, bound = unpack(tt.probe(key))
    assert (code, score, depth, bound) == (100, 30, 3, Bound.EXACT)


def same_bucket_keys(tt: TranspositionTable, count: int) -> list[int]:
    """count keys that share a bucket, by the rule tt.py documents: the key's low 32 bits
    scaled to the bucket count. (Random keys, so the keys differ in their low bits too.)"""
    rng = random.Random(5)
    buckets: dict[int, list[int]] = {}
    while True:
        key = rng.getrandbits(64)
        keys = buckets.setdefault(((key & 0xFFFFFFFF) * tt.n_buckets) >> 32, [])
        keys.append(key)
        if len(keys) == count:
            return keys


def test_bucket_replaces_the_shallowest_or_oldest_entry() -> None:
    tt = TranspositionTable(1)
    a, b, c = same_bucket_keys(tt, 3)
    tt.store(a, 0, 1, 10, Bound.EXACT)
    tt.store(b, 0, 2, 2, Bound.EXACT)
    assert tt.probe(a) and tt.probe(b)  # a bucket holds two entries
    tt.store(c, 0, 3, 5, Bound.EXACT)  # evicts b (depth 2), keeps a (depth 10)
    assert tt.probe(a) and tt.probe(c) and not tt.probe(b)
    # Entries from many searches ago lose to fresh ones despite their depth.
    for _ in range(3):
        tt.new_search()
    tt.store(c, 0, 3, 5, Bound.EXACT)  # c rewritten in the new generation
    tt.store(b, 0, 2, 2, Bound.EXACT)  # evicts a: depth 10 but three generations old
    assert tt.probe(b) and tt.probe(c) and not tt.probe(a)


def test_keys_of_other_buckets_evict_nothing() -> None:
    tt = TranspositionTable(1)
    a, b = same_bucket_keys(tt, 2)
    tt.store(a, 0, 1, 3, Bound.EXACT)
    tt.store(b, 0, 2, 3, Bound.EXACT)
    rng = random.Random(11)
    bucket = ((a & 0xFFFFFFFF) * tt.n_buckets) >> 32
    others = [k for k in (rng.getrandbits(64) for _ in range(2000))
              if ((k & 0xFFFFFFFF) * tt.n_buckets) >> 32 != bucket]
    for key in others:
        tt.store(key, 0, 0, 20, Bound.EXACT)
    assert unpack(tt.probe(a))[1] == 1 and unpack(tt.probe(b))[1] == 2


def test_hashfull_counts_this_generation_and_clear_empties() -> None:
    tt = TranspositionTable(1)
    rng = random.Random(3)
    assert tt.hashfull() == 0
    keys = [rng.getrandbits(64) for _ in range(tt.n_buckets * 2)]
    for key in keys:
        tt.store(key, 0, 0, 1, Bound.EXACT)
    assert 500 <= tt.hashfull() <= 1000
    tt.new_search()
    assert tt.hashfull() == 0
    stored = [key for key in keys if tt.probe(key)]
    assert len(stored) > len(keys) // 2
    tt.clear()
    assert not any(tt.probe(key) for key in stored)
    assert tt.age == 0


def test_size_follows_megabytes() -> None:
    tt = TranspositionTable(16)
    assert tt.keys.nbytes + tt.data.nbytes == 16 * 1024 * 1024
    tt.resize(2)
    assert tt.keys.nbytes + tt.data.nbytes == 2 * 1024 * 1024


def test_a_prefetch_changes_nothing_and_names_the_bucket_the_store_writes() -> None:
    """prefetch_entry is a hint to the CPU: the arrays are as they were, and the bucket it fetches is the one
    store_kernel writes and probe_kernel reads."""
    table = TranspositionTable(1)
    rng = random.Random(3)
    for _ in range(200):
        key = rng.getrandbits(64)
        before = (table.keys.copy(), table.data.copy())
        prefetch_entry(table.keys, table.data, np.uint64(key))
        assert (table.keys == before[0]).all() and (table.data == before[1]).all()
        slot = bucket(table.keys, np.uint64(key))
        assert 0 <= slot < len(table.keys) - 1 and slot % BUCKET_SIZE == 0
        table.store(key, encode(chess.Move.from_uci("e2e4")), 17, 5, Bound.EXACT)
        assert key in {int(table.keys[i] ^ table.data[i]) for i in (slot, slot + 1)}
        assert unpack(table.probe(key))[1] == 17
