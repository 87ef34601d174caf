"""Transposition table: store/probe, mate scores, replacement, hashfull, resizing."""

from __future__ import annotations

import random

import chess

from garfish.engine.movepick import decode, encode
from garfish.engine.tt import TranspositionTable, unpack
from garfish.engine.types import MATE, Bound, mate_in, mated_in, value_from_tt, value_to_tt


def test_store_then_probe_returns_every_field() -> None:
    tt = TranspositionTable(1)
    key = 0xDEADBEEF12345678
    move = chess.Move.from_uci("e7e8q")
    tt.store(key, encode(move), -123, 45, 9, Bound.LOWER)
    code, score, static_eval, depth, bound = unpack(tt.probe(key))
    assert decode(code) == move and score == -123 and static_eval == 45 and depth == 9 and bound == Bound.LOWER
    assert tt.probe(key ^ 1) == 0


def test_mate_scores_are_ply_relative_in_the_table() -> None:
    tt = TranspositionTable(1)
    key = 42
    # Found at ply 5: we mate at ply 9 (root-relative MATE - 9).
    score_at_node = mate_in(9)
    tt.store(key, 0, value_to_tt(score_at_node, 5), 0, 4, Bound.EXACT)
    stored = unpack(tt.probe(key))[1]
    assert stored == MATE - 4  # mate 4 plies below the node
    # The same position reached at ply 3 is a mate at ply 7 from the root.
    assert value_from_tt(stored, 3) == mate_in(7)
    tt.store(key, 0, value_to_tt(mated_in(10), 6), 0, 4, Bound.EXACT)
    assert value_from_tt(unpack(tt.probe(key))[1], 2) == mated_in(6)


def test_same_key_keeps_deeper_entry_from_this_search_unless_exact() -> None:
    tt = TranspositionTable(1)
    key = 7
    tt.store(key, 100, 10, 0, 12, Bound.LOWER)
    tt.store(key, 0, 20, 0, 3, Bound.UPPER)  # much shallower bound: rejected
    assert unpack(tt.probe(key))[3] == 12
    tt.store(key, 0, 30, 0, 3, Bound.EXACT)  # exact always replaces, keeping the old move
    code, score, _, depth, bound = unpack(tt.probe(key))
    assert (code, score, depth, bound) == (100, 30, 3, Bound.EXACT)


def test_bucket_replaces_the_shallowest_or_oldest_entry() -> None:
    tt = TranspositionTable(1)
    n = tt.n_buckets
    # Three keys in the same bucket: same low 32 bits.
    a, b, c = (1 << 40) | 5, (2 << 40) | 5, (3 << 40) | 5
    assert tt.index(a) == tt.index(b) == tt.index(c)
    tt.store(a, 0, 1, 0, 10, Bound.EXACT)
    tt.store(b, 0, 2, 0, 2, Bound.EXACT)
    tt.store(c, 0, 3, 0, 5, Bound.EXACT)  # evicts b (depth 2), keeps a (depth 10)
    assert tt.probe(a) and tt.probe(c) and not tt.probe(b)
    # Entries from many searches ago lose to fresh ones despite their depth.
    for _ in range(3):
        tt.new_search()
    tt.store(c, 0, 3, 0, 5, Bound.EXACT)  # c rewritten in the new generation
    tt.store(b, 0, 2, 0, 2, Bound.EXACT)  # evicts a: depth 10 but three generations old
    assert tt.probe(b) and tt.probe(c) and not tt.probe(a)
    assert n == tt.n_buckets


def test_hashfull_counts_this_generation_and_clear_empties() -> None:
    tt = TranspositionTable(1)
    rng = random.Random(3)
    assert tt.hashfull() == 0
    for _ in range(tt.n_buckets * 2):
        tt.store(rng.getrandbits(64), 0, 0, 0, 1, Bound.EXACT)
    assert 500 <= tt.hashfull() <= 1000
    tt.new_search()
    assert tt.hashfull() == 0
    tt.clear()
    assert all(tt.probe(k) == 0 for k in (rng.getrandbits(64) for _ in range(100)))


def test_size_follows_megabytes() -> None:
    tt = TranspositionTable(16)
    assert tt.keys.nbytes + tt.data.nbytes == 16 * 1024 * 1024
    tt.resize(2)
    assert tt.keys.nbytes + tt.data.nbytes == 2 * 1024 * 1024
