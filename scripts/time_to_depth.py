"""Time to a fixed depth of two UCI engines on the bench positions, taken in turn.

    python scripts/time_to_depth.py --engine A_CMD --engine B_CMD [--depth 12] [--positions 31]

Each engine gets `ucinewgame`, `position fen ...` and `go depth D` on every bench position; the
engines take turns position by position (A, B, A, B ...), so that a change in the machine's speed
hits both. The time is from writing `go` to reading `bestmove`; the nodes are the engine's own last
`info` figure. Prints a line per position and the totals, then B's time over A's.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stop_latency import Engine  # noqa: E402  (a sibling script: raw pipes, no client in between)

ANSWER_TIMEOUT = 3600.0  # seconds one search may take


def time_to_depth(engine: Engine, fen: str, depth: int) -> tuple[float, int]:
    """Seconds from `go depth` to `bestmove`, and the nodes of the last info line."""
    engine.send("ucinewgame")
    engine.send(f"position fen {fen}")
    engine.send("isready")
    engine.wait_for("readyok")
    assert engine.process.stdout is not None
    start = time.perf_counter()
    engine.send(f"go depth {depth}")
    nodes = 0
    while True:
        line = engine.process.stdout.readline()
        if not line:
            raise SystemExit("the engine exited")
        words = line.split()
        if "nodes" in words:
            nodes = int(words[words.index("nodes") + 1])
        if line.startswith("bestmove"):
            return time.perf_counter() - start, nodes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", action="append", required=True, help="engine command, twice (A, then B)")
    parser.add_argument("--depth", type=int, default=12, help="depth searched (default 12)")
    parser.add_argument("--positions", type=int, default=31, help="bench positions used (default all 31)")
    args = parser.parse_args()
    if len(args.engine) != 2:
        parser.error("give --engine twice")
    from garfish.engine.services.bench import BENCH_FENS

    engines = [Engine(shlex.split(command)) for command in args.engine]
    totals = [[0.0, 0], [0.0, 0]]
    try:
        for engine in engines:
            engine.send("uci")
            engine.wait_for("uciok")
        for index, fen in enumerate(list(BENCH_FENS)[:args.positions], 1):
            row = []
            for side, engine in enumerate(engines):
                seconds, nodes = time_to_depth(engine, fen, args.depth)
                totals[side][0] += seconds
                totals[side][1] += nodes
                row.append(f"{'AB'[side]} {seconds:7.2f} s {nodes:9d} nodes")
            print(f"{index:2d}  " + "   ".join(row), flush=True)
    finally:
        for engine in engines:
            engine.quit()
    for side, (seconds, nodes) in enumerate(totals):
        print(f"{'AB'[side]}: {seconds:.1f} s, {nodes} nodes, {int(nodes / seconds) if seconds else 0} nodes/s "
              f"({args.engine[side]})")
    print(f"B's time / A's time to depth {args.depth}: {totals[1][0] / totals[0][0]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
