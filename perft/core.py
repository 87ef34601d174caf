"""Perft and divide over python-chess boards, walking the engine's staged move picker.

Every node's moves come from the pickers as the search asks for them: when not
in check, engine.movepick.pick_moves's pseudo-legal moves, each kept only if
the evaluation kernel's ILLEGAL_FLAG is clear after the push; in
check, pick_evasions. A correct count proves that the pickers yield each legal
move exactly once and that the search's legality test rejects exactly the
illegal ones; moves are made and unmade with engine.board.SearchBoard, the
search's own make/unmake, so the counts check that too. With `hints=True` each
node also gets a TT move and two killers as the search would: moves the same
side played two plies up, often legal here and often not, so the picker's
validation and de-duplication are counted too.
"""

from __future__ import annotations

from typing import Iterator, Optional

import chess

from engine.board import SearchBoard
from engine.checks import in_check_kernel
from engine.evaluate import ILLEGAL_FLAG, evaluate_kernel
from engine.movepick import pick_evasions, pick_moves

Hint = tuple[Optional[chess.Move], Optional[chess.Move], Optional[chess.Move]]
_NONE: Hint = (None, None, None)
_NO_HISTORY = [0] * 8192


def perft(board: chess.Board, depth: int, hints: bool = False) -> int:
    """Number of leaf positions `depth` plies below the board."""
    recent: Optional[list[Hint]] = [_NONE] * (depth + 1) if hints else None
    return _perft(SearchBoard.from_board(board), depth, recent, 0)


def _perft(board: chess.Board, depth: int, recent: Optional[list[Hint]], ply: int) -> int:
    """Recursive perft; recent[p] holds the last three moves played at ply p."""
    if depth <= 0:
        return 1
    tt_move, killer1, killer2 = recent[ply - 2] if recent is not None and ply >= 2 else _NONE
    nodes = 0
    for move in _legal_moves(board, tt_move, killer1, killer2):
        nodes += _perft(board, depth - 1, recent, ply + 1) if depth > 1 else 1
        board.pop()
        if recent is not None:
            last = recent[ply]
            recent[ply] = (move, last[0], last[1])
    return nodes


def _legal_moves(board: chess.Board, tt_move: Optional[chess.Move], killer1: Optional[chess.Move],
                 killer2: Optional[chess.Move]) -> Iterator[chess.Move]:
    """The legal moves in the search's order, each yielded with the move already made
    (the caller pops it): the picker's moves, pseudo-legal unless in check, filtered
    as the search filters them."""
    black, white = board.occupied_co
    in_check = in_check_kernel(board.pawns, board.knights, board.bishops, board.rooks, board.queens,
                               board.kings, black, white, board.turn)
    if in_check:
        moves = pick_evasions(board, tt_move, (killer1, killer2), _NO_HISTORY)
    else:
        moves = pick_moves(board, tt_move, (killer1, killer2), _NO_HISTORY, pseudo=True)
    for move in moves:
        board.push(move)
        black, white = board.occupied_co
        if evaluate_kernel(board.pawns, board.knights, board.bishops, board.rooks, board.queens,
                           board.kings, black, white, board.turn) & ILLEGAL_FLAG:
            board.pop()
            continue
        yield move


def divide(board: chess.Board, depth: int) -> list[tuple[chess.Move, int]]:
    """Perft split by root move, in the picker's order."""
    board = SearchBoard.from_board(board)
    result = []
    for move in _legal_moves(board, None, None, None):
        result.append((move, perft(board, depth - 1)))
        board.pop()
    return result
