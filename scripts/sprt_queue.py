"""SPRTs of search candidates, one after another, each against the same base engine, with a truncation.

    python scripts/sprt_queue.py --base BASE_DIR --out OUT_DIR CANDIDATE_DIR [CANDIDATE_DIR ...]
        [--tc 10+0.1] [--concurrency 2] [--pin CPUS] [--elo0 0] [--elo1 10] [--seed 3301] [--openings PATH] [--low 400]
        [--cap 800]
    python scripts/sprt_queue.py --out OUT_DIR --summary [--upto N] CANDIDATE_DIR [CANDIDATE_DIR ...]

Each CANDIDATE_DIR and BASE_DIR is a checkout (a git worktree of a candidate's branch) with its own
`garfish` launcher. For each candidate in turn the script plays `garfish match` (two games at a
time, or --concurrency; `--games 4000`, `--resume`) between CANDIDATE_DIR/garfish, named after the
folder, and BASE_DIR/garfish, named `base`, writing OUT_DIR/sprt-NAME.pgn (with its journal), .json and .log.
A match stops when its SPRT decides, or by the truncation rule: undecided after --low games with
its LLR at or below zero, or after --cap games whatever its LLR; a truncated candidate is not
accepted. A truncation can only make an acceptance rarer, never easier. Run the same command
again and every unfinished match goes on from its journal; a finished one is skipped (its log
says why it stopped). Issue 33's queue, each candidate a worktree beside the checkout
(`git worktree add ../cand-improving cand-improving`, then `./garfish --version` there to set it up):

    .venv/bin/python scripts/sprt_queue.py --base ../sprt-base --out ../runs ../cand-corrhist ../cand-improving \
        ../cand-singular ../cand-conthist ../cand-lmr-history ../cand-qstt ../cand-probcut

The last two of them are kept as patches in scripts/candidates/, to be applied to a worktree of
a6d06ed (docs/history.md, "Stronger by evaluation and search", gives the commands).

--summary plays nothing: it prints each candidate's figures from its match's journal, as `garfish match`
does at the end (--upto N: the first N games finished, those the truncation rule judged). A match
killed before it could write its report loses nothing this way.
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Optional

from garfish.arena import journal
from garfish.arena.report import MatchState, SprtConfig, print_summary

ROOT = Path(__file__).resolve().parents[1]
GAMES = 4000  # the SPRT's ceiling; the truncation rule stops well before it
PROGRESS = re.compile(r"(\d+)/\d+ done;.*LLR ([-+]?\d+\.\d+)")
FINISHED = ("stopped by the truncation rule", ": H0 accepted", ": H1 accepted")
POLL_SECONDS = 10
INTERRUPT_GRACE_SECONDS = 60


def last_progress(log: Path) -> tuple[int, float]:
    """Games played and the LLR after the last game the log reports ((0, 0.0) when none)."""
    games, llr = 0, 0.0
    if log.exists():
        for match in PROGRESS.finditer(log.read_text(encoding="utf-8", errors="replace")):
            games, llr = int(match.group(1)), float(match.group(2))
    return games, llr


def truncated(games: int, llr: float, low: int, cap: int) -> bool:
    """Whether the truncation rule stops a match after this many games at this LLR."""
    return games >= cap or (games >= low and llr <= 0)


def note_truncation(log: Path, games: int, llr: float) -> None:
    """Record in a match's log that the truncation rule stopped it (the mark a later run skips it by)."""
    note(log, f"{FINISHED[0]} after {games} games (LLR {llr:+.2f}): not accepted")


def note(log: Path, text: str) -> None:
    """Append a dated line to a match's log."""
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"{datetime.now(timezone.utc):%Y-%m-%dT%H:%M:%SZ} {text}\n")


def match_command(args: argparse.Namespace, candidate: Path, stem: Path) -> list[str]:
    """The `garfish match` command of one candidate against the base."""
    return [str(ROOT / "garfish"), "match",
            "--engine", f"cmd={candidate / 'garfish'}", f"name={candidate.name}",
            "--engine", f"cmd={args.base / 'garfish'}", "name=base",
            "--tc", args.tc, "--games", str(GAMES), "--concurrency", str(args.concurrency),
            "--openings", str(args.openings),
            "--sprt", f"elo0={args.elo0:g}", f"elo1={args.elo1:g}", "--seed", str(args.seed),
            "--pgnout", f"{stem}.pgn", "--report", f"{stem}.json", "--no-progress", "--resume",
            *(["--pin", args.pin] if args.pin else [])]


def run_one(args: argparse.Namespace, candidate: Path) -> None:
    """Play (or go on with) one candidate's match until its SPRT decides or the rule truncates it."""
    stem = args.out / f"sprt-{candidate.name}"
    log = stem.with_suffix(".log")
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    if any(marker in text for marker in FINISHED):
        return
    games, llr = last_progress(log)
    if truncated(games, llr, args.low, args.cap):
        note_truncation(log, games, llr)
        return
    head = subprocess.run(["git", "-C", str(candidate), "log", "--oneline", "-1"], capture_output=True, text=True)
    note(log, f"{candidate.name} {head.stdout.strip()}")
    with log.open("a", encoding="utf-8") as handle:
        process = subprocess.Popen(match_command(args, candidate, stem), stdout=handle, stderr=subprocess.STDOUT,
                                   cwd=ROOT)
    try:
        while process.poll() is None:
            time.sleep(POLL_SECONDS)
            games, llr = last_progress(log)
            if truncated(games, llr, args.low, args.cap):
                interrupt(process)
                note_truncation(log, games, llr)
                return
    except KeyboardInterrupt:  # the queue stopped (Ctrl-C, SIGTERM): the match too, resumable
        interrupt(process)
        raise


def interrupt(process: subprocess.Popen[bytes]) -> None:
    """Stop a match as Ctrl-C does (it writes its report and keeps its journal), killing it if it hangs."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        process.wait(INTERRUPT_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def summarize(stem: Path, upto: Optional[int], out: Callable[[str], None]) -> None:
    """Print a match's figures from its journal (the first `upto` games finished; all when None)."""
    path = journal.journal_path(stem.with_suffix(".pgn"))
    try:
        settings = journal.read_settings(path)
        loaded = journal.load(path, settings) if settings is not None else None
    except (OSError, ValueError) as exc:
        out(f"{stem.name}: cannot read its journal '{path}': {exc}")
        return
    if loaded is None or not loaded[0]:
        out(f"{stem.name}: no game recorded")
        return
    played = loaded[0][:upto]  # in the order they finished, as the match's progress lines count them
    sprt = settings["sprt"]
    first = played[0]  # a match of two engines: every game is the one pairing's, engine 1 against engine 2
    names = [first.white, first.black] if first.engine1_white else [first.black, first.white]
    state = MatchState(names=names, total=len(played),
                       sprt_config=None if sprt is None else SprtConfig(**sprt))
    for record in played:
        state.add(record)
    out(f"{stem.name}: the first {len(played)} of {len(loaded[0])} games in its journal")
    print_summary(state, out)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("candidates", nargs="+", type=Path, help="checkouts of the candidates, in order")
    parser.add_argument("--base", type=Path, help="checkout of the base engine (needed to play)")
    parser.add_argument("--out", type=Path, required=True, help="folder of the PGNs, reports and logs")
    parser.add_argument("--tc", default="10+0.1")
    parser.add_argument("--concurrency", type=int, default=2,
                        help="games at a time (default 2; 1 leaves a core to other work, such as datagen)")
    parser.add_argument("--pin", help="processors for the games, as `garfish match --pin` takes them (say 1: one "
                        "game at a time, both engines on processor 1, with --concurrency 1)")
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=3301)
    parser.add_argument("--openings", type=Path, default=ROOT.parent / "shared/data/books/noob_3moves.epd")
    parser.add_argument("--low", type=int, default=400, help="stop here when the LLR is at or below zero")
    parser.add_argument("--cap", type=int, default=800, help="stop here whatever the LLR")
    parser.add_argument("--summary", action="store_true", help="print each match's figures from its journal")
    parser.add_argument("--upto", type=int, help="with --summary: the first N games only")
    args = parser.parse_args(argv)
    if args.summary:
        for candidate in args.candidates:
            summarize(args.out.resolve() / f"sprt-{candidate.resolve().name}", args.upto, print)
        return 0
    if args.base is None:
        parser.error("--base is needed to play")
    args.base, args.out = args.base.resolve(), args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    # Ctrl-C and `kill` stop the queue, and the queue stops a match with SIGINT (its report written). A
    # shell without job control starts a background command (`queue &`) with SIGINT ignored, and an
    # ignored signal stays ignored in every child: the matches would not stop (a match played on for
    # 60 s and was killed without its report). A handled signal is reset to the default at exec.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        for candidate in args.candidates:
            run_one(args, candidate.resolve())
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
