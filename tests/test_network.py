"""The network file format and the reference forward pass (engine/evaluation/network.py)."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import chess
import numpy as np
import pytest

from garfish.engine.evaluation.network import (
    CLASSIC_BASE, CRELU, FEATURES, HEADER, KING_BUCKETS_4, NO_KING_BUCKETS, SCRELU, Network, NetworkError,
    active_features, decode_network, encode_network, feature_index, forward, input_count, king_view, output_bucket,
    read_network, write_network,
)
from garfish.engine.services.bench import BENCH_FENS


def random_network(activation: int, hidden: int = 16, buckets: int = 4, seed: int = 0,
                   layout: int = NO_KING_BUCKETS) -> Network:
    rng = np.random.default_rng(seed)
    return Network(activation, 255, 64, 400,
                   rng.integers(-60, 60, (input_count(layout), hidden), dtype=np.int16),
                   rng.integers(0, 80, hidden, dtype=np.int16),
                   rng.integers(-64, 64, (buckets, 2 * hidden), dtype=np.int16),
                   rng.integers(-5000, 5000, buckets, dtype=np.int32), "test net", layout=layout)


def test_feature_indices_put_the_own_pieces_first_from_each_side() -> None:
    assert feature_index(chess.WHITE, chess.WHITE, chess.PAWN, chess.A1) == 0
    assert feature_index(chess.WHITE, chess.BLACK, chess.KING, chess.H8) == FEATURES - 1
    # Black's view of its own e7 pawn is White's view of its e2 pawn.
    assert feature_index(chess.BLACK, chess.BLACK, chess.PAWN, chess.E7) == \
        feature_index(chess.WHITE, chess.WHITE, chess.PAWN, chess.E2) == 12
    board = chess.Board()
    assert sorted(active_features(board, chess.WHITE)) == sorted(active_features(board, chess.BLACK))
    assert len(set(active_features(board, chess.WHITE))) == 32


def test_king_buckets_mirror_the_board_and_split_it_by_the_own_kings_square() -> None:
    assert input_count(NO_KING_BUCKETS) == FEATURES and input_count(KING_BUCKETS_4) == 4 * FEATURES
    # (first input of the bucket, square XOR) for White's king on a square, and Black's on its mirror.
    expected = {chess.A1: (0, 0), chess.B2: (0, 0), chess.G1: (0, 7), chess.H2: (0, 7), chess.C1: (768, 0),
                chess.E1: (768, 7), chess.F2: (768, 7), chess.D3: (1536, 0), chess.E4: (1536, 7),
                chess.A5: (2304, 0), chess.H8: (2304, 7)}
    for square, view in expected.items():
        assert king_view(KING_BUCKETS_4, chess.WHITE, square) == view, chess.square_name(square)
        assert king_view(KING_BUCKETS_4, chess.BLACK, chess.square_mirror(square)) == view
        assert king_view(NO_KING_BUCKETS, chess.WHITE, square) == (0, 0)
    # A king on g1 sees the board in the a-h mirror: its own pawn on h2 is the pawn of a2's input.
    board = chess.Board("6k1/8/8/8/8/8/7P/6K1 w - - 0 1")
    assert feature_index(chess.WHITE, chess.WHITE, chess.PAWN, chess.A2) in active_features(board, chess.WHITE,
                                                                                             KING_BUCKETS_4)
    # A position and its a-h mirror have the same inputs; each input is used once.
    for fen in BENCH_FENS:
        board = chess.Board(fen)
        for perspective in chess.COLORS:
            inputs = active_features(board, perspective, KING_BUCKETS_4)
            assert sorted(inputs) == sorted(active_features(board.transform(chess.flip_horizontal), perspective,
                                                            KING_BUCKETS_4)), fen
            assert len(set(inputs)) == len(inputs) and max(inputs) < 4 * FEATURES


def test_output_buckets_follow_the_piece_count() -> None:
    assert [output_bucket(n, 8) for n in (2, 5, 6, 17, 32)] == [0, 0, 1, 3, 7]
    assert {output_bucket(n, 1) for n in range(2, 33)} == {0}


@pytest.mark.parametrize("activation", [CRELU, SCRELU])
@pytest.mark.parametrize("layout", [NO_KING_BUCKETS, KING_BUCKETS_4])
def test_forward_is_colour_symmetric(activation: int, layout: int) -> None:
    network = random_network(activation, layout=layout)
    for fen in BENCH_FENS:
        board = chess.Board(fen)
        assert forward(network, board) == forward(network, board.mirror()), fen


def test_forward_follows_the_formula_by_hand() -> None:
    # Kings and a pawn, H = 1: every number can be followed.
    w1 = np.zeros((FEATURES, 1), dtype=np.int16)
    w1[feature_index(chess.WHITE, chess.WHITE, chess.KING, chess.E1), 0] = 100  # own king on (relative) e1
    w1[feature_index(chess.WHITE, chess.BLACK, chess.KING, chess.E8), 0] = 300  # enemy king on (relative) e8
    w1[feature_index(chess.WHITE, chess.WHITE, chess.PAWN, chess.A2), 0] = -350  # own pawn on (relative) a2
    network = Network(SCRELU, 255, 64, 400, w1, np.array([10], dtype=np.int16),
                      np.array([[3, -2]], dtype=np.int16), np.array([1000], dtype=np.int32))
    board = chess.Board("4k3/8/8/8/8/8/P7/4K3 w - - 0 1")
    # White (to move): 10 + 100 + 300 - 350 = 60. Black sees its king on e1, White's on e8 and an
    # enemy pawn on a7 (weight 0): 410, clipped to QA = 255. The SCReLU sum floors towards -inf.
    total = (60 * 60 * 3 + 255 * 255 * -2) // 255 + 1000
    assert total == 532
    assert forward(network, board) == total * 400 // (255 * 64) == 13
    # Black to move: its accumulator comes first.
    board.turn = chess.BLACK
    assert forward(network, board) == ((255 * 255 * 3 + 60 * 60 * -2) // 255 + 1000) * 400 // (255 * 64)
    network = Network(CRELU, 255, 64, 400, w1, network.b1, network.w2, network.b2)
    assert forward(network, board) == ((255 * 3 + 60 * -2) + 1000) * 400 // (255 * 64)


def test_a_network_survives_the_file_round_trip(tmp_path: Path) -> None:
    network = random_network(SCRELU, hidden=8, buckets=2, seed=3)
    path = write_network(network, tmp_path)
    data = path.read_bytes()
    assert path.name == f"nn-{hashlib.sha256(data).hexdigest()[:12]}.gfnn"
    loaded = read_network(path)
    assert (loaded.activation, loaded.qa, loaded.qb, loaded.scale, loaded.description) == (SCRELU, 255, 64, 400,
                                                                                            "test net")
    for name in ("w1", "b1", "w2", "b2"):
        assert np.array_equal(getattr(loaded, name), getattr(network, name)) and \
            getattr(loaded, name).dtype == getattr(network, name).dtype
    assert forward(loaded, chess.Board()) == forward(network, chess.Board())


def test_a_network_on_the_classic_base_adds_the_hand_written_evaluation(tmp_path: Path) -> None:
    from garfish.engine.evaluation.classic import evaluate

    plain = random_network(SCRELU, hidden=8, buckets=2, seed=4)
    based = dataclasses.replace(plain, base=CLASSIC_BASE)
    loaded = read_network(write_network(based, tmp_path))
    assert loaded.base == CLASSIC_BASE and read_network(write_network(plain, tmp_path)).base == 0
    for fen in BENCH_FENS:
        board = chess.Board(fen)
        assert forward(loaded, board, base=evaluate) == forward(plain, board) + evaluate(board) != forward(plain, board), fen
        assert forward(loaded, board.mirror(), base=evaluate) == forward(loaded, board, base=evaluate), fen
    # network.py needs NumPy only: the caller brings the hand-written evaluation, and is told so if it does not.
    with pytest.raises(ValueError, match="classic.evaluate"):
        forward(loaded, chess.Board())


def test_a_king_bucketed_network_is_written_as_version_2_and_read_back(tmp_path: Path) -> None:
    network = random_network(SCRELU, hidden=8, buckets=2, seed=5, layout=KING_BUCKETS_4)
    data = write_network(network, tmp_path).read_bytes()
    assert HEADER.unpack_from(data)[1] == 2 and HEADER.unpack_from(data)[9] == KING_BUCKETS_4
    loaded = decode_network(data)
    assert loaded.layout == KING_BUCKETS_4 and np.array_equal(loaded.w1, network.w1)
    plain = encode_network(random_network(SCRELU, hidden=8, buckets=2, seed=5))
    assert HEADER.unpack_from(plain)[1] == 1 and HEADER.unpack_from(plain)[9] == 0
    # The king buckets change the evaluation: the same weights read as plain give other scores.
    plain_reading = dataclasses.replace(network, w1=network.w1[:FEATURES], layout=NO_KING_BUCKETS)
    scores = [(forward(loaded, chess.Board(fen)), forward(plain_reading, chess.Board(fen))) for fen in BENCH_FENS]
    assert sum(a != b for a, b in scores) > len(scores) // 2


def test_damaged_files_are_refused_with_the_reason(tmp_path: Path) -> None:
    data = encode_network(random_network(CRELU, hidden=4, buckets=1))
    flipped = bytearray(data)
    flipped[HEADER.size + 20] ^= 1
    cases = {
        "too short": data[:10],
        "truncated": data[:-100],
        "not a Garfish network": b"XXXX" + data[4:],
        "version": data[:4] + (7).to_bytes(2, "little") + data[6:],
        "unknown base": data[:7] + bytes([9]) + data[8:],
        "checksum mismatch": bytes(flipped),
        # A layout field in a version 1 file, and an unknown layout.
        "unknown input layout 1": data[:18] + (1).to_bytes(2, "little") + data[20:],
        "unknown input layout 5": data[:4] + (2).to_bytes(2, "little") + data[6:18] + (5).to_bytes(2, "little")
        + data[20:],
    }
    for reason, damaged in cases.items():
        with pytest.raises(NetworkError, match=reason):
            decode_network(damaged)
    with pytest.raises(NetworkError, match="cannot read"):
        read_network(tmp_path / "missing.gfnn")
    with pytest.raises(NetworkError, match="cannot read"):
        read_network(tmp_path)
