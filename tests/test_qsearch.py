"""The compiled quiescence search (engine/search/qsearch.py) against the Python paths it replaces: the same
move lists as python-chess's generators on every position of the perft suites and of random games,
the same positions after its moves as PushBoard's, and the same tree as the Python quiescence
search (tests/reference_qsearch.py): score, nodes and deepest ply, compiled and interpreted."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Iterator, Optional

import chess
import numpy as np
import pytest

from garfish.engine.board.captures import capture_list_kernel, quiet_checks_kernel
from garfish.engine.board.captures import evasion_list_kernel
from garfish.engine.board.moves import decode, encode
from garfish.engine.evaluation.classic import evaluate_packed
from garfish.engine.evaluation.evalfile import DEFAULT_EVAL_FILE, load_evaluator
from garfish.engine.evaluation.nnue import NetworkEvaluator
from garfish.engine.board.position import make_pieces
from garfish.engine.search.qsearch import FRAMES, QuiescenceWork, quiescence_kernel
from garfish.engine.types import INF, MAX_LISTED_MOVES, MAX_PLY, bitboards
from conftest import run_interpreted
from positions import random_game_boards, suite_boards
from reference_movepick import capture_moves, evasion_moves, is_good_capture
from reference_board import PushBoard, network_board
from reference_qsearch import Count, reference_qsearch
from test_captures import listed, reference_quiet_checks

NO_BUDGET = 1 << 62


def ep_of(board: chess.Board) -> int:
    """The en passant square as the kernels take it (-1: none)."""
    return -1 if board.ep_square is None else board.ep_square


def with_children(boards: list[chess.Board]) -> Iterator[chess.Board]:
    """Each board, then every position one legal move from it."""
    for board in boards:
        yield board
        for move in board.legal_moves:
            board.push(move)
            yield board.copy(stack=False)
            board.pop()


@pytest.fixture(scope="module")
def suite(data: Path) -> list[chess.Board]:
    """Every position of the perft suites, read once for the module (no test changes them)."""
    return suite_boards(data)


@pytest.fixture(scope="module")
def games() -> list[chess.Board]:
    """Positions from random games, which reach promotions, en passant and endings (made once for the module)."""
    return list(random_game_boards(games=40, seed=49))


def evasion_codes(board: chess.Board, out: np.ndarray) -> list[int]:
    """evasion_list_kernel's codes for a board in check."""
    return out[:evasion_list_kernel(*bitboards(board), ep_of(board), out)].tolist()


# --------------------------------------------------------------------------- the same moves
def test_evasions_are_evasion_moves_on_the_perft_suites_and_games(suite: list[chess.Board],
                                                                 games: list[chess.Board]) -> None:
    out = np.empty(MAX_LISTED_MOVES, dtype=np.int64)
    checked = en_passant = pinned = 0
    for board in (*with_children(suite), *games):
        if not board.is_check():
            continue
        got = evasion_codes(board, out)
        # The Python path it replaces, move for move and in order ...
        assert got == [encode(move) for move in evasion_moves(board)], board.fen()
        # ... and what it is by python-chess alone: every legal move once, the rest pseudo-legal.
        moves = [decode(code) for code in got]
        assert len(set(got)) == len(got) and set(board.legal_moves) <= set(moves), board.fen()
        assert all(board.is_pseudo_legal(move) for move in moves), board.fen()
        checked += 1
        en_passant += any(board.is_en_passant(move) for move in moves)
        pinned += any(not board.is_legal(move) for move in moves)
    assert checked > 10000 and en_passant >= 5 and pinned > 50, (checked, en_passant, pinned)


def test_captures_and_quiet_checks_are_python_chess_moves_on_the_perft_suites(suite: list[chess.Board]) -> None:
    out = np.empty(MAX_LISTED_MOVES, dtype=np.int64)
    positions = captures = checks = 0
    for board in suite:
        if board.is_check():
            continue
        got = listed(out, capture_list_kernel(*bitboards(board), ep_of(board), chess.BB_ALL, out))
        expected = [(move, attacker, victim, is_good_capture(board, move, attacker, victim))
                    for move, attacker, victim in capture_moves(board, chess.BB_ALL, pseudo=True)]
        assert got == expected, board.fen()
        quiet = out[:quiet_checks_kernel(*bitboards(board), out)].tolist()
        assert quiet == [encode(move) for move in reference_quiet_checks(board)], board.fen()
        positions += 1
        captures += len(got)
        checks += len(quiet)
    assert positions > 7000 and captures > 10000 and checks > 1000


def test_a_kernel_move_makes_the_position_searchboard_makes(suite: list[chess.Board],
                                                           games: list[chess.Board]) -> None:
    state = np.zeros((2, 8), dtype=np.uint64)
    out = np.empty(MAX_LISTED_MOVES, dtype=np.int64)
    made = 0
    boards = suite[::10] + games
    for board in boards:
        search = PushBoard.from_board(board)
        if board.is_check():
            codes = evasion_codes(board, out)
        else:
            codes = [code & 0xFFFF for code in out[:capture_list_kernel(*bitboards(board), ep_of(board), chess.BB_ALL,
                                                                         out)].tolist()]
            codes += out[:quiet_checks_kernel(*bitboards(board), out)].tolist()
        state[0] = bitboards(board)[:8]
        for code in codes:
            move = decode(code)
            if not board.is_legal(move):
                continue
            child_ep = make_pieces(state, 0, 1, board.turn, ep_of(board), code)
            search.push(move)
            assert tuple(int(bb) for bb in state[1]) == bitboards(search)[:8], (board.fen(), move.uci())
            assert child_ep == ep_of(search), (board.fen(), move.uci())
            search.pop()
            made += 1
    assert made > 20000


# --------------------------------------------------------------------------- the same tree
def kernel_search(board: chess.Board, alpha: int, beta: int, ply: int, checks: bool,
                  evaluator: Optional[NetworkEvaluator], work: QuiescenceWork,
                  budget: int = NO_BUDGET) -> tuple[int, int, int]:
    """quiescence_kernel from the board, as the search calls it: (score, nodes, deepest ply)."""
    if evaluator is None:
        packed = evaluate_packed(board)
        return quiescence_kernel(*bitboards(board), ep_of(board), packed, alpha, beta, ply, checks, False,
                                 work.no_weights, work.no_params, work.no_accumulators, 0, budget, work.state,
                                 work.frames, work.lists)
    network = network_board(evaluator, board)
    packed = network.evaluate_packed()
    return quiescence_kernel(*bitboards(board), ep_of(board), packed, alpha, beta, ply, checks, True,
                             evaluator.weights, evaluator.params, network.state, network.slot(), budget, work.state,
                             work.frames, work.lists)


def reference_search(board: chess.Board, alpha: int, beta: int, ply: int, checks: bool,
                     evaluator: Optional[NetworkEvaluator]) -> tuple[int, int, int]:
    """The Python quiescence search from the board: (score, nodes, deepest ply)."""
    search = PushBoard.from_board(board) if evaluator is None else network_board(evaluator, board)
    count = Count(deepest=ply)
    score = reference_qsearch(search, alpha, beta, ply, search.evaluate_packed(), count, checks)
    return score, count.nodes, count.deepest


Case = tuple[chess.Board, int, int, int, bool]  # a position, the window (alpha, beta), its ply, quiet checks or not


@pytest.fixture(scope="module")
def cases(data: Path, suite: list[chess.Board], games: list[chess.Board]) -> list[Case]:
    """Positions (in check or not, Chess960 too) with windows, plies and the quiet-check switch (made once for
    the module)."""
    rng = random.Random(50)
    boards = [board for index, board in enumerate(with_children(suite[::40])) if index % 7 == 0]
    boards += [board for index, board in enumerate(games) if index % 3 == 0]
    # Mates in one, often by a quiet check: the first quiescence ply's checks and the mate test.
    mates = [chess.Board(line.split(";")[0].strip()) for line in open(data / "mates" / "mate1.fen") if line.strip()]
    boards += mates[:150]
    made: list[Case] = []
    for board in boards:
        if board.is_game_over() or board.was_into_check():
            continue
        centre = rng.randint(-300, 300)
        width = rng.choice((1, 30, 200, 2 * INF))
        alpha, beta = max(-INF, centre - width // 2), min(INF, centre + width // 2 + 1)
        made.append((board, alpha, beta, rng.choice((1, 5, 30, MAX_PLY - 3)), rng.random() < 0.5))
    return made


@pytest.mark.parametrize("network", [False, True], ids=["classic", "network"])
def test_the_kernel_searches_the_tree_the_python_quiescence_searched(cases: list[Case], network: bool) -> None:
    evaluator = load_evaluator(DEFAULT_EVAL_FILE) if network else None
    work = QuiescenceWork()
    total = in_check = mates = 0
    for board, alpha, beta, ply, checks in cases:
        expected = reference_search(board, alpha, beta, ply, checks, evaluator)
        assert kernel_search(board, alpha, beta, ply, checks, evaluator, work) == expected, \
            (board.fen(), alpha, beta, ply, checks)
        total += expected[1]
        in_check += board.is_check()
        mates += abs(expected[0]) > 30000
    assert len(cases) > 1000 and total > 20000 and in_check > 50 and mates > 5, (len(cases), total, in_check, mates)


def test_the_kernel_stops_at_its_node_budget(cases: list[Case]) -> None:
    work = QuiescenceWork()
    stopped = 0
    for board, alpha, beta, ply, checks in cases[:300]:
        _, nodes, _ = kernel_search(board, alpha, beta, ply, checks, None, work)
        for budget in (1, nodes // 2, nodes, nodes + 1):
            if budget < 1:
                continue
            score, searched, _ = kernel_search(board, alpha, beta, ply, checks, None, work, budget)
            # At most the budget; exactly it when the subtree is larger (the caller's limit is met).
            assert searched == min(budget, nodes), (board.fen(), budget, nodes)
            stopped += budget < nodes
    assert stopped > 100


def test_the_work_arrays_hold_the_deepest_quiescence(cases: list[Case]) -> None:
    """A node at the search's last ply, MAX_PLY - 1, returns its evaluation and searches nothing below it, as the
    Python quiescence search does. So a kernel started at ply p uses the rows 0 .. MAX_PLY - 1 - p of its work
    arrays (a child's row is written only above the last ply), and FRAMES rows hold every search. That bound is
    checked on the constants: no capture sequence comes near MAX_PLY plies, so no search could overflow them."""
    work = QuiescenceWork()
    for board, _, _, _, checks in cases[:200]:
        expected = reference_search(board, -INF, INF, MAX_PLY - 1, checks, None)
        assert kernel_search(board, -INF, INF, MAX_PLY - 1, checks, None, work) == expected, board.fen()
        assert expected[1:] == (1, MAX_PLY - 1), (board.fen(), expected)
    assert FRAMES >= MAX_PLY + 1


def test_compiled_and_interpreted_kernels_agree(suite: list[chess.Board], cases: list[Case]) -> None:
    # The kernels run as plain Python under NUMBA_DISABLE_JIT=1: the evasion lists and whole
    # quiescence searches (the hand-written evaluation; the network's kernel is tested so in test_nnue).
    fens = [board.fen() for board in with_children(suite[::200]) if board.is_check()][:150]
    sample = [(board.fen(), alpha, beta, ply, checks) for board, alpha, beta, ply, checks in cases[::25]]
    code = (
        "import json, sys, chess\n"
        "import numpy as np\n"
        "from garfish.engine.evaluation.classic import evaluate_packed\n"
        "from garfish.engine.board.captures import evasion_list_kernel\n"
        "from garfish.engine.search.qsearch import QuiescenceWork, quiescence_kernel\n"
        "from garfish.engine.types import bitboards\n"
        "fens, cases = json.loads(sys.stdin.read())\n"
        "out = np.empty(256, dtype=np.int64)\n"
        "work = QuiescenceWork()\n"
        "def ep(b): return -1 if b.ep_square is None else b.ep_square\n"
        "lists = []\n"
        "for fen in fens:\n"
        "    b = chess.Board(fen)\n"
        "    lists.append(out[:evasion_list_kernel(*bitboards(b), ep(b), out)].tolist())\n"
        "trees = []\n"
        "for fen, alpha, beta, ply, checks in cases:\n"
        "    b = chess.Board(fen)\n"
        "    trees.append([int(v) for v in quiescence_kernel(*bitboards(b), ep(b), evaluate_packed(b), alpha, beta,"
        " ply, checks, False, work.no_weights, work.no_params, work.no_accumulators, 0, 1 << 62, work.state,"
        " work.frames, work.lists)])\n"
        "print(json.dumps([lists, trees]))\n"
    )
    out = np.empty(MAX_LISTED_MOVES, dtype=np.int64)
    work = QuiescenceWork()
    lists = [evasion_codes(chess.Board(fen), out) for fen in fens]
    trees = [list(kernel_search(chess.Board(fen), alpha, beta, ply, checks, None, work))
             for fen, alpha, beta, ply, checks in sample]
    assert len(fens) > 50 and len(sample) > 40
    assert run_interpreted(code, [fens, sample]) == [lists, trees]
