"""`garfish perft`: perft of one position (with --divide), or a whole suite against known counts."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Optional

import chess

from garfish.arena.data import data_dir
from garfish.perft.core import divide, perft
from garfish.perft.suites import read_suite, suite_files


def build_parser() -> argparse.ArgumentParser:
    """Command-line arguments of `garfish perft`."""
    parser = argparse.ArgumentParser(prog="garfish perft", description=__doc__)
    parser.add_argument("depth", nargs="?", type=int, help="plies to count (single-position mode)")
    parser.add_argument("fen", nargs="*", help="position (default: the start position)")
    parser.add_argument("--divide", action="store_true", help="print the count below each root move")
    parser.add_argument("--chess960", action="store_true", help="read the FEN's castling rights as Chess960")
    parser.add_argument("--suite", nargs="*", metavar="FILE",
                        help="check perft suites (default: every file in ../shared/data/perft)")
    parser.add_argument("--max-depth", type=int, default=4, help="suite mode: deepest depth checked (default 4)")
    parser.add_argument("--max-nodes", type=int, default=2_000_000,
                        help="suite mode: skip counts above this many nodes (default 2000000)")
    parser.add_argument("--limit", type=int, default=0, help="suite mode: at most this many positions per file")
    return parser


def run_single(depth: int, fen: Optional[str], do_divide: bool, chess960: bool) -> int:
    """Perft of one position; prints the count and nodes per second."""
    try:
        board = chess.Board(fen, chess960=chess960) if fen else chess.Board(chess960=chess960)
    except ValueError as exc:
        print(f"garfish perft: invalid FEN '{fen}': {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    if do_divide:
        total = 0
        for move, count in divide(board, depth):
            print(f"{board.uci(move)}: {count}", flush=True)
            total += count
        print()
    else:
        total = perft(board, depth)
    elapsed = time.perf_counter() - start
    print(f"Nodes searched: {total}")
    print(f"Time (s): {elapsed:.2f}  nps: {int(total / elapsed) if elapsed > 0 else 0}")
    return 0


def run_suites(files: list[Path], max_depth: int, max_nodes: int, limit: int) -> int:
    """Check every position of the suites up to the limits; non-zero exit on any mismatch."""
    failures = 0
    grand_nodes = 0
    grand_time = 0.0
    for path in files:
        checked = positions = nodes_total = 0
        start = time.perf_counter()
        for case in read_suite(path):
            if limit and positions >= limit:
                break
            positions += 1
            board = case.board()
            for depth in sorted(case.counts):
                expected = case.counts[depth]
                if depth > max_depth or expected > max_nodes:
                    break
                got = perft(board, depth)
                nodes_total += got
                checked += 1
                if got != expected:
                    failures += 1
                    print(f"MISMATCH {path.name}:{case.line} depth {depth}: got {got}, expected {expected}  {case.fen}",
                          flush=True)
        elapsed = time.perf_counter() - start
        grand_nodes += nodes_total
        grand_time += elapsed
        nps = int(nodes_total / elapsed) if elapsed > 0 else 0
        print(f"{path.name}: {positions} positions, {checked} counts checked, {nodes_total} nodes, "
              f"{elapsed:.1f} s, {nps} nps", flush=True)
    print(f"Total: {grand_nodes} nodes in {grand_time:.1f} s, "
          f"{int(grand_nodes / grand_time) if grand_time > 0 else 0} nps; {failures} mismatches")
    return 1 if failures else 0


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of `garfish perft` and `python -m garfish.perft`."""
    args = build_parser().parse_args(argv)
    if args.suite is not None:
        files = [Path(name) for name in args.suite]
        if not files:
            folder = data_dir()
            if folder is None:
                print("garfish perft: no shared data folder found (set GARFISH_DATA)", file=sys.stderr)
                return 2
            files = suite_files(folder)
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            print(f"garfish perft: no such file: {', '.join(missing)}", file=sys.stderr)
            return 2
        return run_suites(files, args.max_depth, args.max_nodes, args.limit)
    if args.depth is None or args.depth < 1:
        print("garfish perft: give a depth >= 1 (and optionally a FEN), or --suite", file=sys.stderr)
        return 2
    return run_single(args.depth, " ".join(args.fen) if args.fen else None, args.divide, args.chess960)
