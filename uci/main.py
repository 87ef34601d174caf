"""The `garfish` command: the UCI engine, or `garfish bench [depth]`, `garfish perft ...`,
`garfish epd SUITE ...` (test suites), `garfish match ...` (engine matches) or
`garfish rating RATING=REPORT.json ...` (a rating from matches against rated opponents)."""

from __future__ import annotations

import sys
from typing import Optional


def _print(line: str) -> None:
    """Print a line and flush (tools write progress as they go)."""
    print(line, flush=True)


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of the console script."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "bench":
        from uci.tools import print_bench

        depth = None
        if len(args) > 1:
            if not args[1].isdigit() or int(args[1]) < 1:
                print(f"garfish bench: depth must be a positive integer, not '{args[1]}'", file=sys.stderr)
                return 2
            depth = int(args[1])
        print_bench(depth, _print)
        return 0
    if args and args[0] == "perft":
        from perft.cli import main as perft_main

        return perft_main(args[1:])
    if args and args[0] == "epd":
        from uci.epd import main as epd_main

        return epd_main(args[1:])
    if args and args[0] == "match":
        from uci.match import main as match_main

        return match_main(args[1:])
    if args and args[0] == "rating":
        from uci.rating import main as rating_main

        return rating_main(args[1:])
    if args and args[0] in ("-h", "--help", "help"):
        print(__doc__)
        print("With no arguments Garfish speaks UCI on stdin/stdout (type 'uci').")
        return 0
    if args:
        print(f"garfish: unknown command '{args[0]}' "
              "(try: garfish, garfish bench, garfish perft, garfish epd, garfish match, garfish rating)", file=sys.stderr)
        return 2
    from uci.protocol import run_session

    try:
        sys.stdin.reconfigure(errors="replace")  # type: ignore[union-attr]
    except AttributeError:
        pass
    run_session(sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
