"""`garfish train` (train/): parsing, filters, the split by game, the cache, the features, and with
PyTorch the training run: reproducible bytes, the integer forward pass equal to
engine.evaluation.network.forward, a falling loss, the files written, resuming; without it, the message."""

from __future__ import annotations

import dataclasses
import gzip
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import chess
import numpy as np
import pytest

from conftest import ROOT
from garfish.engine.evaluation.classic import evaluate
from garfish.engine.evaluation.network import (
    CLASSIC_BASE, CRELU, KING_BUCKETS_4, NO_BASE, NO_KING_BUCKETS, SCRELU, active_features, feature_index, forward,
    king_view, output_bucket, read_network,
)
from garfish.train.cli import main as train_main
from garfish.train.data import (
    DataError, Filters, Positions, board_of, concatenate, could_castle, features, load_file, men, parse_lines,
    tablebase_results, targets, validation_games,
)

# A byte's bits in reverse order: a rank of a bitboard seen in a mirror between the a and h files.
BYTE_MIRROR = np.array([int(f"{byte:08b}"[::-1], 2) for byte in range(256)], dtype=np.uint8)


def mirrored(positions: Positions) -> Positions:
    """The positions with the a and h files swapped (every bitboard's bytes bit-reversed), made with
    NumPy as the trainer made its mirrors before train.rows: the reference for the kernel's mirrors."""
    pieces = np.ascontiguousarray(positions.pieces, dtype="<u8")
    flipped = BYTE_MIRROR[pieces.view(np.uint8)].view("<u8").reshape(pieces.shape)
    return dataclasses.replace(positions, pieces=flipped.astype(np.uint64))


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


@pytest.mark.parametrize("layout", [NO_KING_BUCKETS, KING_BUCKETS_4])
def test_features_are_the_networks_active_features_from_the_side_to_move(lines: list[str], layout: int) -> None:
    positions = parse_lines(lines)
    inputs = features(positions, buckets=8, layout=layout)
    for row, line in enumerate(lines):
        board = chess.Board(line.split(";")[0])
        count = inputs.count[row]
        assert count == len(board.piece_map()) and (inputs.us[row, count:] == -1).all()
        assert sorted(inputs.us[row, :count].tolist()) == sorted(active_features(board, board.turn, layout))
        assert sorted(inputs.them[row, :count].tolist()) == sorted(active_features(board, not board.turn, layout))
        assert inputs.bucket[row] == output_bucket(count, 8)
    if layout == KING_BUCKETS_4:  # every bucket is used, by both sides
        used = np.concatenate([inputs.us[inputs.us >= 0], inputs.them[inputs.them >= 0]]) // 768
        assert set(used.tolist()) == {0, 1, 2, 3}


@pytest.mark.parametrize("layout", [NO_KING_BUCKETS, KING_BUCKETS_4])
def test_a_rows_features_come_in_plane_then_square_order(lines: list[str], layout: int) -> None:
    # The order the model sums a position's inputs in, kept as the trainer has always had it, so
    # that a run on the same data repeats weight for weight across versions of the trainer.
    positions = parse_lines(lines)
    inputs = features(positions, buckets=1, layout=layout)
    for row in range(0, len(lines), 3):
        board = board_of(positions, row)
        views = {side: king_view(layout, side, board.king(side)) for side in chess.COLORS}
        expected: dict[chess.Color, list[int]] = {side: [] for side in chess.COLORS}
        for plane, symbol in enumerate("PNBRQKpnbrqk"):
            piece = chess.Piece.from_symbol(symbol)
            for square in chess.scan_forward(int(positions.pieces[row, plane])):
                for side, (offset, flip) in views.items():
                    expected[side].append(offset + feature_index(side, piece.color, piece.piece_type, square ^ flip))
        count = inputs.count[row]
        assert inputs.us[row, :count].tolist() == expected[board.turn]
        assert inputs.them[row, :count].tolist() == expected[not board.turn]


@pytest.mark.parametrize("layout", [NO_KING_BUCKETS, KING_BUCKETS_4])
def test_chosen_rows_and_their_mirrors_have_the_features_of_the_mirrored_positions(lines: list[str],
                                                                                   layout: int) -> None:
    # What a training batch gets (rows of the positions read, some as file mirrors) is what the
    # positions themselves, mirrored where asked, give: the trainer keeps no inputs in advance.
    positions = parse_lines(lines)
    rng = np.random.default_rng(7)
    rows = rng.choice(len(positions), 300)
    flip = rng.random(300) < 0.5
    chosen = features(positions, 8, CLASSIC_BASE, layout, rows, flip)
    for mirror in (False, True):
        picked = rows[flip == mirror]
        part = positions.select(picked)
        expected = features(mirrored(part) if mirror else part, 8, CLASSIC_BASE, layout)
        for name in ("us", "them", "count", "bucket", "base"):
            assert (getattr(chosen, name)[flip == mirror] == getattr(expected, name)).all(), name
    assert (chosen.base[~flip] == [evaluate(board_of(positions, row)) for row in rows[~flip]]).all()


def test_a_bad_position_is_refused_with_the_reason(lines: list[str]) -> None:
    positions = parse_lines(lines[:5])
    crowded = positions.select(np.arange(5))
    crowded.pieces[3, 0] = np.uint64(0x0000FFFFFFFF0000)  # 32 white pawns more
    with pytest.raises(DataError, match="a position with [0-9]+ pieces"):
        features(crowded, 1)
    kingless = positions.select(np.arange(5))
    kingless.pieces[2, 5] = np.uint64(0)
    with pytest.raises(DataError, match="exactly one king"):
        features(kingless, 1, layout=KING_BUCKETS_4)


def test_mirrors_swap_the_wings_and_keep_the_labels(lines: list[str]) -> None:
    positions = parse_lines(lines)
    flipped = mirrored(positions)
    for row in range(len(positions)):
        board, mirror = board_of(positions, row), board_of(flipped, row)
        assert mirror.board_fen() == board.transform(chess.flip_horizontal).board_fen()
        assert mirror.turn == board.turn
    assert (flipped.score == positions.score).all() and (flipped.result == positions.result).all()
    assert (mirrored(flipped).pieces == positions.pieces).all()


@pytest.mark.parametrize("placement, castle", [
    ("r3k2r/8/8/8/8/8/8/R3K2R", True),   # both sides could
    ("4k2r/8/8/8/8/8/8/4K3", True),      # Black's king and h8 rook are home
    ("r2k3r/8/8/8/8/8/8/R4K1R", False),  # kings moved
    ("4k3/8/8/8/8/8/8/1R2K1R1", False),  # rooks off their corners
    ("4k3/8/8/8/8/8/8/R3K2r", True),     # a rook on a1
])
def test_could_castle_needs_a_king_and_a_rook_at_home(placement: str, castle: bool) -> None:
    positions = parse_lines([f"{placement} w - - 0 1;0;a2a3;0.5"])
    assert could_castle(positions).tolist() == [castle]


def test_targets_are_from_the_side_to_move() -> None:
    start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
    positions = parse_lines([f"{start} w KQkq - 0 1;400;e2e4;1", f"{start} b KQkq - 0 1;400;e7e5;1"])
    white, black = targets(positions, 0.75, 400.0)
    assert white == pytest.approx(0.75 / (1 + np.exp(-1)) + 0.25)
    assert black == pytest.approx(0.75 / (1 + np.exp(1)))


def test_bad_options_are_refused_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert train_main([str(tmp_path / "missing.txt")]) == 2
    assert "not a file" in capsys.readouterr().err
    assert train_main([str(tmp_path), "--hidden", "0"]) == 2
    assert "--hidden must be" in capsys.readouterr().err


BLOCK_TORCH = """
import sys
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "torch":
            raise ImportError("No module named 'torch' (blocked by the test)")
sys.meta_path.insert(0, Blocker())
from garfish.cli import main
sys.exit(main(["train", sys.argv[1], "-o", sys.argv[2]]))
"""


def test_without_torch_the_command_says_how_to_install_it(data_file: Path, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-P", "-c", BLOCK_TORCH, str(data_file), str(tmp_path / "nets")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert "pip install torch==2.13.0" in proc.stderr and "pip install -e .[train]" in proc.stderr
    assert proc.stdout == "" and not (tmp_path / "nets").exists()


# Games that end in the tables, as `FEN;SCORE;BEST;RESULT` lines (RESULT as the file has it, not the tables).
ENDGAMES = [
    # A: KRP v KP, the rook takes the pawn: KRP v K (4 men, just after a capture), a win, drawn in the file
    "8/8/4k3/8/8/3p4/7P/R5K1 w - - 0 1;300;a1d1;0.5", "8/8/4k3/8/8/3p4/7P/3R2K1 b - - 1 1;310;e6e5;0.5",
    "8/8/8/4k3/8/3p4/7P/3R2K1 w - - 2 2;320;d1d3;0.5", "8/8/8/4k3/8/3R4/7P/6K1 b - - 0 2;700;e5e4;0.5",
    # B: the king takes the last pawn: KN v KN, a draw, won in the file
    "8/4k3/8/8/8/3n4/7p/2N3K1 w - - 0 1;50;g1h2;1", "8/4k3/8/8/8/3n4/7K/2N5 b - - 0 1;20;e7e6;1",
    # C: eight men throughout: not in the tables
    "r3k3/pp6/8/8/8/8/PP6/R3K3 w - - 0 1;0;a2a3;0.5", "r3k3/pp6/8/8/8/P7/1P6/R3K3 b - - 0 1;0;a7a6;0.5",
    # D: KQ v K after the capture, a win, won in the file
    "8/8/4k3/8/8/8/7p/Q5K1 w - - 0 1;900;g1h2;1", "8/8/4k3/8/8/8/7K/Q7 b - - 0 1;950;e6d5;1",
    # E: KRR v K after a capture, but the king and a rook at home (a castling right, perhaps: not probed), then
    # no capture (the fifty-move counter is not 0): not probed
    "4k3/8/8/8/8/8/7p/R3K2R w - - 0 1;800;h1h2;0.5", "4k3/8/8/8/8/8/7R/R3K3 b - - 0 1;900;e8d8;0.5",
    "3k4/8/8/8/8/8/7R/R3K3 w - - 1 2;900;a1a8;0.5",
]


def test_games_that_reach_the_tables_take_their_result(data: Path) -> None:
    """A game's first position in the 3-4-man tables, just after a capture and with no castling right, gives its
    result to every row of the game; other games keep theirs."""
    from garfish.engine.services.syzygy import Tablebases

    positions = parse_lines(ENDGAMES)
    assert positions.games == 5
    assert men(positions).tolist() == [5, 5, 5, 4, 5, 4, 8, 8, 4, 3, 5, 4, 4]
    tables = Tablebases(str(data / "syzygy"))
    try:
        found = tablebase_results(positions, tables.probe_wdl, tables.max_pieces)
    finally:
        tables.close()
    assert (found.reached, found.changed, found.changed_positions) == (3, 2, 6)
    assert found.result.tolist() == [2, 2, 2, 2, 1, 1, 1, 1, 2, 2, 1, 1, 1]
    assert positions.result.tolist() == [1, 1, 1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 1]  # the positions are not changed


# --- With PyTorch --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def torch() -> Any:
    """PyTorch, for a test marked `extra("train")` (which the mark skips, or fails, without the extra)."""
    import torch

    return torch


def train(data: Path, output: Path, *options: str) -> Path:
    """Run `garfish train` in-process on a tiny network; the network file written."""
    args = [str(data), "-o", str(output), "--no-cache", "--hidden", "8", "--batch-size", "256",
            "--val-fraction", "0.1", *options]
    assert train_main(args) == 0
    (network,) = output.glob("*.gfnn")
    return network


@pytest.mark.extra("train")
def test_training_writes_the_network_its_curve_and_checkpoint_and_repeats_byte_for_byte(
        torch: Any, data_file: Path, tmp_path: Path) -> None:
    output = tmp_path / "nets"
    first = train(data_file, output, "--epochs", "2", "--seed", "7").read_bytes()
    # The same command again (the description holds it, output folder included).
    output.rename(tmp_path / "first")
    path = train(data_file, output, "--epochs", "2", "--seed", "7")
    assert path.read_bytes() == first
    assert path.with_suffix(".png").read_bytes().startswith(b"\x89PNG")
    network = read_network(path)
    assert (network.hidden, network.buckets, network.activation) == (8, 1, SCRELU)
    assert "games.txt.gz" in network.description and "seed 7" in network.description
    assert "--epochs 2 --seed 7" in network.description and "validation" in network.description
    state = torch.load(path.with_suffix(".pt"), weights_only=True)
    assert state["epoch"] == 2 and len(state["history"]["val"]) == 2
    assert not (output / "checkpoint.pt").exists()
    other = read_network(train(data_file, tmp_path / "c", "--epochs", "2", "--seed", "8"))
    assert not (other.w1 == network.w1).all()


@pytest.mark.extra("train")
def test_a_run_with_syzygy_says_what_the_tables_changed(torch: Any, data: Path, lines: list[str], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """--syzygy DIR: the run says how many games reached the tables and how many took their result, and the
    network's description says its results are the tables'; a missing folder is refused before any work."""
    data_file = tmp_path / "games.txt"
    data_file.write_text("\n".join(lines + ENDGAMES) + "\n")
    network = read_network(train(data_file, tmp_path / "nets", "--epochs", "1", "--syzygy", str(data / "syzygy")))
    out = capsys.readouterr().out
    from garfish.engine.services.syzygy import Tablebases

    tables = Tablebases(str(data / "syzygy"))
    try:
        found = tablebase_results(parse_lines(lines + ENDGAMES), tables.probe_wdl, tables.max_pieces)
    finally:
        tables.close()
    assert found.reached >= 3 and found.changed >= 2  # the endgames' at least
    assert (f"up to 4 men): {found.reached} games reach them; {found.changed} of these ({found.changed_positions} "
            f"positions) take the tables' result") in out, out
    assert "results: the Syzygy tables' where a game reaches them" in network.description
    plain = read_network(train(data_file, tmp_path / "plain", "--epochs", "1"))
    assert "Syzygy" not in plain.description and "Syzygy" not in capsys.readouterr().out
    assert train_main([str(data_file), "--syzygy", str(tmp_path / "no-such-folder")]) == 2
    assert f"--syzygy: not a folder: {tmp_path / 'no-such-folder'}" in capsys.readouterr().err
    assert train_main([str(data_file), "-o", str(tmp_path / "none"), "--syzygy", str(tmp_path)]) == 2
    assert "--syzygy: no Syzygy WDL tables (.rtbw)" in capsys.readouterr().err


@pytest.mark.extra("train")
def test_an_interrupted_run_resumed_ends_as_the_whole_run(torch: Any, data_file: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from garfish.train import trainer

    whole = read_network(train(data_file, tmp_path / "whole", "--epochs", "2"))
    real_epoch = trainer.train_epoch

    def interrupted(config: Any, model: Any, optimizer: Any, split: Any, epoch: int) -> float:
        if epoch == 1:
            raise KeyboardInterrupt
        return real_epoch(config, model, optimizer, split, epoch)

    monkeypatch.setattr(trainer, "train_epoch", interrupted)
    with pytest.raises(KeyboardInterrupt):
        train(data_file, tmp_path / "cut", "--epochs", "2")
    monkeypatch.undo()
    checkpoint = tmp_path / "cut" / "checkpoint.pt"
    assert torch.load(checkpoint, weights_only=True)["epoch"] == 1
    assert train_main([str(data_file), "-o", str(tmp_path / "other"), "--no-cache", "--hidden", "16",
                       "--resume", str(checkpoint)]) == 2  # not the network of the checkpoint
    resumed = read_network(train(data_file, tmp_path / "resumed", "--epochs", "2", "--resume", str(checkpoint)))
    for name in ("w1", "b1", "w2", "b2"):
        assert (getattr(resumed, name) == getattr(whole, name)).all(), name
    assert "resumed by: garfish train" in resumed.description


@pytest.mark.extra("train")
@pytest.mark.parametrize("activation, buckets, base, layout", [
    (SCRELU, 8, NO_BASE, NO_KING_BUCKETS), (CRELU, 1, NO_BASE, NO_KING_BUCKETS),
    (SCRELU, 8, CLASSIC_BASE, NO_KING_BUCKETS), (SCRELU, 8, CLASSIC_BASE, KING_BUCKETS_4)])
def test_the_quantized_network_in_integers_equals_engine_forward(torch: Any, lines: list[str], activation: int,
                                                                  buckets: int, base: int, layout: int) -> None:
    """The trainer's int64 forward pass of the quantized weights gives engine.evaluation.network.forward's
    evaluation, from FEN to centipawns, on every position (accumulators clipped at 0 and QA); with
    king buckets, of the factor and the buckets' own rows summed."""
    from garfish.train.model import Architecture, Model, integer_forward, make_batch, quantize

    inputs = features(parse_lines(lines), buckets, base, layout=layout)
    torch.manual_seed(0)
    model = Model(Architecture(16, buckets, activation, base=base, layout=layout))
    with torch.no_grad():
        if layout != NO_KING_BUCKETS:
            model.factor.uniform_(-0.2, 0.2)
        model.w1.uniform_(-0.2 if layout else -0.4, 0.2 if layout else 0.4)
        model.b1.uniform_(-0.5, 1.2)
        model.w2.uniform_(-3.0, 3.0)
        model.b2.uniform_(-2.0, 2.0)
    network = quantize(model)
    assert network.base == base and network.layout == layout and network.w1.shape[0] == (4 if layout else 1) * 768
    ours = integer_forward(network, inputs, np.arange(len(lines))).tolist()
    assert ours == [forward(network, chess.Board(line.split(";")[0]), base=evaluate) for line in lines]
    assert len(lines) > 2000 and len(set(ours)) > 500
    with torch.no_grad():
        floats = model(make_batch(inputs, np.arange(len(lines)))).double().numpy() * model.arch.scale
    assert np.abs(floats - ours).mean() < 0.02 * np.abs(floats).mean()  # rounding, not a missing term


@pytest.mark.extra("train")
def test_the_loss_falls_on_learnable_data(torch: Any, tmp_path: Path) -> None:
    """The score is the material balance and lambda is 1: the network learns it, on held-out games too,
    and its quantized evaluations stay within a few centipawns of the float ones."""
    lines = [line for game in random_games(150, seed=11) for line in game]
    data = tmp_path / "material.txt"
    data.write_text("\n".join(lines) + "\n")
    options = ["--lambda", "1", "--k", "1000", "--max-score", "1500", "--keep-noisy", "--keep-checks"]
    network = train(data, tmp_path / "nets", "--hidden", "16", "--batch-size", "128", "--epochs", "6", "--lr", "0.003",
                    "--lr-final", "0.003", *options)
    history = torch.load(network.with_suffix(".pt"), weights_only=True)["history"]
    positions = parse_lines(lines)
    held = positions.select(np.isin(positions.game, validation_games(positions.games, 0.1, seed=0))
                            & (np.abs(positions.score) <= 1500))
    constant_guess = float(np.var(targets(held, 1.0, 1000.0)))
    assert history["train"][-1] < 0.1 * history["train"][0]
    assert history["val"][-1] < 0.4 * history["val"][0] and history["val"][-1] < 0.4 * constant_guess

    from garfish.train.model import Architecture, Model, integer_forward, make_batch

    model = Model(Architecture(16, 1, SCRELU))
    model.load_state_dict(torch.load(network.with_suffix(".pt"), weights_only=True)["model"])
    inputs = features(positions, 1)
    rows = np.arange(len(positions))
    with torch.no_grad():
        floats = model(make_batch(inputs, rows)).double().numpy() * 400
    difference = np.abs(integer_forward(read_network(network), inputs, rows).numpy() - floats)
    assert difference.mean() < 8 and difference.max() < 30, (difference.mean(), difference.max())


@pytest.mark.extra("train")
def test_a_network_on_the_classic_base_learns_a_correction_at_the_base_scale(torch: Any, data_file: Path,
                                                                              lines: list[str], tmp_path: Path) -> None:
    """With --base classic the network starts from the hand-written evaluation (its output is
    added), is trained at the scale that fits that evaluation, and its file says so."""
    from garfish.train.model import Architecture, Model, make_batch

    path = train(data_file, tmp_path / "nets", "--epochs", "2", "--base", "classic")
    network = read_network(path)
    assert network.base == CLASSIC_BASE and "on the classic evaluation" in network.description
    fitted = float(network.description.split("evaluation scale ")[1].split(",")[0])
    assert 100 < fitted < 1000 and fitted != 400
    # The float model's evaluation is its own output plus the hand-written evaluation.
    positions = parse_lines(lines)
    inputs = features(positions, 1, CLASSIC_BASE)
    model = Model(Architecture(8, 1, SCRELU, base=CLASSIC_BASE))
    rows = np.arange(min(len(positions), 500))
    with torch.no_grad():
        based = model(make_batch(inputs, rows)).double().numpy() * 400
        plain = Model(Architecture(8, 1, SCRELU))
        plain.load_state_dict(model.state_dict())
        own = plain(make_batch(inputs, rows)).double().numpy() * 400
    expected = np.array([evaluate(board_of(positions, row)) for row in rows])
    assert np.allclose(based - own, expected) and np.abs(expected).max() > 50


@pytest.mark.extra("train")
def test_the_baseline_scale_is_the_one_that_fits(torch: Any) -> None:
    """fit_scale finds the K' whose sigmoid(eval / K') matches the targets best."""
    from garfish.train.trainer import fit_scale, sigmoid_loss

    evals = np.linspace(-900.0, 900.0, 181)
    target = 1.0 / (1.0 + np.exp(-evals / 310.0))
    k, loss = fit_scale(evals, target)
    assert k == pytest.approx(310.0, rel=1e-5) and loss < 1e-12
    assert sigmoid_loss(evals, target, 400.0) > 1e-4


@pytest.mark.extra("train")
def test_merged_networks_evaluate_as_the_mean_of_their_members(torch: Any, data_file: Path, lines: list[str],
                                                                 tmp_path: Path) -> None:
    """--merge: the members' accumulators side by side, the output their mean (float), their quantized
    weights unchanged with QB times their number (integers), engine.evaluation.network.forward agreeing."""
    from garfish.train.model import Architecture, Model, integer_forward, make_batch

    paths = [train(data_file, tmp_path / f"m{seed}", "--epochs", "1", "--seed", str(seed), "--base", "classic")
             for seed in (1, 2, 3)]
    merged_path = train(data_file, tmp_path / "merged", "--base", "classic",
                        "--merge", *(str(path.with_suffix(".pt")) for path in paths))
    members = [read_network(path) for path in paths]
    merged = read_network(merged_path)
    assert (merged.hidden, merged.qb, merged.base) == (24, 3 * members[0].qb, CLASSIC_BASE)
    assert (merged.w1 == np.hstack([m.w1 for m in members])).all()
    # W2: the members' halves for the side to move, then theirs for the other side.
    assert (merged.w2[:, 16:24] == members[2].w2[:, :8]).all() and (merged.w2[:, 40:] == members[2].w2[:, 8:]).all()
    assert merged.b2[0] == sum(m.b2[0] for m in members)
    assert merged.description.count("member: garfish train") == 3
    assert "merged 3 members" in merged.description and "epochs" not in merged.description.splitlines()[4]
    assert merged_path.with_suffix(".png").read_bytes().startswith(b"\x89PNG")

    positions = parse_lines(lines)
    inputs = features(positions, 1, CLASSIC_BASE)
    rows = np.arange(len(positions))

    def floats(path: Path) -> np.ndarray:
        state = torch.load(path.with_suffix(".pt"), weights_only=True)
        model = Model(Architecture(**state["arch"]))
        model.load_state_dict(state["model"])
        with torch.no_grad():
            return model(make_batch(inputs, rows)).double().numpy() * 400

    mean = np.mean([floats(path) for path in paths], axis=0)
    assert np.allclose(floats(merged_path), mean, atol=1e-3)
    ours = integer_forward(merged, inputs, rows).numpy()
    assert np.abs(ours - mean).max() < 10
    sample = rows[::50]
    assert [forward(merged, chess.Board(lines[row].split(";")[0]), base=evaluate) for row in sample] == ours[sample].tolist()


@pytest.mark.extra("train")
def test_king_bucketed_networks_train_merge_and_run_in_the_engine(torch: Any, data_file: Path, lines: list[str],
                                                                  tmp_path: Path) -> None:
    """--king-buckets: members trained and merged keep the layout; the engine's kernels give the
    trainer's integer evaluation; a plain and a bucketed checkpoint are not merged."""
    from garfish.engine.evaluation.nnue import NetworkEvaluator
    from garfish.train.model import integer_forward

    paths = [train(data_file, tmp_path / f"k{seed}", "--epochs", "1", "--seed", str(seed), "--base", "classic",
                   "--king-buckets", *decay) for seed, decay in ((1, []), (2, ["--bucket-decay", "5"]))]
    assert "(king buckets' rows 5)" in read_network(paths[1]).description
    assert "king buckets' rows" not in read_network(paths[0]).description
    merged_path = train(data_file, tmp_path / "merged", "--base", "classic", "--king-buckets",
                        "--merge", *(str(path.with_suffix(".pt")) for path in paths))
    merged = read_network(merged_path)
    assert merged.layout == KING_BUCKETS_4 and merged.w1.shape == (4 * 768, 16)
    assert "inputs 4 king buckets" in merged.description
    # Trained factorised: the buckets differ, but share most of what they learnt.
    first, last = merged.w1[:768].astype(np.int64), merged.w1[3 * 768:].astype(np.int64)
    assert (first != last).any() and np.corrcoef(first.ravel(), last.ravel())[0, 1] > 0.5
    positions = parse_lines(lines)
    inputs = features(positions, 1, CLASSIC_BASE, layout=KING_BUCKETS_4)
    sample = np.arange(0, len(positions), 25)
    ours = integer_forward(merged, inputs, sample).tolist()
    evaluator = NetworkEvaluator(merged)
    assert [evaluator.evaluate(chess.Board(lines[row].split(";")[0])) for row in sample] == ours
    plain = train(data_file, tmp_path / "plain", "--epochs", "1", "--base", "classic")
    assert train_main([str(data_file), "-o", str(tmp_path / "out"), "--no-cache", "--base", "classic", "--merge",
                       str(paths[0].with_suffix(".pt")), str(plain.with_suffix(".pt"))]) == 2


@pytest.mark.extra("train")
def test_measure_gives_each_network_file_the_loss_its_own_run_gave(torch: Any, data_file: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """--measure: a network file measured on the same data and options has the quantized validation
    loss its training run wrote in its description, whatever its buckets and base; a file that is
    not a network is refused with the reason."""
    classic = train(data_file, tmp_path / "classic", "--epochs", "1", "--base", "classic", "--buckets", "2")
    plain = train(data_file, tmp_path / "plain", "--epochs", "1", "--seed", "2")
    options = [str(data_file), "-o", str(tmp_path / "out"), "--no-cache", "--val-fraction", "0.1"]

    def measured(base: str, path: Path) -> str:
        capsys.readouterr()
        assert train_main(options + ["--base", base, "--measure", str(path)]) == 0
        (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith(str(path))]
        return line.split("validation loss ")[1].split()[0]

    for base, path in (("classic", classic), ("none", plain)):
        written = re.search(r"quantized network (\S+)\)", read_network(path).description)
        assert written and measured(base, path) == written.group(1)
    assert not (tmp_path / "out").exists()
    broken = tmp_path / "broken.gfnn"
    broken.write_bytes(classic.read_bytes()[:-1])
    assert train_main(options + ["--measure", str(broken)]) == 2
    assert "broken.gfnn" not in capsys.readouterr().out
    assert train_main(options + ["--measure", str(classic), "--merge", "a.pt", "b.pt"]) == 2


@pytest.mark.extra("train")
def test_measure_of_every_game_of_a_held_out_file(torch: Any, data_file: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """--measure with --val-fraction 1 measures every position the filters keep (a file no network was trained
    on), at the base's best scale on them; a run that trains cannot hold out every game."""
    network = train(data_file, tmp_path / "net", "--epochs", "1", "--base", "classic")
    options = [str(data_file), "-o", str(tmp_path / "out"), "--no-cache", "--base", "classic", "--val-fraction", "1"]
    capsys.readouterr()
    assert train_main(options + ["--measure", str(network)]) == 0
    out = capsys.readouterr().out
    split = re.search(r"([\d,]+) of [\d,]+ kept; 0 training, ([\d,]+) validation positions", out)
    assert split and split.group(1) == split.group(2) and split.group(2) != "0", out
    assert "base: classic evaluation, validation loss" in out
    assert re.search(rf"^{re.escape(str(network))}: validation loss 0\.\d+ ", out, re.M), out
    assert train_main(options) == 2
    assert "1 only with --measure" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    assert list(validation_games(7, 1.0, 0)) == list(range(7)) and len(validation_games(7, 0.99, 0)) == 6


@pytest.mark.extra("train")
def test_networks_of_different_options_are_not_merged(torch: Any, data_file: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    small = train(data_file, tmp_path / "small", "--epochs", "1")
    large = train(data_file, tmp_path / "large", "--epochs", "1", "--hidden", "16")
    capsys.readouterr()
    options = [str(data_file), "-o", str(tmp_path / "out"), "--no-cache", "--merge"]
    assert train_main(options + [str(small.with_suffix(".pt")), str(large.with_suffix(".pt"))]) == 2
    assert "cannot merge" in capsys.readouterr().err and not (tmp_path / "out").exists()
    assert train_main(options + [str(small.with_suffix(".pt"))]) == 2
    assert "two checkpoints or more" in capsys.readouterr().err


@pytest.mark.extra("train")
def test_bucket_decay_applies_to_the_king_buckets_own_rows_only(torch: Any, tmp_path: Path) -> None:
    from garfish.train.config import TrainConfig
    from garfish.train.model import Architecture, Model
    from garfish.train.trainer import make_optimizer

    config = TrainConfig(files=[], output=tmp_path, weight_decay=0.01, bucket_decay=5.0)
    model = Model(Architecture(8, 1, SCRELU, layout=KING_BUCKETS_4))
    groups = {id(p): group["weight_decay"] for group in make_optimizer(config, model).param_groups
              for p in group["params"]}
    assert groups[id(model.w1)] == 5.0 and groups[id(model.factor)] == groups[id(model.b1)] == 0.01
    plain = Model(Architecture(8, 1, SCRELU))
    assert {group["weight_decay"] for group in make_optimizer(config, plain).param_groups} == {0.01}


@pytest.mark.extra("train")
@pytest.mark.parametrize("layout", [NO_KING_BUCKETS, KING_BUCKETS_4])
def test_the_splits_batches_are_those_of_the_positions_and_mirrors_made_in_advance(torch: Any, lines: list[str],
                                                                                  tmp_path: Path, layout: int) -> None:
    # The trainer keeps rows of the positions read and makes each batch's inputs when it needs
    # them; the batches are those it made when it kept the training positions and their mirrors
    # as positions of their own, with all their inputs made in advance.
    from garfish.train.config import TrainConfig
    from garfish.train.model import make_batch
    from garfish.train.trainer import split_data
    positions = parse_lines(lines)
    config = TrainConfig(files=[], output=tmp_path, buckets=8, base=CLASSIC_BASE, layout=layout, mirror=True,
                         val_fraction=0.1)
    train, val = split_data(config, positions)
    keep = config.filters.mask(positions)
    held = np.isin(positions.game, validation_games(positions.games, 0.1, 0))
    own = positions.select(keep & ~held)
    made = concatenate([own, mirrored(own.select(~could_castle(own)))])
    assert len(train) == len(made) > len(own) and len(val) == int((keep & held).sum())
    assert (train.target == targets(made, config.lam, config.k)).all()
    inputs = features(made, 8, CLASSIC_BASE, layout)
    order = np.random.default_rng(3).permutation(len(made))[:500]
    for name in ("us", "them", "offsets", "bucket", "base"):
        assert torch.equal(getattr(train.batch(order), name), getattr(make_batch(inputs, order), name)), name
    assert (val.base == features(positions.select(keep & held), 8, CLASSIC_BASE, layout).base).all()


def autograd_output(model: Any, batch: Any) -> Any:
    """The model's output as PyTorch's autograd computed it before train.layers (the reference)."""
    import torch
    w1 = model.input_weights()
    us = torch.nn.functional.embedding_bag(batch.us, w1, batch.offsets, mode="sum") + model.b1
    them = torch.nn.functional.embedding_bag(batch.them, w1, batch.offsets, mode="sum") + model.b1
    active = torch.cat([us, them], dim=1).clamp(0.0, 1.0)
    if model.arch.activation == SCRELU:
        active = active * active
    out = (active * model.w2[batch.bucket]).sum(dim=1) + model.b2[batch.bucket]
    return out + (batch.base / model.arch.scale).to(out.dtype) if model.arch.base != NO_BASE else out


@pytest.mark.extra("train")
@pytest.mark.parametrize("activation, buckets, base, layout, hidden", [
    (SCRELU, 1, CLASSIC_BASE, NO_KING_BUCKETS, 16), (CRELU, 8, NO_BASE, NO_KING_BUCKETS, 12),
    (SCRELU, 8, CLASSIC_BASE, KING_BUCKETS_4, 16)])
def test_the_kernels_outputs_and_gradients_are_autograds(torch: Any, lines: list[str], activation: int, buckets: int,
                                                        base: int, layout: int, hidden: int) -> None:
    """The Numba passes (train.layers) give the output and every parameter's gradient that autograd
    gives through PyTorch's own operations, with accumulators on both sides of the clamp's ends (H 12:
    not a whole number of output_forward's lanes)."""
    from garfish.train.model import Architecture, Model, make_batch
    inputs = features(parse_lines(lines), buckets, base, layout=layout)
    torch.manual_seed(1)
    model = Model(Architecture(hidden, buckets, activation, base=base, layout=layout))
    with torch.no_grad():
        if layout != NO_KING_BUCKETS:
            model.factor.uniform_(-0.2, 0.2)
        model.w1.uniform_(-0.2, 0.2)
        model.b1.uniform_(-0.5, 1.2)
        model.w2.uniform_(-3.0, 3.0)
        model.b2.uniform_(-2.0, 2.0)
    batch = make_batch(inputs, np.random.default_rng(2).permutation(len(lines))[:1000])
    weights = torch.rand(1000, generator=torch.Generator().manual_seed(3))
    results = []
    for output in (model, lambda batch_: autograd_output(model, batch_)):
        model.zero_grad()
        out = output(batch)
        (out * weights).sum().backward()
        results.append((out.detach().clone(), {name: p.grad.clone() for name, p in model.named_parameters()}))
    (ours, our_grads), (theirs, their_grads) = results
    assert torch.allclose(ours, theirs, rtol=1e-5, atol=1e-5)
    for name, grad in their_grads.items():
        # float32 sums in another order: rounding, measured against the largest gradient of each
        assert (our_grads[name] - grad).abs().max() <= 1e-5 * grad.abs().max(), name
        assert grad.abs().max() > 0.01, name
    clamped = autograd_output(model, batch)  # both ends reached, so the clamp's gradient is tested
    with torch.no_grad():
        w1 = model.input_weights()
        sums = torch.nn.functional.embedding_bag(batch.us, w1, batch.offsets, mode="sum") + model.b1
    assert (sums < 0).any() and (sums > 1).any() and ((sums > 0) & (sums < 1)).any() and len(clamped) == 1000


@pytest.mark.extra("train")
@pytest.mark.parametrize("layout", [NO_KING_BUCKETS, KING_BUCKETS_4])
def test_a_batch_lays_out_each_rows_features_in_order(torch: Any, lines: list[str], layout: int) -> None:
    """make_batch's flat features and offsets (train.layers.flatten) are those PyTorch's boolean mask
    of the padded rows gave, for rows in any order, repeated ones included."""
    from garfish.train.model import make_batch
    inputs = features(parse_lines(lines), 8, CLASSIC_BASE, layout=layout)
    rows = np.random.default_rng(4).integers(0, len(lines), 700)
    batch = make_batch(inputs, rows)
    count = torch.from_numpy(inputs.count[rows])
    used = torch.arange(inputs.us.shape[1]) < count[:, None]
    assert torch.equal(batch.offsets, torch.cumsum(count, 0) - count)
    assert torch.equal(batch.us, torch.from_numpy(inputs.us[rows]).long()[used])
    assert torch.equal(batch.them, torch.from_numpy(inputs.them[rows]).long()[used])
    assert torch.equal(batch.bucket, torch.from_numpy(inputs.bucket[rows])) and len(set(rows.tolist())) < len(rows)


def test_in_check_is_python_chess_is_check(lines: list[str]) -> None:
    """The parsed in-check flag is python-chess's, on the games' positions and on made-up boards
    with no king, or two, for the side to move (python-chess looks at the highest one)."""
    positions = parse_lines(lines)
    assert positions.in_check.tolist() == [chess.Board(line.split(";")[0]).is_check() for line in lines]
    assert positions.in_check.sum() > 20
    odd = ["8/8/8/8/8/8/3r4/K7 w - - 0 1", "K6k/8/8/8/8/8/8/K6r w - - 0 1", "K6r/8/8/8/8/8/8/K6k w - - 0 1",
           "8/8/8/8/8/5n2/8/4K2K w - - 0 1", "4k3/8/8/8/8/8/8/4K2q b - - 0 1"]
    made = parse_lines([f"{fen};0;a1a2;0.5" for fen in odd])
    board = chess.BaseBoard(None)
    for row, fen in enumerate(odd):
        board.set_board_fen(fen.split(" ")[0])
        white = fen.split(" ")[1] == "w"
        king = board.king(white)
        assert made.in_check[row] == (king is not None and board.is_attacked_by(not white, king)), fen
    assert made.in_check.tolist() == [False, False, True, False, False]  # the highest king decides


def test_positions_filled_file_by_file_are_the_joined_ones(lines: list[str]) -> None:
    """fill (the trainer's files read again from the cache one at a time) gives concatenate's arrays,
    games numbered on; a file whose size changed between the two reads is refused."""
    from garfish.train.data import fill
    parts = [parse_lines(lines[start:end]) for start, end in ((0, 500), (500, 1300), (1300, len(lines)))]
    whole, filled = concatenate(parts), fill([len(part) for part in parts], iter(parts))
    for field in dataclasses.fields(Positions):
        ours, theirs = getattr(filled, field.name), getattr(whole, field.name)
        assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs), field.name
    assert filled.games == sum(part.games for part in parts) > 3
    with pytest.raises(DataError, match="changed between two reads"):
        fill([len(parts[0]) + 1], iter(parts[:1]))


@pytest.mark.extra("train")
def test_the_cache_read_twice_gives_the_same_network_and_an_unwritable_one_is_said(
        torch: Any, data_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With a cache the files are read again from it into the whole (train.data.fill): the network is
    the one trained without a cache. A cache folder that cannot be written is said on stderr and the
    data read without it (a file stands where the folder should be)."""
    common = [str(data_file), "--hidden", "8", "--batch-size", "256", "--val-fraction", "0.1", "--epochs", "1"]
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    networks = []
    for name, cache in (("plain", ["--no-cache"]), ("cached", ["--cache", str(tmp_path / "cache")]),
                        ("blocked", ["--cache", str(blocked / "cache")])):
        assert train_main([*common, "-o", str(tmp_path / name), *cache]) == 0
        (path,) = (tmp_path / name).glob("*.gfnn")
        networks.append(read_network(path))
        err = capsys.readouterr().err
        assert ("cannot write the cache" in err and "reading the data without it" in err) == (name == "blocked"), err
    assert any((tmp_path / "cache").iterdir())
    for network in networks[1:]:
        assert (network.w1 == networks[0].w1).all() and (network.w2 == networks[0].w2).all()
