"""Command-line tools beside the UCI loop: bench (perft lives in the perft package)."""

from __future__ import annotations

from typing import Callable, Optional


def print_bench(depth: Optional[int], send: Callable[[str], None], multipv: int = 1) -> int:
    """Run the bench (with `multipv` lines), print per-position lines and the Stockfish-style totals;
    return the node count."""
    from garfish.engine.bench import BENCH_DEPTH, BENCH_FENS, run_bench

    depth = depth or BENCH_DEPTH

    def report(index: int, fen: str, nodes: int, seconds: float) -> None:
        send(f"Position {index:2d}/{len(BENCH_FENS)}: {nodes:8d} nodes {seconds:6.2f} s  {fen}")

    result = run_bench(depth, report, multipv)
    send("")
    send("===========================")
    send(f"Total time (ms) : {int(result.seconds * 1000)}")
    send(f"Nodes searched  : {result.nodes}")
    send(f"Nodes/second    : {result.nps}")
    return result.nodes
