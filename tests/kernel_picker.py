"""The compiled search's move picker (engine.search.tree) called as the Python picker it replaced was:
tests compare the two (tests/reference_picker.py) and hold the kernel to python-chess's moves."""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

import chess
import numpy as np

from garfish.engine.board.moves import decode, encode
from garfish.engine.board.searchboard import SearchBoard
from garfish.engine.search.history import NO_CONTINUATION, History
from garfish.engine.search.movepick import next_move, start_picker
from garfish.engine.search.tree import TreeWork, picker_kernel
from garfish.engine.search.tt import TranspositionTable
from garfish.engine.types import MAX_LISTED_MOVES

_TABLE = TranspositionTable(1)  # the picker reads no entry: any table will do


def kernel_work(board: chess.Board) -> TreeWork:
    """The compiled search's arrays set up for the board (hand-written evaluation)."""
    work = TreeWork(History())
    root = SearchBoard.from_board(board)
    work.begin(_TABLE, root, [], network=False)
    work.set_root()
    return work


def pick_moves(board: chess.Board, tt_move: Optional[chess.Move], killers: Sequence[Optional[chess.Move]],
               history: np.ndarray, capture_targets: int = chess.BB_ALL,
               check_masks: Optional[tuple[int, int, int]] = None, in_check: bool = False,
               continuation: Optional[tuple[np.ndarray, np.ndarray]] = None) -> list[chess.Move]:
    """engine.search.tree's picker over the board, as reference_picker.pick_moves takes its arguments: every
    pseudo-legal move once, in its order (in check, its evasions: the position says, not in_check;
    check_masks: only whether given, the kernel makes its own; continuation: the continuation
    histories' rows of the moves one and two plies before, put in the table's rows 0 and 1)."""
    assert in_check == board.is_check() or not in_check
    work = kernel_work(board)
    work.history.table[:] = history
    rows = (NO_CONTINUATION, NO_CONTINUATION)
    if continuation is not None:
        work.history.continuation[0], work.history.continuation[1] = continuation
        rows = (0, 1)
    for slot, killer in enumerate(killers):
        work.history.killers[0, slot] = -1 if killer is None else encode(killer)
    codes = np.zeros(MAX_LISTED_MOVES, dtype=np.int64)
    count = picker_kernel(work.arrays, 0, -1 if tt_move is None else encode(tt_move), np.uint64(capture_targets),
                          check_masks is not None, *rows, codes)
    return [decode(code) for code in codes[:count].tolist()]


def lazy_pick_moves(board: chess.Board, tt_move: Optional[chess.Move], killers: Sequence[Optional[chess.Move]],
                    history: np.ndarray) -> Iterator[chess.Move]:
    """pick_moves one move at a time, as the search takes them (engine.search.tree.next_move), reading
    `history` as it is at each step: a caller may change it between moves, as a search does."""
    work = kernel_work(board)
    for slot, killer in enumerate(killers):
        work.history.killers[0, slot] = -1 if killer is None else encode(killer)
    ply = np.int64(0)
    tt_code = np.int64(-1 if tt_move is None else encode(tt_move))
    no_row = np.int64(NO_CONTINUATION)
    start_picker(work.rows[0], work.masks[0], work.pos, work.posi, ply, tt_code, np.uint64(chess.BB_ALL), False,
                 board.chess960, no_row, no_row)
    while True:
        code = next_move(work.rows[0], work.masks[0], work.pos, work.posi, ply, work.history.killers, history,
                         work.history.continuation, board.chess960)
        if code < 0:
            return
        yield decode(int(code))


def searched(cases: list) -> list:
    """[nodes, score, PV] of a search of each case [fen, moves, depth, network, chess960] from a fresh
    table: the tests run it compiled and interpreted (NUMBA_DISABLE_JIT=1) and compare."""
    from garfish.engine import Limits, Searcher
    from garfish.engine.evaluation.evalfile import DEFAULT_EVAL_FILE, load_evaluator

    out = []
    for fen, moves, depth, network, chess960 in cases:
        board = chess.Board(fen, chess960=chess960)
        for move in moves:
            board.push_uci(move)
        evaluator = load_evaluator(DEFAULT_EVAL_FILE) if network else None
        result = Searcher(TranspositionTable(4), evaluator).search(board, Limits(depth=depth))
        out.append([result.nodes, result.score, [move.uci() for move in result.pv]])
    return out
