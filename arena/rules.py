"""When a game is over by the rules in effect, as a referee (and cutechess-cli, and fastchess) decides it.

A game ends on checkmate, stalemate or dead material, on a position reached for the third time, once
100 plies have passed without a capture or a pawn move, and (needing no claim at all) on the fivefold
repetition and the 75-move rule. It does not end because the side to move *could* claim a draw by
playing a move that would repeat a position or reach the fifty-move limit: python-chess's
`outcome()` with its claim_draw flag set answers that other question ("may the side to move claim?"), and a winning
side never makes that claim. cutechess-cli's `WesternBoard::result()` tests, in this order, the moves
left (mate, stalemate), dead material, `m_reversibleMoveCount >= 100` and `repeatCount() >= 2`, all on
the position reached; `game_outcome` gives the same answers.
"""

from __future__ import annotations

from typing import Optional

import chess

FIFTY_MOVE_PLIES = 100  # plies without a capture or pawn move that end the game (the fifty-move rule)
THIRD_OCCURRENCE = 3  # the occurrence of a position that ends the game (threefold repetition)


def game_outcome(board: chess.Board) -> Optional[chess.Outcome]:
    """The game's outcome if a rule in effect has ended it on the position reached, else None."""
    outcome = board.outcome()  # mate, stalemate, dead material, 75 moves, fivefold: no claim needed
    if outcome is not None:
        return outcome
    if board.halfmove_clock >= FIFTY_MOVE_PLIES:
        return chess.Outcome(chess.Termination.FIFTY_MOVES, None)
    if board.is_repetition(THIRD_OCCURRENCE):
        return chess.Outcome(chess.Termination.THREEFOLD_REPETITION, None)
    return None
