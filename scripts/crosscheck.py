"""Cross-check `garfish match` against cutechess-cli: the same engines, openings and clock in both.

    python scripts/crosscheck.py OUT_DIR --cutechess PATH [--elos 2000,2300] [--games 40] [--tc 10+0.1]
        [--stockfish /usr/games/stockfish] [--garfish CMD] [--seed 29] [--concurrency 2]

For every Stockfish level E, Garfish (default options) plays Stockfish 15.1 at UCI_LimitStrength,
UCI_Elo E and Move Overhead 100 ms twice: once in `garfish match` and once in cutechess-cli, each
over the same --games / 2 openings of noob_3moves.epd (a seeded sample, written to
OUT_DIR/openings-SEED.epd), every opening with both colours, no adjudication and no time margin in
either. The games go to OUT_DIR/{garfish,cutechess}-E.pgn; a match whose PGN holds all its games is
not played again (an interrupted run resumes). Both PGNs are then scored the same way, from their
Result tags: W D L from Garfish's side, the Elo difference with its 95% interval from the pentanomial
of colour-swapped pairs, the rating on Stockfish's scale, and how each runner's games ended. The two
runners agree when their intervals overlap.

cutechess-cli is not a Debian package: build its `cli` target from the tag v1.4.0 of its sources with
cmake, qtbase5-dev and libqt5svg5-dev (docs/match.md says how), outside this repository.
"""

from __future__ import annotations

import argparse
import collections
import random
import subprocess
import sys
from pathlib import Path

import chess.pgn

from garfish.arena.stats import RatingLevel, pair_scores_to_pentanomial, pentanomial_elo, rating_on_scale

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT.parent / "shared" / "data" / "books" / "noob_3moves.epd"
GARFISH = "Garfish"
POINTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def write_openings(out: Path, games: int, seed: int) -> Path:
    """games / 2 openings drawn from the book with the seed, one FEN a line."""
    path = out / f"openings-{seed}.epd"
    if not path.exists():
        lines = [line.strip() for line in BOOK.read_text().splitlines() if line.strip()]
        path.write_text("\n".join(random.Random(seed).sample(lines, games // 2)) + "\n")
    return path


def stockfish_options(elo: int) -> list[str]:
    """The Stockfish engine's name and options, as both runners spell them (key=value)."""
    return [f"name=SF{elo}", "option.UCI_LimitStrength=true", f"option.UCI_Elo={elo}", "option.Move Overhead=100"]


def play_garfish(args: argparse.Namespace, elo: int, openings: Path, pgn: Path) -> list[str]:
    """The `garfish match` command line of one level."""
    return [sys.executable, "-P", "-m", "garfish.uci", "match",
            "--engine", f"cmd={args.garfish}", f"name={GARFISH}",
            "--engine", f"cmd={args.stockfish}", *stockfish_options(elo),
            "--tc", args.tc, "--games", str(args.games), "--concurrency", str(args.concurrency),
            "--openings", str(openings), "--seed", str(args.seed), "--pgnout", str(pgn), "--no-progress"]


def play_cutechess(args: argparse.Namespace, elo: int, openings: Path, pgn: Path) -> list[str]:
    """The cutechess-cli command line of one level (every opening in order, each played twice)."""
    return [args.cutechess,
            "-engine", f"cmd={args.garfish}", f"name={GARFISH}",
            "-engine", f"cmd={args.stockfish}", *stockfish_options(elo),
            "-each", "proto=uci", f"tc={args.tc}",
            "-openings", f"file={openings}", "format=epd", "order=sequential",
            "-repeat", "-games", "2", "-rounds", str(args.games // 2), "-concurrency", str(args.concurrency),
            "-pgnout", str(pgn), "-recover"]


def read_pgn(path: Path) -> list[chess.pgn.Game]:
    """The games of a PGN file (none when it does not exist)."""
    games = []
    if path.exists():
        with open(path, encoding="utf-8") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                games.append(game)
    return games


def ending(game: chess.pgn.Game) -> str:
    """How a game ended, in a few words (cutechess-cli's last comment or garfish's ResultReason)."""
    reason = game.headers.get("ResultReason")
    if reason is None:
        last = game.end().comment.split("}")[-1].strip() if game.end().comment else ""
        reason = last.split(", ")[-1] if last else game.headers.get("Termination", "?")
    return reason.lower().removeprefix("draw by ").removeprefix("white mates").removeprefix("black mates") or "checkmate"


def score(games: list[chess.pgn.Game], elo: int) -> str:
    """One table row for a runner's games."""
    pairs: dict[str, list[float]] = collections.defaultdict(list)
    wins = draws = losses = 0
    endings: collections.Counter = collections.Counter()
    for game in games:
        white_points = POINTS[game.headers["Result"]]
        points = white_points if game.headers["White"] == GARFISH else 1.0 - white_points
        wins, draws, losses = wins + (points == 1.0), draws + (points == 0.5), losses + (points == 0.0)
        opening = game.headers.get("FEN", chess.STARTING_FEN)
        pairs[opening].append(points)
        endings[ending(game)] += 1
    pentanomial = pair_scores_to_pentanomial([sum(p) for p in pairs.values() if len(p) == 2])
    diff = pentanomial_elo(pentanomial)
    on_scale = rating_on_scale([RatingLevel(elo, pentanomial)])
    ends = ", ".join(f"{name} {count}" for name, count in endings.most_common())
    return (f"{wins} {draws} {losses} | {diff.elo:+.0f} [{diff.lower:+.0f}, {diff.upper:+.0f}] | "
            f"{on_scale.elo:.0f} [{on_scale.lower:.0f}, {on_scale.upper:.0f}] | {ends}")


def main() -> int:
    """Play what is missing, then print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--cutechess", required=True)
    parser.add_argument("--elos", default="2000,2300")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--tc", default="10+0.1")
    parser.add_argument("--stockfish", default="/usr/games/stockfish")
    parser.add_argument("--garfish", default=str(ROOT / "garfish"), help="Garfish's command (default this checkout's)")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--runners", default="garfish,cutechess", help="which runners to play (default both)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    openings = write_openings(args.out, args.games, args.seed)
    elos = [int(elo) for elo in args.elos.split(",")]
    runners = {"garfish": play_garfish, "cutechess": play_cutechess}
    for elo in elos:
        for name in args.runners.split(","):
            pgn = args.out / f"{name}-{elo}.pgn"
            if len(read_pgn(pgn)) >= args.games:
                continue
            pgn.unlink(missing_ok=True)
            command = runners[name](args, elo, openings, pgn)
            print(f"# {name}, Stockfish UCI_Elo {elo}: {' '.join(command)}", flush=True)
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    print("| Stockfish UCI_Elo | runner | W D L (Garfish) | Elo difference [95%] | rating [95%] | endings |")
    print("|---|---|---|---|---|---|")
    for elo in elos:
        for name in args.runners.split(","):
            print(f"| {elo} | {name} | {score(read_pgn(args.out / f'{name}-{elo}.pgn'), elo)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
