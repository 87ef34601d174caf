"""Time manager: how long to think about this move. Pure calculation, no clock reading."""

from __future__ import annotations

from typing import Optional

import chess

from garfish.engine.types import Limits

MOVE_HORIZON = 30          # moves assumed left when the clock has no moves-to-go
INCREMENT_SHARE = 0.8      # part of the increment spent on this move
MAX_STRETCH = 4.0          # the hard limit may reach this multiple of the optimum
MAX_CLOCK_SHARE = 0.7      # ... but never more than this part of the clock
MIN_THINK = 0.005          # seconds: never plan less than this
# A low clock keeps a reserve for the stalls no budget foresees (a busy machine's scheduler, a slow
# pipe): the hard limit leaves RESERVE_INCREMENTS increments (at most RESERVE_MAX seconds) on the
# clock, and below that reserve a move takes at most RESERVE_INC_SHARE of the increment, so the
# clock climbs back. Without it, moves that run to the hard limit settled the clock at 1.6
# increments at 10+0.1, and a 0.08 s stall lost a game on time.
RESERVE_INCREMENTS = 3.0
RESERVE_MAX = 1.0
RESERVE_INC_SHARE = 0.5
# Between iterations of a clock search: no new iteration once the time spent passes
#   optimum * SOFT_SHARE * (1 + INSTABILITY * best-move changes) * falling-score factor,
# the changes counting 1 per iteration whose best move differed from the last one's, halved at
# every iteration (Stockfish's totBestMoveChanges), and the falling-score factor being
# 1 + (previous move's score - this score) / FALLING_CP, within FALLING_RANGE (as Stockfish's
# fallingEval: think longer when things get worse, a little less when they get better).
SOFT_SHARE = 0.7
INSTABILITY = 1.0
FALLING_CP = 200.0
FALLING_RANGE = (0.8, 1.5)


def time_budget(limits: Limits, turn: chess.Color) -> tuple[Optional[float], Optional[float]]:
    """(optimum, maximum) seconds for this move: optimum = don't start another
    iteration past it, maximum = abort the search. (None, None) means no limit."""
    overhead = limits.move_overhead
    if limits.movetime is not None:
        t = max(MIN_THINK, limits.movetime - overhead)
        return t, t
    clock = limits.wtime if turn == chess.WHITE else limits.btime
    if clock is None:
        return None, None
    inc = limits.winc if turn == chess.WHITE else limits.binc
    moves_left = MOVE_HORIZON if not limits.movestogo else min(limits.movestogo, MOVE_HORIZON)
    usable = max(0.0, clock - overhead)
    # The clock we can plan with: what is left now, plus the planned share of the increments
    # still to come, less the overhead of every one of those moves (as Stockfish does). Each
    # move then costs less than its increment once the clock is low, so the clock settles at
    # a reserve of several increments instead of draining towards zero.
    planned = clock + inc * INCREMENT_SHARE * (moves_left - 1) - overhead * (moves_left + 2)
    optimum = max(0.0, planned) / moves_left
    reserve = min(RESERVE_INCREMENTS * inc, RESERVE_MAX)
    ceiling = min(usable * MAX_CLOCK_SHARE, max(usable - reserve, RESERVE_INC_SHARE * inc))
    # The last move before a time control may use its whole ceiling; others stretch the optimum.
    maximum = ceiling if limits.movestogo == 1 else min(optimum * MAX_STRETCH, ceiling)
    optimum = min(optimum, maximum)
    return max(MIN_THINK, optimum), max(MIN_THINK, maximum)


def soft_limit(optimum: float, best_changes: float, score_drop: float) -> float:
    """Seconds after which a clock search starts no new iteration (see SOFT_SHARE); score_drop is the
    previous move's score less this iteration's, in centipawns (0 when there is no previous move)."""
    low, high = FALLING_RANGE
    falling = min(max(1.0 + score_drop / FALLING_CP, low), high)
    return optimum * SOFT_SHARE * (1.0 + INSTABILITY * best_changes) * falling
