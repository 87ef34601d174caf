"""The frontier's compiled move loop (engine/frontier.py) against the Python loop it replaces at
depth-1 nodes (engine.search's `_negamax` with Searcher.compiled_frontier False): the same tree
(nodes, score, best move and line, and the history and killers it leaves) on the bench positions,
the perft suites' and random games', with both evaluations, at a node limit, compiled and
interpreted; and its history arithmetic against History.update."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Optional

import chess
import numpy as np
import pytest

from garfish.engine import Limits, Searcher
from garfish.engine.bench import BENCH_FENS
from garfish.engine.evalfile import DEFAULT_EVAL_FILE, load_evaluator
from garfish.engine.frontier import _history_update, _tt_move_test
from garfish.engine.history import History, history_bonus
from garfish.engine.moves import MOVE_TABLE, encode
from garfish.engine.nnue import NetworkEvaluator
from garfish.engine.tt import TranspositionTable
from garfish.engine.types import MAX_LISTED_MOVES, bitboards
from conftest import run_interpreted
from positions import random_game_boards, suite_boards

Outcome = tuple[int, int, str, list[str], list[int], list[list[Optional[str]]]]


def search(board: chess.Board, limits: Limits, evaluator: Optional[NetworkEvaluator], compiled: bool) -> Outcome:
    """A fresh searcher's search: nodes, score, move, line, the history table and the killers it left."""
    searcher = Searcher(TranspositionTable(4), evaluator)
    searcher.compiled_frontier = compiled
    result = searcher.search(board, limits)
    assert result.move is not None
    killers = [[None if move is None else move.uci() for move in pair] for pair in searcher.history.killers]
    # The kernels' copy of the killers (their codes) is the killers.
    assert searcher.history.killer_codes == [[-1 if move is None else encode(move) for move in pair]
                                             for pair in searcher.history.killers]
    return (result.nodes, result.score, result.move.uci(), [move.uci() for move in result.pv],
            searcher.history.table.tolist(), killers)


def frontier_cases(data: Path) -> list[chess.Board]:
    """The bench positions, a sample of the perft suites' (Chess960 among them), of random games' and of
    mates in two."""
    boards = [chess.Board(fen) for fen in BENCH_FENS]
    suite = suite_boards(data)
    boards += [board for board in suite[::150] if not board.is_game_over() and board.is_valid()]
    boards += [board for board in list(random_game_boards(games=12, seed=50))[::9] if not board.is_game_over()]
    # Mates in two: frontier nodes in check with no evasion, and mate scores through the table.
    boards += [chess.Board(line.strip()) for line in (data / "mates" / "mate2.fen").read_text().splitlines()[::12]
               if line.strip()]
    return boards


@pytest.mark.parametrize("network", [False, True], ids=["classic", "network"])
def test_the_kernel_searches_the_tree_of_the_python_loop(data: Path, network: bool) -> None:
    evaluator = load_evaluator(DEFAULT_EVAL_FILE) if network else None
    boards = frontier_cases(data)
    nodes = 0
    for board in boards:
        depth = 5 if board.fen() in BENCH_FENS[:8] else 4
        expected = search(board, Limits(depth=depth), evaluator, compiled=False)
        assert search(board, Limits(depth=depth), evaluator, compiled=True) == expected, board.fen()
        nodes += expected[0]
    assert len(boards) > 80 and any(board.chess960 for board in boards) and nodes > 200_000, (len(boards), nodes)


@pytest.mark.parametrize("network", [False, True], ids=["classic", "network"])
def test_draws_by_repetition_and_the_fifty_move_rule_are_the_same(network: bool) -> None:
    # The kernel finds a frontier node's repetitions (against the game's moves and the search's)
    # and fifty-move draws as _negamax does.
    evaluator = load_evaluator(DEFAULT_EVAL_FILE) if network else None
    boards = []
    for fen in BENCH_FENS:
        board = chess.Board(fen)
        if shuffled(board):  # the position repeats in the game's history
            boards.append(board)
        late = chess.Board(fen)
        late.halfmove_clock = 96  # the fifty-move rule inside the search
        boards.append(late)
    for board in boards:
        expected = search(board, Limits(depth=5), evaluator, compiled=False)
        assert search(board, Limits(depth=5), evaluator, compiled=True) == expected, board.fen()
    assert len(boards) > 50 and sum(board.is_repetition(2) for board in boards) > 15


def shuffled(board: chess.Board) -> bool:
    """Play a non-pawn, non-capturing move and a reply there and back (twice), if they are legal:
    whether the position now stands twice in the game's history."""
    for _ in range(2):
        out = [move for move in board.legal_moves if not board.is_capture(move)
               and board.piece_type_at(move.from_square) != chess.PAWN and not board.gives_check(move)]
        for move in out:
            board.push(move)
            replies = [reply for reply in board.legal_moves if not board.is_capture(reply)
                       and board.piece_type_at(reply.from_square) != chess.PAWN and not board.gives_check(reply)]
            back = chess.Move(move.to_square, move.from_square)
            for reply in replies:
                board.push(reply)
                if back in board.legal_moves and not board.gives_check(back):
                    board.push(back)
                    home = chess.Move(reply.to_square, reply.from_square)
                    if home in board.legal_moves:
                        board.push(home)
                        break
                    board.pop()
                board.pop()
            else:
                board.pop()
                continue
            break
    return board.is_repetition(2)


def test_a_node_limit_is_met_exactly(data: Path) -> None:
    # The kernel stops its leaf searches at the nodes left, and the search ends at the limit.
    exact = 0
    for board in frontier_cases(data)[:40:3]:
        for limit in (1_000, 2_345, 6_000):
            expected = search(board, Limits(nodes=limit), None, compiled=False)
            got = search(board, Limits(nodes=limit), None, compiled=True)
            assert got == expected and got[0] <= limit, (board.fen(), limit)
            exact += got[0] == limit
    assert exact > 30, exact


def test_the_history_update_is_history_update() -> None:
    # The kernel's arithmetic on the table, negative values and floor division included.
    rng = random.Random(52)
    for _ in range(300):
        history = History()
        history.table[:] = [rng.randint(-16000, 16000) for _ in range(2 * 64 * 64)]
        table = history.table.copy()
        turn = rng.random() < 0.5
        moves = rng.sample([chess.Move(a, b) for a in range(64) for b in range(64) if a != b], 6)
        best, tried = moves[0], moves[1:rng.randint(1, 5)]
        depth = rng.randint(1, 12)
        history.update(turn, best, tried, depth, 3)
        codes = np.array([encode(move) for move in tried] + [0], dtype=np.int64)
        _history_update(table, turn, encode(best), codes, len(tried), history_bonus(depth))
        assert table.tolist() == history.table.tolist()
        assert history.killers[3][0] == best


def test_the_tt_move_test_is_python_chess_s(data: Path) -> None:
    # A key collision can bring any move from the table: the kernel's test says what python-chess's
    # is_pseudo_legal says, or leaves castling (a king's move by two squares or onto its own piece) to it.
    rng = random.Random(53)
    scratch = np.zeros(MAX_LISTED_MOVES, dtype=np.int64)
    suite = suite_boards(data)
    asked = verdicts = 0
    for board in suite[::60] + list(random_game_boards(games=8, seed=54))[::5]:
        codes = {encode(move) for move in board.generate_pseudo_legal_moves()}
        codes |= {rng.randrange(64 * 64) | rng.choice((0, 0, 0, 2, 5)) << 12 for _ in range(300)}
        pieces = [np.uint64(bb) for bb in bitboards(board)[:8]]
        for code in codes:
            if MOVE_TABLE[code] is None:  # no move has this code (a promotion off the last ranks, ...)
                continue
            verdict = _tt_move_test(np.int64(code), *pieces, board.turn,
                                    np.int64(-1 if board.ep_square is None else board.ep_square), scratch)
            move = MOVE_TABLE[code]
            if verdict < 0:
                assert board.kings & board.occupied_co[board.turn] & chess.BB_SQUARES[move.from_square], move
                asked += 1
            else:
                assert bool(verdict) == board.is_pseudo_legal(move), (board.fen(), move.uci())
                verdicts += verdict
    assert asked > 50 and verdicts > 5000, (asked, verdicts)


def test_compiled_and_interpreted_kernels_agree() -> None:
    # Under NUMBA_DISABLE_JIT=1 the kernels run as plain Python: the same trees as compiled.
    fens = [BENCH_FENS[i] for i in (0, 3, 11)]
    expected = [search(chess.Board(fen), Limits(depth=3), None, compiled=True)[:4] for fen in fens]
    code = (
        "import json, sys, chess\n"
        "from garfish.engine import Limits, Searcher\n"
        "from garfish.engine.tt import TranspositionTable\n"
        "out = []\n"
        "for fen in json.load(sys.stdin):\n"
        "    result = Searcher(TranspositionTable(4)).search(chess.Board(fen), Limits(depth=3))\n"
        "    out.append([int(result.nodes), int(result.score), result.move.uci(), [m.uci() for m in result.pv]])\n"
        "print(json.dumps(out))\n"
    )
    assert run_interpreted(code, fens) == [list(case) for case in expected]
