"""Elo, LOS, pentanomial and SPRT arithmetic of arena.stats against known values and independent formulas."""

from __future__ import annotations

import math

import pytest

from garfish.arena import stats

Z95 = 1.959963984540054


def brute_force_llr(counts: list[int], elo0: float, elo1: float) -> float:
    """Exact GSPRT LLR for a trinomial [L, D, W] by a 1-D search over the constrained maximum likelihood.

    With outcomes 0, 1/2, 1 and a fixed mean s, the distribution has one free parameter (the draw
    probability d: w = s - d/2, l = 1 - s - d/2), so the maximum of sum n_i ln p_i is found by a
    ternary search. Independent of the secular-equation solver in arena.stats.
    """
    regular = stats.regularize(counts)

    def best_log_likelihood(mean: float) -> float:
        """max over d of the log-likelihood of the counts with expected score `mean`."""
        def log_likelihood(draw: float) -> float:
            """Log-likelihood for draw probability `draw`."""
            win, loss = mean - draw / 2, 1 - mean - draw / 2
            return regular[0] * math.log(loss) + regular[1] * math.log(draw) + regular[2] * math.log(win)

        low, high = 1e-15, 2 * min(mean, 1 - mean) - 1e-15
        for _ in range(300):
            first, second = low + (high - low) / 3, high - (high - low) / 3
            if log_likelihood(first) < log_likelihood(second):
                low = first
            else:
                high = second
        return log_likelihood((low + high) / 2)

    return best_log_likelihood(stats.score_from_elo(elo1)) - best_log_likelihood(stats.score_from_elo(elo0))


def test_elo_from_score_known_values() -> None:
    """Known Elo values: 75% is +190.85, 10/11 is +400, 0 and 1 are infinite."""
    assert stats.elo_from_score(0.75) == pytest.approx(190.85, abs=0.01)
    assert stats.elo_from_score(0.25) == pytest.approx(-190.85, abs=0.01)
    assert stats.elo_from_score(0.5) == 0
    assert stats.elo_from_score(10 / 11) == pytest.approx(400.0)
    assert stats.elo_from_score(1.0) == math.inf
    assert stats.elo_from_score(0.0) == -math.inf


def test_score_from_elo_inverts_elo_from_score() -> None:
    """score_from_elo is the inverse of elo_from_score."""
    for score in (0.01, 0.3, 0.5, 0.64, 0.99):
        assert stats.score_from_elo(stats.elo_from_score(score)) == pytest.approx(score)
    assert stats.score_from_elo(400) == pytest.approx(10 / 11)


def test_los_normal_approximation() -> None:
    """LOS follows 0.5 * (1 + erf((W - L) / sqrt(2 (W + L))))."""
    assert stats.los(60, 40) == pytest.approx(0.5 * (1 + math.erf(20 / math.sqrt(200))))
    assert stats.los(60, 40) == pytest.approx(0.977, abs=0.001)
    assert stats.los(40, 60) == pytest.approx(1 - stats.los(60, 40))
    assert stats.los(0, 0) == 0.5
    assert stats.los(10, 10) == 0.5


def test_sprt_bounds_for_five_percent_errors() -> None:
    """The bounds are ln(beta / (1 - alpha)) and ln((1 - beta) / alpha)."""
    lower, upper = stats.sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(-2.944, abs=0.001)
    assert upper == pytest.approx(2.944, abs=0.001)
    assert upper == pytest.approx(math.log(19))
    lower, upper = stats.sprt_bounds(0.05, 0.1)
    assert (lower, upper) == pytest.approx((math.log(0.1 / 0.95), math.log(0.9 / 0.05)))
    with pytest.raises(ValueError):
        stats.sprt_bounds(0.0, 0.05)


def test_pair_scores_to_pentanomial() -> None:
    """Pair scores are counted into the five pentanomial bins."""
    assert stats.pair_scores_to_pentanomial([0, 0.5, 1, 1.5, 2, 2]) == [1, 1, 1, 1, 2]
    assert stats.pair_scores_to_pentanomial([]) == [0] * 5
    with pytest.raises(ValueError):
        stats.pair_scores_to_pentanomial([0.3])
    with pytest.raises(ValueError):
        stats.pair_scores_to_pentanomial([2.5])


def test_pentanomial_elo_interval_against_the_formula() -> None:
    """A symmetric pentanomial gives 0 Elo and an interval from the per-pair variance."""
    penta = [10, 20, 40, 20, 10]
    estimate = stats.pentanomial_elo(penta)
    # mean 0.5; per-pair variance of the half pair score: (2*10*0.25 + 2*20*0.0625) / 100 = 0.075
    margin = Z95 * math.sqrt(0.075 / 100)
    assert estimate.score == pytest.approx(0.5)
    assert estimate.elo == pytest.approx(0.0)
    assert estimate.upper == pytest.approx(-400 * math.log10(1 / (0.5 + margin) - 1))
    assert estimate.upper == pytest.approx(37.44, abs=0.01)
    assert estimate.lower == pytest.approx(-estimate.upper)
    assert estimate.games == 200


def test_pentanomial_elo_of_a_winning_record() -> None:
    """Mean, variance and interval of an uneven pentanomial match a hand computation."""
    penta = [2, 5, 20, 15, 8]  # 50 pairs, mean pair score 1.21 -> per-game 0.605
    mean = (0 * 2 + 0.25 * 5 + 0.5 * 20 + 0.75 * 15 + 1 * 8) / 50
    variance = (2 * mean ** 2 + 5 * (0.25 - mean) ** 2 + 20 * (0.5 - mean) ** 2 + 15 * (0.75 - mean) ** 2
                + 8 * (1 - mean) ** 2) / 50
    estimate = stats.pentanomial_elo(penta)
    assert estimate.elo == pytest.approx(stats.elo_from_score(mean))
    assert estimate.lower == pytest.approx(stats.elo_from_score(mean - Z95 * math.sqrt(variance / 50)))
    assert estimate.upper == pytest.approx(stats.elo_from_score(mean + Z95 * math.sqrt(variance / 50)))
    assert estimate.lower < estimate.elo < estimate.upper


def test_trinomial_elo() -> None:
    """The game-based interval uses the per-game variance."""
    estimate = stats.trinomial_elo(60, 100, 40)
    assert estimate.score == pytest.approx(0.55)
    assert estimate.elo == pytest.approx(stats.elo_from_score(0.55))
    variance = (60 * 0.45 ** 2 + 100 * 0.05 ** 2 + 40 * 0.55 ** 2) / 200
    assert estimate.upper == pytest.approx(stats.elo_from_score(0.55 + Z95 * math.sqrt(variance / 200)))


def test_all_wins_gives_infinite_elo() -> None:
    """A 100% score is +inf Elo, and 0 Elo prints as +0.0."""
    estimate = stats.pentanomial_elo([0, 0, 0, 0, 5])
    assert estimate.elo == math.inf
    assert stats.format_elo(estimate.elo) == "+inf"
    assert stats.format_elo(stats.elo_from_score(0.5)) == "+0.0"


@pytest.mark.parametrize("estimate, why", [
    (stats.trinomial_elo(0, 0, 1), "all games lost"),
    (stats.pentanomial_elo([0, 0, 0, 0, 3]), "every pair won"),
    (stats.pentanomial_elo([3, 0, 0, 0, 0]), "every pair lost"),
    (stats.pentanomial_elo([0, 1, 0, 0, 0]), "too few games"),  # one pair, L and D: -190.8 +/- 0.0 before
    (stats.trinomial_elo(0, 4, 0), "all games drawn"),
    (stats.pentanomial_elo([0, 0, 3, 0, 0]), "every pair scored the same"),
    (stats.trinomial_elo(5, 0, 1), "too few games for so one-sided a score"),  # 83% +- 30%: past 100%
])
def test_no_interval_where_it_would_mean_nothing(estimate: stats.EloEstimate, why: str) -> None:
    """A 0% or 100% score, a single sample, no spread or an end past 0% or 100% gives no interval, and says why;
    the report's text never holds an infinite Elo."""
    assert estimate.no_interval == why
    text = stats.format_estimate(estimate)
    assert "inf" not in text and "interval [" not in text and why in text


def test_an_interval_once_it_means_something() -> None:
    """Two pairs that scored differently give an interval with the Elo inside it."""
    estimate = stats.pentanomial_elo([0, 1, 1, 0, 0])
    assert estimate.no_interval is None and estimate.lower < estimate.elo < estimate.upper
    lower, upper = stats.format_elo(estimate.lower), stats.format_elo(estimate.upper)
    assert stats.format_estimate(estimate) == f"{stats.format_elo(estimate.elo)}, 95% interval [{lower}, {upper}]"
    assert stats.format_estimate(stats.pentanomial_elo([0, 1, 0, 0, 0])) == "-190.8, no interval yet: too few games"


def test_sprt_approximation_matches_the_formula_for_wdl() -> None:
    """The approximate LLR equals N (s1 - s0)(2 mu - s0 - s1) / (2 var) for a W/D/L record."""
    wins, draws, losses = 60, 100, 40
    n = wins + draws + losses
    mean = (wins + draws / 2) / n
    variance = (wins * (1 - mean) ** 2 + draws * (0.5 - mean) ** 2 + losses * mean ** 2) / n
    s0, s1 = stats.score_from_elo(0), stats.score_from_elo(10)
    expected = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance)
    assert stats.llr_logistic_approx([losses, draws, wins], 0, 10) == pytest.approx(expected)
    assert expected == pytest.approx(1.0055, abs=0.0001)  # 200 * 0.014387 * 0.085613 / (2 * 0.1225)


def test_exact_sprt_llr_against_a_brute_force_maximum_likelihood() -> None:
    """The exact GSPRT LLR agrees with a brute-force constrained maximum likelihood."""
    for counts, elo0, elo1 in (([40, 100, 60], 0, 10), ([5, 3, 12], -5, 5), ([30, 50, 20], 0, 20), ([0, 0, 7], 0, 50)):
        assert stats.llr_logistic(counts, elo0, elo1) == pytest.approx(brute_force_llr(counts, elo0, elo1), abs=1e-6)


def test_exact_and_approximate_llr_agree_on_ordinary_data() -> None:
    """On ordinary data the exact and the approximate LLR are within 2%."""
    penta = [30, 50, 100, 60, 40]
    exact = stats.llr_logistic(penta, 0, 10)
    assert exact == pytest.approx(stats.llr_logistic_approx(penta, 0, 10), rel=0.02)
    assert exact == pytest.approx(0.908, abs=0.001)


def test_llr_symmetries() -> None:
    """Swapping the hypotheses negates the LLR; equal hypotheses give 0."""
    penta = [3, 5, 10, 6, 4]
    assert stats.llr_logistic(penta, 0, 10) == pytest.approx(-stats.llr_logistic(penta, 10, 0))
    assert stats.llr_logistic(penta, 5, 5) == pytest.approx(0.0, abs=1e-12)
    assert stats.llr_logistic([0] * 5, 0, 10) == 0.0
    assert stats.llr_logistic([4, 6, 10, 5, 3], 0, 10) == pytest.approx(-stats.llr_logistic(penta, -10, 0))


def test_mle_distribution_has_the_requested_mean() -> None:
    """The fitted distribution sums to 1 and has the target mean."""
    _, distribution = stats.outcome_distribution(stats.regularize([3, 0, 10, 6, 4]))
    for target in (0.45, 0.5, 0.55):
        fitted = stats.mle_distribution(distribution, target)
        mean, _ = stats.mean_and_variance(fitted)
        assert sum(p for _, p in fitted) == pytest.approx(1.0)
        assert mean == pytest.approx(target)


def test_sprt_decisions() -> None:
    """H1 / H0 / no decision at the expected numbers of pairs."""
    assert stats.sprt([0, 0, 0, 0, 8], 0, 200, 0.05, 0.05).decision == "H1"
    assert stats.sprt([0, 0, 0, 0, 7], 0, 200, 0.05, 0.05).decision is None
    assert stats.sprt([5, 0, 0, 0, 0], 0, 200, 0.05, 0.05).decision == "H0"
    result = stats.sprt([30, 50, 100, 60, 40], 0, 10, 0.05, 0.05)
    assert result.decision is None and result.lower < result.llr < result.upper


def test_rating_on_scale_with_one_level_adds_the_elo_difference() -> None:
    pentanomial = [2, 5, 20, 9, 4]
    estimate = stats.rating_on_scale([stats.RatingLevel(1700, pentanomial)])
    assert estimate.elo == pytest.approx(1700 + stats.pentanomial_elo(pentanomial).elo, abs=0.1)
    assert estimate.games == 80
    assert estimate.lower < estimate.elo < estimate.upper


def test_rating_on_scale_between_two_levels() -> None:
    # +152 Elo against a 1500 and -152 against a 1900 (mirror-image results): rated 1700.
    above, below = [1, 3, 10, 14, 12], [12, 14, 10, 3, 1]
    estimate = stats.rating_on_scale([stats.RatingLevel(1500, above), stats.RatingLevel(1900, below)])
    assert estimate.elo == pytest.approx(1700, abs=0.1)
    assert estimate.score == pytest.approx(0.5)
    single = stats.rating_on_scale([stats.RatingLevel(1500, above)])
    # Two matches pin the rating down more tightly than one.
    assert estimate.error < single.error


def test_rating_on_scale_weights_the_more_precise_level() -> None:
    # The 1000-pair level says 1700 (an even score); the 10-pair level says far higher.
    many, few = [100, 200, 400, 200, 100], [0, 0, 1, 2, 7]
    estimate = stats.rating_on_scale([stats.RatingLevel(1700, many), stats.RatingLevel(1700, few)])
    assert 1700 < estimate.elo < 1720
    # A perfect score still gives a finite rating and interval.
    perfect = stats.rating_on_scale([stats.RatingLevel(1350, [0, 0, 0, 0, 30])])
    assert math.isfinite(perfect.elo) and perfect.elo > 1350 + 600 and math.isfinite(perfect.upper)
    with pytest.raises(ValueError):
        stats.rating_on_scale([])
