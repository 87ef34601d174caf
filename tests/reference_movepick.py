"""The move picker's stages as they were written with python-chess before engine.board.captures' kernels
replaced them: the references tests/test_movepick.py, tests/test_captures.py and
tests/test_qsearch.py hold the kernels to, move for move (tests/reference_picker.py's docstring)."""

from __future__ import annotations

import chess

from garfish.engine.board.checks import attackers_kernel, evasion_kernel
from garfish.engine.board.moves import decode
from reference_picker import PROMOTION_RANK
from garfish.engine.board.see import see_ge_kernel
from garfish.engine.types import PIECE_VALUE, bitboards

BB_SQUARES = chess.BB_SQUARES


def capture_moves(board: chess.Board, to_mask: int = chess.BB_ALL,
                  pseudo: bool = False) -> list[tuple[chess.Move, int, int]]:
    """Legal captures (onto to_mask) and non-capturing promotions, by MVV-LVA (promotions by
    piece), as (move, attacker, victim) with python-chess piece types: the victim of en passant
    and of a non-capturing promotion is a pawn. The types spare the callers' goodness and
    delta tests looking the pieces up again.

    pseudo: pseudo-legal ones instead (the caller rejects moves that leave its king attacked).
    """
    us = board.turn
    black, white = board.occupied_co
    ep = board.ep_square
    targets = to_mask & (black if us else white) | (BB_SQUARES[ep] & to_mask if ep is not None else 0)
    capturers = attackers_kernel(*bitboards(board), targets) if targets else 0
    generate_captures = board.generate_pseudo_legal_captures if pseudo else board.generate_legal_captures
    moves = list(generate_captures(capturers, to_mask)) if capturers else []
    promoting = board.pawns & board.occupied_co[us] & PROMOTION_RANK[us]
    if promoting:
        generate = board.generate_pseudo_legal_moves if pseudo else board.generate_legal_moves
        moves.extend(generate(promoting, ~board.occupied))
    return typed_captures(board, moves)


def typed_captures(board: chess.Board, moves: list[chess.Move]) -> list[tuple[chess.Move, int, int]]:
    """(move, attacker, victim) for captures and promotions, by MVV-LVA (promotions by the new piece)."""
    piece_type_at = board.piece_type_at
    records = []
    for move in moves:
        attacker = piece_type_at(move.from_square)
        assert attacker is not None  # a move's piece
        records.append((move, attacker, piece_type_at(move.to_square) or chess.PAWN))
    if len(records) > 1:
        records.sort(key=_capture_key, reverse=True)
    return records


def _capture_key(record: tuple[chess.Move, int, int]) -> int:
    """MVV-LVA sort key of a capture record; a promotion adds its new piece as a second victim."""
    move, attacker, victim = record
    promotion = move.promotion
    return (PIECE_VALUE[victim] * 8 - PIECE_VALUE[attacker] // 100
            + (PIECE_VALUE[promotion] * 8 if promotion else 0))


def is_good_capture(board: chess.Board, move: chess.Move, attacker: int, victim: int) -> bool:
    """False for under-promotions and captures that lose material by static exchange
    (attacker and victim: piece types, as capture_moves gives them)."""
    promotion = move.promotion
    if promotion:
        return promotion == chess.QUEEN
    if PIECE_VALUE[attacker] <= PIECE_VALUE[victim] or attacker == chess.KING:
        return True
    black, white = board.occupied_co
    return see_ge_kernel(board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
                         black, white, move.from_square, move.to_square, attacker, victim, 0)


def evasion_moves(board: chess.Board) -> list[chess.Move]:
    """Pseudo-legal check evasions, in the order of python-chess's legal move generator
    in check, without its pin analysis (the search tests each move after the push):
    king steps to squares the enemy does not attack, then, against a single checker,
    captures of it and interpositions, and an en passant capture of a checking pawn."""
    us = board.turn
    black, white = board.occupied_co
    checkers, king_to, block, blockers = evasion_kernel(board.pawns, board.knights, board.bishops, board.rooks,
                                                        board.queens, board.kings, black, white, us)
    king = chess.msb(board.kings & (white if us else black))
    moves = [decode(king | to << 6) for to in chess.scan_reversed(king_to)]
    if blockers:  # never without a block mask
        moves.extend(board.generate_pseudo_legal_moves(blockers, block))
    if block:
        ep = board.ep_square
        if ep and not BB_SQUARES[ep] & block and ep + (-8 if us else 8) == chess.msb(checkers):
            moves.extend(board.generate_pseudo_legal_ep())
    return moves
