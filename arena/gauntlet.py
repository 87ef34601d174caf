"""Gauntlets and round robins of `garfish match --field`: the pairings, their games, the state and the report.

A gauntlet plays one engine (player 0) against every opponent of a field (arena.field); a round
robin plays every pair of players. Each pairing plays the same openings with both colours
(--games games a pairing), the pairings taking turns opening pair by opening pair, so that an
interrupted run has played every pairing alike. The report gives each pairing's W D L and
pentanomial (as a match's report does), the engine's rating fitted by maximum likelihood over all
of its games against the anchors' published ratings (arena.mlrating.fit, its interval from the
profile likelihood; the live line's from the curvature), and every player's rating relative to
the others (arena.mlrating.fit_relative, the anchors' mean fixing the offset).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import chess

from garfish.arena import mlrating, stats
from garfish.arena.game import RESULT_POINTS, GameRecord
from garfish.arena.openings import GameTask
from garfish.arena.report import MatchState, summary_dict

MODES = ("gauntlet", "round robin")


def pairings_for(mode: str, players: int) -> list[tuple[int, int]]:
    """The pairings of players: player 0 against each other one (gauntlet), or every pair (round robin)."""
    if mode == "gauntlet":
        return [(0, other) for other in range(1, players)]
    return [(first, second) for first in range(players) for second in range(first + 1, players)]


def make_tasks(pairings: list[tuple[int, int]], games: int, openings: list[tuple[int, chess.Board]]
               ) -> list[GameTask]:
    """Every pairing's `games` games: opening pair p of each pairing in turn, the pairing's first player White
    in the first game of a pair; pair numbers are unique across pairings."""
    tasks: list[GameTask] = []
    for opening_pair in range((games + 1) // 2):
        opening, board = openings[opening_pair]
        for index in range(len(pairings)):
            for game in range(min(2, games - 2 * opening_pair)):
                tasks.append(GameTask(number=len(tasks) + 1, pair=opening_pair * len(pairings) + index,
                                      opening=opening, fen=board.fen(), chess960=board.chess960,
                                      engine1_white=game == 0, pairing=index))
    return tasks


def fit_games(records: list[GameRecord], pairings: list[tuple[int, int]]) -> list[mlrating.Game]:
    """The games as the rating fit reads them: players by index, White first, White's points."""
    games = []
    for record in records:
        first, second = pairings[record.pairing]
        white, black = (first, second) if record.engine1_white else (second, first)
        games.append(mlrating.Game(white, black, RESULT_POINTS[record.result]))
    return games


@dataclass
class GauntletState:
    """The results of a gauntlet or round robin so far, shared by the slot threads (guard with `lock`): one
    MatchState a pairing, and the games in the order they finished."""

    names: list[str]
    pairings: list[tuple[int, int]]
    ratings: list[Optional[float]]  # each player's published rating (None: not an anchor)
    total: int
    mode: str = "gauntlet"
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    abort: threading.Event = field(default_factory=threading.Event)
    records: list[GameRecord] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    states: list[MatchState] = field(default_factory=list)
    live: Optional[mlrating.Rating] = None  # the engine's rating after the last game (curvature interval)

    def __post_init__(self) -> None:
        """A match state a pairing, named by its two players."""
        if not self.states:
            games = self.total // max(1, len(self.pairings))
            self.states = [MatchState(names=[self.names[first], self.names[second]], total=games, sprt_config=None)
                           for first, second in self.pairings]

    @property
    def anchors(self) -> dict[int, float]:
        """The players held at their published ratings in the engine's fit (the engine itself never is)."""
        return {player: rating for player, rating in enumerate(self.ratings)
                if rating is not None and (self.mode != "gauntlet" or player != 0)}

    def add(self, record: GameRecord) -> None:
        """Count a finished game (call with the lock held) and fit the engine's rating again."""
        self.records.append(record)
        self.states[record.pairing].add(record)
        if self.mode == "gauntlet":
            self.live = self.engine_rating("curvature")

    def engine_rating(self, intervals: str = "profile") -> Optional[mlrating.Rating]:
        """The rating of player 0 fitted with the anchors held at their ratings (None when nothing places it)."""
        if not self.records or not self.anchors:
            return None
        anchors = {player: rating for player, rating in self.anchors.items() if player != 0}
        result = mlrating.fit(fit_games(self.records, self.pairings), len(self.names), anchors, intervals)
        rating = result.ratings[0]
        return rating if rating.placed else None

    def fail(self, message: str) -> None:
        """Record a runner error and stop."""
        with self.lock:
            self.errors.append(message)
        self.stop.set()


def format_rating(rating: Optional[mlrating.Rating]) -> str:
    """'3012 [2960, 3065]' (an open side as '...'), or 'not placed'."""
    if rating is None or rating.rating is None:
        return "not placed"
    if rating.lower is None or rating.upper is None:
        return f"{rating.rating:.0f}"
    lower = "..." if math.isinf(rating.lower) else f"{rating.lower:.0f}"
    upper = "..." if math.isinf(rating.upper) else f"{rating.upper:.0f}"
    return f"{rating.rating:.0f} [{lower}, {upper}]"


def gauntlet_line(record: GameRecord, state: GauntletState) -> str:
    """The live line printed after each game (call with the lock held)."""
    pairing = state.states[record.pairing]
    wins, draws, losses = pairing.wdl()
    line = (f"Game {record.number} ({record.white} vs {record.black}, opening {record.opening}): "
            f"{record.result} [{record.reason}]  {len(state.records)}/{state.total} done; "
            f"{pairing.names[0]} vs {pairing.names[1]}: W {wins} D {draws} L {losses}")
    if state.mode == "gauntlet" and state.anchors:
        line += f"; {state.names[0]} rated {format_rating(state.live)}"
    return line


def rating_dict(rating: Optional[mlrating.Rating]) -> Optional[dict[str, Any]]:
    """A rating as the JSON report keeps it (infinite ends as None)."""
    if rating is None or rating.rating is None:
        return None
    finite = lambda value: value if value is not None and math.isfinite(value) else None  # noqa: E731
    return {"rating": rating.rating, "lower": finite(rating.lower), "upper": finite(rating.upper),
            "games": rating.games}


def gauntlet_summary(state: GauntletState, sources: Optional[list[str]] = None,
                     bootstrap: int = mlrating.BOOTSTRAP_SAMPLES) -> dict[str, Any]:
    """The final numbers as a dictionary (the JSON report): the players, each pairing's match summary, the
    engine's fitted rating (gauntlet) and every player's relative rating."""
    games = fit_games(state.records, state.pairings)
    players = len(state.names)
    summary: dict[str, Any] = {
        "mode": state.mode,
        "players": [{"name": name, "published_rating": rating, "rating_source": (sources or [""] * players)[index]}
                    for index, (name, rating) in enumerate(zip(state.names, state.ratings))],
        "games": len(state.records),
        "planned_games": state.total,
        "pairings": [{**summary_dict(pairing), "players": list(players_)}
                     for pairing, players_ in zip(state.states, state.pairings)],
        "model": ("maximum likelihood, ordered logit on the Elo scale with a fitted draw parameter and White's "
                  "advantage (arena.mlrating)"),
        "errors": list(state.errors),
    }
    if state.mode == "gauntlet":
        anchors = {player: rating for player, rating in state.anchors.items()}
        fitted = mlrating.fit(games, players, anchors) if games and anchors else None
        summary["engine"] = state.names[0]
        summary["rating"] = None if fitted is None else {
            **(rating_dict(fitted.ratings[0]) or {}), "interval": "95%, profile likelihood",
            "anchors": {state.names[player]: rating for player, rating in anchors.items()},
            "draw_elo": fitted.draw_elo, "white_advantage": fitted.white_advantage, "notes": fitted.notes}
        if summary["rating"] is not None and fitted is not None and not fitted.ratings[0].placed:
            summary["rating"] = None
    published = {player: rating for player, rating in enumerate(state.ratings) if rating is not None}
    groups = [record.pairing for record in state.records]
    relative = (mlrating.fit_relative(games, players, published, groups, samples=bootstrap)
                if games and published else None)
    summary["relative"] = None if relative is None else {
        "interval": f"95%, bootstrap of {bootstrap} resamples of each pairing's games",
        "offset": "the anchors' fitted ratings average to their published ones",
        "ratings": [{"name": name, "published_rating": state.ratings[index], **(rating_dict(rating) or {})}
                    for index, (name, rating) in enumerate(zip(state.names, relative.ratings))],
        "draw_elo": relative.draw_elo, "white_advantage": relative.white_advantage}
    return summary


def print_gauntlet_summary(summary: dict[str, Any], out: Callable[[str], None]) -> None:
    """The end-of-run report of a gauntlet or round robin."""
    out("-" * 72)
    out(f"Finished {summary['games']}/{summary['planned_games']} games: {summary['mode']} of "
        f"{len(summary['players'])} players")
    published = {player["name"]: player["published_rating"] for player in summary["players"]}
    width = max(len(name) for name in published)
    out(f"{'pairing':<{2 * width + 4}}  {'W':>4} {'D':>4} {'L':>4}  {'score':>6}  pentanomial       Elo difference")
    for pairing in summary["pairings"]:
        first, second = pairing["engines"]
        games = pairing["games"]
        score = f"{100 * pairing['score']:.1f}%" if games else "-"
        estimate = (stats.pentanomial_elo(pairing["pentanomial"]) if sum(pairing["pentanomial"])
                    else stats.trinomial_elo(pairing["wins"], pairing["draws"], pairing["losses"]) if games else None)
        elo = "-" if estimate is None else stats.format_estimate(estimate)
        out(f"{first:<{width}} vs {second:<{width}}  {pairing['wins']:>4} {pairing['draws']:>4} {pairing['losses']:>4}  "
            f"{score:>6}  {str(pairing['pentanomial']):<16}  {elo}")
    rating = summary.get("rating")
    if summary["mode"] == "gauntlet":
        if rating is None:
            out(f"Rating of {summary['engine']}: not placed (no game against an opponent with a published rating)")
        else:
            shown = mlrating.Rating(rating["rating"], -math.inf if rating["lower"] is None else rating["lower"],
                                    math.inf if rating["upper"] is None else rating["upper"])
            out(f"Rating of {summary['engine']}: {format_rating(shown)} ({rating['interval']}; {rating['games']} games "
                f"against {len(rating['anchors'])} anchors held at their published ratings; draw parameter "
                f"{rating['draw_elo']:.0f}, White's advantage {rating['white_advantage']:+.0f})")
            for note in rating["notes"]:
                out(f"  note: {note}")
    relative = summary.get("relative")
    if relative is not None:
        out(f"Ratings from the games alone ({relative['offset']}; {relative['interval']}):")
        for entry in sorted(relative["ratings"], key=lambda item: -item["rating"]):
            lower = "..." if entry["lower"] is None else f"{entry['lower']:.0f}"
            upper = "..." if entry["upper"] is None else f"{entry['upper']:.0f}"
            anchor = "" if entry["published_rating"] is None else f"  (published {entry['published_rating']:g})"
            out(f"  {entry['name']:<{width}}  {entry['rating']:6.0f} [{lower}, {upper}]  {entry['games']} games{anchor}")
    for error in summary["errors"]:
        out(f"Error: {error}")
