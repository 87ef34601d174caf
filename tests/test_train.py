"""`garfish train` (train/): parsing, filters, the split by game, the cache, the features."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import chess
import numpy as np
import pytest

from garfish.engine.network import active_features, output_bucket
from garfish.train.data import (
    DataError, Filters, board_of, concatenate, features, load_file, parse_lines, targets, validation_games,
)

PIECE_VALUES = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 300, chess.ROOK: 500, chess.QUEEN: 900}
# A start with pawns about to promote, so that promotions (and captures by promotion) occur.
PROMOTION_START = "r3k3/1P4P1/8/8/8/8/1p4p1/R3K3 w Qq - 0 1"


def material(board: chess.Board) -> int:
    """White's material minus Black's, in centipawns: a score the network can learn."""
    return sum(value * (len(board.pieces(piece, chess.WHITE)) - len(board.pieces(piece, chess.BLACK)))
               for piece, value in PIECE_VALUES.items())


def random_games(games: int, seed: int) -> list[list[str]]:
    """Games of random legal moves as lists of `FEN;SCORE;BEST;RESULT` lines (SCORE: the material)."""
    rng = random.Random(seed)
    played = []
    for number in range(games):
        board = chess.Board(PROMOTION_START if number % 5 == 4 else chess.STARTING_FEN)
        result = rng.choice(["1", "0.5", "0"])
        lines = []
        for _ in range(rng.randint(20, 70)):
            moves = list(board.legal_moves)
            if not moves:
                break
            move = rng.choice(moves)
            lines.append(f"{board.fen()};{material(board)};{move.uci()};{result}")
            board.push(move)
        played.append(lines)
    return played


@pytest.fixture(scope="module")
def games() -> list[list[str]]:
    return random_games(60, seed=5)


@pytest.fixture(scope="module")
def lines(games: list[list[str]]) -> list[str]:
    return [line for game in games for line in game]


@pytest.fixture(scope="module")
def data_file(tmp_path_factory: pytest.TempPathFactory, lines: list[str]) -> Path:
    """The games as a gzip file, as the shared data is stored."""
    path = tmp_path_factory.mktemp("data") / "games.txt.gz"
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    return path


def test_parsing_agrees_with_python_chess(lines: list[str], games: list[list[str]]) -> None:
    positions = parse_lines(lines)
    assert len(positions) == len(lines) and positions.games == len(games)
    game_of_line = [number for number, game in enumerate(games) for _ in game]
    assert positions.game.tolist() == game_of_line
    for row, line in enumerate(lines):
        fen, score, best, result = line.split(";")
        board = chess.Board(fen)
        move = chess.Move.from_uci(best)
        rebuilt = board_of(positions, row)
        assert (rebuilt.board_fen(), rebuilt.turn) == (board.board_fen(), board.turn), line
        assert positions.in_check[row] == board.is_check(), line
        assert positions.noisy[row] == (board.is_capture(move) or move.promotion is not None), line
        assert (positions.score[row], positions.result[row]) == (int(score), {"1": 2, "0.5": 1, "0": 0}[result])
    # The data has what the filters are for.
    assert positions.in_check.any() and positions.noisy.any()
    assert any(len(line.split(";")[2]) == 5 for line in lines)


def test_a_game_restarting_from_the_same_position_is_a_new_game(games: list[list[str]]) -> None:
    """Two games from the start position follow each other: the boundary is the move, not the board."""
    first = games[0]
    positions = parse_lines(first + first)
    assert positions.games == 2 and positions.game.tolist() == [0] * len(first) + [1] * len(first)


@pytest.mark.parametrize("bad, reason", [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1;12;e2e4", "FEN;SCORE;BEST;RESULT"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1;x;e2e4;1", "score 'x'"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1;5;e2e9;1", "not a UCI move"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1;5;e2e4;2", "result '2'"),
    ("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1;5;e2e4;1", "bad piece placement"),
])
def test_a_malformed_line_is_refused_with_its_number(lines: list[str], bad: str, reason: str) -> None:
    with pytest.raises(DataError, match=rf"f.txt:3: .*{reason}"):
        parse_lines(lines[:2] + [bad] + lines[2:5], "f.txt")


def test_filters_drop_checks_noisy_moves_and_large_scores(lines: list[str]) -> None:
    positions = parse_lines(lines)
    check = np.array([chess.Board(line.split(";")[0]).is_check() for line in lines])
    noisy = positions.noisy
    large = np.abs(positions.score) > 300
    assert check.any() and noisy.any() and large.any()
    assert (Filters(max_score=300).mask(positions) == (~check & ~noisy & ~large)).all()
    assert (Filters(keep_checks=True, max_score=300).mask(positions) == (~noisy & ~large)).all()
    assert (Filters(keep_noisy=True, max_score=0).mask(positions) == ~check).all()
    assert Filters(keep_checks=True, keep_noisy=True, max_score=0).mask(positions).all()


def test_validation_games_are_a_seeded_choice_of_whole_games(lines: list[str]) -> None:
    positions = concatenate([parse_lines(lines[:1000]), parse_lines(lines[1000:])])
    chosen = validation_games(positions.games, 0.1, seed=3)
    assert len(chosen) == round(0.1 * positions.games) and len(set(chosen.tolist())) == len(chosen)
    assert (chosen == validation_games(positions.games, 0.1, seed=3)).all()
    assert not (chosen == validation_games(positions.games, 0.1, seed=4)).all()
    held = np.isin(positions.game, chosen)
    for game in range(positions.games):  # each game lies wholly on one side
        assert len(set(held[positions.game == game].tolist())) == 1
    assert validation_games(40, 0.001, seed=0).size == 1


def test_the_cache_is_read_on_the_second_run_and_keyed_by_content(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "plain.txt"
    path.write_text("\n".join(lines[:300]) + "\n")
    cache = tmp_path / "cache"
    source, parsed, cached = load_file(path, cache)
    assert not cached and source.size == path.stat().st_size and len(list(cache.iterdir())) == 1
    _, again, cached = load_file(path, cache)
    assert cached and (again.pieces == parsed.pieces).all() and (again.game == parsed.game).all()
    path.write_text("\n".join(lines[:200]) + "\n")  # new content, new entry
    _, changed, cached = load_file(path, cache)
    assert not cached and len(changed) == 200 and len(list(cache.iterdir())) == 2


def test_features_are_the_networks_active_features_from_the_side_to_move(lines: list[str]) -> None:
    positions = parse_lines(lines)
    inputs = features(positions, buckets=8)
    for row, line in enumerate(lines):
        board = chess.Board(line.split(";")[0])
        count = inputs.count[row]
        assert count == len(board.piece_map()) and (inputs.us[row, count:] == -1).all()
        assert sorted(inputs.us[row, :count].tolist()) == sorted(active_features(board, board.turn))
        assert sorted(inputs.them[row, :count].tolist()) == sorted(active_features(board, not board.turn))
        assert inputs.bucket[row] == output_bucket(count, 8)


def test_targets_are_from_the_side_to_move() -> None:
    start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
    positions = parse_lines([f"{start} w KQkq - 0 1;400;e2e4;1", f"{start} b KQkq - 0 1;400;e7e5;1"])
    white, black = targets(positions, 0.75, 400.0)
    assert white == pytest.approx(0.75 / (1 + np.exp(-1)) + 0.25)
    assert black == pytest.approx(0.75 / (1 + np.exp(1)))
