"""`garfish epd`: run a UCI engine (Garfish by default) over an EPD test suite (suite.py reads it).

Understands the opcodes bm (best moves), am (moves to avoid), id, and STS-style c0 point
scores (c0 "Qxb2=10, Rd8=4"). A position with c0 points scores the points of the played
move (summed into points / max points); a position counts as solved when the move is in bm
(if given) and not in am (if given), or, with c0 points only, when it has the top score.
Each position gets `ucinewgame` and one `go` with the chosen limit. With -j N, N worker
processes each drive their own engine.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import math
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Callable, Generator, Optional

from garfish.arena.driver import (DEFAULT_COMMAND, EngineProcess, EngineSpec, EngineStartError, parse_option_pairs,
                                  quiet_python_chess, split_command)
from garfish.arena.suite import EpdConfig, EpdPosition, PositionResult, SuiteError, read_suite, solve
from garfish.arena.tools import EXIT_ENGINE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, check_cluster
from garfish.arena.workers import run_as_worker, run_pool, serve_tasks

PROG = "garfish epd"
LOG = logging.getLogger(__name__)
TIME_WATCHDOG_GRACE = 10.0  # seconds past --time before a silent engine is killed
SEARCH_WATCHDOG = 600.0  # seconds before a silent engine is killed under --depth / --nodes
FAILED_IDS_SHOWN = 100


def worker(config: EpdConfig, tasks: Any, results: Any) -> None:
    """Worker process body: solve positions until the parent says stop (see garfish.arena.workers)."""
    run_as_worker(functools.partial(serve_tasks, config.spec, tasks, results,
                                    handle=lambda engine, position, report: solve(engine, position, config)))


def run_serial(config: EpdConfig, positions: list[EpdPosition],
               on_ready: Callable[[str], None]) -> Generator[PositionResult, None, None]:
    """Solve the positions one by one in this process (raises EngineStartError)."""
    engine = EngineProcess(config.spec)
    try:
        on_ready(engine.name)
        for position in positions:
            yield solve(engine, position, config)
    finally:
        engine.close()


def run_parallel(config: EpdConfig, positions: list[EpdPosition], jobs: int,
                 on_ready: Callable[[str], None]) -> Generator[PositionResult, None, None]:
    """Solve the positions in `jobs` worker processes, yielding results as they come (raises EngineStartError)."""
    announced = False
    for kind, payload in run_pool(worker, config, positions, jobs):
        if kind == "ready" and not announced:
            announced = True
            on_ready(payload)
        elif kind == "result":
            yield payload


def run_cluster(config: EpdConfig, positions: list[EpdPosition], address: str, verbose: bool,
                on_ready: Callable[[str], None]) -> Generator[PositionResult, None, None]:
    """Solve the positions on a Dask cluster, one task per position, yielding results as they come
    (raises EngineStartError, also for the cluster itself; see garfish.arena.cluster)."""
    from garfish.arena import cluster

    shipped = replace(config, spec=cluster.for_workers(config.spec))
    with cluster.connect(address, verbose) as client:
        on_ready(cluster.probe(client, [shipped.spec])[0][0])
        jobs = [(position.number, (shipped, position)) for position in positions]
        yield from cluster.stream(client, cluster.solve_position, jobs, "position")  # closed with this generator


def format_result(result: PositionResult, done: int, total: int) -> str:
    """One line per position."""
    verdict = "SOLVED" if result.solved else "failed"
    if result.points is not None:
        verdict = f"{result.points}/{result.max_points} pts" + (" SOLVED" if result.solved else "")
    depth = "-" if result.depth is None else str(result.depth)
    nodes = "-" if result.nodes is None else str(result.nodes)
    seconds = "-" if result.time is None else f"{result.time:.2f}s"
    counter = f"[{done:>{len(str(total))}}/{total}]"
    line = (f"{counter} {result.id:<14} move {result.san or '-':<7} expected {result.expected:<18} "
            f"depth {depth:>3} nodes {nodes:>9} time {seconds:>7}  {verdict}")
    if result.error:
        line += f"  ERROR {result.error}"
    if result.note:
        line += f"  ({result.note})"
    return line


def summarize(results: list[PositionResult], wall: float) -> dict[str, Any]:
    """Totals: solved, points, average depth, nodes, nps, failed ids, errors."""
    depths = [r.depth for r in results if r.depth is not None]
    nodes = sum(r.nodes or 0 for r in results)
    search_time = sum(r.time or 0.0 for r in results if r.nodes is not None)
    scored = [r for r in results if r.max_points is not None]
    summary: dict[str, Any] = {
        "positions": len(results),
        "solved": sum(r.solved for r in results),
        "average_depth": round(sum(depths) / len(depths), 2) if depths else None,
        "nodes": nodes,
        "search_time": round(search_time, 3),
        "nps": int(nodes / search_time) if search_time > 0 else None,
        "wall_time": round(wall, 3),
        "errors": sum(r.error is not None for r in results),
        "failed": [r.id for r in results if not r.solved],
    }
    if scored:
        summary["points"] = sum(r.points or 0 for r in scored)
        summary["max_points"] = sum(r.max_points or 0 for r in scored)
        summary["scored_positions"] = len(scored)
    return summary


def print_summary(summary: dict[str, Any], out: Callable[[str], None]) -> None:
    """The human-readable summary."""
    total = summary["positions"]
    percent = 100.0 * summary["solved"] / total if total else 0.0
    out("-" * 72)
    out(f"Solved: {summary['solved']}/{total} ({percent:.1f}%)")
    if "points" in summary:
        share = 100.0 * summary["points"] / summary["max_points"] if summary["max_points"] else 0.0
        out(f"Points: {summary['points']}/{summary['max_points']} ({share:.1f}%) "
            f"over {summary['scored_positions']} positions with c0 scores")
    depth = "-" if summary["average_depth"] is None else f"{summary['average_depth']:.2f}"
    nps = "-" if summary["nps"] is None else str(summary["nps"])
    out(f"Average depth: {depth}   Nodes: {summary['nodes']}   NPS: {nps}   "
        f"Search time: {summary['search_time']:.2f} s   Wall: {summary['wall_time']:.2f} s")
    if summary["errors"]:
        out(f"Engine errors: {summary['errors']} (see ERROR in the lines above)")
    failed = summary["failed"]
    if failed:
        shown = ", ".join(failed[:FAILED_IDS_SHOWN]) + (", ..." if len(failed) > FAILED_IDS_SHOWN else "")
        out(f"Failed ({len(failed)}): {shown}")


def add_search_arguments(parser: argparse.ArgumentParser, unit: str) -> None:
    """The arguments `garfish epd` and `garfish analyse` share (validate and build_config read them): the limit
    per `unit` ("position", "search"), the engine and its options, -j or --cluster, the watchdog, the switches."""
    limit = parser.add_mutually_exclusive_group(required=True)
    limit.add_argument("--time", type=float, metavar="S", help=f"seconds per {unit} (go movetime)")
    limit.add_argument("--depth", type=int, metavar="D", help=f"search depth per {unit} (go depth)")
    limit.add_argument("--nodes", type=int, metavar="N", help=f"nodes per {unit} (go nodes)")
    parser.add_argument("--engine", metavar="CMD",
                        help="engine command line, shell-quoted (default: installed Garfish, python -P -m garfish.uci)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="UCI option for the engine (repeatable)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("-j", "--jobs", type=int, default=1, help="parallel worker processes, one engine each")
    where.add_argument("--cluster", metavar="ADDRESS",
                       help="run on a Dask cluster: a scheduler address (tcp://HOST:8786) or local[:N] "
                            "(see garfish.arena.cluster)")
    parser.add_argument("--timeout", type=float, metavar="S",
                        help=f"kill and restart an engine silent this long in one {unit} "
                             f"(default: --time + {TIME_WATCHDOG_GRACE:g} s, else {SEARCH_WATCHDOG:g} s)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (it is off when stderr is no TTY)")
    parser.add_argument("--show-stderr", action="store_true", help="let the engine's stderr through")
    parser.add_argument("-v", "--verbose", action="store_true", help="log python-chess's engine traffic problems")


def build_parser() -> argparse.ArgumentParser:
    """Command-line arguments of `garfish epd`."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", type=Path, help="EPD file (bm / am / id / c0 opcodes)")
    add_search_arguments(parser, "position")
    parser.add_argument("--limit", type=int, default=0, metavar="N", help="only the first N positions")
    parser.add_argument("--report", type=Path, metavar="FILE.json", help="write a JSON report")
    return parser


def validate(args: argparse.Namespace) -> Optional[str]:
    """An error message for out-of-range arguments, or None."""
    if args.time is not None and not (args.time > 0 and math.isfinite(args.time)):
        return "--time must be a positive number of seconds"
    if args.depth is not None and args.depth < 1:
        return "--depth must be at least 1"
    if args.nodes is not None and args.nodes < 1:
        return "--nodes must be at least 1"
    if args.jobs < 1:
        return "-j must be at least 1"
    if args.limit < 0:
        return "--limit must not be negative"
    if args.timeout is not None and args.timeout <= 0:
        return "--timeout must be positive"
    if args.cluster is not None:
        try:
            check_cluster(args.cluster)
        except ValueError as exc:
            return str(exc)
    return None


def build_config(args: argparse.Namespace) -> EpdConfig:
    """The worker configuration from the arguments (ValueError for a bad command or option)."""
    argv = split_command(args.engine) if args.engine else list(DEFAULT_COMMAND)
    spec = EngineSpec(argv=argv, options=parse_option_pairs(args.option), show_stderr=args.show_stderr)
    if args.time is not None:
        limit: dict[str, float] = {"time": args.time}
        watchdog = args.timeout or args.time + TIME_WATCHDOG_GRACE
    elif args.depth is not None:
        limit, watchdog = {"depth": args.depth}, args.timeout or SEARCH_WATCHDOG
    else:
        limit, watchdog = {"nodes": args.nodes}, args.timeout or SEARCH_WATCHDOG
    return EpdConfig(spec=spec, limit=limit, watchdog=watchdog)


def write_report(path: Path, args: argparse.Namespace, config: EpdConfig, engine_name: str,
                 results: list[PositionResult], summary: dict[str, Any],
                 skipped: list[tuple[int, str]]) -> None:
    """Write the JSON report."""
    report = {
        "suite": str(args.suite),
        "engine": {"command": config.spec.argv, "name": engine_name, "options": config.spec.options},
        "limit": config.limit,
        "jobs": args.jobs,
        "cluster": args.cluster,
        "summary": summary,
        "failed": summary["failed"],
        "skipped_lines": [{"line": line, "error": reason} for line, reason in skipped],
        "positions": [asdict(result) for result in results],
    }
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of `garfish epd`."""
    args = build_parser().parse_args(argv)
    problem = validate(args)
    if problem:
        print(f"{PROG}: {problem}", file=sys.stderr)
        return EXIT_USAGE
    quiet_python_chess(args.verbose)
    try:
        config = build_config(args)
        positions, skipped = read_suite(args.suite, args.limit)
    except (ValueError, SuiteError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for line, reason in skipped:
        print(f"{PROG}: {args.suite}:{line}: skipped: {reason}", file=sys.stderr)
    if not positions:
        print(f"{PROG}: no usable positions in '{args.suite}'", file=sys.stderr)
        return EXIT_USAGE
    return run(args, config, positions, skipped)


def run(args: argparse.Namespace, config: EpdConfig, positions: list[EpdPosition],
        skipped: list[tuple[int, str]]) -> int:
    """Run the suite, print lines and the summary, write the report; the exit status."""
    from tqdm import tqdm

    jobs = min(args.jobs, len(positions))
    limit_text = ", ".join(f"{key} {value:g}" for key, value in config.limit.items())
    where = f"cluster {args.cluster}" if args.cluster is not None else f"{jobs} job(s)"
    print(f"{PROG}: {len(positions)} positions from {args.suite}, {limit_text}, {where}", flush=True)
    results: list[PositionResult] = []
    names: list[str] = []
    bar = tqdm(total=len(positions), unit="pos", file=sys.stderr, dynamic_ncols=True,
               disable=True if args.no_progress else None)

    def on_ready(name: str) -> None:
        """Show the engine's name once it is up."""
        names.append(name)
        bar.write(f"engine: {name}", file=sys.stdout)

    start = time.perf_counter()
    if args.cluster is not None:
        source = run_cluster(config, positions, args.cluster, args.verbose, on_ready)
    elif jobs == 1:
        source = run_serial(config, positions, on_ready)
    else:
        source = run_parallel(config, positions, jobs, on_ready)
    status = EXIT_OK
    try:
        for result in source:
            results.append(result)
            bar.update(1)
            bar.set_postfix(solved=sum(r.solved for r in results), refresh=False)
            bar.write(format_result(result, len(results), len(positions)), file=sys.stdout)
            sys.stdout.flush()
    except EngineStartError as exc:
        bar.close()
        print(f"{PROG}: {exc}", file=sys.stderr)
        if not results:
            return EXIT_ENGINE
        status = EXIT_ENGINE
    except KeyboardInterrupt:
        bar.close()
        print(f"{PROG}: interrupted; partial results follow", file=sys.stderr)
        status = EXIT_INTERRUPTED
    finally:
        source.close()
    bar.close()
    results.sort(key=lambda r: r.number)
    summary = summarize(results, time.perf_counter() - start)
    print_summary(summary, lambda line: print(line, flush=True))
    if skipped:
        print(f"Skipped lines: {', '.join(str(line) for line, _ in skipped)}")
    if args.report:
        try:
            write_report(args.report, args, config, names[0] if names else "", results, summary, skipped)
        except OSError as exc:
            print(f"{PROG}: cannot write report '{args.report}': {exc.strerror or exc}", file=sys.stderr)
            return EXIT_USAGE
        print(f"Report: {args.report}")
    return status
