"""The network file format and the reference forward pass (engine/network.py)."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import chess
import numpy as np
import pytest

from garfish.engine.bench import BENCH_FENS
from garfish.engine.network import (
    CLASSIC_BASE, CRELU, FEATURES, HEADER, SCRELU, Network, NetworkError, active_features, decode_network,
    encode_network, feature_index, forward, output_bucket, read_network, write_network,
)


def random_network(activation: int, hidden: int = 16, buckets: int = 4, seed: int = 0) -> Network:
    rng = np.random.default_rng(seed)
    return Network(activation, 255, 64, 400,
                   rng.integers(-60, 60, (FEATURES, hidden), dtype=np.int16),
                   rng.integers(0, 80, hidden, dtype=np.int16),
                   rng.integers(-64, 64, (buckets, 2 * hidden), dtype=np.int16),
                   rng.integers(-5000, 5000, buckets, dtype=np.int32), "test net")


def test_feature_indices_put_the_own_pieces_first_from_each_side() -> None:
    assert feature_index(chess.WHITE, chess.WHITE, chess.PAWN, chess.A1) == 0
    assert feature_index(chess.WHITE, chess.BLACK, chess.KING, chess.H8) == FEATURES - 1
    # Black's view of its own e7 pawn is White's view of its e2 pawn.
    assert feature_index(chess.BLACK, chess.BLACK, chess.PAWN, chess.E7) == \
        feature_index(chess.WHITE, chess.WHITE, chess.PAWN, chess.E2) == 12
    board = chess.Board()
    assert sorted(active_features(board, chess.WHITE)) == sorted(active_features(board, chess.BLACK))
    assert len(set(active_features(board, chess.WHITE))) == 32


def test_output_buckets_follow_the_piece_count() -> None:
    assert [output_bucket(n, 8) for n in (2, 5, 6, 17, 32)] == [0, 0, 1, 3, 7]
    assert {output_bucket(n, 1) for n in range(2, 33)} == {0}


@pytest.mark.parametrize("activation", [CRELU, SCRELU])
def test_forward_is_colour_symmetric(activation: int) -> None:
    network = random_network(activation)
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
    from garfish.engine.evaluate import evaluate

    plain = random_network(SCRELU, hidden=8, buckets=2, seed=4)
    based = dataclasses.replace(plain, base=CLASSIC_BASE)
    loaded = read_network(write_network(based, tmp_path))
    assert loaded.base == CLASSIC_BASE and read_network(write_network(plain, tmp_path)).base == 0
    for fen in BENCH_FENS:
        board = chess.Board(fen)
        assert forward(loaded, board) == forward(plain, board) + evaluate(board) != forward(plain, board), fen
        assert forward(loaded, board.mirror()) == forward(loaded, board), fen


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
    }
    for reason, damaged in cases.items():
        with pytest.raises(NetworkError, match=reason):
            decode_network(damaged)
    with pytest.raises(NetworkError, match="cannot read"):
        read_network(tmp_path / "missing.gfnn")
    with pytest.raises(NetworkError, match="cannot read"):
        read_network(tmp_path)
