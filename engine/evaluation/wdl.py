"""Win/draw/loss chances of a search score, for UCI_ShowWDL.

The model is Stockfish's: with score v (centipawns, side to move's view) and
material m (pawns 1, minor pieces 3, rooks 5, queens 9, both sides, clamped to
17..78), P(win) = 1 / (1 + exp((a(m) - v) / b(m))) and P(loss) likewise with
-v; a draw is the rest. a(m) and b(m) are cubic polynomials in m / 58 whose
coefficients were fitted to Garfish's own games by `garfish wdl` (arena/wdlfit.py;
the command and data are given beside the coefficients).
"""

from __future__ import annotations

import math

import chess

from garfish.engine.types import MATE_BOUND

# Fitted on 2026-11-23 by `garfish wdl games.pgn` (33,707 scored positions of 275 games, 56 groups of
# material counts, mean log-likelihood -0.7938), games.pgn being the first 275 games of Garfish
# (bench 245,489) against itself:
#   garfish match --engine name=GarfishA --engine name=GarfishB --nodes 6000 --games 400 --concurrency 1
#     --openings ../shared/data/books/noob_3moves.epd --seed 4102 --max-moves 160 --resign-score 1000
#     --resign-moves 3 --draw-score 5 --draw-after 60 --draw-moves 10 --pgnout games.pgn
WDL_A = (-1617.470, 4698.341, -4291.036, 1357.992)
WDL_B = (-313.728, 1226.053, -1249.391, 470.344)
MATERIAL_WEIGHT = ((chess.PAWN, 1), (chess.KNIGHT, 3), (chess.BISHOP, 3), (chess.ROOK, 5), (chess.QUEEN, 9))
MATERIAL_MIN, MATERIAL_MAX, MATERIAL_SCALE = 17, 78, 58.0
B_FLOOR = 10.0  # the fit bounds b to 10-500 cp; keep the polynomial above that between fitted points


def material(board: chess.Board) -> int:
    """Material of both sides in pawn units, clamped to the model's range (the same count as arena/wdlfit.py)."""
    total = sum(weight * chess.popcount(board.pieces_mask(piece, chess.WHITE) | board.pieces_mask(piece, chess.BLACK))
                for piece, weight in MATERIAL_WEIGHT)
    return min(max(total, MATERIAL_MIN), MATERIAL_MAX)


def _poly(coefficients: tuple[float, ...], x: float) -> float:
    """A polynomial, highest power first."""
    value = 0.0
    for c in coefficients:
        value = value * x + c
    return value


def _logistic(z: float) -> float:
    """1 / (1 + exp(-z)), safe for large |z|."""
    if z < -500:
        return 0.0
    if z > 500:
        return 1.0
    return 1.0 / (1.0 + math.exp(-z))


def wdl(score: int, material_count: int) -> tuple[int, int, int]:
    """Win, draw and loss chances in per mille (summing to 1000) for the side to move."""
    if score >= MATE_BOUND:
        return 1000, 0, 0
    if score <= -MATE_BOUND:
        return 0, 0, 1000
    x = min(max(material_count, MATERIAL_MIN), MATERIAL_MAX) / MATERIAL_SCALE
    a = max(_poly(WDL_A, x), 0.0)  # a >= 0 keeps P(win) + P(loss) <= 1
    b = max(_poly(WDL_B, x), B_FLOOR)
    win = round(1000 * _logistic((score - a) / b))
    loss = round(1000 * _logistic((-score - a) / b))
    return win, 1000 - win - loss, loss
