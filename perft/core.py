"""Perft and divide through the search's own compiled move path.

Every node's moves come from the compiled search's picker as the search asks for them
(engine.search.tree: the TT move, the captures, the killers, the quiet moves and castling, the bad
captures; the evasions in check), each made by its make_move and kept only if the evaluation
kernel's legality flag allows it, as in the search (engine.search.tree.perft_kernel). A correct count
proves that the picker yields each legal move exactly once, that the search's legality test
rejects exactly the illegal ones, and that its make_move makes them right (castling in both
chesses, en passant, promotions). With `hints=True` each node also gets a TT move and two killers
as the search would: moves the same side played two plies up, often legal here and often not, so
the picker's validation and de-duplication are counted too.
"""

from __future__ import annotations

import chess
import numpy as np

from garfish.engine.board.moves import encode
from garfish.engine.board.searchboard import SearchBoard
from garfish.engine.search.history import NO_CONTINUATION, History
from garfish.engine.search.tree import ROWS, TreeWork, perft_kernel, picker_kernel
from garfish.engine.search.tt import TranspositionTable
from garfish.engine.types import MAX_LISTED_MOVES

ALL_SQUARES = np.uint64(chess.BB_ALL)


def _work(board: chess.Board) -> TreeWork:
    """The compiled search's arrays set up for the board's position (hand-written evaluation, no history)."""
    work = TreeWork(History())
    root = SearchBoard.from_board(board)
    work.begin(TranspositionTable(1), root, [], network=False)
    work.set_root()
    return work


def perft(board: chess.Board, depth: int, hints: bool = False) -> int:
    """Number of leaf positions `depth` plies below the board."""
    recent = np.full((ROWS, 3), -1, dtype=np.int64)
    return int(perft_kernel(_work(board).arrays, depth, hints, recent))


def picker_moves(board: chess.Board) -> list[chess.Move]:
    """The board's legal moves in the picker's order (every capture target, no TT move or killer)."""
    work = _work(board)
    codes = np.zeros(MAX_LISTED_MOVES, dtype=np.int64)
    count = int(picker_kernel(work.arrays, 0, -1, ALL_SQUARES, False, NO_CONTINUATION, NO_CONTINUATION, codes))
    legal = {encode(move): move for move in board.legal_moves}
    return [legal[code] for code in codes[:count].tolist() if code in legal]


def divide(board: chess.Board, depth: int) -> list[tuple[chess.Move, int]]:
    """Perft split by root move, in the picker's order."""
    result = []
    for move in picker_moves(board):
        board.push(move)
        try:
            result.append((move, perft(board, depth - 1)))
        finally:
            board.pop()
    return result
