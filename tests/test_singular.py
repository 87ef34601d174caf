"""Singular extensions (engine/search/tree.py's step 7b), watched in the search run interpreted
(NUMBA_DISABLE_JIT=1, where the kernel's calls go through the module's names and can be spied on):
the test of the TT move never makes the excluded move at its node, leaves the node's TT entry as it
was, and both of its verdicts occur in real searches (a move extended, a node cut); with the step
off no test runs and the tree is another one. test_tree.py checks that the compiled search is the
interpreted one, node for node."""

from __future__ import annotations

import pytest

from conftest import run_interpreted
from garfish.engine.services.bench import BENCH_FENS

SPY = """
import json, sys
import chess
import garfish.engine.search.tree as tree
from garfish.engine import Limits, Searcher
from garfish.engine.search.tt import TranspositionTable

fens, depth, off = json.loads(sys.stdin.read())
if off:
    tree.SINGULAR_DEPTH = tree.SINGULAR_DEPTH_PV = 99
tests = []  # (ply, excluded move) of the singular tests under way
seen = {"tests": 0, "extended": 0, "cut": 0, "made_in_tests": 0}
negamax, make_move = tree.negamax, tree.make_move

def spy_make_move(pos, posi, ply, code, chess960):
    for test_ply, excluded in tests:
        if ply == test_ply:
            assert code != excluded, "the singular test made the excluded move"
            seen["made_in_tests"] += 1
    return make_move(pos, posi, ply, code, chess960)

def spy_negamax(w, depth, alpha, beta, ply, pv_node, null_ok, barrier, excluded):
    if excluded < 0:
        return negamax(w, depth, alpha, beta, ply, pv_node, null_ok, barrier, excluded)
    pos, posi, tt_keys, tt_data = w.pos, w.posi, w.tt_keys, w.tt_data
    key = tree.position_key(pos, posi, ply)
    entry = tree.probe_kernel(tt_keys, tt_data, key)
    assert entry, "a singular test without a TT entry"
    assert beta == alpha + 1 and not pv_node and not null_ok
    tests.append((ply, excluded))
    try:
        value = negamax(w, depth, alpha, beta, ply, pv_node, null_ok, barrier, excluded)
    finally:
        tests.pop()
    assert tree.probe_kernel(tt_keys, tt_data, key) == entry, "the singular test changed its node's TT entry"
    seen["tests"] += 1
    seen["extended" if value < beta else "cut"] += 1
    return value

tree.negamax, tree.make_move = spy_negamax, spy_make_move
searcher = Searcher(TranspositionTable(16))
nodes = []
for fen in fens:
    searcher.tt.clear()
    board = chess.Board(fen)
    result = searcher.search(board, Limits(depth=depth))
    assert result.move in board.legal_moves
    nodes.append(result.nodes)
print(json.dumps({"seen": seen, "nodes": nodes}))
"""

FENS = [BENCH_FENS[i] for i in (0, 1, 2, 4)]
DEPTH = 6


@pytest.mark.slow  # two interpreted searches to depth 6
def test_the_singular_test_skips_its_move_keeps_the_table_and_decides_both_ways() -> None:
    result = run_interpreted(SPY, [FENS, DEPTH, False])
    seen = result["seen"]
    # Tests ran and searched other moves at their nodes, and both verdicts occurred.
    assert seen["tests"] > 0 and seen["made_in_tests"] > 0, seen
    assert seen["extended"] > 0 and seen["cut"] > 0, seen
    # With the step off no test runs, and the search is another tree.
    off = run_interpreted(SPY, [FENS, DEPTH, True])
    assert off["seen"]["tests"] == 0
    assert off["nodes"] != result["nodes"]
