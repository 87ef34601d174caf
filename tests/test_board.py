"""The reference make/unmake (tests/reference_board.py's PushBoard, the search's before it was compiled) gives
exactly python-chess's positions."""

from __future__ import annotations

import random

import chess

from reference_board import PushBoard
from positions import random_game_boards


def state(board: chess.Board) -> tuple:
    """Every field a position is made of."""
    return (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
            board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK], board.occupied, board.promoted,
            board.turn, board.castling_rights, board.ep_square, board.halfmove_clock, board.fullmove_number)


def test_push_and_pop_match_python_chess_over_random_games() -> None:
    rng = random.Random(5)
    kinds = {"castling": 0, "en passant": 0, "promotion": 0, "capture": 0, "null": 0}
    for board in random_game_boards(games=25, seed=23):
        fast = PushBoard.from_board(board)
        assert state(fast) == state(board)
        before = state(fast)
        moves = list(board.legal_moves)
        if not board.is_check():
            moves.append(chess.Move.null())
        for move in rng.sample(moves, min(6, len(moves))):
            kinds["castling"] += board.is_castling(move)
            kinds["en passant"] += board.is_en_passant(move)
            kinds["promotion"] += move.promotion is not None
            kinds["capture"] += board.is_capture(move)
            kinds["null"] += not move
            reference = board.copy(stack=False)  # the position alone: copying the game's moves cost half the test
            reference.push(move)
            fast.push(move)
            assert state(fast) == state(reference), (board.fen(), move.uci())
            assert set(fast.legal_moves) == set(reference.legal_moves)
            fast.pop()
            assert state(fast) == before
    assert all(count > 0 for count in kinds.values()), kinds


def test_from_board_cleans_castling_rights_like_push_would() -> None:
    # A FEN may claim a right whose rook is gone; python-chess cleans it on the next push.
    board = chess.Board("4k3/8/8/8/8/8/8/4K2R w KQ - 0 1")
    fast = PushBoard.from_board(board)
    assert fast.castling_rights == chess.BB_H1
    assert fast.fen() == "4k3/8/8/8/8/8/8/4K2R w K - 0 1"


def test_deep_line_unwinds_to_the_start() -> None:
    fast = PushBoard.from_board(chess.Board())
    reference = chess.Board()
    rng = random.Random(9)
    for _ in range(120):
        moves = list(reference.legal_moves)
        if not moves:
            break
        move = rng.choice(moves)
        reference.push(move)
        fast.push(move)
        assert state(fast) == state(reference)
    while reference.move_stack:
        reference.pop()
        fast.pop()
        assert state(fast) == state(reference)


def test_chess960_falls_back_to_python_chess() -> None:
    board = chess.Board.from_chess960_pos(518 - 1)
    fast = PushBoard.from_board(board)
    reference = board.copy()
    for uci in ("e2e4", "e7e5", "g1f3", "b8c6"):
        move = chess.Move.from_uci(uci)
        if move not in reference.legal_moves:
            move = next(iter(reference.legal_moves))
        reference.push(move)
        fast.push(move)
        assert state(fast) == state(reference)
    fast.pop()
    reference.pop()
    assert state(fast) == state(reference)
