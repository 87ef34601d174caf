"""`garfish rating`: place an engine on a rating scale from matches against rated opponents.

    garfish rating 1350=sf1350.json 1700=sf1700.json 2000=sf2000.json

Each argument is an opponent's rating and the JSON report `garfish match --report` wrote for
a match against it (the rated engine must be the second engine of that match). Prints, per
match, the first engine's result and its rating on that opponent's scale, then the combined
estimate of arena.stats.rating_on_scale with its 95% interval.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Optional

from garfish.arena.stats import (PENTANOMIAL_SIZE, RatingLevel, format_elo, format_estimate, pentanomial_elo,
                                 rating_on_scale)


def _level(argument: str) -> tuple[float, dict]:
    """Parse RATING=REPORT.json and read the report."""
    rating, _, path = argument.partition("=")
    try:
        value = float(rating)
    except ValueError:
        path = ""
    if not path:
        raise ValueError(f"'{argument}': expected RATING=REPORT.json, e.g. 1700=sf1700.json")
    try:
        with open(path, encoding="utf-8") as handle:
            report = json.load(handle)
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSON: {error}") from None
    pentanomial = report.get("pentanomial") if isinstance(report, dict) else None
    if not isinstance(pentanomial, list) or len(pentanomial) != PENTANOMIAL_SIZE or not sum(pentanomial):
        raise ValueError(f"{path}: no finished game pairs (not a garfish match report?)")
    return value, report


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of `garfish rating`."""
    parser = argparse.ArgumentParser(prog="garfish rating", description=__doc__.split("\n\n")[0])
    parser.add_argument("levels", nargs="+", metavar="RATING=REPORT.json",
                        help="an opponent's rating and the match report against it")
    args = parser.parse_args(argv)
    try:
        levels = [_level(argument) for argument in args.levels]
    except ValueError as error:
        print(f"garfish rating: {error}", file=sys.stderr)
        return 2
    for rating, report in levels:
        engines = report.get("engines", ["engine", "opponent"])
        estimate = pentanomial_elo(report["pentanomial"])
        score = report.get("score", estimate.score)
        if estimate.no_interval is None:
            elo = (f"Elo {format_elo(estimate.elo)} [{format_elo(estimate.lower)}, {format_elo(estimate.upper)}] -> "
                   f"rating {rating + estimate.elo:.0f} [{rating + estimate.lower:.0f}, {rating + estimate.upper:.0f}]")
        else:  # no interval, perhaps no finite Elo: say why
            elo = f"Elo {format_estimate(estimate)}"
        print(f"{engines[0]} vs {engines[1]} ({rating:.0f}): W {report.get('wins')} D {report.get('draws')} "
              f"L {report.get('losses')}, score {score:.1%}, {elo}")
    combined = rating_on_scale([RatingLevel(rating, report["pentanomial"]) for rating, report in levels])
    print(f"Combined rating: {combined.elo:.0f}  95% interval [{combined.lower:.0f}, {combined.upper:.0f}]  "
          f"from {combined.games} games, mean score {combined.score:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
