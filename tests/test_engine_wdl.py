"""engine.evaluation.wdl: the UCI_ShowWDL model agrees with the fitter's and behaves like chances."""

from __future__ import annotations

import chess
import numpy as np
import pytest

from garfish.arena import wdlfit as fitter
from garfish.engine.evaluation import wdl
from garfish.engine.types import MATE

from positions import random_game_boards


@pytest.mark.parametrize("material", [17, 30, 45, 60, 78])
def test_chances_sum_to_1000_rise_with_the_score_and_mirror(material: int) -> None:
    previous = (-1, 1001)
    for score in range(-1500, 1501, 50):
        win, draw, loss = wdl.wdl(score, material)
        assert win + draw + loss == 1000 and min(win, draw, loss) >= 0
        assert win >= previous[0] and loss <= previous[1]
        previous = (win, loss)
        assert wdl.wdl(-score, material) == (loss, draw, win)
    assert wdl.wdl(0, material)[0] < 500 and wdl.wdl(1500, material)[0] > 900


def test_mate_scores_are_certain() -> None:
    assert wdl.wdl(MATE - 3, 40) == (1000, 0, 0)
    assert wdl.wdl(-MATE + 4, 40) == (0, 0, 1000)


def test_engine_model_is_the_fitted_model() -> None:
    for material in (17, 33, 50, 78):
        x = material / fitter.MATERIAL_SCALE
        a, b = np.polyval(wdl.WDL_A, x), np.polyval(wdl.WDL_B, x)
        for score in (-400, -50, 0, 120, 700):
            win, draw, loss = fitter.probabilities(np.array([float(score)]), np.array([a]), np.array([b]))
            assert wdl.wdl(score, material) == pytest.approx((1000 * win[0], 1000 * draw[0], 1000 * loss[0]), abs=1)


def test_material_counts_as_the_fitter_does() -> None:
    boards = list(random_game_boards(3, seed=5))
    assert [wdl.material(b) for b in boards] == [fitter.material(b) for b in boards]
    assert wdl.material(chess.Board()) == 78
