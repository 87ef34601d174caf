"""Where a warm start's time goes before `readyok`: the stages of Engine._load, timed in a fresh process each run.

    python scripts/startup_stages.py [--runs 5]

Each run starts a new interpreter (the Numba cache as the engine finds it: run `./garfish` once first) and
prints the seconds of each stage, in the order a start takes them: the interpreter and the UCI layer's
imports (what `uciok` waits for), Numba's own import (which imports SciPy where it is installed, for its
linear algebra), the kernels loaded from the cache (engine.services.warmup.load_kernels), the default network
read, and the searcher with its table built; then the medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

STAGES = r"""
import json, sys, time
start = time.perf_counter()
marks = {}
import garfish.uci.protocol
marks["UCI layer imported"] = time.perf_counter()
import numba
marks["numba imported"] = time.perf_counter()
from garfish.engine.services.warmup import load_kernels
load_kernels()
marks["kernels loaded from the cache"] = time.perf_counter()
from garfish.engine.evaluation.evalfile import DEFAULT_EVAL_FILE, load_evaluator
evaluator = load_evaluator(DEFAULT_EVAL_FILE)
marks["network read"] = time.perf_counter()
from garfish.engine.search.driver import Searcher
from garfish.engine.search.tt import TranspositionTable
Searcher(TranspositionTable(16), evaluator)
marks["searcher and 16 MB table built"] = time.perf_counter()
last, out = start, {}
for name, when in marks.items():
    out[name] = when - last
    last = when
out["total (after the interpreter's own start)"] = last - start
print(json.dumps(out))
"""


def main() -> int:
    """Time the stages --runs times and print each run and the medians."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    runs = []
    for _ in range(args.runs):
        done = subprocess.run([sys.executable, "-P", "-c", STAGES], capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout))
        print(" ".join(f"{value:.3f}" for value in runs[-1].values()))
    print("| stage | median seconds |\n|---|---:|")
    for name in runs[0]:
        print(f"| {name} | {statistics.median(run[name] for run in runs):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
