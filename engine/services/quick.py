"""A small search in plain Python over python-chess, for moves asked for before the engine is built.

A first start compiles the Numba kernels (engine.services.warmup), which takes a minute on a busy machine;
a GUI that asks for a move before then gets one from this search instead: iterative deepening
alpha-beta on material, captures first, within the time it is given. It imports nothing compiled,
so it runs at once; it plays at a beginner's strength, and only until the engine is built.
"""

from __future__ import annotations

import time
from typing import Callable, Optional

import chess

# Material in centipawns by python-chess piece type (the king is never taken).
VALUE = (0, 100, 320, 330, 500, 900, 0)
# A knight's or bishop's bonus by its distance from the centre (0: d4, d5, e4, e5), and a pawn's by
# the ranks it has advanced: enough to develop and push rather than shuffle.
CENTRE_BONUS = (20, 12, 4, -8)
PAWN_STEP = 4
MATE_SCORE = 100000
MAX_DEPTH = 64


class OutOfTime(Exception):
    """The quick search's deadline has passed."""


def material(board: chess.Board) -> int:
    """Material balance from the side to move's view, with a little for minor pieces near the
    centre and pawns advanced."""
    score = 0
    for square, piece in board.piece_map().items():
        if piece.piece_type == chess.KING:
            continue
        value = VALUE[piece.piece_type]
        if piece.piece_type in (chess.KNIGHT, chess.BISHOP):
            file, rank = chess.square_file(square), chess.square_rank(square)
            value += CENTRE_BONUS[max(abs(2 * file - 7), abs(2 * rank - 7)) // 2]
        elif piece.piece_type == chess.PAWN:
            value += PAWN_STEP * (chess.square_rank(square) - 1 if piece.color else 6 - chess.square_rank(square))
        score += value if piece.color == board.turn else -value
    return score


def ordered(board: chess.Board) -> list[chess.Move]:
    """The legal moves, captures first by the value taken, then promotions, then the rest."""
    def key(move: chess.Move) -> int:
        victim = board.piece_type_at(move.to_square)
        return -(VALUE[victim] if victim else 0) - (VALUE[move.promotion] if move.promotion else 0)
    return sorted(board.legal_moves, key=key)


def negamax(board: chess.Board, depth: int, alpha: int, beta: int, deadline: float) -> int:
    """Alpha-beta on material to `depth` plies (mate and stalemate scored); OutOfTime past the deadline."""
    if time.monotonic() > deadline:
        raise OutOfTime
    moves = ordered(board)
    if not moves:
        return -MATE_SCORE if board.is_check() else 0
    if depth <= 0 or board.is_insufficient_material() or board.halfmove_clock >= 100:
        return material(board)
    best = -MATE_SCORE - 1
    for move in moves:
        board.push(move)
        score = -negamax(board, depth - 1, -beta, -alpha, deadline)
        board.pop()
        if score > best:
            best = score
            if score > alpha:
                alpha = score
                if alpha >= beta:
                    break
    return best


def quick_move(board: chess.Board, seconds: float, max_depth: int = MAX_DEPTH,
               on_depth: Optional[Callable[[int, int, chess.Move], None]] = None) -> Optional[chess.Move]:
    """The best move found within `seconds` (at least depth 1 is finished: its moves are few and
    cheap), to at most max_depth plies; None when there is no legal move. on_depth(depth, score,
    move): called after each finished depth with its score (centipawns from the side to move's
    view, +-MATE_SCORE for a mate found) and best move."""
    moves = ordered(board)
    if not moves:
        return None
    deadline = time.monotonic() + max(0.0, seconds)
    best = moves[0]
    work = board.copy()
    for depth in range(1, max_depth + 1):
        alpha, beta = -MATE_SCORE - 1, MATE_SCORE + 1
        choice = None
        try:
            for move in [best] + [m for m in moves if m != best]:
                work.push(move)
                score = -negamax(work, depth - 1, -beta, -alpha, deadline if depth > 1 else float("inf"))
                work.pop()
                if score > alpha:
                    alpha, choice = score, move
        except OutOfTime:
            break
        if choice is not None:
            best = choice
        if on_depth is not None:
            on_depth(depth, alpha, best)
        if alpha >= MATE_SCORE:
            break
    return best
