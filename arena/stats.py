"""Match statistics as pure functions: Elo from a score, LOS, pentanomial/trinomial Elo intervals, GSPRT.

Conventions:
* Scores are per game, in [0, 1]; Elo is logistic: score = 1 / (1 + 10 ** (-elo / 400)).
* A pentanomial is the count of colour-swapped game pairs by pair score (0, 0.5, 1, 1.5, 2),
  i.e. [LL, LD+DL, LW+DD+WL, DW+WD, WW] from the first engine's side. Its outcomes are read
  as per-game scores 0, 0.25, 0.5, 0.75, 1 (half the pair score).
* SPRT: the generalized SPRT for logistic Elo on the pentanomial (fishtest's `LLR_logistic`,
  M. Van den Bergh, "support_MLE_multinomial"): for each hypothesis the maximum-likelihood
  outcome distribution with expected score s0 = L(elo0) resp. s1 = L(elo1) is found (a secular
  equation, solved here by bisection), and
      LLR = N * sum_i p_i * ln(p1_i / p0_i)
  with N the number of pairs and p_i the observed frequencies. Empty outcome bins are
  regularized to 1e-3 as fishtest does. `llr_logistic_approx` is the Brownian-motion
  approximation N (s1 - s0)(2 mu - s0 - s1) / (2 var) (fishtest `LLR_alt2`); it agrees with the
  exact value on ordinary data but explodes on one-sided results (all wins), so it is not used
  for decisions. fastchess's default normalized-Elo model is not implemented.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Optional, Sequence

PENTANOMIAL_SIZE = 5
REGULARIZATION = 1e-3  # fishtest's prior for empty outcome bins
DEFAULT_CONFIDENCE = 0.95
ELO_PER_LOG10 = 400.0
SECULAR_ITERATIONS = 200  # bisection steps (far below float resolution)


@dataclass(frozen=True)
class EloEstimate:
    """An Elo difference with a confidence interval (values may be +-inf at a 0% or 100% score)."""

    elo: float
    lower: float
    upper: float
    score: float
    games: int
    no_interval: Optional[str] = None  # why lower and upper mean nothing yet ("all games lost"); None when they do

    @property
    def error(self) -> float:
        """Half the width of the interval (the '+-' figure)."""
        return (self.upper - self.lower) / 2


@dataclass(frozen=True)
class SprtResult:
    """The state of a sequential test: LLR, its bounds and the decision ('H0', 'H1' or None)."""

    llr: float
    lower: float
    upper: float
    decision: Optional[str]


def elo_from_score(score: float) -> float:
    """Logistic Elo difference for a per-game score in [0, 1] (-inf / +inf at 0 and 1)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -ELO_PER_LOG10 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    """Expected per-game score for a logistic Elo difference."""
    return 1.0 / (1.0 + 10.0 ** (-elo / ELO_PER_LOG10))


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority, normal approximation: 0.5 * (1 + erf((W - L) / sqrt(2 (W + L))))."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


def pair_scores_to_pentanomial(pair_scores: Sequence[float]) -> list[int]:
    """Count pair scores (each 0, 0.5, 1, 1.5 or 2) into a pentanomial."""
    counts = [0] * PENTANOMIAL_SIZE
    for pair_score in pair_scores:
        index = round(pair_score * 2)
        if not 0 <= index < PENTANOMIAL_SIZE or abs(index - pair_score * 2) > 1e-9:
            raise ValueError(f"a pair score must be 0, 0.5, 1, 1.5 or 2, not {pair_score}")
        counts[index] += 1
    return counts


def outcome_distribution(counts: Sequence[float]) -> tuple[float, list[tuple[float, float]]]:
    """Counts of outcomes spread evenly over [0, 1] -> (total, [(outcome score, probability)])."""
    if len(counts) < 2:
        raise ValueError("at least two outcome bins are needed")
    total = float(sum(counts))
    if total <= 0:
        raise ValueError("no results")
    last = len(counts) - 1
    return total, [(index / last, count / total) for index, count in enumerate(counts)]


def mean_and_variance(distribution: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """Mean and variance of a discrete distribution [(value, probability)]."""
    mean = sum(value * probability for value, probability in distribution)
    variance = sum(probability * (value - mean) ** 2 for value, probability in distribution)
    return mean, variance


def z_value(confidence: float) -> float:
    """The two-sided normal quantile for a confidence level (0.95 -> 1.95996...)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def elo_interval(counts: Sequence[int], confidence: float = DEFAULT_CONFIDENCE) -> EloEstimate:
    """Elo and confidence interval from outcome counts (pentanomial pairs or trinomial [L, D, W] games).

    The per-game score mean mu and the variance of one sample (pair or game) give the standard
    error sqrt(var / N); the interval mu +- z * se is converted to Elo.
    """
    samples, distribution = outcome_distribution(counts)
    mean, variance = mean_and_variance(distribution)
    margin = z_value(confidence) * math.sqrt(variance / samples)
    pairs = len(counts) == PENTANOMIAL_SIZE
    games = int(samples) * (2 if pairs else 1)
    return EloEstimate(elo_from_score(mean), elo_from_score(mean - margin), elo_from_score(mean + margin),
                       mean, games, why_no_interval(samples, mean, variance, margin, pairs))


def why_no_interval(samples: float, mean: float, variance: float, margin: float, pairs: bool) -> Optional[str]:
    """Why the interval mean +- margin says nothing yet (a 0% or 100% score, a single sample or no spread, an end
    at a 0% or 100% score, where Elo is infinite); None when it does."""
    if mean <= 0.0:  # of pairs: every finished pair lost, though a game of an unfinished one may be won
        return "every pair lost" if pairs else "all games lost"
    if mean >= 1.0:
        return "every pair won" if pairs else "all games won"
    if samples < 2:
        return "too few games"
    if variance <= 0.0:
        return "every pair scored the same" if pairs else "all games drawn"
    if mean - margin <= 0.0 or mean + margin >= 1.0:
        return "too few games for so one-sided a score"
    return None


def pentanomial_elo(pentanomial: Sequence[int], confidence: float = DEFAULT_CONFIDENCE) -> EloEstimate:
    """Elo with a confidence interval from a pentanomial [LL, LD+DL, LW+DD+WL, DW+WD, WW]."""
    if len(pentanomial) != PENTANOMIAL_SIZE:
        raise ValueError("a pentanomial has 5 counts")
    return elo_interval(pentanomial, confidence)


def trinomial_elo(wins: int, draws: int, losses: int, confidence: float = DEFAULT_CONFIDENCE) -> EloEstimate:
    """Elo with a confidence interval from game results (each game an independent sample)."""
    return elo_interval([losses, draws, wins], confidence)


def regularize(counts: Sequence[float]) -> list[float]:
    """Replace empty bins by REGULARIZATION (fishtest's small prior)."""
    return [count if count > 0 else REGULARIZATION for count in counts]


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """SPRT LLR bounds: (ln(beta / (1 - alpha)), ln((1 - beta) / alpha))."""
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0):
        raise ValueError("alpha and beta must be between 0 and 1")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def llr_logistic_approx(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """Approximate GSPRT LLR: N (s1 - s0)(2 mu - s0 - s1) / (2 var) on the regularized outcome distribution."""
    if sum(counts) == 0:
        return 0.0
    samples, distribution = outcome_distribution(regularize(counts))
    mean, variance = mean_and_variance(distribution)
    s0, s1 = score_from_elo(elo0), score_from_elo(elo1)
    return samples * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * variance)


def solve_secular(distribution: Sequence[tuple[float, float]]) -> float:
    """The root x of sum_i p_i a_i / (1 + x a_i) = 0 (the a_i must take both signs), by bisection."""
    values = [value for value, _ in distribution]
    low, high = -1.0 / max(values), -1.0 / min(values)
    for _ in range(SECULAR_ITERATIONS):
        middle = (low + high) / 2.0
        total = sum(probability * value / (1.0 + middle * value) for value, probability in distribution)
        if total > 0.0:  # the sum decreases in x
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


def mle_distribution(distribution: Sequence[tuple[float, float]], mean: float) -> list[tuple[float, float]]:
    """The maximum-likelihood distribution on the same outcomes with the given expected score."""
    x = solve_secular([(value - mean, probability) for value, probability in distribution])
    return [(value, probability / (1.0 + x * (value - mean))) for value, probability in distribution]


def llr_logistic(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """GSPRT log-likelihood ratio of elo1 against elo0 (logistic Elo) for outcome counts.

    counts is a pentanomial (pairs) or a trinomial [L, D, W] (games); 0 when there are no results.
    """
    if sum(counts) == 0:
        return 0.0
    samples, distribution = outcome_distribution(regularize(counts))
    s0, s1 = score_from_elo(elo0), score_from_elo(elo1)
    null, alternative = mle_distribution(distribution, s0), mle_distribution(distribution, s1)
    return samples * sum(probability * (math.log(p1) - math.log(p0))
                         for (_, probability), (_, p0), (_, p1) in zip(distribution, null, alternative))


def sprt(counts: Sequence[int], elo0: float, elo1: float, alpha: float, beta: float) -> SprtResult:
    """The SPRT state for outcome counts: LLR, bounds, and 'H1' / 'H0' once a bound is crossed."""
    lower, upper = sprt_bounds(alpha, beta)
    llr = llr_logistic(counts, elo0, elo1)
    decision = "H1" if llr >= upper else "H0" if llr <= lower else None
    return SprtResult(llr, lower, upper, decision)


def format_elo(value: float) -> str:
    """An Elo figure for reports: '+12.3', '-4.0', '+inf'."""
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    if math.isnan(value):
        return "nan"
    return f"{value + 0.0:+.1f}"  # + 0.0 turns -0.0 into 0.0


def format_estimate(estimate: EloEstimate) -> str:
    """An Elo and its 95% interval for a report, never an infinite Elo nor an empty interval:
    '+12.3, 95% interval [+1.0, +23.6]', '-190.8, no interval yet: too few games', 'none yet: all games lost'."""
    if not math.isfinite(estimate.elo):
        return f"none yet: {estimate.no_interval}"
    if estimate.no_interval is not None:
        return f"{format_elo(estimate.elo)}, no interval yet: {estimate.no_interval}"
    return f"{format_elo(estimate.elo)}, 95% interval [{format_elo(estimate.lower)}, {format_elo(estimate.upper)}]"


@dataclass(frozen=True)
class RatingLevel:
    """Results against an opponent of known rating: the opponent's rating and a pentanomial."""

    opponent: float
    pentanomial: Sequence[int]


def rating_on_scale(levels: Sequence[RatingLevel], confidence: float = DEFAULT_CONFIDENCE) -> EloEstimate:
    """A rating on the opponents' scale from matches against several opponents of known rating.

    Each level gives a mean per-game score m_i with the variance of that mean v_i (from the
    pentanomial, empty bins regularized so that a 100% score still has a finite weight). The
    rating R minimizes sum_i (m_i - L(R - E_i))^2 / v_i (weighted least squares in score space,
    L the logistic expectation, E_i the opponent's rating), found on a 0.1-Elo grid; the
    standard error is 1 / sqrt(sum_i L'(R - E_i)^2 / v_i) and the interval R +- z * se
    (symmetric, unlike the per-match interval, which is symmetric in score). With a single
    level the estimate is the opponent's rating plus that match's Elo difference.
    The `score` field is the mean score over all levels, `games` their total.
    """
    if not levels:
        raise ValueError("no results")
    points = []
    games = 0
    total_score = 0.0
    for level in levels:
        if len(level.pentanomial) != PENTANOMIAL_SIZE:
            raise ValueError("a pentanomial has 5 counts")
        pairs, distribution = outcome_distribution(regularize(level.pentanomial))
        mean, variance = mean_and_variance(distribution)
        points.append((level.opponent, mean, variance / pairs))
        games += 2 * sum(level.pentanomial)
        total_score += sum(index * count for index, count in enumerate(level.pentanomial)) / 2  # pair score index/2
    slope = math.log(10.0) / ELO_PER_LOG10

    def misfit(rating: float) -> float:
        return sum((mean - score_from_elo(rating - opponent)) ** 2 / var for opponent, mean, var in points)

    low = min(p[0] for p in points) - 2000.0
    high = max(p[0] for p in points) + 2000.0
    best = min((low + step for step in range(int(high - low) + 1)), key=misfit)
    best = min((best + tenth / 10.0 for tenth in range(-10, 11)), key=misfit)
    information = 0.0
    for opponent, _, var in points:
        expected = score_from_elo(best - opponent)
        information += (slope * expected * (1.0 - expected)) ** 2 / var
    margin = z_value(confidence) / math.sqrt(information)
    return EloEstimate(best, best - margin, best + margin, total_score / games if games else 0.0, games)
