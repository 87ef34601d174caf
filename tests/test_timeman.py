"""The time manager's budgets: within the clock, and a clock that does not drain to zero."""

from __future__ import annotations

import chess
import pytest

from garfish.engine.search.timeman import MAX_STRETCH, RESERVE_INCREMENTS, RESERVE_MAX, time_budget
from garfish.engine.types import Limits


def test_movetime_and_no_clock() -> None:
    assert time_budget(Limits(movetime=1.0, move_overhead=0.03), chess.WHITE) == pytest.approx((0.97, 0.97))
    assert time_budget(Limits(depth=5, move_overhead=0.03), chess.WHITE) == (None, None)


@pytest.mark.parametrize(("clock", "inc"), [(10.0, 0.1), (5.0, 0.05), (1.0, 0.0), (0.2, 0.05), (0.05, 0.05)])
def test_budget_stays_within_the_clock(clock: float, inc: float) -> None:
    optimum, maximum = time_budget(Limits(wtime=clock, winc=inc, move_overhead=0.03), chess.WHITE)
    assert 0 < optimum <= maximum
    assert maximum <= max(0.005, 0.7 * (clock - 0.03))
    # Black's clock is the one read when Black is to move.
    black = Limits(wtime=100.0, btime=clock, binc=inc, move_overhead=0.03)
    assert time_budget(black, chess.BLACK) == (optimum, maximum)


@pytest.mark.parametrize(("base", "inc", "actual_overhead"), [(5.0, 0.05, 0.03), (10.0, 0.1, 0.03), (2.0, 0.05, 0.02)])
def test_clock_settles_at_a_reserve_when_each_move_uses_its_optimum(base: float, inc: float,
                                                                   actual_overhead: float) -> None:
    # Play 300 moves where each takes the planned optimum plus the overhead: the clock must
    # not drain below several increments (it fell to a flag at 5+0.05 with the old formula).
    clock = base
    for _ in range(300):
        optimum, _ = time_budget(Limits(wtime=clock, winc=inc, move_overhead=0.03), chess.WHITE)
        clock = clock - optimum - actual_overhead + inc
        assert clock > 0
    assert clock > 4 * inc


@pytest.mark.parametrize(("base", "inc", "actual_overhead"),
                         [(10.0, 0.1, 0.01), (2.0, 0.05, 0.01), (1.0, 1.0, 0.02), (60.0, 2.0, 0.03)])
def test_a_low_clock_keeps_a_reserve_when_every_move_runs_to_the_hard_limit(base: float, inc: float,
                                                                          actual_overhead: float) -> None:
    # A search can run past its soft limit to the hard one. Play 300 such moves: the clock must
    # settle with room for a stall of several increments beyond the hard limit (at 10+0.1 it
    # used to settle at 0.16 s with 0.09 s of room, and a 0.08 s stall lost a game on time).
    clock = base
    room = []
    for _ in range(300):
        _, maximum = time_budget(Limits(wtime=clock, winc=inc, move_overhead=0.03), chess.WHITE)
        room.append(clock - maximum)
        clock = clock - maximum - actual_overhead + inc
        assert clock > 0
    assert min(room[-100:]) >= min(RESERVE_INCREMENTS * inc, RESERVE_MAX)


def test_the_reserve_leaves_a_long_clock_alone() -> None:
    # Far from the reserve the hard limit is the optimum's stretch, as before the reserve existed.
    optimum, maximum = time_budget(Limits(wtime=10.0, winc=0.1, move_overhead=0.03), chess.WHITE)
    assert maximum == pytest.approx(optimum * MAX_STRETCH)
    # Below the reserve a move takes at most half the increment, so the clock climbs back.
    _, maximum = time_budget(Limits(wtime=0.25, winc=0.1, move_overhead=0.03), chess.WHITE)
    assert maximum == pytest.approx(0.05)


def test_moves_to_go_spends_more_per_move_with_fewer_moves_left() -> None:
    few, _ = time_budget(Limits(wtime=10.0, movestogo=5, move_overhead=0.03), chess.WHITE)
    many, _ = time_budget(Limits(wtime=10.0, movestogo=30, move_overhead=0.03), chess.WHITE)
    assert few > many
    last, last_max = time_budget(Limits(wtime=10.0, movestogo=1, move_overhead=0.03), chess.WHITE)
    assert last_max == pytest.approx(0.7 * 9.97)


def test_soft_limit_grows_with_an_unstable_best_move_and_a_falling_score() -> None:
    from garfish.engine.search.timeman import FALLING_RANGE, SOFT_SHARE, soft_limit

    calm = soft_limit(1.0, 0.0, 0)
    assert calm == pytest.approx(SOFT_SHARE)
    assert soft_limit(1.0, 1.5, 0) > soft_limit(1.0, 0.5, 0) > calm
    assert soft_limit(1.0, 0.0, 100) > calm > soft_limit(1.0, 0.0, -100)
    # The score factor is clamped: a lost mate or a found one moves the limit only so far.
    assert soft_limit(1.0, 0.0, 30000) == pytest.approx(SOFT_SHARE * FALLING_RANGE[1])
    assert soft_limit(1.0, 0.0, -30000) == pytest.approx(SOFT_SHARE * FALLING_RANGE[0])
    assert soft_limit(2.0, 1.0, 50) == pytest.approx(2 * soft_limit(1.0, 1.0, 50))


def test_time_a_go_waited_is_off_the_clocks_but_not_while_pondering() -> None:
    """Limits.less: a `go` that waited for the engine's build (a warm start) searches on what is left."""
    limits = Limits(wtime=10.0, btime=0.5, winc=0.1, movetime=2.0, depth=9)
    less = limits.less(0.75)
    assert (less.wtime, less.btime, less.movetime, less.winc, less.depth) == (9.25, 0.0, 1.25, 0.1, 9)
    assert limits.wtime == 10.0  # a copy: the caller's limits are kept
    assert limits.less(0.0) is limits and Limits(wtime=3.0, ponder=True).less(1.0).wtime == 3.0
    assert Limits(depth=4).less(2.0) == Limits(depth=4)
