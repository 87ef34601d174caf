"""Count how often a search step runs in `bench`, and how often it decides the node.

    python scripts/bench_calls.py METHOD [--set NAME=VALUE ...] [--depth D] [--evalfile FILE]

Runs `garfish bench`'s positions (engine.bench.run_bench, the default network unless --evalfile
says otherwise) with the Searcher method METHOD (for example `_null_move_search`, or a candidate's
`_probcut`) wrapped, and prints the bench's nodes, the method's calls, the calls that returned
something other than None (for a step that returns a score only when it cuts the node, its cuts)
and the nodes searched inside it. --set changes a constant of engine.search first (PROBCUT_DEPTH=4).
Run it with the interpreter of the checkout whose engine it should count.
"""

from __future__ import annotations

import argparse
import functools
import sys
from typing import Any, Optional

from garfish.engine import search
from garfish.engine.bench import BENCH_DEPTH, run_bench
from garfish.engine.evalfile import DEFAULT_EVAL_FILE, load_evaluator


def main(argv: Optional[list[str]] = None) -> int:
    """Parse the arguments, wrap the method, run bench and print the counts; the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("method", help="a Searcher method, e.g. _null_move_search")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="an integer constant of engine.search to change first")
    parser.add_argument("--depth", type=int, default=BENCH_DEPTH)
    parser.add_argument("--evalfile", default=DEFAULT_EVAL_FILE, help="a network, or <classic>")
    args = parser.parse_args(argv)
    original = getattr(search.Searcher, args.method, None)
    if not callable(original):
        parser.error(f"engine.search.Searcher has no method {args.method}")
    for setting in args.set:
        name, _, value = setting.partition("=")
        if not hasattr(search, name) or not value.lstrip("-").isdigit():
            parser.error(f"--set {setting}: NAME=INTEGER with NAME a constant of engine.search expected")
        setattr(search, name, int(value))
    counts = {"calls": 0, "decided": 0, "nodes": 0}

    @functools.wraps(original)
    def counted(self: search.Searcher, *rest: Any, **options: Any) -> Any:
        """The method itself, counted."""
        counts["calls"] += 1
        before = self.nodes
        result = original(self, *rest, **options)
        counts["nodes"] += self.nodes - before
        counts["decided"] += result is not None
        return result

    setattr(search.Searcher, args.method, counted)
    result = run_bench(args.depth, evaluator=load_evaluator(args.evalfile))
    print(f"bench nodes {result.nodes}; {args.method}: calls {counts['calls']}, returned a value "
          f"{counts['decided']}, nodes inside {counts['nodes']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
