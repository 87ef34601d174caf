"""A stand-in clock for tests of the search's time limits: the limits are reached after a fixed
number of the search's clock readings, not after however much CPU a busy machine gives it."""

from __future__ import annotations


class SteppingClock:
    """Stands in for the time module in engine.search: the first reading (the search's start) is
    0 s and every later one `step` seconds more."""

    def __init__(self, step: float = 1.0) -> None:
        self.step = step
        self.readings = 0

    def perf_counter(self) -> float:
        self.readings += 1
        return (self.readings - 1) * self.step
