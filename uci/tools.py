"""The bench printed as Stockfish prints it: the positions searched, a line each, then the totals and the
`Nodes searched` signature (the UCI `bench` command's and `garfish bench`'s, whose command line is
garfish.cli.bench)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

if TYPE_CHECKING:
    from garfish.engine.evaluation.nnue import NetworkEvaluator


def print_bench(depth: Optional[int], send: Callable[[str], None], multipv: int = 1, syzygy_path: str = "",
                evaluator: Optional[NetworkEvaluator] = None) -> int:
    """Run the bench (with `multipv` lines; probing the Syzygy tables of syzygy_path, if given:
    engine.services.syzygy.TablebaseError when they cannot serve; evaluating with the network `evaluator`
    if given), print per-position lines and the Stockfish-style totals; return the node count."""
    from garfish.engine.services.bench import BENCH_DEPTH, BENCH_FENS, run_bench
    from garfish.engine.services.syzygy import Tablebases

    depth = depth or BENCH_DEPTH
    tablebase = Tablebases(syzygy_path) if syzygy_path else None
    send(f"Evaluation: network {evaluator.describe()}" if evaluator is not None
         else "Evaluation: the hand-written evaluation (<classic>)")

    def report(index: int, fen: str, nodes: int, seconds: float) -> None:
        send(f"Position {index:2d}/{len(BENCH_FENS)}: {nodes:8d} nodes {seconds:6.2f} s  {fen}")

    try:
        result = run_bench(depth, report, multipv, tablebase, evaluator)
    finally:
        if tablebase is not None:
            tablebase.close()
    send("")
    send("===========================")
    send(f"Total time (ms) : {int(result.seconds * 1000)}")
    send(f"Nodes searched  : {result.nodes}")
    send(f"Nodes/second    : {result.nps}")
    if tablebase is not None:
        send(f"Tablebase hits  : {result.tbhits} ({tablebase.wdl_count} WDL and {tablebase.dtz_count} DTZ tables, "
             f"up to {tablebase.max_pieces}-man)")
    return result.nodes
