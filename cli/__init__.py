"""The `garfish` command: with no arguments the UCI engine; with a command's name, that tool.

The commands are one table, COMMANDS: each a name, the function that does the work (`module:function`,
imported only when the command runs, so that the UCI engine starts fast) and a line of help, from
which `garfish --help` is made. A new command-line tool is a row here.
"""

from __future__ import annotations

import importlib
import sys
from typing import NamedTuple, Optional

HELP_WORDS = ("-h", "--help", "help")
VERSION_WORDS = ("-V", "--version")


class Command(NamedTuple):
    """A `garfish NAME ...` tool: its name, its `module:function(args) -> exit status`, its usage and help."""

    name: str
    target: str
    usage: str
    help: str


COMMANDS = (
    Command("bench", "garfish.cli.bench:bench_main", "[DEPTH]",
            'fixed positions, fixed depth: "Nodes searched: N" and nodes/second'),
    Command("perft", "garfish.perft.cli:main", "DEPTH [FEN] [--divide]",
            "perft and divide through the engine's move path"),
    Command("epd", "garfish.arena.epd:main", "SUITE ...", "a test suite (WAC, STS, ...) against any UCI engine"),
    Command("match", "garfish.arena.match:main", "--engine ... --engine ...",
            "a match between two UCI engines: Elo, SPRT, forfeits"),
    Command("analyse", "garfish.arena.analyse:main", "GAMES.pgn ...",
            "annotate games: evaluations, mistakes, better lines"),
    Command("rating", "garfish.arena.rating:main", "RATING=REPORT.json ... | --pgn GAMES.pgn --field F",
            "a rating from matches against rated opponents"),
    Command("wdl", "garfish.arena.wdlfit:main", "PGN ...", "fit the win/draw/loss model to an engine's games"),
    Command("datagen", "garfish.arena.datagen:main", "OUT ...", "training positions from an engine's self-play"),
    Command("pack", "garfish.arena.packlist:main", "IN OUT",
            "training positions packed as games, --unpack back to text, --verify a folder"),
    Command("train", "garfish.train.cli:main", "DATA ...", "train an evaluation network (the train extra, PyTorch)"),
)
BY_NAME = {command.name: command for command in COMMANDS}


def usage() -> str:
    """`garfish --help`: the engine, then every command of the table with its usage and help."""
    width = max(len(f"garfish {c.name} {c.usage}") for c in COMMANDS)
    lines = ["usage: garfish                the UCI engine: speaks UCI on stdin/stdout (type 'uci')",
             "       garfish --version      the version", ""]
    lines += [f"  {f'garfish {c.name} {c.usage}':<{width}}  {c.help}" for c in COMMANDS]
    lines += ["", "garfish COMMAND --help prints a command's options."]
    return "\n".join(lines)


def run(command: Command, args: list[str]) -> int:
    """Import the command's module and run its function with the arguments; its exit status."""
    module, _, function = command.target.partition(":")
    return int(getattr(importlib.import_module(module), function)(args))


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of the console script (and of `python -m garfish.cli`)."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in BY_NAME:
        return run(BY_NAME[args[0]], args[1:])
    if args and args[0] in HELP_WORDS:
        print(usage())
        return 0
    if args and args[0] in VERSION_WORDS:
        from garfish.uci import __version__

        print(f"garfish {__version__}")
        return 0
    if args:
        commands = ", ".join(f"garfish {name}" for name in BY_NAME)
        print(f"garfish: unknown command '{args[0]}' (try: garfish, {commands})", file=sys.stderr)
        return 2
    from garfish.uci.protocol import run_session

    try:
        sys.stdin.reconfigure(errors="replace")  # type: ignore[union-attr]
    except AttributeError:
        pass
    run_session(sys.stdin, sys.stdout)
    return 0
