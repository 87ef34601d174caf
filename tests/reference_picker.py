"""The move picker of the main search and of evasions: every pseudo-legal move once, the likeliest
cut-off first.

One picker, pick_moves, in stages (Stage, as Stockfish's src/movepick.cpp): the TT move (tested
without generating moves), good captures and queen promotions (MVV-LVA, SEE-losing ones held
back), the two killers, quiet moves by history, then the held-back captures and under-promotions.
Moves are generated lazily, stage by stage, because a TT move or first capture often ends the node
before any quiet move is needed. A side in check goes through the same stages over its evasions
(pick_evasions). The search rejects a move that leaves its king attacked after making it.

The capture, quiet and evasion stages are one kernel call each (engine.board.captures:
capture_list_kernel, quiet_list_kernel, evasion_order_kernel), which list the moves in
python-chess's order and sort them as the Python stages they replaced did; those stages, written
with python-chess, are the references the kernels are tested against, move for move
(tests/reference_movepick.py). sort_quiets, the last of them, still sorts a side in check's quiet
evasions when the picker reaches them.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, Iterator, Optional, Sequence

import chess
import numpy as np

from garfish.engine.board.bits import entry_point
from garfish.engine.board.captures import (
    CODE_MASK, ESCAPE_BONUS, GOOD_BIT, capture_list_kernel, evasion_order_kernel, quiet_list_kernel,
)
from garfish.engine.board.checks import threats_entry
from garfish.engine.board.moves import MOVE_TABLE, encode
from garfish.engine.search.history import PIECE_TO

BB_SQUARES = chess.BB_SQUARES
# The hot kernels' compiled entries: no dispatcher between the picker and them (engine.board.bits.entry_point).
_capture_list = entry_point(capture_list_kernel)
_quiet_list = entry_point(quiet_list_kernel)
_evasion_order = entry_point(evasion_order_kernel)
PROMOTION_RANK = (chess.BB_RANK_2, chess.BB_RANK_7)  # indexed by colour: pawns about to promote
BACK_RANK = (chess.BB_RANK_8, chess.BB_RANK_1)  # indexed by colour: where its castling rooks stand
_NO_CONTINUATION = (np.zeros(PIECE_TO, dtype=np.int16),) * 2  # the continuation rows of a node with no moves before

if TYPE_CHECKING:
    from reference_board import PushBoard


def sort_quiets(board: chess.Board, quiets: list[chess.Move], history: np.ndarray,
                continuation: Optional[tuple[np.ndarray, np.ndarray]] = None) -> None:
    """Order quiet moves in place: moves of a piece en prise first (escapes), then by history plus
    the continuation histories' rows of the moves one and two plies before (continuation: the two
    rows, indexed (piece type - 1) * 64 + destination; None: no such moves)."""
    us = board.turn
    base = 4096 if us else 0
    black, white = board.occupied_co
    threatened = threats_entry(board.pawns, board.knights, board.bishops, board.rooks, board.queens,
                               board.kings, black, white, us)

    def key(move: chess.Move) -> int:
        score = int(history[base + move.from_square * 64 + move.to_square])
        if continuation is not None:
            column = (board.piece_type_at(move.from_square) - 1) * 64 + move.to_square  # type: ignore[operator]
            score += int(continuation[0][column]) + int(continuation[1][column])
        return score + (ESCAPE_BONUS if BB_SQUARES[move.from_square] & threatened else 0)

    quiets.sort(key=key, reverse=True)


class Stage(IntEnum):
    """The picker's stages, in the order it goes through them (Stockfish's `enum Stages`); a side in
    check goes through the same stages over its evasions, listed at once (pick_evasions)."""

    TT_MOVE = 0        # the TT move, if it is pseudo-legal here (a key collision can store anything)
    GOOD_CAPTURES = 1  # captures that do not lose material by SEE, and queen promotions, by MVV-LVA
    KILLERS = 2        # quiet moves that cut off at this ply elsewhere in the tree
    QUIETS = 3         # the other quiet moves: those of a piece en prise first, then by history
    BAD_CAPTURES = 4   # captures that lose material, and under-promotions


def usable_killer(board: chess.Board, killer: chess.Move, tt_move: Optional[chess.Move]) -> bool:
    """Whether the killers' stage yields this killer here: not the TT move (yielded already), quiet,
    and pseudo-legal (a killer comes from another position at the same ply)."""
    return (killer != tt_move and not killer.promotion and not board.is_capture(killer)
            and board.is_pseudo_legal(killer))


def castling_codes(board: chess.Board) -> tuple[int, int]:
    """The side to move's castling moves as the quiet stage takes them (their codes, -1: none).
    Castling is python-chess's to list (its rules, Chess960's too): onto our own rook's square in
    python-chess's terms, so the quiet kernel's target mask keeps our pieces' squares."""
    us = board.turn
    castles = [encode(move) for move in board.generate_castling_moves(
        board.occupied_co[us] & board.kings, ~board.occupied_co[not us])]
    return castles[0] if castles else -1, castles[1] if len(castles) > 1 else -1


def pick_moves(
    board: PushBoard,
    tt_move: Optional[chess.Move],
    killers: Sequence[Optional[chess.Move]],
    history: np.ndarray,
    capture_targets: int = chess.BB_ALL,
    check_masks: Optional[tuple[int, int, int]] = None,
    in_check: bool = False,
    continuation: Optional[tuple[np.ndarray, np.ndarray]] = None,
) -> Iterator[chess.Move]:
    """Yield every pseudo-legal move of the board exactly once, stage by stage (Stage), lazily: a
    TT move or a first capture often ends the node before any quiet move is generated. The caller
    rejects the moves that leave its own king attacked (the evaluation kernel's ILLEGAL_FLAG after
    the push), which skips python-chess's pin and check analysis on each generator call and the
    legality test of moves never searched.

    capture_targets: a superset of the squares the side to move can capture on (from the
    evaluation's attack maps; 0 when it has no capture, promotion or en passant), so that the
    capture stages list less.
    check_masks: (targets, discoverers, movers) from garfish.engine.board.checks.check_masks_kernel: the
    caller will prune every quiet move that does not give check, so the quiet stage only generates
    moves that might (the caller still confirms each one).
    in_check: the side to move is in check (the evaluation's IN_CHECK_FLAG): the stages run over its
    evasions (pick_evasions).
    continuation: the continuation histories' rows of the moves one and two plies before (sort_quiets).
    """
    if in_check:
        yield from pick_evasions(board, tt_move, killers, history, continuation)
        return
    # Stage.TT_MOVE. Pseudo-legal is enough: the caller tests the king's safety.
    if tt_move is not None:
        if board.is_pseudo_legal(tt_move):
            yield tt_move
        else:
            tt_move = None

    # Stage.GOOD_CAPTURES, holding back the losing ones for Stage.BAD_CAPTURES: one kernel call lists
    # them, typed, sorted and SEE-tested (engine.board.captures).
    bad = []
    if capture_targets:
        codes = board.codes
        ep = board.ep_square
        black, white = board.occupied_co
        count = _capture_list(board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
                              black, white, board.turn, -1 if ep is None else ep, capture_targets, codes)
        tt_code = encode(tt_move) if tt_move is not None else -1
        for entry in codes[:count].tolist():
            code = entry & CODE_MASK
            if code == tt_code:
                continue
            if entry & GOOD_BIT:
                yield MOVE_TABLE[code]
            else:
                bad.append(MOVE_TABLE[code])

    # Stage.KILLERS.
    us = board.turn
    killer1, killer2 = killers
    if killer1 is not None and usable_killer(board, killer1, tt_move):
        yield killer1
    else:
        killer1 = None
    if killer2 is not None and killer2 != killer1 and usable_killer(board, killer2, tt_move):
        yield killer2
    else:
        killer2 = None

    # Stage.QUIETS: one kernel call lists them in python-chess's order, sorted (engine.board.captures).
    # Castling is python-chess's to list (castling_codes).
    castle_a = castle_b = -1
    if check_masks is None:
        check_to = discoverers = reachers = 0
        if board.castling_rights & BACK_RANK[us]:
            castle_a, castle_b = castling_codes(board)
    else:
        check_to, discoverers, reachers = check_masks
    codes = board.codes
    black, white = board.occupied_co
    count = _quiet_list(board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings, black,
                        white, us, check_to, discoverers, reachers, check_masks is not None, castle_a, castle_b,
                        encode(tt_move) if tt_move is not None else -1,
                        encode(killer1) if killer1 is not None else -1,
                        encode(killer2) if killer2 is not None else -1, history, *(continuation or _NO_CONTINUATION),
                        codes)
    for code in codes[:count].tolist():
        yield MOVE_TABLE[code]

    # Stage.BAD_CAPTURES.
    yield from bad


def pick_evasions(
    board: PushBoard,
    tt_move: Optional[chess.Move],
    killers: Sequence[Optional[chess.Move]],
    history: np.ndarray,
    continuation: Optional[tuple[np.ndarray, np.ndarray]] = None,
) -> Iterator[chess.Move]:
    """pick_moves for a side in check: the same stages and orders over the evasions, listed and
    grouped by one kernel call (engine.board.captures.evasion_order_kernel: the captures tested and
    sorted as the capture stage's), the quiet ones sorted by sort_quiets when they are reached. Pseudo-legal too: the caller rejects moves that leave its king attacked."""
    # Stage.TT_MOVE.
    if tt_move is not None:
        # Pseudo-legal is enough (python-chess never has castling out of check pseudo-legal): the
        # caller rejects a move that leaves the king attacked, so every evasion is tested once.
        if board.is_pseudo_legal(tt_move):
            yield tt_move  # before generating: it often cuts off
        else:
            tt_move = None
    # The other stages from one kernel call: the evasions listed and grouped, the captures sorted
    # (engine.board.captures).
    ep = board.ep_square
    black, white = board.occupied_co
    codes = board.codes
    good, quiet, count = _evasion_order(board.pawns, board.knights, board.bishops, board.rooks, board.queens,
                                        board.kings, black, white, board.turn, -1 if ep is None else ep, codes)
    listed = codes[:count].tolist()
    tt_code = encode(tt_move) if tt_move is not None else -1
    # Stage.GOOD_CAPTURES.
    for code in listed[:good]:
        if code != tt_code:
            yield MOVE_TABLE[code]
    # Stage.KILLERS.
    quiets = [MOVE_TABLE[code] for code in listed[good:quiet] if code != tt_code]
    for killer in killers:
        if killer is not None and killer in quiets:
            quiets.remove(killer)
            yield killer
    # Stage.QUIETS, sorted now: the searches of the moves above may have changed the history.
    if len(quiets) > 1:
        sort_quiets(board, quiets, history, continuation)
    yield from quiets
    # Stage.BAD_CAPTURES.
    for code in listed[quiet:]:
        if code != tt_code:
            yield MOVE_TABLE[code]
