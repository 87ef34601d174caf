"""The win/draw/loss model fitter (garfish wdl): reading match PGNs and recovering a known model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import chess
import numpy as np

from garfish.arena.wdlfit import MATERIAL_SCALE, Sample, fit, material, probabilities, read_samples

PGN = """[Event "test"]
[White "Garfish"]
[Black "Other"]
[Result "1-0"]

1. e4 {+0.30/10 0.100s} e5 {-0.20/9 0.100s} 2. Qh5 {+0.10/10 0.100s} Nc6 {+M2/5 0.050s}
3. Bc4 {+0.50/11 0.100s} Nf6 {-9.99/8 0.100s} 4. Qxf7# {0.010s} 1-0

[Event "test"]
[White "Other"]
[Black "Garfish"]
[Result "*"]

1. d4 {+0.10/10 0.100s} *
"""


def test_read_samples_takes_scored_moves_of_finished_games(tmp_path: Path) -> None:
    path = tmp_path / "games.pgn"
    path.write_text(PGN)
    samples = list(read_samples(path, None))
    # Mate scores and moves without a score are skipped; the unfinished game is skipped.
    assert [(s.score, s.result) for s in samples] == [(30.0, 1.0), (-20.0, 0.0), (10.0, 1.0), (50.0, 1.0),
                                                      (-999.0, 0.0)]
    assert samples[0].material == 78
    only = list(read_samples(path, "Other"))
    assert [s.score for s in only] == [-20.0, -999.0]


def test_material_counts_both_sides_and_clamps() -> None:
    assert material(chess.Board()) == 78
    assert material(chess.Board("4k3/8/8/8/8/8/8/4K2R w - - 0 1")) == 17  # 5, clamped up to 17
    assert material(chess.Board("r3k3/8/8/8/8/8/8/Q3K2R w - - 0 1")) == 19


def test_fit_recovers_a_known_model() -> None:
    rng = np.random.default_rng(7)
    true_a, true_b = [-40.0, 100.0, -20.0, 170.0], [5.0, -10.0, 25.0, 60.0]
    samples = []
    for m in (20, 30, 40, 50, 60, 70):
        x = m / MATERIAL_SCALE
        a, b = np.polyval(true_a, x), np.polyval(true_b, x)
        scores = rng.normal(0, 250, 3000)
        win, _, loss = probabilities(scores, np.full_like(scores, a), np.full_like(scores, b))
        u = rng.random(scores.size)
        results = np.where(u < win, 1.0, np.where(u < win + loss, 0.0, 0.5))
        samples += [Sample(float(s), m, float(r)) for s, r in zip(scores, results)]
    model = fit(samples)
    for m in (25, 45, 65):
        x = m / MATERIAL_SCALE
        assert abs(np.polyval(model.a, x) - np.polyval(true_a, x)) < 15
        assert abs(np.polyval(model.b, x) - np.polyval(true_b, x)) < 10


def test_command_reports_too_little_data(tmp_path: Path) -> None:
    path = tmp_path / "games.pgn"
    path.write_text(PGN)
    proc = subprocess.run([sys.executable, "-P", "-m", "garfish.uci", "wdl", str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1 and "too few positions" in proc.stderr
    missing = subprocess.run([sys.executable, "-P", "-m", "garfish.uci", "wdl", str(tmp_path / "none.pgn")],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "no such file" in missing.stderr
