"""Test positions: random games played from fixed seeds (reproducible, varied), and the perft suites' positions."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Iterator

import chess

from garfish.perft.suites import read_suite, suite_files


def random_game_boards(games: int, seed: int, max_plies: int = 160) -> Iterator[chess.Board]:
    """Every position of `games` random games, as copies with the last move only in their move stack (copying
    the whole game's took half of some tests' time); promotions, castling and en passant included."""
    rng = random.Random(seed)
    for _ in range(games):
        board = chess.Board()
        while board.ply() < max_plies and not board.is_game_over():
            yield board.copy(stack=1)
            moves = list(board.legal_moves)
            # Prefer captures and pawn moves a little, so games reach promotions and endgames.
            weighted = [m for m in moves if board.is_capture(m) or board.piece_type_at(m.from_square) == chess.PAWN]
            board.push(rng.choice(weighted if weighted and rng.random() < 0.5 else moves))
        yield board.copy(stack=1)


def suite_boards(data: Path) -> list[chess.Board]:
    """Every position of the perft suites (standard and Chess960)."""
    boards = [case.board() for path in suite_files(data) for case in read_suite(path)]
    assert len(boards) > 7000 and any(board.chess960 for board in boards)
    return boards
