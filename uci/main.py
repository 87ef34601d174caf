"""The `garfish` command: the UCI engine, or `garfish bench [depth]`, `garfish perft ...`,
`garfish epd SUITE ...` (test suites), `garfish match ...` (engine matches),
`garfish analyse GAMES.pgn ...` (annotate games: evaluations, mistakes, better lines),
`garfish rating RATING=REPORT.json ...` (a rating from matches against rated opponents),
`garfish wdl PGN ...` (fit the win/draw/loss model to an engine's games) or
`garfish datagen OUT ...` (training positions from an engine's self-play),
`garfish pack IN OUT` (training positions packed as games, `--unpack` back to text, `--verify FOLDER`
against the data set's list),
`garfish train DATA ...` (train an evaluation network; needs the `train` extra, PyTorch)."""

from __future__ import annotations

import sys
from typing import Callable, Optional

from garfish.uci import __version__

HELP_WORDS = ("-h", "--help", "help")
VERSION_WORDS = ("-V", "--version")
BENCH_USAGE = ("usage: garfish bench [DEPTH] [--multipv N] [--syzygy PATH] [--evalfile FILE]\n\nSearch the bench "
               "positions to DEPTH (default: the bench depth),\nwith N best lines (MultiPV, default 1), probing the "
               "Syzygy tables in PATH (folders separated as in SyzygyPath) if given,\nevaluating with the network "
               "FILE (as the EvalFile option takes it; default: the engine's default network;\n<classic>: the hand-written evaluation).")


def _print(line: str) -> None:
    """Print a line and flush (tools write progress as they go)."""
    print(line, flush=True)


def _take_option(args: list[str], name: str) -> tuple[list[str], Optional[str]]:
    """The arguments without `name VALUE`, and VALUE (None when name is absent; "" when it has no value)."""
    if name not in args:
        return args, None
    at = args.index(name)
    if at + 1 >= len(args):
        return args[:at], ""
    return args[:at] + args[at + 2:], args[at + 1]


# Each sub-command imports its module when it runs, so that the UCI engine starts fast.
def bench_command(args: list[str]) -> int:
    """`garfish bench [DEPTH] [--multipv N] [--syzygy PATH] [--evalfile FILE]`: the bench, ending in the
    Nodes searched signature."""
    from garfish.engine.evalfile import DEFAULT_EVAL_FILE, load_evaluator
    from garfish.engine.network import NetworkError
    from garfish.engine.syzygy import TablebaseError
    from garfish.uci.tools import print_bench

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
        print_bench(depth, _print, multipv, syzygy or "", evaluator)
    except TablebaseError as exc:
        print(f"garfish bench: cannot use the Syzygy tables: {exc}", file=sys.stderr)
        return 2
    return 0


def perft_command(args: list[str]) -> int:
    """`garfish perft ...`: perft and divide through the engine's move path."""
    from garfish.perft.cli import main as perft_main

    return perft_main(args)


def epd_command(args: list[str]) -> int:
    """`garfish epd SUITE ...`: run an engine over a test suite."""
    from garfish.arena.epd import main as epd_main

    return epd_main(args)


def match_command(args: list[str]) -> int:
    """`garfish match ...`: play a match between two UCI engines."""
    from garfish.arena.match import main as match_main

    return match_main(args)


def analyse_command(args: list[str]) -> int:
    """`garfish analyse GAMES.pgn ...`: annotate games with an engine's evaluations and verdicts."""
    from garfish.arena.analyse import main as analyse_main

    return analyse_main(args)


def rating_command(args: list[str]) -> int:
    """`garfish rating RATING=REPORT.json ...`: a rating from matches against rated opponents."""
    from garfish.arena.rating import main as rating_main

    return rating_main(args)


def wdl_command(args: list[str]) -> int:
    """`garfish wdl PGN ...`: fit the win/draw/loss model to an engine's games."""
    from garfish.arena.wdlfit import main as wdl_main

    return wdl_main(args)


def datagen_command(args: list[str]) -> int:
    """`garfish datagen OUT ...`: training positions from an engine's self-play, labelled by its searches."""
    from garfish.arena.datagen import main as datagen_main

    return datagen_main(args)


def pack_command(args: list[str]) -> int:
    """`garfish pack IN OUT`: training positions packed as games (.gfpk), or with --unpack back to text."""
    from garfish.arena.pack import main as pack_main

    return pack_main(args)


def train_command(args: list[str]) -> int:
    """`garfish train DATA ...`: train an evaluation network on labelled positions."""
    from garfish.train.cli import main as train_main

    return train_main(args)


COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "bench": bench_command,
    "perft": perft_command,
    "epd": epd_command,
    "match": match_command,
    "analyse": analyse_command,
    "rating": rating_command,
    "wdl": wdl_command,
    "datagen": datagen_command,
    "pack": pack_command,
    "train": train_command,
}


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of the console script."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in COMMANDS:
        return COMMANDS[args[0]](args[1:])
    if args and args[0] in HELP_WORDS:
        print(__doc__)
        print("With no arguments Garfish speaks UCI on stdin/stdout (type 'uci').")
        print("garfish --version prints the version.")
        return 0
    if args and args[0] in VERSION_WORDS:
        print(f"garfish {__version__}")
        return 0
    if args:
        commands = ", ".join(f"garfish {name}" for name in COMMANDS)
        print(f"garfish: unknown command '{args[0]}' (try: garfish, {commands})", file=sys.stderr)
        return 2
    from garfish.uci.protocol import run_session

    try:
        sys.stdin.reconfigure(errors="replace")  # type: ignore[union-attr]
    except AttributeError:
        pass
    run_session(sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
