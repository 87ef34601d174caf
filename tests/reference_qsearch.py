"""The quiescence search as it was written in Python (engine/search/driver.py before the compiled one), kept
as the reference that engine/search/qsearch.py's quiescence_kernel is tested against: the same score, node count
and deepest ply from the same node, python-chess's board and move paths doing the work."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Iterator

from garfish.engine.board.captures import (
    entry_is_capture, entry_is_good, entry_move, entry_promotes, entry_victim, quiescence_list_kernel,
    quiet_checks_kernel,
)
from garfish.engine.board.flags import IN_CHECK_FLAG, packed_flags, packed_score
from reference_board import PushBoard
from reference_movepick import evasion_moves
from garfish.engine.board.moves import encode
from garfish.engine.search.qsearch import DELTA_MARGIN
from garfish.engine.types import INF, MAX_PLY, PIECE_VALUE, bitboards, mated_in


@dataclass
class Count:
    """The nodes a reference search visited and the deepest ply it reached."""

    nodes: int = 0
    deepest: int = 0


def reference_qsearch(board: PushBoard, alpha: int, beta: int, ply: int, packed: int, count: Count,
                      checks: bool = False) -> int:
    """Quiescence search: captures and promotions (all evasions in check), with stand-pat; quiet
    checks at the first quiescence ply (checks)."""
    count.nodes += 1
    count.deepest = max(count.deepest, ply)
    if ply >= MAX_PLY - 1:
        return packed_score(packed)
    if packed & IN_CHECK_FLAG:
        best_score = stand_pat = -INF
        entries = [encode(move) for move in evasion_moves(board)]
        checks = False
    else:
        stand_pat = packed_score(packed)
        if stand_pat >= beta:
            return stand_pat
        if stand_pat > alpha:
            alpha = stand_pat
        best_score = stand_pat
        ep = board.ep_square
        listed = quiescence_list_kernel(*bitboards(board), -1 if ep is None else ep, packed_flags(packed),
                                        alpha - stand_pat - DELTA_MARGIN, board.codes)
        if listed < 0:
            if not checks:
                return best_score
            listed = 0
        entries = board.codes[:listed].tolist()
    for entry in chain(entries, quiet_checks(board)) if checks else entries:
        if entry_is_capture(entry):
            if not entry_promotes(entry) and stand_pat + PIECE_VALUE[entry_victim(entry)] + DELTA_MARGIN <= alpha:
                continue
            if not entry_is_good(entry):
                continue
        child = board.push_legal(entry_move(entry))
        if child is None:
            continue
        score = -reference_qsearch(board, -beta, -alpha, ply + 1, child, count)
        board.pop()
        if score > best_score:
            best_score = score
            if score > alpha:
                if score >= beta:
                    break
                alpha = score
    if best_score == -INF:
        return mated_in(ply)
    return best_score


def quiet_checks(board: PushBoard) -> Iterator[int]:
    """The codes of the quiet checking moves that do not lose the checking piece."""
    listed = quiet_checks_kernel(*bitboards(board), board.codes)
    yield from board.codes[:listed].tolist()
