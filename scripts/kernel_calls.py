"""What a call back from the compiled search costs (engine.search.callbacks): the poll and a tablebase probe.

    python scripts/kernel_calls.py [--calls 100000]

Times a compiled loop that calls `poll` (an object-mode block to the current host) `--calls` times,
against the same loop without the call, and the probe to a host whose tables answer at once; prints
the microseconds a call, and what the poll costs a node at the search's poll interval
(engine.search.driver.POLL_INTERVAL nodes between polls).
"""

from __future__ import annotations

import argparse
import time
from typing import Callable

import numpy as np
from numba import njit

from garfish.engine.search.callbacks import hosting, poll, probe_wdl
from garfish.engine.search.driver import POLL_INTERVAL


class Host:
    """A host that never stops the search and whose tables say draw."""

    def __init__(self) -> None:
        self.tablebase = self

    def poll(self, nodes: int) -> bool:
        return False

    def probe_wdl(self, board: object) -> int:
        return 0


@njit(cache=True)
def poll_loop(calls):
    stopped = 0
    for nodes in range(calls):
        stopped += poll(np.int64(nodes))
    return stopped


@njit(cache=True)
def probe_loop(calls):
    total = 0
    one = np.uint64(1)
    for _ in range(calls):
        total += probe_wdl(one, one << np.uint64(8), np.uint64(0), np.uint64(0), np.uint64(0),
                           (one << np.uint64(4)) | (one << np.uint64(60)), one << np.uint64(60),
                           (one << np.uint64(4)) | (one << np.uint64(8)), True, np.int64(-1), np.int64(0))
    return total


@njit(cache=True)
def empty_loop(calls):
    total = 0
    for nodes in range(calls):
        total += nodes & 1
    return total


def seconds(loop: Callable[[int], int], calls: int) -> float:
    """The best of three timed runs of loop(calls), compiled before."""
    loop(10)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        loop(calls)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=100_000)
    args = parser.parse_args()
    with hosting(Host()):
        base = seconds(empty_loop, args.calls)
        polls = (seconds(poll_loop, args.calls) - base) / args.calls
        probes = (seconds(probe_loop, args.calls // 10) - base / 10) / (args.calls // 10)
    print(f"poll: {polls * 1e6:.2f} us a call, {polls * 1e6 / POLL_INTERVAL:.4f} us a node "
          f"(a poll every {POLL_INTERVAL} nodes)")
    print(f"tablebase probe (tables that answer at once): {probes * 1e6:.2f} us a call")


if __name__ == "__main__":
    main()
