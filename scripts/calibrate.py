"""Calibrate UCI_Elo: play Garfish at each setting against Stockfish's own UCI_Elo ladder.

    python scripts/calibrate.py OUT_DIR [--elos E1,E2,...] [--games 40] [--rounds 1]
        [--tc 10+0.1] [--stockfish /usr/games/stockfish] [--seed 12] [--concurrency 1] [--full-strength]

For every setting E, `garfish match` plays Garfish (UCI_LimitStrength, UCI_Elo E) against
Stockfish with UCI_LimitStrength and UCI_Elo clamped to the range Stockfish accepts (1350-2850
in 15.1) and Move Overhead 100 ms (Garfish keeps its default, as a user runs it), from
noob_3moves openings, and writes
OUT_DIR/elo-E.json and .pgn. `garfish rating`'s estimate (arena.stats.rating_on_scale) then places the setting on Stockfish's scale.
A setting whose report exists is not played again, and an interrupted one goes on from its
match's journal (`garfish match --resume`), so an interrupted run resumes game by game. Prints a
Markdown table "setting | opponent | W D L | measured rating [95% interval]".

With --rounds N every setting is played N times, round r with seed --seed + r - 1 (reports
elo-E.json, then elo-E.r2.json, ...), and each row pools all of its rounds: more games for a
narrower interval, and a finished run extended later by asking for more rounds.

With --full-strength Garfish plays with its default options (no strength limit) against
Stockfish at each of --elos (OUT_DIR/full-E.json and .pgn): the rows give the rating each level
alone implies, and a last row the rating from all levels together (`garfish rating`'s estimate).

    python scripts/calibrate.py OUT_DIR --fit [--write] [--also DIR ...]

refits UCI_Elo from the reports in OUT_DIR, and in each --also folder (no games played): a
folder is a table's round (a setting's name means another strength under another table, so each
folder's settings are points of their own, and the full engine's reports of all folders are
pooled; a check played with a fitted table is data for the next fit too). Each setting's measured
rating against the strength it played at (engine/search/skill.py's knob; calibrate.py writes it beside
each report when it plays, OUT_DIR/elo-E.strength), made to rise with the strength (a weighted
pool-adjacent-violators fit, each setting weighted by its games), the full engine's rating from
the full-*.json reports at the top (STRENGTH_FULL), and ELO_MIN (Stockfish's floor, 1350) at the
bottom, interpolated between the two lowest points, or extrapolated below them. It prints the new
table, and with --write puts it in engine/search/skill.py's CALIBRATION block, so that the next
network's calibration is: play the settings (and --full-strength), then --fit --write.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Optional

from garfish.arena.stats import EloEstimate, RatingLevel, rating_on_scale
from garfish.engine.search.skill import CALIBRATION, STRENGTH_FULL, STRENGTH_MIN, strength_at

ROOT = Path(__file__).resolve().parent.parent
OPENINGS = ROOT.parent / "shared" / "data" / "books" / "noob_3moves.epd"
STOCKFISH_ELO_RANGE = (1350, 2850)  # Stockfish 15.1's UCI_Elo option
SKILL_SOURCE = ROOT / "engine" / "search" / "skill.py"
BLOCK_START, BLOCK_END = "# BEGIN CALIBRATION", "# END CALIBRATION"


def garfish(*args: str) -> list[str]:
    """The command line of a garfish sub-command, run by this Python."""
    return [sys.executable, "-P", "-m", "garfish.uci", *args]


def default_settings(count: int = 6) -> list[int]:
    """Six settings spread evenly over the UCI_Elo range below its top (which is the full engine,
    rated with --full-strength), rounded to 10."""
    low, high = CALIBRATION[0][0], CALIBRATION[-1][0]
    return sorted({int(round(low + (high - low) * index / count, -1)) for index in range(count)})


def opponent_elo(elo: int) -> int:
    """The Stockfish setting nearest to elo."""
    low, high = STOCKFISH_ELO_RANGE
    return min(max(elo, low), high)


def play(elo: int, args: argparse.Namespace, out: Path, round_: int = 1) -> Path:
    """Play round round_ of one setting (or, with --full-strength, the match against one Stockfish
    level) unless its report exists; the report's path."""
    stem = f"full-{elo}" if args.full_strength else f"elo-{elo}"
    if round_ > 1:
        stem += f".r{round_}"
    report = out / f"{stem}.json"
    if report.exists():
        return report
    sf = opponent_elo(elo)
    partial = out / f"{stem}.partial.json"
    if args.full_strength:
        player = ["name=Garfish"]
    else:
        player = [f"name=Garfish{elo}", "option.UCI_LimitStrength=true", f"option.UCI_Elo={elo}"]
    command = garfish(
        "match",
        "--engine", *player,
        "--engine", f"cmd={args.stockfish}", f"name=Stockfish{sf}", "option.UCI_LimitStrength=true",
        f"option.UCI_Elo={sf}", "option.Move Overhead=100",
        "--tc", args.tc, "--games", str(args.games), "--concurrency", str(args.concurrency),
        "--openings", str(args.openings), "--seed", str(args.seed + round_ - 1),
        "--report", str(partial), "--pgnout", str(out / f"{stem}.pgn"), "--resume", "--no-progress")
    who = "full strength" if args.full_strength else f"UCI_Elo {elo}"
    if round_ > 1:
        who += f", round {round_}"
    print(f"# {who} against Stockfish UCI_Elo {sf}: {' '.join(command)}", flush=True)
    if not args.full_strength:  # the strength this setting plays at, for --fit
        (out / f"elo-{elo}.strength").write_text(f"{strength_at(elo)!r}\n", encoding="utf-8")
    subprocess.run(command, check=True)
    partial.rename(report)  # only a finished match counts as done
    return report


def level(report: Path) -> tuple[RatingLevel, dict]:
    """The opponent's level and the pentanomial of a match report, and the report."""
    data = json.loads(report.read_text(encoding="utf-8"))
    sf = int(data["engines"][1].removeprefix("Stockfish"))
    return RatingLevel(sf, data["pentanomial"]), data


def wdl(data: dict) -> str:
    """A match report's wins, draws and losses, as the tables show them."""
    return f"{data['wins']} {data['draws']} {data['losses']}"


def pooled(read: list[tuple[RatingLevel, dict]]) -> tuple[list[RatingLevel], dict]:
    """The opponents' levels of several read reports, and their wins, draws and losses summed."""
    keys = ("wins", "draws", "losses")
    return [opponent for opponent, _ in read], {key: sum(data[key] for _, data in read) for key in keys}


def pooled_rating(reports: list[Path]) -> tuple[EloEstimate, dict, float]:
    """The rating on Stockfish's scale of all these reports together (as `garfish rating`
    estimates it), their wins, draws and losses summed, and the first opponent's level."""
    levels, totals = pooled([level(report) for report in reports])
    return rating_on_scale(levels), totals, levels[0].opponent


def row(first: object, second: object, estimate: EloEstimate, totals: dict, setting: Optional[int]) -> str:
    """A table row: two leading columns, W D L, the rating with its interval, measured - setting."""
    value = round(estimate.elo)
    difference = f" {value - setting:+d} |" if setting is not None else " |"
    return (f"| {first} | {second} | {wdl(totals)} | {value} "
            f"[{estimate.lower:.0f}, {estimate.upper:.0f}] |" + difference)


def rating(elo: int, reports: list[Path]) -> str:
    """One table row: the setting's rating on Stockfish's scale from all its rounds' reports."""
    estimate, totals, opponent = pooled_rating(reports)
    return row(elo, f"{opponent:g}", estimate, totals, elo)


def ladder_table(reports: list[Path]) -> list[str]:
    """The --full-strength table: one row per Stockfish level, then all levels together."""
    rows = ["| Stockfish UCI_Elo | W D L | rating from this level [95%] |", "|---|---|---|"]
    read = [level(report) for report in reports]
    for opponent, data in read:
        estimate = rating_on_scale([opponent])
        rows.append(f"| {opponent.opponent:g} | {wdl(data)} | "
                    f"{estimate.elo:.0f} [{estimate.lower:.0f}, {estimate.upper:.0f}] |")
    levels, totals = pooled(read)
    combined = rating_on_scale(levels)
    rows.append(f"| all | {wdl(totals)} | **{combined.elo:.0f}** "
                f"[{combined.lower:.0f}, {combined.upper:.0f}] |")
    return rows


@dataclass(frozen=True)
class Measured:
    """A setting's rating on Stockfish's scale, the strength it played at and its games."""

    rating: float
    strength: float
    games: int


def isotonic(points: list[Measured]) -> list[Measured]:
    """The ratings made to rise with the strength: weighted pool-adjacent-violators (by games),
    a pooled run becoming one point at its games-weighted rating and strength."""
    blocks: list[Measured] = []
    for point in sorted(points, key=lambda point: point.strength):
        blocks.append(point)
        while len(blocks) > 1 and blocks[-2].rating >= blocks[-1].rating:
            high, low = blocks.pop(), blocks.pop()
            games = low.games + high.games
            blocks.append(Measured((low.rating * low.games + high.rating * high.games) / games,
                                   (low.strength * low.games + high.strength * high.games) / games, games))
    return blocks


def fit_table(points: list[Measured], full_rating: float, floor: int = STOCKFISH_ELO_RANGE[0]) -> list[tuple[int, int]]:
    """CALIBRATION's new points (rating, strength): the isotonic fit of the settings below the full
    engine, the full engine at STRENGTH_FULL (its rating rounded to 10), and `floor` at the bottom
    (interpolated, or extrapolated from the two lowest points, clamped to STRENGTH_MIN)."""
    top = int(round(full_rating, -1))
    fitted = [point for point in isotonic(points) if point.rating < top and point.strength < STRENGTH_FULL]
    if not fitted:
        raise SystemExit("calibrate.py --fit: no setting measured below the full engine's rating: nothing to fit")
    fitted.append(Measured(top, STRENGTH_FULL, 0))
    below = [point for point in fitted if point.rating <= floor]
    above = [point for point in fitted if point.rating > floor]
    low, high = (below[-1], above[0]) if below else (above[0], above[1])
    slope = (high.strength - low.strength) / (high.rating - low.rating)
    bottom = min(max(low.strength + slope * (floor - low.rating), STRENGTH_MIN), STRENGTH_FULL)
    table = [(floor, round(bottom))] + [(round(point.rating), round(point.strength)) for point in above]
    return [(rating, strength) for index, (rating, strength) in enumerate(table)
            if index == 0 or (rating > table[index - 1][0] and strength >= table[index - 1][1])]


def measured(folders: list[Path]) -> tuple[list[Measured], float, list[str]]:
    """The settings' measurements in the folders (each its own points), the full engine's rating
    from all their full-*.json, and the table's rows."""
    points, rows = [], []
    for out in folders:
        for strength_file in sorted(out.glob("elo-*.strength"), key=lambda path: int(path.stem.split("-")[1])):
            elo = int(strength_file.stem.split("-")[1])
            reports = sorted(out.glob(f"elo-{elo}.json")) + sorted(out.glob(f"elo-{elo}.r*.json"))
            if not reports:
                continue
            estimate, totals, _ = pooled_rating(reports)
            strength = float(strength_file.read_text(encoding="utf-8"))
            points.append(Measured(estimate.elo, strength, sum(totals.values())))
            rows.append(row(elo if len(folders) == 1 else f"{elo} ({out.name})", f"{strength:.0f}", estimate, totals, elo))
    full = sorted(report for out in folders for report in out.glob("full-*.json"))
    if not full:
        names = ", ".join(str(out) for out in folders)
        raise SystemExit(f"calibrate.py --fit: no full-*.json in {names}: rate the full engine first (--full-strength)")
    estimate, totals, _ = pooled_rating(full)
    rows.append(row("full", STRENGTH_FULL, estimate, totals, None))
    return points, estimate.elo, rows


def write_table(table: list[tuple[int, int]], note: str, source: Path = SKILL_SOURCE) -> None:
    """Put the table in skill.py's CALIBRATION block."""
    text = source.read_text(encoding="utf-8")
    start, end = text.index(BLOCK_START), text.index(BLOCK_END)
    start = text.index("\n", start) + 1
    block = (f"CALIBRATED = {note!r}\n"
             f"CALIBRATION = {tuple(table)!r}  # (rating on Stockfish 15.1's UCI_Elo scale, strength)\n")
    source.write_text(text[:start] + block + text[end:], encoding="utf-8")


def fit(args: argparse.Namespace) -> int:
    """--fit: the new table from OUT_DIR's reports, printed (and with --write, put in skill.py)."""
    folders = [args.out, *args.also]
    missing = [str(folder) for folder in folders if not folder.is_dir()]
    if missing:
        raise SystemExit(f"calibrate.py --fit: no such folder: {', '.join(missing)}")
    points, full_rating, rows = measured(folders)
    print("| UCI_Elo | strength | W D L | measured rating [95%] | measured - setting |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    table = fit_table(points, full_rating)
    print(f"\nCALIBRATION = {tuple(table)!r}  (was {CALIBRATION!r})")
    if args.write:
        games = sum(point.games for point in points)
        names = "+".join(folder.name for folder in folders)
        note = f"{date.today().isoformat()}: {len(points)} settings, {games} games, {names} (scripts/calibrate.py --fit)"
        write_table(table, note)
        print(f"written to {SKILL_SOURCE}")
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for the reports and PGNs (created)")
    parser.add_argument("--elos", default=None,
                        help="the UCI_Elo settings (default: six spread over the range below its top, the full engine)")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=1, help="matches per setting, pooled in its row (not with --full-strength)")
    parser.add_argument("--tc", default="10+0.1")
    parser.add_argument("--stockfish", default="/usr/games/stockfish")
    parser.add_argument("--openings", type=Path, default=OPENINGS)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--full-strength", action="store_true",
                        help="rate Garfish as it plays by default against Stockfish at each of --elos")
    parser.add_argument("--fit", action="store_true", help="refit UCI_Elo from OUT_DIR's reports (plays no games)")
    parser.add_argument("--write", action="store_true", help="with --fit: write the table into engine/search/skill.py")
    parser.add_argument("--also", type=Path, action="append", default=[], metavar="DIR",
                        help="with --fit: the reports of this folder too (an earlier round; repeatable)")
    args = parser.parse_args(argv)
    if args.fit:
        return fit(args)
    args.out.mkdir(parents=True, exist_ok=True)
    elos = [int(value) for value in args.elos.split(",")] if args.elos else default_settings()
    if args.full_strength:
        print("\n".join(ladder_table([play(elo, args, args.out) for elo in elos])))
        return 0
    # Round by round, so that a stopped run has every setting at the same number of rounds.
    rounds = [[play(elo, args, args.out, round_) for elo in elos] for round_ in range(1, args.rounds + 1)]
    reports = [(elo, [played[index] for played in rounds]) for index, elo in enumerate(elos)]
    print("| UCI_Elo | Stockfish UCI_Elo | W D L | measured rating [95%] | measured - setting |")
    print("|---|---|---|---|---|")
    for elo, report in reports:
        print(rating(elo, report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
