"""Ratings by maximum likelihood over games between several players, some of them anchors of known rating.

The model (an ordered logit, as BayesElo's, on the Elo scale): for a game with White rated w and
Black rated b, d = w - b + A (A the advantage of having White), F(x) = 1 / (1 + 10 ** (-x / 400)):

    P(White wins) = F(d / k - T),  P(Black wins) = F(-d / k - T),  P(draw) = the rest,
    k = 4 F(T) (1 - F(T)).

T >= 0 sets the draw rate (at d = 0 a game is drawn with probability 1 - 2 F(-T)); dividing d by
k keeps the expected score's slope at d = 0 that of the logistic Elo curve score = F(d), so a
rating difference here reads as the Elo difference of arena.stats near equal strength, with any
draw rate. T and A are fitted with the ratings (by scipy.optimize.minimize on the
log-likelihood of the games, counted by (White, Black, result), with its analytic gradient).

`fit`: the free players' ratings with the anchors held at their published ratings, each free
player's 95% interval from its profile likelihood (the rating where twice the log-likelihood
falls by 3.84 from its maximum, every other parameter fitted again there). A free player with
no game against a player whose rating is known, directly or through others, cannot be placed
and gets no rating. Ratings are bounded to BOUND of the anchors; a rating at a bound (a player
that won or lost every game) has an infinite interval on that side.

`fit_relative`: every player's rating from the games alone, on one scale whose offset is fixed
by the anchors: the fitted ratings of the anchors average to their published ratings (leaving out an
anchor that won or lost every game, whose fitted rating sits at a bound of the fit). The
ratings of players who met in a round robin say how they compare with each other; the anchors'
fitted ratings beside their published ones say how well the published figures agree with the
games. Intervals: a bootstrap over the games (resampled with replacement within each pairing,
seeded, so the same games give the same intervals).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

ELO_SCALE = 400.0
BOUND = 1500.0  # no rating more than this far from the anchors' range
CHI2_95 = 3.841458820694124  # chi-squared with one degree of freedom, 95%
BOOTSTRAP_SAMPLES = 200
BOOTSTRAP_SEED = 20261202
MAX_DRAW_ELO = 2000.0
MAX_WHITE_ADVANTAGE = 300.0
PROBABILITY_FLOOR = 1e-12
HESSIAN_STEP = 1.0  # Elo: the finite-difference step of the curvature interval
RESULTS = (1.0, 0.5, 0.0)  # White's points in a game: win, draw, loss


@dataclass(frozen=True)
class Game:
    """One game's result: the players by index, White first, and White's points (1, 0.5 or 0)."""

    white: int
    black: int
    points: float


@dataclass
class Rating:
    """A fitted rating with its 95% interval (None where the player could not be placed)."""

    rating: Optional[float]
    lower: Optional[float] = None
    upper: Optional[float] = None
    games: int = 0
    anchor: Optional[float] = None  # the published rating it was held at (fit) or compared with (fit_relative)

    @property
    def placed(self) -> bool:
        """Whether the games place this player at all."""
        return self.rating is not None


@dataclass
class Fit:
    """The fitted ratings (a Rating a player), the draw parameter T and White's advantage A in Elo, and the
    maximum log-likelihood."""

    ratings: list[Rating]
    draw_elo: float
    white_advantage: float
    log_likelihood: float
    games: int
    notes: list[str] = field(default_factory=list)


LN10_SCALE = math.log(10.0) / ELO_SCALE  # F'(x) = LN10_SCALE F(x) (1 - F(x))
EXPONENT_LIMIT = 300.0  # |x / 400| beyond this is 0 or 1 to double precision anyway


def expected_win(x: np.ndarray) -> np.ndarray:
    """The logistic curve F(x) = 1 / (1 + 10 ** (-x / 400))."""
    return 1.0 / (1.0 + np.power(10.0, np.clip(-x / ELO_SCALE, -EXPONENT_LIMIT, EXPONENT_LIMIT)))


def probabilities(diff: np.ndarray, draw_elo: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P(White wins), P(draw), P(Black wins) for rating differences `diff` (White's advantage included)."""
    f_t = 1.0 / (1.0 + 10.0 ** (-draw_elo / ELO_SCALE))
    k = 4.0 * f_t * (1.0 - f_t)
    win = expected_win(diff / k - draw_elo)
    loss = expected_win(-diff / k - draw_elo)
    draw = np.maximum(1.0 - win - loss, PROBABILITY_FLOOR)
    return np.maximum(win, PROBABILITY_FLOOR), draw, np.maximum(loss, PROBABILITY_FLOOR)


def expected_score(diff: float, draw_elo: float) -> float:
    """The expected score of a player `diff` Elo above its opponent (colours averaged out)."""
    win, draw, _ = probabilities(np.array([diff]), draw_elo)
    return float(win[0] + draw[0] / 2)


class Counts:
    """Games counted by (White, Black): wins, draws and losses of White, as arrays the likelihood reads."""

    def __init__(self, games: Sequence[Game]) -> None:
        """Count the games."""
        table: dict[tuple[int, int], list[int]] = {}
        for game in games:
            if game.points not in RESULTS:
                raise ValueError(f"a game's points must be 1, 0.5 or 0, not {game.points}")
            table.setdefault((game.white, game.black), [0, 0, 0])[RESULTS.index(game.points)] += 1
        keys = sorted(table)
        self.white = np.array([key[0] for key in keys], dtype=np.int64)
        self.black = np.array([key[1] for key in keys], dtype=np.int64)
        counts = np.array([table[key] for key in keys], dtype=np.float64).reshape(-1, 3)
        self.wins, self.draws, self.losses = counts[:, 0], counts[:, 1], counts[:, 2]
        self.games = len(games)

    def log_likelihood(self, ratings: np.ndarray, draw_elo: float, white_advantage: float) -> float:
        """The log-likelihood of the counted games under these parameters."""
        if not self.games:
            return 0.0
        diff = ratings[self.white] - ratings[self.black] + white_advantage
        win, draw, loss = probabilities(diff, draw_elo)
        return float(np.sum(self.wins * np.log(win) + self.draws * np.log(draw) + self.losses * np.log(loss)))

    def gradient(self, ratings: np.ndarray, draw_elo: float, white_advantage: float
                 ) -> tuple[float, np.ndarray, float, float]:
        """The log-likelihood and its derivatives by each player's rating, by T and by A."""
        diff = ratings[self.white] - ratings[self.black] + white_advantage
        win, draw, loss = probabilities(diff, draw_elo)
        value = float(np.sum(self.wins * np.log(win) + self.draws * np.log(draw) + self.losses * np.log(loss)))
        f_t = 1.0 / (1.0 + 10.0 ** (-draw_elo / ELO_SCALE))
        k = 4.0 * f_t * (1.0 - f_t)
        dk = 4.0 * LN10_SCALE * f_t * (1.0 - f_t) * (1.0 - 2.0 * f_t)  # dk/dT
        slope_win = LN10_SCALE * win * (1.0 - win)  # F' at the win's and the loss's arguments
        slope_loss = LN10_SCALE * loss * (1.0 - loss)
        by_win = self.wins / win - self.draws / draw  # dLL/dP(win), P(draw) = 1 - P(win) - P(loss)
        by_loss = self.losses / loss - self.draws / draw
        by_diff = (by_win * slope_win - by_loss * slope_loss) / k
        by_draw = float(np.sum(by_win * slope_win * (-diff * dk / k ** 2 - 1.0)
                               + by_loss * slope_loss * (diff * dk / k ** 2 - 1.0)))
        players = len(ratings)
        by_rating = (np.bincount(self.white, by_diff, players) - np.bincount(self.black, by_diff, players))
        return value, by_rating, by_draw, float(np.sum(by_diff))


def games_of(games: Sequence[Game], players: int) -> list[int]:
    """How many games each player played."""
    counts = [0] * players
    for game in games:
        counts[game.white] += 1
        counts[game.black] += 1
    return counts


def connected_to_anchors(games: Sequence[Game], players: int, anchors: dict[int, float]) -> set[int]:
    """The players linked to an anchor by a chain of games (the anchors included)."""
    neighbours: list[set[int]] = [set() for _ in range(players)]
    for game in games:
        neighbours[game.white].add(game.black)
        neighbours[game.black].add(game.white)
    reached = set(anchors)
    frontier = list(anchors)
    while frontier:
        player = frontier.pop()
        for other in neighbours[player] - reached:
            reached.add(other)
            frontier.append(other)
    return reached


class Problem:
    """The log-likelihood as a function of the free parameters: the free players' ratings, T and A."""

    def __init__(self, counts: Counts, players: int, anchors: dict[int, float], free: list[int]) -> None:
        """Anchors are held at their ratings; the players in `free` are fitted."""
        self.counts = counts
        self.base = np.zeros(players)
        for player, rating in anchors.items():
            self.base[player] = rating
        self.free = np.array(free, dtype=np.int64)
        centre = float(np.mean(list(anchors.values()))) if anchors else 0.0
        low = min(anchors.values(), default=0.0) - BOUND
        high = max(anchors.values(), default=0.0) + BOUND
        self.start = np.array([centre] * len(free) + [200.0, 30.0])
        self.bounds = [(low, high)] * len(free) + [(0.0, MAX_DRAW_ELO), (-MAX_WHITE_ADVANTAGE, MAX_WHITE_ADVANTAGE)]

    def ratings(self, x: np.ndarray) -> np.ndarray:
        """All players' ratings for parameter vector x."""
        ratings = self.base.copy()
        ratings[self.free] = x[:len(self.free)]
        return ratings

    def negative(self, x: np.ndarray) -> float:
        """Minus the log-likelihood at x."""
        return -self.counts.log_likelihood(self.ratings(x), float(x[-2]), float(x[-1]))

    def negative_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """Minus the log-likelihood at x and its gradient."""
        if not self.counts.games:
            return 0.0, np.zeros(len(x))
        value, by_rating, by_draw, by_advantage = self.counts.gradient(self.ratings(x), float(x[-2]), float(x[-1]))
        return -value, -np.concatenate([by_rating[self.free], [by_draw, by_advantage]])

    def maximise(self, start: Optional[np.ndarray] = None, fixed: Optional[tuple[int, float]] = None
                 ) -> tuple[np.ndarray, float]:
        """The parameters of greatest likelihood (with parameter fixed[0] held at fixed[1]) and that
        log-likelihood."""
        from scipy.optimize import minimize

        x0 = (self.start if start is None else start).copy()
        bounds = list(self.bounds)
        if fixed is not None:
            x0[fixed[0]] = fixed[1]
            bounds[fixed[0]] = (fixed[1], fixed[1])
        # TNC (a truncated Newton method with bounds) with the analytic gradient: here as exact as L-BFGS-B
        # and several times quicker on these few parameters.
        result = minimize(self.negative_and_gradient, x0, jac=True, method="TNC", bounds=bounds)
        best = np.asarray(result.x, dtype=np.float64)
        return best, -self.negative(best)

    def profile_interval(self, index: int, best: np.ndarray, maximum: float) -> tuple[float, float]:
        """The 95% profile-likelihood interval of parameter `index` (+-inf where it reaches a bound)."""
        from scipy.optimize import brentq

        low, high = self.bounds[index]
        target = maximum - CHI2_95 / 2

        def excess(value: float) -> float:
            return self.maximise(best, (index, value))[1] - target

        centre = float(best[index])
        lower = -math.inf if excess(low) > 0 else brentq(excess, low, centre, xtol=0.05) if centre > low else low
        upper = math.inf if excess(high) > 0 else brentq(excess, centre, high, xtol=0.05) if centre < high else high
        return lower, upper


    def curvature_interval(self, index: int, best: np.ndarray) -> tuple[float, float]:
        """A quick 95% interval of parameter `index` from the log-likelihood's curvature at its maximum
        (the inverse of the numerical Hessian; the live line's figure, the profile's in the report)."""
        size = len(best)
        step = HESSIAN_STEP
        hessian = np.zeros((size, size))
        centre = self.negative(best)
        for i in range(size):
            for j in range(i, size):
                def at(di: float, dj: float) -> float:
                    x = best.copy()
                    x[i] += di
                    x[j] += dj
                    return self.negative(x)
                if i == j:
                    value = (at(step, 0.0) - 2 * centre + at(-step, 0.0)) / step ** 2
                else:
                    value = (at(step, step) - at(step, -step) - at(-step, step) + at(-step, -step)) / (4 * step ** 2)
                hessian[i, j] = hessian[j, i] = value
        try:
            variance = float(np.linalg.inv(hessian)[index, index])
        except np.linalg.LinAlgError:
            return -math.inf, math.inf
        if not variance > 0:
            return -math.inf, math.inf
        margin = math.sqrt(CHI2_95 * variance)
        low, high = self.bounds[index]
        lower, upper = float(best[index]) - margin, float(best[index]) + margin
        return (-math.inf if lower < low else lower), (math.inf if upper > high else upper)


def fit(games: Sequence[Game], players: int, anchors: dict[int, float], intervals: str = "profile") -> Fit:
    """The free players' ratings with the anchors held at their ratings (see the module's docstring);
    intervals: "profile" (the profile likelihood's), "curvature" (quicker, from the Hessian) or "none"."""
    counts = Counts(games)
    played = games_of(games, players)
    reached = connected_to_anchors(games, players, anchors) if anchors else set()
    free = [player for player in range(players) if player not in anchors and player in reached and played[player]]
    notes = [f"player {player} has no game linking it to an anchor: not placed"
             for player in range(players) if player not in anchors and player not in free]
    ratings = [Rating(anchors[player], anchors[player], anchors[player], played[player], anchors[player])
               if player in anchors else Rating(None, games=played[player]) for player in range(players)]
    if not free:
        return Fit(ratings, 0.0, 0.0, counts.log_likelihood(np.array([anchors.get(p, 0.0) for p in range(players)]),
                                                            0.0, 0.0), counts.games, notes)
    problem = Problem(counts, players, anchors, free)
    best, maximum = problem.maximise()
    for index, player in enumerate(free):
        value = float(best[index])
        lower: Optional[float] = None
        upper: Optional[float] = None
        if intervals == "profile":
            lower, upper = problem.profile_interval(index, best, maximum)
        elif intervals == "curvature":
            lower, upper = problem.curvature_interval(index, best)
        low, high = problem.bounds[index]
        at_bound = value <= low + 1.0 or value >= high - 1.0
        if at_bound and intervals == "curvature":
            lower, upper = -math.inf, math.inf  # the curvature means nothing at a bound
        if value <= low + 1.0:
            lower = -math.inf
        if value >= high - 1.0:
            upper = math.inf
        ratings[player] = Rating(value, lower, upper, played[player])
    return Fit(ratings, float(best[-2]), float(best[-1]), maximum, counts.games, notes)


def relative_ratings(games: Sequence[Game], players: int, anchors: dict[int, float]) -> Optional[Fit]:
    """Every player's rating from the games alone, offset so that the anchors' fitted ratings average to
    their published ones; None when the games do not link every player to an anchor."""
    if not anchors or connected_to_anchors(games, players, anchors) != set(range(players)):
        return None
    counts = Counts(games)
    # One player is held at 0 to fix the scale's offset, which the games cannot; then the whole
    # scale is shifted onto the anchors' mean.
    scores = [0.0] * players
    for game in games:
        scores[game.white] += game.points
        scores[game.black] += 1.0 - game.points
    played_count = games_of(games, players)
    # The held player: the anchor whose score is nearest 50%, so that the bounds (BOUND either side of
    # it) leave room for the field's strongest and weakest.
    held = min(anchors, key=lambda player: (abs(scores[player] / max(1, played_count[player]) - 0.5), player))
    problem = Problem(counts, players, {held: 0.0}, [player for player in range(players) if player != held])
    best, maximum = problem.maximise()
    ratings = problem.ratings(best)
    low, high = problem.bounds[0]
    unbounded = [player for player in range(players) if low + 1.0 < ratings[player] - ratings[held] < high - 1.0
                 or player == held]
    # An anchor that won or lost every game sits at a bound, far from where its rating could be: it would
    # drag the offset, so the offset is taken from the other anchors (all of them if every one is there).
    offset = [player for player in anchors if player in unbounded] or list(anchors)
    shift = float(np.mean([anchors[player] for player in offset]) - np.mean([ratings[player] for player in offset]))
    played = games_of(games, players)
    notes = [f"player {player} is at a bound of the fit (it won or lost every game): not in the offset"
             for player in anchors if player not in offset]
    return Fit([Rating(float(ratings[player] + shift), games=played[player], anchor=anchors.get(player))
                for player in range(players)], float(best[-2]), float(best[-1]), maximum, counts.games, notes)


def fit_relative(games: Sequence[Game], players: int, anchors: dict[int, float],
                 groups: Optional[Sequence[int]] = None, samples: int = BOOTSTRAP_SAMPLES,
                 seed: int = BOOTSTRAP_SEED) -> Optional[Fit]:
    """relative_ratings with a bootstrap 95% interval for each player: the games are resampled with
    replacement within each group (groups[i] is game i's pairing; default one group), the fit is made
    again, and the 2.5% and 97.5% quantiles of each rating are its interval."""
    result = relative_ratings(games, players, anchors)
    if result is None:
        return None
    labels = list(groups) if groups is not None else [0] * len(games)
    by_group: dict[int, list[int]] = {}
    for index, label in enumerate(labels):
        by_group.setdefault(label, []).append(index)
    rng = np.random.default_rng(seed)
    draws: list[list[float]] = [[] for _ in range(players)]
    for _ in range(samples):
        chosen = [games[i] for members in by_group.values() for i in rng.choice(members, size=len(members))]
        again = relative_ratings(chosen, players, anchors)
        if again is None:
            continue  # this resample left a player unlinked; it says nothing of the spread
        for player, rating in enumerate(again.ratings):
            if rating.rating is not None:
                draws[player].append(rating.rating)
    for player, rating in enumerate(result.ratings):
        if len(draws[player]) >= samples // 2:
            rating.lower = float(np.quantile(draws[player], 0.025))
            rating.upper = float(np.quantile(draws[player], 0.975))
    return result
