"""`garfish rating`: place an engine on a rating scale from matches against rated opponents.

    garfish rating 1350=sf1350.json 1700=sf1700.json 2000=sf2000.json
    garfish rating --pgn gauntlet.pgn --pgn round-robin.pgn --field debian [--anchor NAME=RATING ...]

With --pgn: every game of the PGN files (any program's: garfish match, cutechess-cli, fastchess;
players by their White and Black tags, unfinished games left out) in one maximum-likelihood fit
(arena.mlrating): the players with a published rating in the field (or --anchor) are held at it,
every other player is rated with its 95% profile-likelihood interval, and every player's rating from
the games alone is given beside it (the anchors' mean fixing the offset, a bootstrap interval).

Each argument is an opponent's rating and the JSON report `garfish match --report` wrote for
a match against it (the rated engine must be the second engine of that match). Prints, per
match, the first engine's result and its rating on that opponent's scale, then the combined
estimate of arena.stats.rating_on_scale with its 95% interval.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Optional

import chess.pgn

from garfish.arena import field, gauntlet, mlrating
from garfish.arena.game import RESULT_POINTS
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


def read_results(paths: list[Path]) -> tuple[list[str], list[mlrating.Game]]:
    """The players (by name, in order of appearance) and finished games of PGN files (ValueError when unreadable)."""
    names: list[str] = []
    games: list[mlrating.Game] = []
    index: dict[str, int] = {}
    for path in paths:
        try:
            handle = open(path, encoding="utf-8-sig", errors="replace")
        except OSError as error:
            raise ValueError(f"cannot read {path}: {error.strerror}") from None
        with handle:
            while (headers := chess.pgn.read_headers(handle)) is not None:
                points = RESULT_POINTS.get(headers.get("Result", "*"))
                if points is None:
                    continue
                players = []
                for tag in ("White", "Black"):
                    name = headers.get(tag, "?")
                    if name not in index:
                        index[name] = len(names)
                        names.append(name)
                    players.append(index[name])
                games.append(mlrating.Game(players[0], players[1], points))
    if not games:
        raise ValueError("no finished game in " + ", ".join(str(path) for path in paths))
    return names, games


def parse_anchors(pairs: list[str]) -> dict[str, float]:
    """['Toga II 3.0=2930'] -> {'Toga II 3.0': 2930.0} (ValueError when malformed)."""
    anchors: dict[str, float] = {}
    for pair in pairs:
        name, sep, value = pair.rpartition("=")
        try:
            anchors[name] = float(value)
        except ValueError:
            name = ""
        if not sep or not name:
            raise ValueError(f"--anchor takes NAME=RATING, not '{pair}'")
    return anchors


def rate_games(args: argparse.Namespace) -> int:
    """`garfish rating --pgn ...`: one fit over all the games."""
    try:
        names, games = read_results(args.pgn)
        published: dict[str, float] = {}
        if args.field is not None:
            published = {engine.name: engine.rating for engine in field.load_field(args.field)
                         if engine.rating is not None}
        published.update(parse_anchors(args.anchor or []))
    except ValueError as error:
        print(f"garfish rating: {error}", file=sys.stderr)
        return 2
    anchors = {index: published[name] for index, name in enumerate(names) if name in published}
    if not anchors:
        print("garfish rating: no player of these games has a published rating (--field, --anchor)", file=sys.stderr)
        return 2
    fitted = mlrating.fit(games, len(names), anchors)
    counts = [0] * len(names)
    points = [0.0] * len(names)
    for game in games:
        counts[game.white] += 1
        counts[game.black] += 1
        points[game.white] += game.points
        points[game.black] += 1.0 - game.points
    width = max(len(name) for name in names)
    print(f"{len(games)} games, {len(names)} players, {len(anchors)} anchors; draw parameter {fitted.draw_elo:.0f}, "
          f"White's advantage {fitted.white_advantage:+.0f}")
    relative = mlrating.fit_relative(games, len(names), anchors)
    print(f"{'player':<{width}}  {'games':>5}  {'score':>6}  rating (anchors held) [95%]   from the games alone [95%]")
    order = sorted(range(len(names)), key=lambda index: -(fitted.ratings[index].rating or -math.inf))
    for index in order:
        rating = fitted.ratings[index]
        held = "anchor" if index in anchors else gauntlet.format_rating(rating)
        alone = "-" if relative is None else gauntlet.format_rating(relative.ratings[index])
        shown = f"{anchors[index]:.0f} ({held})" if index in anchors else held
        print(f"{names[index]:<{width}}  {counts[index]:>5}  {100 * points[index] / counts[index]:5.1f}%  "
              f"{shown:<28}  {alone}")
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of `garfish rating`."""
    parser = argparse.ArgumentParser(prog="garfish rating", description=__doc__.split("\n\n")[0])
    parser.add_argument("levels", nargs="*", metavar="RATING=REPORT.json",
                        help="an opponent's rating and the match report against it")
    parser.add_argument("--pgn", type=Path, action="append", metavar="FILE",
                        help="rate the players of these games together (give it once a file)")
    parser.add_argument("--field", metavar="FIELD", help="with --pgn: the published ratings of a field's engines")
    parser.add_argument("--anchor", action="append", metavar="NAME=RATING", help="with --pgn: a player's rating")
    args = parser.parse_args(argv)
    if args.pgn:
        if args.levels:
            parser.error("give RATING=REPORT.json arguments or --pgn, not both")
        return rate_games(args)
    if not args.levels:
        parser.error("give RATING=REPORT.json arguments, or --pgn FILE")
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
