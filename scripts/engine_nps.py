"""Nodes per second of two UCI engines on the same positions, searched at the same time.

    python scripts/engine_nps.py --engine ./garfish --engine sunfish-uci [--movetime 1000] [--fens FILE]

Each engine gets `go movetime MS` on every position (default: the 31 `bench`
positions) in its own thread, so both run at once, one per core, and a change
in the machine's speed hits both. An engine's figure is the sum of the nodes
over the sum of the times of its last `info` line per position (what the
engine itself reports). Prints one line per engine and the ratio of the first
to the second. Run it with the project's interpreter (`.venv/bin/python`).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import threading
from pathlib import Path
from typing import Optional

import chess
import chess.engine


def bench_fens() -> list[str]:
    """The positions of Garfish's bench."""
    from garfish.engine.services.bench import BENCH_FENS

    return list(BENCH_FENS)


def measure(index: int, command: str, fens: list[str], movetime: float,
            out: dict[int, tuple[str, int, float]]) -> None:
    """Search every position for movetime seconds; store (name, nodes, seconds) under the engine's index."""
    try:
        engine = chess.engine.SimpleEngine.popen_uci(shlex.split(command), timeout=60)
    except Exception as exc:
        print(f"engine_nps: cannot start '{command}': {exc}", file=sys.stderr)
        return
    try:
        nodes = 0
        seconds = 0.0
        for fen in fens:
            info = engine.analyse(chess.Board(fen), chess.engine.Limit(time=movetime))
            nodes += int(info.get("nodes", 0))
            seconds += float(info.get("time", movetime))
        out[index] = (engine.id.get("name", command), nodes, seconds)
    except Exception as exc:
        print(f"engine_nps: '{command}' failed: {exc}", file=sys.stderr)
    finally:
        engine.quit()


def main(argv: Optional[list[str]] = None) -> int:
    """Run both engines at once and print their nodes per second and the ratio."""
    parser = argparse.ArgumentParser(prog="engine_nps.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", action="append", required=True, help="engine command line (give two)")
    parser.add_argument("--movetime", type=int, default=1000, help="milliseconds per position (default 1000)")
    parser.add_argument("--fens", type=Path, help="a file of FENs, one per line (default: the bench positions)")
    args = parser.parse_args(argv)
    if len(args.engine) != 2:
        parser.error("give exactly two --engine commands")
    fens = ([line.strip() for line in args.fens.read_text().splitlines() if line.strip()] if args.fens
            else bench_fens())
    results: dict[int, tuple[str, int, float]] = {}
    threads = [threading.Thread(target=measure, args=(i, cmd, fens, args.movetime / 1000.0, results))
               for i, cmd in enumerate(args.engine)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if len(results) != 2:
        print("engine_nps: an engine failed (see above)", file=sys.stderr)
        return 1
    nps = []
    for index in range(2):
        name, nodes, seconds = results[index]
        nps.append(nodes / seconds if seconds else 0.0)
        print(f"{name}: {nodes} nodes in {seconds:.1f} s, {nps[-1]:.0f} nodes/s ({len(fens)} positions)")
    print(f"ratio first/second: {nps[0] / nps[1]:.2f}x" if nps[1] else "ratio: second engine reported no nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
