"""The `garfish` command: the UCI engine, or `garfish bench [depth]`, `garfish perft ...`,
`garfish epd SUITE ...` (test suites), `garfish match ...` (engine matches) or
`garfish rating RATING=REPORT.json ...` (a rating from matches against rated opponents)."""

from __future__ import annotations

import importlib
import sys
from typing import Optional

# Sub-commands that hand their arguments to a module's main(argv).
TOOLS = {"perft": "garfish.perft.cli", "epd": "garfish.arena.epd", "match": "garfish.arena.match", "rating": "garfish.arena.rating"}


def _print(line: str) -> None:
    """Print a line and flush (tools write progress as they go)."""
    print(line, flush=True)


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of the console script."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "bench":
        from garfish.uci.tools import print_bench

        depth = None
        if len(args) > 1:
            if not args[1].isdigit() or int(args[1]) < 1:
                print(f"garfish bench: depth must be a positive integer, not '{args[1]}'", file=sys.stderr)
                return 2
            depth = int(args[1])
        print_bench(depth, _print)
        return 0
    if args and args[0] in TOOLS:
        tool = importlib.import_module(TOOLS[args[0]])  # imported on demand: the engine starts faster
        return tool.main(args[1:])
    if args and args[0] in ("-h", "--help", "help"):
        print(__doc__)
        print("With no arguments Garfish speaks UCI on stdin/stdout (type 'uci').")
        return 0
    if args:
        commands = ", ".join(f"garfish {name}" for name in ("bench", *TOOLS))
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
