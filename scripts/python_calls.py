"""Python function calls per search node in `bench`: the difference between two depths.

    python scripts/python_calls.py [--low 4] [--high 6] [--evalfile PATH]

Runs the bench (its 31 positions, each from a fresh table) at two depths with a profile hook
(sys.setprofile) that counts every call of a Python function and of a C function from Python;
compiled code (Numba) makes none. The calls the driver makes once a search or once an iteration
cost the same at both depths, so (calls at high - calls at low) / (nodes at high - nodes at low)
is what a node costs in Python calls. The kernels are loaded (or compiled) before counting.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Optional

from garfish.engine.evaluation.evalfile import DEFAULT_EVAL_FILE, load_evaluator
from garfish.engine.services.bench import run_bench


def counted_bench(depth: int, evaluator: Any) -> tuple[int, int]:
    """(Python calls, nodes) of a bench run to `depth`."""
    calls = 0

    def hook(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(hook)
    try:
        result = run_bench(depth=depth, evaluator=evaluator)
    finally:
        sys.setprofile(None)
    return calls, result.nodes


def main(argv: Optional[list[str]] = None) -> int:
    """Count the calls at both depths and print them with the calls per node."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--low", type=int, default=4)
    parser.add_argument("--high", type=int, default=6)
    parser.add_argument("--evalfile", default=DEFAULT_EVAL_FILE, help="a network, or <classic>")
    args = parser.parse_args(argv)
    evaluator = None if args.evalfile == "<classic>" else load_evaluator(args.evalfile)
    run_bench(depth=2, evaluator=evaluator)  # the kernels loaded (or compiled) first, uncounted
    low_calls, low_nodes = counted_bench(args.low, evaluator)
    high_calls, high_nodes = counted_bench(args.high, evaluator)
    print(f"depth {args.low}: {low_calls:,} calls, {low_nodes:,} nodes")
    print(f"depth {args.high}: {high_calls:,} calls, {high_nodes:,} nodes")
    print(f"Python calls per node: {(high_calls - low_calls) / (high_nodes - low_nodes):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
