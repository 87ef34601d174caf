"""Perft and divide over python-chess boards, walking the engine's staged move picker.

Every node's moves come from the pickers as the search asks for them:
engine.movepick.pick_moves's pseudo-legal moves (its evasions in check), each
kept only if SearchBoard.push_legal finds it legal, as in the search (the
evaluation kernel's ILLEGAL_FLAG after the push). A correct count proves that
the pickers yield each legal move exactly once and that the search's legality
test rejects exactly the illegal ones; moves are made and unmade with
engine.board.SearchBoard, the search's own make/unmake, so the counts check that
too. With `hints=True` each node also gets a TT move and two killers as the
search would: moves the same side played two plies up, often legal here and
often not, so the picker's validation and de-duplication are counted too.
"""

from __future__ import annotations

from typing import Iterator, Optional

import chess
import numpy as np

from garfish.engine.board import SearchBoard
from garfish.engine.evaluate import evaluate_packed
from garfish.engine.flags import IN_CHECK_FLAG
from garfish.engine.movepick import pick_moves

Hint = tuple[Optional[chess.Move], Optional[chess.Move], Optional[chess.Move]]
_NONE: Hint = (None, None, None)
_NO_HISTORY = np.zeros(8192, dtype=np.int64)  # history as the picker takes it (engine.history.History.table)


def perft(board: chess.Board, depth: int, hints: bool = False) -> int:
    """Number of leaf positions `depth` plies below the board."""
    recent: Optional[list[Hint]] = [_NONE] * (depth + 1) if hints else None
    board = SearchBoard.from_board(board)
    return _perft(board, depth, recent, 0, evaluate_packed(board))


def _perft(board: SearchBoard, depth: int, recent: Optional[list[Hint]], ply: int, packed: int) -> int:
    """Recursive perft; recent[p] holds the last three moves played at ply p; packed is the
    evaluation kernel's result for the board, passed down as the search passes it."""
    if depth <= 0:
        return 1
    tt_move, killer1, killer2 = recent[ply - 2] if recent is not None and ply >= 2 else _NONE
    nodes = 0
    for move, child in _legal_moves(board, packed, tt_move, killer1, killer2):
        nodes += _perft(board, depth - 1, recent, ply + 1, child) if depth > 1 else 1
        board.pop()
        if recent is not None:
            last = recent[ply]
            recent[ply] = (move, last[0], last[1])
    return nodes


def _legal_moves(board: SearchBoard, packed: int, tt_move: Optional[chess.Move], killer1: Optional[chess.Move],
                 killer2: Optional[chess.Move]) -> Iterator[tuple[chess.Move, int]]:
    """The legal moves in the search's order, each yielded with the move already made
    (the caller pops it) and the evaluation kernel's result for the new position: the
    picker's moves (its evasions when packed says in check), filtered as the search
    filters them."""
    for move in pick_moves(board, tt_move, (killer1, killer2), _NO_HISTORY, in_check=packed & IN_CHECK_FLAG != 0):
        child = board.push_legal(move)
        if child is not None:
            yield move, child


def divide(board: chess.Board, depth: int) -> list[tuple[chess.Move, int]]:
    """Perft split by root move, in the picker's order."""
    board = SearchBoard.from_board(board)
    result = []
    for move, _ in _legal_moves(board, evaluate_packed(board), None, None, None):
        result.append((move, perft(board, depth - 1)))
        board.pop()
    return result
