"""Time to depth and nodes per second of Garfish at several Threads settings, same positions, same run.

    python scripts/smp_speed.py [--threads 1 2] [--depth 10] [--positions 8] [--rounds 1] [--engine CMD]

For every position (the first --positions of the `bench` positions) and every Threads setting, in
turn (so a drift in the machine's speed hits every setting alike), the engine gets `ucinewgame`
and `go depth D`; the time and nodes are those of its last `info` line. Each setting has its own
engine process, started and given its helpers before the first position (the start is not
timed). Prints a line per position and setting, then per setting the total time to depth, its
nodes per second, and the time-to-depth speed-up against the first setting (the sum of the
first setting's times over the sum of this one's). Run it with the project's interpreter
(`.venv/bin/python`) on an otherwise idle machine: Threads N wants N free cores.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

import chess
import chess.engine

ROOT = Path(__file__).resolve().parent.parent
READY_WAIT = 3.0  # seconds given to the helper processes to start before the first timed search


def bench_fens() -> list[str]:
    """The positions of Garfish's bench."""
    from garfish.engine.services.bench import BENCH_FENS

    return list(BENCH_FENS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="Threads settings (default 1 2)")
    parser.add_argument("--depth", type=int, default=10, help="search depth (default 10)")
    parser.add_argument("--positions", type=int, default=8, help="bench positions used (default 8)")
    parser.add_argument("--rounds", type=int, default=1, help="passes over the positions (default 1)")
    parser.add_argument("--hash", type=int, default=64, help="Hash in MB (default 64)")
    parser.add_argument("--engine", default=str(ROOT / "garfish"), help="engine command (default ./garfish)")
    args = parser.parse_args()
    fens = bench_fens()[:args.positions]
    engines = {}
    for threads in args.threads:
        engine = chess.engine.SimpleEngine.popen_uci(shlex.split(args.engine), timeout=60)
        engine.configure({"Threads": threads, "Hash": args.hash})
        engines[threads] = engine
    time.sleep(READY_WAIT)
    totals = {threads: [0.0, 0] for threads in args.threads}
    try:
        for round_number in range(args.rounds):
            for index, fen in enumerate(fens):
                for threads, engine in engines.items():
                    engine.protocol.send_line("ucinewgame")  # python-chess sends it only between games
                    info = engine.analyse(chess.Board(fen), chess.engine.Limit(depth=args.depth), game=object())
                    seconds, nodes = float(info.get("time", 0.0)), int(info.get("nodes", 0))
                    totals[threads][0] += seconds
                    totals[threads][1] += nodes
                    print(f"round {round_number + 1} position {index + 1:2d} Threads {threads}: "
                          f"{seconds:7.2f} s {nodes:9d} nodes {nodes / max(seconds, 1e-9):8.0f} nps", flush=True)
    finally:
        for engine in engines.values():
            engine.quit()
    first = args.threads[0]
    for threads in args.threads:
        seconds, nodes = totals[threads]
        print(f"Threads {threads}: depth {args.depth} on {len(fens)} positions x {args.rounds}: {seconds:.2f} s, "
              f"{nodes} nodes, {nodes / max(seconds, 1e-9):.0f} nps, time-to-depth speed-up "
              f"{totals[first][0] / max(seconds, 1e-9):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
