"""The report of `garfish match`: the match state, the line after each game, the summary, its JSON, the plot."""

from __future__ import annotations

import collections
import importlib.util
import math
import statistics
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from garfish.arena import stats
from garfish.arena.game import FORFEIT_KINDS, GameRecord, PonderStats


# --------------------------------------------------------------------------- the match state
@dataclass
class SprtConfig:
    """SPRT hypotheses (logistic Elo) and error rates."""

    elo0: float
    elo1: float
    alpha: float
    beta: float
    play_on: bool = False  # keep playing to the end after the decision (it is kept in `decided`)


@dataclass
class SprtDecision:
    """The first time the LLR left its bounds."""

    decision: str
    games: int
    llr: float


@dataclass
class HistoryPoint:
    """The Elo estimate after some number of games (for --plot)."""

    games: int
    elo: float
    lower: float
    upper: float


@dataclass
class MatchState:
    """Results so far, shared by the slot threads (guard with `lock`)."""

    names: list[str]
    total: int
    sprt_config: Optional[SprtConfig]
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    records: list[GameRecord] = field(default_factory=list)
    pair_points: dict[int, list[float]] = field(default_factory=dict)
    pentanomial: list[int] = field(default_factory=lambda: [0] * stats.PENTANOMIAL_SIZE)
    history: list[HistoryPoint] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    abort: threading.Event = field(default_factory=threading.Event)
    sprt_result: Optional[stats.SprtResult] = None
    sprt_decided: Optional[SprtDecision] = None
    ponder: tuple[bool, bool] = (False, False)  # which engines ponder

    def wdl(self) -> tuple[int, int, int]:
        """Wins, draws, losses of engine 1."""
        points = [record.engine1_points() for record in self.records]
        return points.count(1.0), points.count(0.5), points.count(0.0)

    def estimate(self) -> Optional[stats.EloEstimate]:
        """Elo from the pentanomial when a pair is complete, else from the games; None before any game."""
        if sum(self.pentanomial):
            return stats.pentanomial_elo(self.pentanomial)
        if self.records:
            wins, draws, losses = self.wdl()
            return stats.trinomial_elo(wins, draws, losses)
        return None

    def add(self, record: GameRecord) -> None:
        """Count a finished game (call with the lock held); sets `stop` when the SPRT decides (unless play_on)."""
        self.records.append(record)
        points = self.pair_points.setdefault(record.pair, [])
        points.append(record.engine1_points())
        if len(points) == 2:
            self.pentanomial[round(sum(points) * 2)] += 1
        estimate = self.estimate()
        if estimate is not None:
            self.history.append(HistoryPoint(len(self.records), estimate.elo, estimate.lower, estimate.upper))
        if self.sprt_config is not None:
            config = self.sprt_config
            self.sprt_result = stats.sprt(self.pentanomial, config.elo0, config.elo1, config.alpha, config.beta)
            decision = self.sprt_result.decision
            if decision is not None and self.sprt_decided is None:
                self.sprt_decided = SprtDecision(decision, len(self.records), self.sprt_result.llr)
            if decision is not None and not config.play_on:
                self.stop.set()

    def fail(self, message: str) -> None:
        """Record a runner error and stop the match."""
        with self.lock:
            self.errors.append(message)
        self.stop.set()


def game_line(record: GameRecord, state: MatchState) -> str:
    """The live line printed after each game (call with the lock held)."""
    wins, draws, losses = state.wdl()
    estimate = state.estimate()
    if estimate is None:
        elo = ""
    elif estimate.no_interval is None:
        elo = f"  Elo {stats.format_elo(estimate.elo)} +/- {estimate.error:.1f}"
    else:
        elo = f"  Elo {stats.format_estimate(estimate)}"
    sprt = "" if state.sprt_result is None else f"  LLR {state.sprt_result.llr:+.2f}"
    return (f"Game {record.number} ({record.white} vs {record.black}, opening {record.opening}): "
            f"{record.result} [{record.reason}]  {len(state.records)}/{state.total} done; "
            f"{state.names[0]}: W {wins} D {draws} L {losses}{elo}{sprt}")


# --------------------------------------------------------------------------- the summary
def summary_dict(state: MatchState) -> dict[str, Any]:
    """The final numbers as a dictionary (also the JSON report)."""
    wins, draws, losses = state.wdl()
    games = len(state.records)
    estimate = state.estimate()
    forfeits = {name: {kind: 0 for kind in FORFEIT_KINDS} for name in state.names}
    for record in state.records:
        if record.forfeit_engine is not None and record.forfeit_kind is not None:
            forfeits[state.names[record.forfeit_engine]][record.forfeit_kind] += 1
    endings = collections.Counter(record.category for record in state.records)
    summary: dict[str, Any] = {
        "engines": state.names,
        "games": games,
        "planned_games": state.total,
        "wins": wins, "draws": draws, "losses": losses,
        "points": wins + draws / 2,
        "score": (wins + draws / 2) / games if games else None,
        "pentanomial": list(state.pentanomial),
        "elo": None if estimate is None else _finite(estimate.elo),
        "elo_lower": None if estimate is None or estimate.no_interval else estimate.lower,
        "elo_upper": None if estimate is None or estimate.no_interval else estimate.upper,
        "elo_no_interval": None if estimate is None else estimate.no_interval,
        "elo_source": "pentanomial" if sum(state.pentanomial) else "games",
        "los": stats.los(wins, losses),
        "forfeits": forfeits,
        "endings": dict(endings.most_common()),
        "errors": list(state.errors),
    }
    if any(state.ponder):
        summary["ponderhits"] = {}
        for index, name in enumerate(state.names):
            if state.ponder[index]:
                total = PonderStats()
                for record in state.records:
                    total.merge(record.ponder[index])
                summary["ponderhits"][name] = asdict(total)
    clocks = {name: sorted(left for record in state.records if (left := record.clock_left[index]) is not None)
              for index, name in enumerate(state.names)}
    if any(clocks.values()):
        summary["clock_left"] = {name: {"games": len(left), "median": statistics.median(left) if left else None,
                                        "min": left[0] if left else None} for name, left in clocks.items()}
    if state.sprt_config is not None:
        lower, upper = stats.sprt_bounds(state.sprt_config.alpha, state.sprt_config.beta)
        result = state.sprt_result
        summary["sprt"] = {**asdict(state.sprt_config), "llr": result.llr if result else 0.0,
                           "lower_bound": lower, "upper_bound": upper,
                           "decision": result.decision if result else None,
                           "decided": asdict(state.sprt_decided) if state.sprt_decided else None,
                           "model": "logistic-Elo GSPRT approximation on the pentanomial"}
    return summary


def _finite(value: float) -> Optional[float]:
    """JSON-safe number: None for +-inf/nan."""
    return value if math.isfinite(value) else None


def print_summary(state: MatchState, out: Callable[[str], None]) -> None:
    """The end-of-match report."""
    summary = summary_dict(state)
    names = state.names
    games = summary["games"]
    out("-" * 72)
    out(f"Finished {games}/{state.total} games: {names[0]} vs {names[1]}")
    if games:
        out(f"{names[0]}: W {summary['wins']}  D {summary['draws']}  L {summary['losses']}  "
            f"points {summary['points']:g}/{games} ({100 * summary['score']:.1f}%)")
    out(f"Pentanomial [0, 0.5, 1, 1.5, 2]: {summary['pentanomial']}")
    estimate = state.estimate()
    if estimate is not None:
        source = "pentanomial of finished pairs" if sum(state.pentanomial) else "single games (no finished pair)"
        out(f"Elo difference: {stats.format_estimate(estimate)}; from the {source}")
        out(f"LOS: {100 * summary['los']:.1f}%")
    if "sprt" in summary:
        sprt = summary["sprt"]
        verdict = {"H1": "H1 accepted", "H0": "H0 accepted"}.get(sprt["decision"], "no decision")
        out(f"SPRT elo0={sprt['elo0']:g} elo1={sprt['elo1']:g} alpha={sprt['alpha']:g} beta={sprt['beta']:g}: "
            f"LLR {sprt['llr']:+.3f} bounds [{sprt['lower_bound']:+.3f}, {sprt['upper_bound']:+.3f}]: {verdict}")
        decided = sprt["decided"]
        if sprt["play_on"] and decided:
            out(f"SPRT first decided after {decided['games']} games: {decided['decision']} accepted "
                f"(LLR {decided['llr']:+.3f}); the match played on to {games} games")
    for name in names:
        counts = summary["forfeits"][name]
        out(f"Forfeits {name}: " + ", ".join(f"{kind} {counts[kind]}" for kind in FORFEIT_KINDS))
    for name, counts in summary.get("ponderhits", {}).items():
        share = f" ({100 * counts['hits'] / counts['moves']:.1f}%)" if counts["moves"] else ""
        longest = (f"; after a ponderhit at most {counts['longest']:.3f} s, "
                   f"{100 * counts['largest_share']:.1f}% of the clock left" if counts["hits"] else "")
        out(f"Ponderhits {name}: {counts['hits']} of {counts['moves']} moves{share}{longest}")
    for name, left in summary.get("clock_left", {}).items():
        if left["games"]:
            out(f"Clock left at the end {name}: median {left['median']:.2f} s, least {left['min']:.2f} s "
                f"({left['games']} games without a forfeit)")
    if summary["endings"]:
        out("Endings: " + ", ".join(f"{name} {count}" for name, count in summary["endings"].items()))
    for error in summary["errors"]:
        out(f"Error: {error}")


def plot_history(path: Path, history: list[HistoryPoint], names: list[str]) -> None:
    """Draw the Elo estimate and its 95% interval against games played (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    finite = [point for point in history
              if math.isfinite(point.elo) and math.isfinite(point.lower) and math.isfinite(point.upper)]
    figure, axes = plt.subplots(figsize=(8, 4.5))
    if finite:
        games = [point.games for point in finite]
        axes.plot(games, [point.elo for point in finite], label="Elo estimate")
        axes.fill_between(games, [point.lower for point in finite], [point.upper for point in finite],
                          alpha=0.3, label="95% interval")
    axes.axhline(0.0, color="grey", linewidth=0.8)
    axes.set_xlabel("games played")
    axes.set_ylabel(f"Elo of {names[0]} vs {names[1]}")
    axes.set_title(f"{names[0]} vs {names[1]}")
    axes.legend(loc="best")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def check_matplotlib() -> Optional[str]:
    """An error message when matplotlib is missing, else None."""
    if importlib.util.find_spec("matplotlib") is None:
        return "--plot needs matplotlib: pip install 'garfish[plot]' (or pip install matplotlib)"
    return None
