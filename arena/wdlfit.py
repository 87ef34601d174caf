"""`garfish wdl PGN ...`: fit the win/draw/loss model of an engine's scores from its games.

The model is Stockfish's (its `WDL_model` tool): for a position with score v
(centipawns, from the side to move's view) and material m (pawns 1, knights
and bishops 3, rooks 5, queens 9, both sides, clamped to 17..78),

    P(win)  = 1 / (1 + exp((a(m) - v) / b(m)))
    P(loss) = 1 / (1 + exp((a(m) + v) / b(m)))
    P(draw) = 1 - P(win) - P(loss)

a is the score at which a win is as likely as not, b how fast the chance
changes with the score. Fitting follows the same two steps: for every material
count (neighbouring counts grouped until a group has enough positions), the a
and b of greatest likelihood of the games' results (a small Nelder-Mead search),
then a(m) and b(m) as cubic polynomials in m / 58 (least squares weighted by the
number of positions).

Input: PGNs written by `garfish match`, whose move comments hold the mover's
score ("+0.35/12 0.231s", mates "+M3/20" are skipped). `--engine NAME` takes
only the moves of the player of that name (default: every move). Prints the
coefficients as Python for engine/evaluation/wdl.py, with the counts and the fit's
log-likelihood per position.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence

import chess
import chess.pgn
import numpy as np

SCORE_RE = re.compile(r"^\s*([+-]?\d+(?:\.\d+)?)/\d+")
MATERIAL_VALUE = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}
MATERIAL_MIN, MATERIAL_MAX = 17, 78  # Stockfish's clamp: below 17 and above 78 share a fit
MATERIAL_SCALE = 58.0                # the polynomials take m / 58, as Stockfish's do
MIN_POSITIONS = 200                  # a material count with fewer positions gets no fit of its own
POLY_DEGREE = 3
# Bounds of a group's a and b (centipawns): a group whose games barely depend on the score (the
# opening, where most scores are near 0) would otherwise drift to a huge a and b of the same ratio.
A_RANGE = (0.0, 1000.0)
B_RANGE = (10.0, 500.0)


@dataclass
class Sample:
    """One scored position: score from the mover's view, material, result for the mover (1, 0.5, 0)."""

    score: float
    material: int
    result: float


def material(board: chess.Board) -> int:
    """Material of both sides in pawn units, clamped to the model's range."""
    total = sum(value * chess.popcount(board.pieces_mask(piece, chess.WHITE) | board.pieces_mask(piece, chess.BLACK))
                for piece, value in MATERIAL_VALUE.items())
    return min(max(total, MATERIAL_MIN), MATERIAL_MAX)


def read_samples(path: Path, engine: Optional[str]) -> Iterator[Sample]:
    """The scored positions of every finished game in a PGN file."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        while True:
            game = chess.pgn.read_game(handle)
            if game is None:
                return
            white_result = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(game.headers.get("Result", "*"))
            if white_result is None:
                continue
            board = game.board()
            for node in game.mainline():
                mover = board.turn
                name = game.headers.get("White" if mover == chess.WHITE else "Black")
                match = SCORE_RE.match(node.comment or "")
                if match and (engine is None or name == engine):
                    result = white_result if mover == chess.WHITE else 1.0 - white_result
                    yield Sample(float(match.group(1)) * 100.0, material(board), result)
                board.push(node.move)


def probabilities(score: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Win, draw and loss probabilities of the model."""
    win = 1.0 / (1.0 + np.exp(np.clip((a - score) / b, -500, 500)))
    loss = 1.0 / (1.0 + np.exp(np.clip((a + score) / b, -500, 500)))
    return win, np.clip(1.0 - win - loss, 0.0, 1.0), loss


def log_likelihood(score: np.ndarray, result: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Mean log-likelihood of the results under the model."""
    win, draw, loss = probabilities(score, a, b)
    chosen = np.where(result == 1.0, win, np.where(result == 0.0, loss, draw))
    return float(np.mean(np.log(np.maximum(chosen, 1e-12))))


def nelder_mead(f: Callable[[np.ndarray], float], start: Sequence[float], step: float = 20.0,
                iterations: int = 400, tolerance: float = 1e-9) -> np.ndarray:
    """Minimize f from start with the Nelder-Mead simplex method (until the values agree within tolerance)."""
    n = len(start)
    simplex = [np.array(start, dtype=float)]
    for i in range(n):
        point = np.array(start, dtype=float)
        point[i] += step
        simplex.append(point)
    values = [f(p) for p in simplex]
    for _ in range(iterations):
        order = np.argsort(values)
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        if values[-1] - values[0] < tolerance:
            break
        centroid = np.mean(simplex[:-1], axis=0)
        reflected = centroid + (centroid - simplex[-1])
        fr = f(reflected)
        if fr < values[0]:
            expanded = centroid + 2.0 * (centroid - simplex[-1])
            fe = f(expanded)
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = centroid + 0.5 * (simplex[-1] - centroid)
            fc = f(contracted)
            if fc < values[-1]:
                simplex[-1], values[-1] = contracted, fc
            else:  # shrink towards the best point
                simplex = [simplex[0] + 0.5 * (p - simplex[0]) for p in simplex]
                values = [f(p) for p in simplex]
    return simplex[int(np.argmin(values))]


@dataclass
class Fit:
    """The fitted model: polynomial coefficients (highest power first) and how it was made."""

    a: list[float]
    b: list[float]
    positions: int
    materials: int
    log_likelihood: float


def material_groups(mat: np.ndarray) -> list[list[int]]:
    """Neighbouring material counts grouped until each group has MIN_POSITIONS positions (a short tail joins
    the last group), so that sparse data still gives one fit per group."""
    groups: list[list[int]] = []
    current: list[int] = []
    count = 0
    for m in range(MATERIAL_MIN, MATERIAL_MAX + 1):
        n = int(np.count_nonzero(mat == m))
        if n == 0:
            continue
        current.append(m)
        count += n
        if count >= MIN_POSITIONS:
            groups.append(current)
            current, count = [], 0
    if current and groups:
        groups[-1].extend(current)
    elif current and count >= MIN_POSITIONS // 2:
        groups.append(current)
    return groups


def fit(samples: Sequence[Sample]) -> Fit:
    """Fit a and b per material count, then cubic polynomials of m / 58 through them."""
    score = np.array([s.score for s in samples])
    mat = np.array([s.material for s in samples])
    result = np.array([s.result for s in samples])
    xs, a_values, b_values, weights = [], [], [], []
    for group in material_groups(mat):
        chosen = np.isin(mat, group)
        s, r = score[chosen], result[chosen]

        def loss(params: np.ndarray) -> float:
            a, b = params
            if not (A_RANGE[0] <= a <= A_RANGE[1] and B_RANGE[0] <= b <= B_RANGE[1]):
                return math.inf
            return -log_likelihood(s, r, np.full_like(s, a), np.full_like(s, b))

        a, b = nelder_mead(loss, (150.0, 70.0))
        xs.append(float(np.mean(mat[chosen])) / MATERIAL_SCALE)
        a_values.append(a)
        b_values.append(b)
        weights.append(math.sqrt(s.size))
    if len(xs) <= POLY_DEGREE:
        raise ValueError(f"too few positions: {len(xs)} groups of material counts with {MIN_POSITIONS} or more "
                         f"positions (need {POLY_DEGREE + 1})")
    poly_a = np.polyfit(xs, a_values, POLY_DEGREE, w=weights)
    poly_b = np.polyfit(xs, b_values, POLY_DEGREE, w=weights)
    x = mat / MATERIAL_SCALE
    total = log_likelihood(score, result, np.polyval(poly_a, x), np.maximum(np.polyval(poly_b, x), 1.0))
    return Fit([float(c) for c in poly_a], [float(c) for c in poly_b], len(samples), len(xs), total)


def main(argv: Optional[list[str]] = None) -> int:
    """Read the PGNs, fit, and print the coefficients."""
    parser = argparse.ArgumentParser(prog="garfish wdl", description=__doc__.split("\n\n")[0],
                                     epilog="The model and the fitting are described in arena/wdlfit.py.")
    parser.add_argument("pgn", nargs="+", type=Path, help="PGN files written by garfish match")
    parser.add_argument("--engine", help="only the moves of the player of this name")
    args = parser.parse_args(argv)
    samples: list[Sample] = []
    for path in args.pgn:
        if not path.is_file():
            print(f"garfish wdl: no such file: {path}", file=sys.stderr)
            return 2
        samples.extend(read_samples(path, args.engine))
    try:
        result = fit(samples)
    except ValueError as exc:
        print(f"garfish wdl: {exc}", file=sys.stderr)
        return 1
    print(f"# {result.positions} scored positions, {result.materials} groups of material counts fitted; "
          f"mean log-likelihood {result.log_likelihood:.4f}")
    print(f"WDL_A = ({', '.join(f'{c:.3f}' for c in result.a)})")
    print(f"WDL_B = ({', '.join(f'{c:.3f}' for c in result.b)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
