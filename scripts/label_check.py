"""How well a data file's labels agree with the games' outcomes and with the endgame tables.

    python scripts/label_check.py FILE [FILE ...] [--syzygy DIR]

For the positions of the files (`garfish train`'s input: packs or `FEN;SCORE;BEST;RESULT` text), out of
check and with a quiet BEST (the positions `garfish train` keeps), the share of White's wins, draws and
losses by the men on the board and by SCORE (White ahead, in centipawns): how often a score ends as a win
at each stage of the game. With --syzygy, the games that reach DIR's tables: their number, and those whose
RESULT is not the tables' (`garfish train --syzygy DIR` gives those games the tables' result), by RESULT
and the tables' result.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from garfish.engine.services.syzygy import TablebaseError, Tablebases
from garfish.train.data import DataError, Positions, concatenate, load_file, men, tablebase_results

MEN_BANDS = ((3, 7), (8, 12), (13, 20), (21, 32))
SCORE_BANDS = ((100, 200), (200, 400), (400, 800))
RESULT_WORDS = {2: "White won", 1: "drawn", 0: "Black won"}


def outcome_table(positions: Positions) -> list[str]:
    """Lines of a Markdown table: W/D/L shares by men and score band (quiet positions out of check)."""
    count = men(positions)
    quiet = ~positions.in_check & ~positions.noisy
    lines = ["| men | SCORE | positions | White won | drawn | Black won |", "|---|---|---|---|---|---|"]
    for low, high in MEN_BANDS:
        for floor, ceiling in SCORE_BANDS:
            rows = quiet & (count >= low) & (count <= high) & (positions.score >= floor) & (positions.score < ceiling)
            total = int(rows.sum())
            if total:
                shares = [float(np.mean(positions.result[rows] == value)) for value in (2, 1, 0)]
                lines.append(f"| {low}-{high} | +{floor} to +{ceiling} | {total:,} | "
                             + " | ".join(f"{share:.1%}" for share in shares) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--syzygy", type=Path, default=None, metavar="DIR")
    args = parser.parse_args(argv)
    try:
        positions = concatenate([load_file(path, None)[1] for path in args.files])
    except (OSError, DataError) as error:
        print(f"label_check: {error}", file=sys.stderr)
        return 1
    print(f"{len(positions):,} positions, {positions.games:,} games")
    print("\n".join(outcome_table(positions)))
    if args.syzygy is not None:
        try:
            tables = Tablebases(str(args.syzygy))
        except TablebaseError as error:
            print(f"label_check: --syzygy: {error}", file=sys.stderr)
            return 1
        try:
            found = tablebase_results(positions, tables.probe_wdl, tables.max_pieces)
        finally:
            tables.close()
        starts = np.searchsorted(positions.game, np.arange(positions.games))
        pairs = Counter((int(positions.result[row]), int(found.result[row])) for row in starts.tolist()
                        if positions.result[row] != found.result[row])
        print(f"games that reach the tables (up to {tables.max_pieces} men): {found.reached:,} "
              f"({found.reached / positions.games:.1%}); RESULT not the tables': {found.changed:,} "
              f"({found.changed / positions.games:.2%} of the games, {found.changed_positions:,} positions, "
              f"{found.changed_positions / len(positions):.2%})")
        for (game, table), number in sorted(pairs.items()):
            print(f"  {RESULT_WORDS[game]} in the file, {RESULT_WORDS[table]} by the tables: {number:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
