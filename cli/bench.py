"""`garfish bench [DEPTH] [--multipv N] [--syzygy PATH] [--evalfile FILE]`: the command line of the bench
(garfish.uci.tools prints it)."""

from __future__ import annotations

import sys
from typing import Optional

from garfish.uci.tools import print_bench

BENCH_USAGE = ("usage: garfish bench [DEPTH] [--multipv N] [--syzygy PATH] [--evalfile FILE]\n\nSearch the bench "
               "positions to DEPTH (default: the bench depth),\nwith N best lines (MultiPV, default 1), probing the "
               "Syzygy tables in PATH (folders separated as in SyzygyPath) if given,\nevaluating with the network "
               "FILE (as the EvalFile option takes it; default: the engine's default network;\n<classic>: the hand-written evaluation).")
HELP_WORDS = ("-h", "--help", "help")


def _take_option(args: list[str], name: str) -> tuple[list[str], Optional[str]]:
    """The arguments without `name VALUE`, and VALUE (None when name is absent; "" when it has no value)."""
    if name not in args:
        return args, None
    at = args.index(name)
    if at + 1 >= len(args):
        return args[:at], ""
    return args[:at] + args[at + 2:], args[at + 1]


def bench_main(args: list[str]) -> int:
    """`garfish bench [DEPTH] [--multipv N] [--syzygy PATH] [--evalfile FILE]`: the bench, ending in the
    Nodes searched signature."""
    from garfish.engine.evaluation.evalfile import DEFAULT_EVAL_FILE, load_evaluator
    from garfish.engine.evaluation.network import NetworkError
    from garfish.engine.services.syzygy import TablebaseError

    if args and args[0] in HELP_WORDS:
        print(BENCH_USAGE)
        return 0
    multipv = 1
    if "--multipv" in args:
        at = args.index("--multipv")
        if at + 1 >= len(args) or not args[at + 1].isdigit() or int(args[at + 1]) < 1:
            print("garfish bench: --multipv needs a positive integer", file=sys.stderr)
            return 2
        multipv = int(args[at + 1])
        args = args[:at] + args[at + 2:]
    args, syzygy = _take_option(args, "--syzygy")
    args, evalfile = _take_option(args, "--evalfile")
    for option, value in (("--syzygy", syzygy), ("--evalfile", evalfile)):
        if value == "":
            print(f"garfish bench: {option} needs a path", file=sys.stderr)
            return 2
    depth = None
    if args:
        if len(args) > 1 or not args[0].isdigit() or int(args[0]) < 1:
            print(f"garfish bench: depth must be a positive integer, not '{' '.join(args)}'", file=sys.stderr)
            return 2
        depth = int(args[0])
    try:
        evaluator = load_evaluator(DEFAULT_EVAL_FILE if evalfile is None else evalfile)
    except NetworkError as exc:
        print(f"garfish bench: cannot use the network {evalfile or DEFAULT_EVAL_FILE}: {exc}", file=sys.stderr)
        return 2
    try:
        print_bench(depth, lambda line: print(line, flush=True), multipv, syzygy or "", evaluator)
    except TablebaseError as exc:
        print(f"garfish bench: cannot use the Syzygy tables: {exc}", file=sys.stderr)
        return 2
    return 0
