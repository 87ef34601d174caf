"""The compiled search (engine/search/tree.py) against python-chess and the Python paths it replaced: its
castling moves, make_move, pseudo-legality, draws and move picker move for move, on every
perft-suite position (both chesses) and on game positions; and its searches the same compiled and
interpreted, exact at a node limit."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Iterator

import chess
import numpy as np
import pytest

from garfish.engine import Limits, Searcher
from garfish.engine.board.checks import check_masks_kernel
from garfish.engine.board.moves import MOVES_BY_CODE, decode, encode
from garfish.engine.board.position import (
    BLACK, CASTLING, P_EP, P_HALFMOVE, P_TURN, WHITE, castling_codes, insufficient_material, make_move, pseudo_legal,
)
from garfish.engine.search.movepick import capture_targets
from garfish.engine.search.tree import has_legal_move
from garfish.engine.search.tt import TranspositionTable
from garfish.engine.services.bench import BENCH_FENS
from garfish.engine.types import MAX_LISTED_MOVES, bitboards
from conftest import run_interpreted
from reference_board import PushBoard
from kernel_picker import kernel_work, pick_moves, searched
from positions import random_game_boards, suite_boards
import reference_picker


def chess960_games(games: int, seed: int) -> Iterator[chess.Board]:
    """Every position of random Chess960 games (castling either side, king or rook on its square)."""
    rng = random.Random(seed)
    for _ in range(games):
        board = chess.Board.from_chess960_pos(rng.randrange(960))
        for _ in range(120):
            moves = list(board.legal_moves)
            if not moves or board.is_game_over():
                break
            castles = [move for move in moves if board.is_castling(move)]
            board.push(rng.choice(castles) if castles and rng.random() < 0.5 else rng.choice(moves))
            yield board.copy()


@pytest.fixture(scope="module")
def all_boards(data: Path) -> list[chess.Board]:
    """The perft suites, random games and random Chess960 games (made once for the module; no test changes them)."""
    return suite_boards(data) + list(random_game_boards(games=60, seed=63)) + list(chess960_games(30, 64))


def test_castling_moves_are_python_chess_castling_moves(all_boards: list[chess.Board]) -> None:
    castles = chess960 = 0
    for board in all_boards:
        work = kernel_work(board)
        first, second = castling_codes(work.pos, work.posi, 0, board.chess960)
        got = [code for code in (first, second) if code >= 0]
        expected = [encode(move) for move in board.generate_castling_moves()]
        assert got == expected, board.fen()
        castles += len(got)
        chess960 += len(got) if board.chess960 else 0
    assert castles > 500 and chess960 > 200, (castles, chess960)


def test_make_move_makes_the_position_python_chess_makes(all_boards: list[chess.Board]) -> None:
    made = castled = 0
    for board in all_boards[::6]:
        work = kernel_work(board)
        for move in board.legal_moves:
            make_move(work.pos, work.posi, 0, encode(move), board.chess960)
            child = PushBoard.from_board(board) if not board.chess960 else board.copy()
            child.push(move)  # PushBoard's make in standard chess, python-chess's in Chess960
            expected = (child.pawns, child.knights, child.bishops, child.rooks, child.queens, child.kings,
                        child.occupied_co[chess.BLACK], child.occupied_co[chess.WHITE])
            assert tuple(int(bb) for bb in work.pos[1, :8]) == expected, (board.fen(), move.uci())
            assert (work.pos[1, BLACK] | work.pos[1, WHITE]) == child.occupied
            assert int(work.pos[1, CASTLING]) == child.castling_rights, (board.fen(), move.uci())
            assert work.posi[1, P_EP] == (-1 if child.ep_square is None else child.ep_square), (board.fen(), move.uci())
            assert work.posi[1, P_HALFMOVE] == child.halfmove_clock and work.posi[1, P_TURN] == int(child.turn)
            made += 1
            castled += board.is_castling(move)
    assert made > 50000 and castled > 80, (made, castled)


def test_pseudo_legality_is_python_chess_pseudo_legality(all_boards: list[chess.Board]) -> None:
    # TT moves and killers come from other positions: every code a game can encode is asked.
    rng = random.Random(65)
    codes = sorted(MOVES_BY_CODE)
    asked = yes = 0
    for board in all_boards[::20]:
        work = kernel_work(board)
        scratch = np.zeros(MAX_LISTED_MOVES, dtype=np.int64)
        sample = rng.sample(codes, 200) + [encode(move) for move in board.generate_pseudo_legal_moves()]
        for code in sample:
            got = pseudo_legal(np.int64(code), work.pos, work.posi, np.int64(0), board.chess960, scratch)
            assert got == board.is_pseudo_legal(decode(code)), (board.fen(), decode(code).uci())
            asked += 1
            yes += got
    assert asked > 50000 and yes > 10000, (asked, yes)


@pytest.mark.slow  # 400 random games and a seventh of every position
def test_legal_moves_and_bare_material_are_python_chess_answers(all_boards: list[chess.Board]) -> None:
    rng = random.Random(66)
    boards = all_boards[::7]
    mates = 0
    # Positions without legal moves (mates and stalemates) from random games' ends.
    for board in random_game_boards(games=400, seed=67):
        if board.is_checkmate() or board.is_stalemate():
            boards.append(board)
            mates += 1
    assert mates > 20
    bare = 0
    for board in boards:
        work = kernel_work(board)
        scratch = np.zeros(MAX_LISTED_MOVES, dtype=np.int64)
        arrays = work.arrays
        got = has_legal_move(work.pos, work.posi, np.int64(0), board.chess960, scratch, False, arrays.weights,
                             arrays.params, arrays.accumulators)
        assert got == any(board.generate_legal_moves()), board.fen()
        # Bare material: the same pieces thinned out to at most four.
        pieces = [square for square in chess.SquareSet(board.occupied & ~board.kings)]
        thin = board.copy()
        for square in rng.sample(pieces, max(0, len(pieces) - rng.randint(0, 2))):
            thin.remove_piece_at(square)
        work = kernel_work(thin)
        assert insufficient_material(work.pos, np.int64(0)) == thin.is_insufficient_material(), thin.fen()
        bare += thin.is_insufficient_material()
    assert bare > 200


@pytest.mark.slow  # the Python picker over a quarter of every position
def test_the_picker_is_the_python_picker_move_for_move(all_boards: list[chess.Board]) -> None:
    # The kernel's stages against the Python picker they replaced (tests/reference_picker.py), with
    # TT moves and killers from elsewhere, a history, the search's capture targets and check masks.
    rng = random.Random(68)
    compared = checks = evasions = 0
    for board in all_boards[::4]:
        legal = list(board.legal_moves)
        if not legal:
            continue
        foreign = chess.Move.from_uci("a1h8")
        tt_move = rng.choice(legal + [None, foreign])
        killers = (rng.choice(legal + [None, foreign]), rng.choice(legal + [None]))
        history = np.array([rng.randint(-3000, 3000) for _ in range(8192)], dtype=np.int64)
        work = kernel_work(board)
        targets = int(capture_targets(work.pos, work.posi, np.int64(0)))
        in_check = board.is_check()
        masked = not in_check and rng.random() < 0.3
        masks = None
        if masked:
            masks = tuple(int(mask) for mask in check_masks_kernel(*bitboards(board)))
        got = pick_moves(board, tt_move, killers, history, targets, masks, in_check)
        search_board = PushBoard.from_board(board)
        expected = list(reference_picker.pick_moves(search_board, tt_move, killers, history.copy(), targets, masks,
                                                    in_check))
        assert got == expected, (board.fen(), [m.uci() for m in got], [m.uci() for m in expected])
        compared += 1
        checks += masked
        evasions += in_check
    assert compared > 2000 and checks > 300 and evasions > 100, (compared, checks, evasions)


def test_a_node_limit_is_met_exactly() -> None:
    searcher = Searcher(TranspositionTable(4))
    for fen in BENCH_FENS[:6]:
        board = chess.Board(fen)
        for limit in (1, 37, 500, 4321):
            result = searcher.search(board, Limits(nodes=limit))
            assert result.nodes == limit and result.move in board.legal_moves, (fen, limit, result.nodes)


@pytest.mark.slow  # interpreted searches
def test_compiled_and_interpreted_searches_agree() -> None:
    # The whole search runs as plain Python under NUMBA_DISABLE_JIT=1: the same nodes, score and PV.
    cases = [[BENCH_FENS[i], [], 3, i % 2 == 1, False] for i in (0, 1, 4, 7)]
    cases.append([chess.STARTING_FEN, ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6"], 4, False, False])  # repeats
    cases.append(["bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", [], 3, False, True])
    code = ("import json, sys\nsys.path.insert(0, 'tests')\nfrom kernel_picker import searched\n"
            "print(json.dumps(searched(json.loads(sys.stdin.read()))))\n")
    compiled = searched(cases)
    assert compiled == run_interpreted(code, cases)
    assert all(nodes > 50 for nodes, _, _ in compiled)


@pytest.mark.parametrize("fen", ["8/8/8/8/8/3k4/8/3K4 w - - 0 1", "8/8/8/8/8/3k4/5b2/3K4 w - - 0 1"])
def test_bare_kings_and_minor_pieces_are_draws_in_the_tree(fen: str) -> None:
    result = Searcher(TranspositionTable(4)).search(chess.Board(fen), Limits(depth=6))
    assert result.score == 0
