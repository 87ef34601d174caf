"""Calibrate UCI_Elo: play Garfish at each setting against Stockfish's own UCI_Elo ladder.

    python scripts/calibrate.py OUT_DIR [--elos 1000,1400,1700,2000] [--games 40] [--rounds 1]
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
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Optional

from garfish.arena.stats import RatingLevel, rating_on_scale

ROOT = Path(__file__).resolve().parent.parent
OPENINGS = ROOT.parent / "shared" / "data" / "books" / "noob_3moves.epd"
STOCKFISH_ELO_RANGE = (1350, 2850)  # Stockfish 15.1's UCI_Elo option


def garfish(*args: str) -> list[str]:
    """The command line of a garfish sub-command, run by this Python."""
    return [sys.executable, "-P", "-m", "garfish.uci", *args]


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


def rating(elo: int, reports: list[Path]) -> str:
    """One table row: the setting's rating on Stockfish's scale from all its rounds' reports, as
    `garfish rating` estimates it."""
    levels, totals = pooled([level(report) for report in reports])
    estimate = rating_on_scale(levels)
    value = round(estimate.elo)
    return (f"| {elo} | {levels[0].opponent:g} | {wdl(totals)} | {value} "
            f"[{estimate.lower:.0f}, {estimate.upper:.0f}] | {value - elo:+d} |")


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


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for the reports and PGNs (created)")
    parser.add_argument("--elos", default="1000,1400,1700,2000", help="the UCI_Elo settings")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=1, help="matches per setting, pooled in its row (not with --full-strength)")
    parser.add_argument("--tc", default="10+0.1")
    parser.add_argument("--stockfish", default="/usr/games/stockfish")
    parser.add_argument("--openings", type=Path, default=OPENINGS)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--full-strength", action="store_true",
                        help="rate Garfish as it plays by default against Stockfish at each of --elos")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    elos = [int(value) for value in args.elos.split(",")]
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
