"""Search many positions from real games, each from a fresh table: a soak test of the compiled search.

    NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR=/tmp/numba-boundscheck \\
        python scripts/search_positions.py ../shared/data/train/sf15-5knodes-seed1.txt.gz [--positions 3000]
        [--nodes 3000] [--every 97] [--evalfile <classic>]

Reads every `--every`-th position of a training file (`FEN;SCORE;BEST;RESULT` lines, gzip or not:
positions of Stockfish's self-play games) and searches it with `go nodes --nodes`, checking that the
move is legal. Under NUMBA_BOUNDSCHECK=1 (with a cache folder of its own: the kernels compile again
with the checks) a kernel that reads or writes past an array raises IndexError instead of reading
memory that is not its own. Prints the positions searched, the nodes and the time.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import time
from typing import Iterator, Optional

import chess

from garfish.engine import Limits, Searcher
from garfish.engine.evaluation.evalfile import DEFAULT_EVAL_FILE, load_evaluator
from garfish.engine.search.tt import TranspositionTable


def positions(path: str, every: int, count: int) -> Iterator[chess.Board]:
    """Every `every`-th position of the file, `count` of them at most."""
    opener = gzip.open if path.endswith(".gz") else open
    found = 0
    with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
        for number, line in enumerate(handle):
            if number % every:
                continue
            yield chess.Board(line.split(";", 1)[0])
            found += 1
            if found >= count:
                return


def main(argv: Optional[list[str]] = None) -> int:
    """Search the positions; 1 if a move came back illegal."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file")
    parser.add_argument("--positions", type=int, default=3000)
    parser.add_argument("--nodes", type=int, default=3000)
    parser.add_argument("--every", type=int, default=97)
    parser.add_argument("--evalfile", default=DEFAULT_EVAL_FILE, help="a network, or <classic>")
    args = parser.parse_args(argv)
    evaluator = None if args.evalfile == "<classic>" else load_evaluator(args.evalfile)
    searcher = Searcher(TranspositionTable(16), evaluator)
    start = time.perf_counter()
    searched = nodes = 0
    for board in positions(args.file, args.every, args.positions):
        searcher.tt.clear()
        searcher.new_game()
        result = searcher.search(board, Limits(nodes=args.nodes))
        if board.legal_moves.count() and result.move not in board.legal_moves:
            print(f"illegal move {result.move} in {board.fen()}")
            return 1
        searched += 1
        nodes += result.nodes
    print(f"{searched} positions, {nodes:,} nodes, {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
