"""The network's kernels (engine/evaluation/nnue.py): exactly engine.evaluation.network.forward's score, and the very
flags of the hand-written kernel, from scratch and with the accumulators updated ply by ply; and
the search with a network."""

from __future__ import annotations

import dataclasses
import gzip
import random
from itertools import islice
from pathlib import Path
from typing import Iterator

import chess
import numpy as np
import pytest

from conftest import ROOT, data_missing, run_interpreted
from garfish.engine.evaluation.classic import FLAG_BITS, FLAGS_MASK, ILLEGAL_FLAG, evaluate, evaluate_packed
from garfish.engine.evaluation.network import (
    CLASSIC_BASE, CRELU, FEATURES, KING_BUCKETS_4, NO_KING_BUCKETS, SCRELU, Network, forward, write_network,
)
from garfish.engine.evaluation.accumulators import NARROW, narrow_fits
from garfish.engine.evaluation.evalfile import DEFAULT_EVAL_FILE, load_evaluator
from garfish.engine.evaluation.nnue import SCORE_LIMIT, STATE_PLIES, NetworkEvaluator
from garfish.engine.search.driver import SearchInfo, Searcher
from garfish.engine.search.tt import TranspositionTable
from garfish.engine.types import Limits
from positions import random_game_boards
from reference_board import NetworkPushBoard, network_board
from test_network import random_network

# (activation, H, buckets, QA, layout): both activations, four sizes, one and eight buckets; a QA
# above 256, for which SCReLU's products take the kernels' int64 path; and king buckets.
NETWORKS = [(activation, hidden, buckets, 255, NO_KING_BUCKETS) for activation in (CRELU, SCRELU)
            for hidden in (8, 64, 128, 256) for buckets in (1, 8)] \
    + [(CRELU, 64, 8, 1000, NO_KING_BUCKETS), (SCRELU, 64, 8, 1000, NO_KING_BUCKETS)] \
    + [(CRELU, 64, 8, 255, KING_BUCKETS_4), (SCRELU, 128, 8, 255, KING_BUCKETS_4), (CRELU, 8, 1, 255, KING_BUCKETS_4)]
RANDOM_PLAY = [board for index, board in enumerate(random_game_boards(games=24, seed=13)) if index % 2 == 0]
TRAINING_LINES = 25_000  # lines read from the start of each training file ...
TRAINING_EVERY = 20  # ... and every 20th position of them checked from scratch


def make_network(activation: int, hidden: int, buckets: int, qa: int, layout: int = NO_KING_BUCKETS) -> Network:
    """A random network in realistic ranges (test_network's), with this QA and input layout."""
    return dataclasses.replace(random_network(activation, hidden, buckets, seed=hidden * 10 + buckets, layout=layout),
                               qa=qa)


def expected(network: Network, board: chess.Board) -> int:
    """What a network kernel must return: forward()'s score packed with the hand-written kernel's flags."""
    flags = evaluate_packed(board) & FLAGS_MASK
    return flags if flags & ILLEGAL_FLAG else forward(network, board, base=evaluate) << FLAG_BITS | flags


def search_walk(evaluator: NetworkEvaluator, games: int, seed: int) -> Iterator[tuple[NetworkPushBoard, int]]:
    """Random games played on a NetworkBoard as the search plays them: at each position a few
    pseudo-legal moves are made with push_legal and taken back (illegal ones included), and a
    null move; then a legal move is kept. Yields each position with push_legal's result, the
    deepest games past the last slot of accumulators (STATE_PLIES)."""
    rng = random.Random(seed)
    for _ in range(games):
        board = network_board(evaluator, chess.Board())
        yield board, board.evaluate_packed()
        while not board.is_game_over() and len(board._undo) < STATE_PLIES + 20:
            moves = list(board.pseudo_legal_moves)
            for move in rng.sample(moves, min(3, len(moves))):
                packed = board.push_legal(move)
                if packed is not None:
                    yield board, packed
                    board.pop()
            if not board.is_check():
                board.push(chess.Move.null())
                yield board, board.evaluate_packed()
                board.pop()
            packed = board.push_legal(rng.choice(list(board.legal_moves)))
            assert packed is not None
            yield board, packed


@pytest.mark.parametrize(("activation", "hidden", "buckets", "qa", "layout"), NETWORKS)
def test_the_kernels_give_the_reference_score_and_the_hand_written_flags(activation: int, hidden: int,
                                                                          buckets: int, qa: int, layout: int) -> None:
    network = make_network(activation, hidden, buckets, qa, layout)
    evaluator = NetworkEvaluator(network)
    for board in RANDOM_PLAY:
        assert evaluator.evaluate_packed(board) == expected(network, board), board.fen()
    updated = 0
    for board, packed in search_walk(evaluator, games=3, seed=hidden + buckets):
        assert packed == expected(network, board), board.fen()
        updated += 1
    assert len(RANDOM_PLAY) + updated > 2000
    # The networks are realistic: the scores spread out, and none reaches the kernels' limit.
    scores = [forward(network, board) for board in RANDOM_PLAY[::10]]
    assert len(set(scores)) > len(scores) // 2 and max(map(abs, scores)) < SCORE_LIMIT


@pytest.mark.parametrize("activation", [CRELU, SCRELU])
def test_accumulators_are_int16_where_the_network_fits_and_int32_where_it_does_not(activation: int) -> None:
    """params[NARROW]: the realistic test networks and the default network keep int16 accumulators; a
    network whose first hidden unit sums past int16 at the starting position (32 pieces, 1,100 each) keeps
    int32 ones; both score what forward() scores, from scratch and updated move by move."""
    assert NetworkEvaluator(make_network(activation, 64, 8, 255)).params[NARROW] == 1
    assert load_evaluator(DEFAULT_EVAL_FILE).params[NARROW] == 1
    network = make_network(activation, 64, 8, 255)
    w1 = network.w1.copy()
    w1[:, 0] = 1100
    wide = dataclasses.replace(network, w1=w1)
    evaluator = NetworkEvaluator(wide)
    assert evaluator.params[NARROW] == 0 and not narrow_fits(evaluator.weights, FEATURES)
    assert 32 * 1100 > np.iinfo(np.int16).max
    for board in RANDOM_PLAY[:200]:
        assert evaluator.evaluate_packed(board) == expected(wide, board), board.fen()
    walked = 0
    for board, packed in search_walk(evaluator, games=2, seed=5):
        assert packed == expected(wide, board), board.fen()
        walked += 1
    assert walked > 200
    # The same network forced into int16 would be wrong at the start: the test can tell the two apart.
    narrow = NetworkEvaluator(wide)
    narrow.params = narrow.params.copy()
    narrow.params[NARROW] = 1
    assert narrow.evaluate_packed(chess.Board()) != expected(wide, chess.Board())


@pytest.mark.parametrize("activation", [CRELU, SCRELU])
@pytest.mark.parametrize("layout", [NO_KING_BUCKETS, KING_BUCKETS_4])
def test_a_position_and_its_colour_mirror_get_the_same_score(activation: int, layout: int) -> None:
    evaluator = NetworkEvaluator(make_network(activation, 64, 8, 255, layout))
    for board in RANDOM_PLAY:
        assert evaluator.evaluate(board.mirror()) == evaluator.evaluate(board), board.fen()
    for board, packed in search_walk(evaluator, games=1, seed=5):
        # The mirror from scratch, the position with its accumulators updated.
        assert evaluator.evaluate_packed(board.mirror()) == packed, board.fen()


@pytest.mark.parametrize("activation", [CRELU, SCRELU])
def test_a_network_on_the_classic_base_adds_the_hand_written_evaluation(activation: int) -> None:
    network = dataclasses.replace(make_network(activation, 64, 8, 255), base=CLASSIC_BASE)
    evaluator = NetworkEvaluator(network)
    assert "added to the hand-written evaluation" in evaluator.describe()
    plain = NetworkEvaluator(dataclasses.replace(network, base=0))
    for board in RANDOM_PLAY:
        packed = evaluator.evaluate_packed(board)
        assert packed == expected(network, board), board.fen()
        assert packed >> FLAG_BITS == plain.evaluate(board) + (evaluate_packed(board) >> FLAG_BITS), board.fen()
        assert evaluator.evaluate(board.mirror()) == packed >> FLAG_BITS, board.fen()
    updated = 0
    for board, packed in search_walk(evaluator, games=3, seed=activation):
        assert packed == expected(network, board), board.fen()
        updated += 1
    assert updated > 500


def test_illegal_positions_get_the_hand_written_flags_and_no_score() -> None:
    evaluator = NetworkEvaluator(make_network(SCRELU, 64, 8, 255))
    illegal = 0
    for board in RANDOM_PLAY[::4]:
        for move in board.pseudo_legal_moves:
            if not board.is_legal(move):
                board.push(move)
                flags = evaluate_packed(board) & FLAGS_MASK
                assert flags & ILLEGAL_FLAG and evaluator.evaluate_packed(board) == flags, board.fen()
                board.pop()
                illegal += 1
    assert illegal > 20


def test_the_score_is_held_below_the_tablebase_range() -> None:
    network = make_network(CRELU, 8, 1, 255)
    board = chess.Board()
    for b2, score in ((2 ** 31 - 1, SCORE_LIMIT), (-2 ** 31, -SCORE_LIMIT)):
        huge = NetworkEvaluator(dataclasses.replace(network, b2=network.b2 * 0 + b2))
        assert abs(forward(huge.network, board)) > SCORE_LIMIT
        assert huge.evaluate(board) == score
        assert huge.search_board(board).evaluate_packed() >> FLAG_BITS == score


def test_chess960_boards_update_their_accumulators_too() -> None:
    # python-chess makes a Chess960 board's moves (its move stack gives the ply).
    network = make_network(SCRELU, 64, 8, 255)
    evaluator = NetworkEvaluator(network)
    board = network_board(evaluator, chess.Board.from_chess960_pos(518 - 100))
    board.evaluate_packed()
    rng = random.Random(2)
    for _ in range(60):
        packed = board.push_legal(rng.choice(list(board.legal_moves)))
        assert packed == expected(network, board), board.fen()
    assert len(board.move_stack) == 60


@pytest.fixture(scope="module")
def training_games(data: Path) -> list[list[tuple[str, chess.Move]]]:
    """Positions of the shared training data (train/*.txt.gz, the first TRAINING_LINES lines of
    each file), each FEN with the move played, as games: runs of lines where each line's
    position is the one before's after its move."""
    files = sorted((data / "train").glob("*.txt.gz"))
    if not files:
        data_missing(f"no training positions (*.txt.gz) in {data / 'train'}")
    games: list[list[tuple[str, chess.Move]]] = []
    for path in files:
        board = None
        with gzip.open(path, "rt") as lines:
            for line in islice(lines, TRAINING_LINES):
                fen, _, best, _ = line.strip().split(";")
                if board is None or board.fen() != fen:
                    games.append([])
                    board = chess.Board(fen)
                move = chess.Move.from_uci(best)
                games[-1].append((fen, move))
                board.push(move)
    return games


@pytest.mark.parametrize(("activation", "hidden", "buckets", "layout"),
                         [(CRELU, 128, 8, NO_KING_BUCKETS), (SCRELU, 256, 8, NO_KING_BUCKETS),
                          (SCRELU, 64, 1, NO_KING_BUCKETS), (SCRELU, 128, 8, KING_BUCKETS_4)])
def test_the_kernels_are_exact_on_the_training_positions(training_games: list[list[tuple[str, chess.Move]]],
                                                         activation: int, hidden: int, buckets: int,
                                                         layout: int) -> None:
    network = make_network(activation, hidden, buckets, 255, layout)
    evaluator = NetworkEvaluator(network)
    fens = [fen for game in training_games for fen, _ in game]
    for fen in fens[::TRAINING_EVERY]:
        board = chess.Board(fen)
        assert evaluator.evaluate_packed(board) == expected(network, board), fen
    # Every tenth game played through a NetworkBoard, its accumulators updated move by move.
    updated = 0
    for game in training_games[::10]:
        walk = network_board(evaluator, chess.Board(game[0][0]))
        assert walk.evaluate_packed() == expected(network, walk)
        for _, move in game[:-1]:
            assert walk.push_legal(move) == expected(network, walk), walk.fen()
            updated += 1
    assert len(fens) // TRAINING_EVERY >= 2000 and updated >= 2000


def test_compiled_and_interpreted_kernels_agree() -> None:
    # The kernels run as plain Python under NUMBA_DISABLE_JIT=1: the same results as forward().
    moves = [move.uci() for move in _random_game(seed=4, plies=40)]
    code = (
        "import json, sys, chess\n"
        "sys.path.insert(0, 'tests')\n"
        "from garfish.engine.evaluation.network import forward\n"
        "from garfish.engine.evaluation.nnue import NetworkEvaluator\n"
        "from test_nnue import make_network\n"
        "from reference_board import network_board\n"
        "moves = json.loads(sys.stdin.read())\n"
        "results = []\n"
        "for activation, qa, layout in ((0, 255, 0), (1, 255, 0), (1, 1000, 0), (1, 255, 1)):\n"
        "    evaluator = NetworkEvaluator(make_network(activation, 4, 2, qa, layout))\n"
        "    board = network_board(evaluator, chess.Board())\n"
        "    results.append([int(board.evaluate_packed()), evaluator.evaluate_packed(board)])\n"
        "    for uci in moves:\n"
        "        results.append([int(board.push_legal(chess.Move.from_uci(uci))), evaluator.evaluate_packed(board)])\n"
        "print(json.dumps(results))\n"
    )
    results = iter(run_interpreted(code, moves))
    for activation, qa, layout in ((CRELU, 255, NO_KING_BUCKETS), (SCRELU, 255, NO_KING_BUCKETS),
                                   (SCRELU, 1000, NO_KING_BUCKETS), (SCRELU, 255, KING_BUCKETS_4)):
        network = make_network(activation, 4, 2, qa, layout)
        board = chess.Board()
        assert next(results) == [expected(network, board)] * 2
        for uci in moves:
            board.push_uci(uci)
            assert next(results) == [expected(network, board)] * 2, board.fen()


def _random_game(seed: int, plies: int) -> list[chess.Move]:
    """The moves of a random game (at most `plies`)."""
    rng = random.Random(seed)
    board = chess.Board()
    moves = []
    while len(moves) < plies and not board.is_game_over():
        move = rng.choice(list(board.legal_moves))
        moves.append(move)
        board.push(move)
    return moves


# --------------------------------------------------------------------------- searching with a network
def constant_network(score: int) -> Network:
    """A network that scores every position `score` for the side to move (b2 on the SCALE = QA * QB scale)."""
    return Network(CRELU, 255, 64, 255 * 64, np.zeros((FEATURES, 1), dtype=np.int16), np.zeros(1, dtype=np.int16),
                   np.zeros((1, 2), dtype=np.int16), np.array([score], dtype=np.int32), f"constant {score}")


def material_network() -> Network:
    """A network that scores a position 100 cp a pawn of material ahead (pawn 1, knight and bishop 3,
    rook 5, queen 9) for the side to move: one hidden unit counts each side's own material."""
    w1 = np.zeros((FEATURES, 1), dtype=np.int16)
    for piece_type, pawns in zip(chess.PIECE_TYPES, (1, 3, 3, 5, 9, 0)):
        w1[(piece_type - 1) * 64:piece_type * 64, 0] = pawns  # the perspective's own pieces only
    # out = own material - the other side's; SCALE / (QA * QB) = 100.
    return Network(CRELU, 255, 1, 25500, w1, np.zeros(1, dtype=np.int16), np.array([[1, -1]], dtype=np.int16),
                   np.zeros(1, dtype=np.int32), "material")


def test_the_test_networks_compute_what_they_say() -> None:
    board = chess.Board("4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1")
    assert forward(material_network(), board) == -800
    board.turn = chess.BLACK
    assert forward(material_network(), board) == 800
    assert forward(constant_network(1234), board) == forward(constant_network(1234), chess.Board()) == 1234


def test_a_search_with_a_network_scores_with_it() -> None:
    # A queen hangs: taking it leaves a pawn against nothing, 100 cp by the material network; the
    # hand-written evaluation values the same ending otherwise.
    board = chess.Board("4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1")
    result = Searcher(TranspositionTable(), NetworkEvaluator(material_network())).search(board, Limits(depth=3))
    assert result.move == chess.Move.from_uci("e4d5") and result.score == 100
    classic = Searcher(TranspositionTable()).search(board, Limits(depth=3))
    assert classic.move == result.move and classic.score != 100
    # Every static evaluation is 1234 for the side to move: the root's score is -1234 after one
    # ply, 1234 after two; every info line says so.
    infos: list[SearchInfo] = []
    searcher = Searcher(TranspositionTable(), NetworkEvaluator(constant_network(1234)))
    result = searcher.search(chess.Board(), Limits(depth=2), on_info=infos.append)
    assert [(info.depth, info.score) for info in infos] == [(1, -1234), (2, 1234)]
    assert result.move in chess.Board().legal_moves and result.score == 1234


def test_a_searcher_evaluates_with_the_evaluator_it_is_handed() -> None:
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    searcher = Searcher(TranspositionTable(), NetworkEvaluator(constant_network(-77)))
    assert searcher.search(board, Limits(depth=1)).score == 77
    searcher.evaluator = None
    classic = Searcher(TranspositionTable()).search(board, Limits(depth=1)).score
    assert searcher.search(board, Limits(depth=1)).score == classic
    searcher.evaluator = NetworkEvaluator(constant_network(-77))
    assert searcher.search(board, Limits(depth=1)).score == 77


def test_a_network_search_plays_legal_moves_in_random_and_chess960_games() -> None:
    evaluator = NetworkEvaluator(make_network(SCRELU, 32, 8, 255))
    searcher = Searcher(TranspositionTable(), evaluator)
    for board in (chess.Board(), chess.Board.from_chess960_pos(123)):
        rng = random.Random(7)
        while not board.is_game_over() and board.ply() < 30:
            result = searcher.search(board, Limits(nodes=300))
            assert result.move in board.legal_moves, board.fen()
            board.push(result.move if rng.random() < 0.5 else rng.choice(list(board.legal_moves)))


def test_python_api_network_example(capsys: pytest.CaptureFixture[str]) -> None:
    # The second example of docs/python-api.md, as it stands, on the engine of the first: the
    # engine's default network, then the hand-written evaluation.
    from garfish.engine.engine import Engine
    from garfish.engine.evaluation.evalfile import CLASSIC, DEFAULT_EVAL_FILE, load_evaluator

    page = (ROOT / "docs" / "python-api.md").read_text()
    second = page.index("```python", page.index("```python") + 1) + len("```python")
    code = page[second:page.index("```", second)]
    engine = Engine(hash_mb=1)
    namespace: dict = {"chess": chess, "engine": engine}
    exec(compile(code, "docs/python-api.md (network)", "exec"), namespace)
    evaluator = load_evaluator(DEFAULT_EVAL_FILE)
    assert evaluator is not None
    assert capsys.readouterr().out.splitlines() == [f"the network {evaluator.describe()}",
                                                    str(evaluator.evaluate(chess.Board()))]
    assert engine.evaluator is None and engine.eval_file == CLASSIC
