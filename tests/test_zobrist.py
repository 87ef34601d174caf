"""Zobrist keys: the Numba kernel equals python-chess's from-scratch Polyglot hash."""

from __future__ import annotations

import random

import chess
import chess.polyglot

from garfish.engine.board.zobrist import zobrist
from positions import random_game_boards


def test_start_position_key_is_the_published_polyglot_key() -> None:
    # The Polyglot book format's documented key of the start position.
    assert zobrist(chess.Board()) == 0x463B96181691FC9C


def test_key_equals_from_scratch_hash_over_random_games() -> None:
    seen = {"castling_change": 0, "ep": 0, "promotion": 0}
    count = 0
    for board in random_game_boards(games=60, seed=11):
        assert zobrist(board) == chess.polyglot.zobrist_hash(board), board.fen()
        count += 1
        if board.move_stack:
            last = board.peek()
            seen["promotion"] += last.promotion is not None
        seen["ep"] += board.has_legal_en_passant()
        if len(board.move_stack) >= 1:
            before = board.copy()
            before.pop()
            seen["castling_change"] += before.castling_rights != board.castling_rights
    assert count > 3000
    assert all(value > 0 for value in seen.values()), seen


def test_key_distinguishes_side_castling_and_en_passant() -> None:
    board = chess.Board("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3")
    no_ep = board.copy()
    no_ep.ep_square = None
    assert zobrist(board) != zobrist(no_ep)  # d4 pawn can take e3
    no_castle = board.copy()
    no_castle.castling_rights &= ~chess.BB_H1
    assert zobrist(board) != zobrist(no_castle)
    turned = board.copy()
    turned.turn = chess.WHITE
    assert zobrist(board) != zobrist(turned)


def test_chess960_castling_rights_hash_like_python_chess() -> None:
    rng = random.Random(6)
    castled = 0
    for number in rng.sample(range(960), 40):
        board = chess.Board.from_chess960_pos(number)
        for _ in range(60):
            moves = list(board.legal_moves)
            if not moves:
                break
            castles = [m for m in moves if board.is_castling(m)]
            move = castles[0] if castles else rng.choice(moves)
            castled += bool(castles)
            board.push(move)
            assert zobrist(board) == chess.polyglot.zobrist_hash(board), board.fen()
    assert castled > 0
