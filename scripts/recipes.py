"""Training recipes screened by validation loss: `garfish train` runs, a few at a time, and their table.

    python scripts/recipes.py --out OUT_DIR --data PATH [PATH ...] [--common "ARGS"] [--jobs 2]
        --recipe "NAME=ARGS" [--recipe "NAME=ARGS" ...]
    python scripts/recipes.py --out OUT_DIR --summary --recipe "NAME=ARGS" [...]

Each recipe is `garfish train DATA... -o OUT_DIR/NAME COMMON ARGS`, its output in OUT_DIR/NAME.log;
--jobs of them run at once (each with the --threads its ARGS or COMMON give, 1 by default). A
recipe whose folder already holds a network is not trained again, and one whose folder holds the
checkpoint of an interrupted run goes on from it (`--resume`, its last finished epoch): the same
command after an interruption trains only what is left. At
the end, and with --summary alone, a Markdown table: each recipe's arguments, the validation loss
of its float and quantized network, its training loss and training time, read from its log. The
screening of issue 50 (all on the same data, the same split and seed, one thread each):

    .venv/bin/python scripts/recipes.py --out nets/screen --data ../gen ../shared/data/train \\
        --common "--base classic --epochs 6 --seed 1 --threads 1" \\
        --recipe "h256=--hidden 256 --mirror" --recipe "h512=--hidden 512 --mirror" \\
        --recipe "h256-b8=--hidden 256 --mirror --buckets 8" --recipe "h256-kb=--hidden 256 --king-buckets" \\
        --recipe "h256-none=--hidden 256 --mirror --base none"

(--base in a recipe's ARGS overrides COMMON's: `garfish train` takes the last.)
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

POLL_SECONDS = 0.5
NETWORK_LINE = re.compile(r"^network: validation loss (\S+) \(quantized (\S+);.*training loss (\S+)$", re.M)
TIME_LINE = re.compile(r"^training time (\d+) s", re.M)


def parse_recipe(text: str) -> tuple[str, list[str]]:
    """NAME=ARGS as the name and the argument list (ValueError for a name that is no folder name)."""
    name, equals, args = text.partition("=")
    if not equals or not re.fullmatch(r"[A-Za-z0-9._-]+", name):
        raise ValueError(f"--recipe {text!r}: expected NAME=ARGS, NAME of letters, digits, '.', '_', '-'")
    return name, shlex.split(args)


def command(data: list[str], out: Path, name: str, common: list[str], args: list[str]) -> list[str]:
    """The `garfish train` command of a recipe."""
    return [sys.executable, "-P", "-m", "garfish.uci", "train", *data, "-o", str(out / name), *common, *args]


def trained(out: Path, name: str) -> bool:
    """Whether the recipe's folder holds its network."""
    return any((out / name).glob("nn-*.gfnn"))


def run_all(data: list[str], out: Path, common: list[str], recipes: list[tuple[str, list[str]]],
            jobs: int) -> dict[str, str]:
    """Train every recipe not trained yet, `jobs` at a time; each one's outcome ("trained", "skipped",
    "failed (exit N)")."""
    out.mkdir(parents=True, exist_ok=True)
    outcome: dict[str, str] = {}
    waiting = []
    for name, args in recipes:
        if trained(out, name):
            outcome[name] = "skipped"
            print(f"{name}: already trained, skipped", flush=True)
        else:
            waiting.append((name, args))
    running: dict[str, tuple[subprocess.Popen[bytes], float]] = {}
    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                name, args = waiting.pop(0)
                line = command(data, out, name, common, args)
                checkpoint = out / name / "checkpoint.pt"  # garfish train's, after each epoch
                if checkpoint.is_file():
                    line += ["--resume", str(checkpoint)]
                with open(out / f"{name}.log", "ab") as log:
                    log.write(f"$ {shlex.join(line)}\n".encode())
                    log.flush()
                    running[name] = (subprocess.Popen(line, stdout=log, stderr=subprocess.STDOUT), time.time())
                print(f"{name}: started", flush=True)
            time.sleep(POLL_SECONDS)
            for name, (process, started) in list(running.items()):
                code = process.poll()
                if code is None:
                    continue
                del running[name]
                outcome[name] = "trained" if code == 0 and trained(out, name) else f"failed (exit {code})"
                print(f"{name}: {outcome[name]} after {time.time() - started:.0f} s (log {out / name}.log)",
                      flush=True)
    finally:
        for process, _ in running.values():  # interrupted: no run is left behind
            process.terminate()
            process.wait()
    return outcome


def summary(out: Path, recipes: list[tuple[str, list[str]]], common: list[str]) -> str:
    """The Markdown table of the recipes' losses and times, from their logs ("-" where none yet)."""
    rows = [f"Common arguments: `{shlex.join(common)}`" if common else "", "",
            "| Recipe | Arguments | Validation loss: float / quantized | Training loss | Training time |",
            "|---|---|---|---|---|"]
    for name, args in recipes:
        log = out / f"{name}.log"
        text = log.read_text(errors="replace") if log.is_file() else ""
        # The last run's lines (a log keeps every run of its recipe; a resumed run's time is its own).
        losses = ([None] + list(NETWORK_LINE.finditer(text)))[-1]
        spent = ([None] + list(TIME_LINE.finditer(text)))[-1]
        loss = f"{losses[1]} / {losses[2]}" if losses else "-"
        rows.append(f"| {name} | `{shlex.join(args)}` | {loss} | {losses[3] if losses else '-'} | "
                    f"{spent[1] + ' s' if spent else '-'} |")
    return "\n".join(rows).lstrip("\n")


def main(argv: Optional[list[str]] = None) -> int:
    """Train the recipes and print their table; 0 when every recipe has its network, 1 if one failed,
    2 for bad arguments."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the recipes' folders and logs")
    parser.add_argument("--data", nargs="+", default=[], help="the data files or folders, as garfish train takes them")
    parser.add_argument("--common", default="", help="arguments of every recipe (before its own)")
    parser.add_argument("--recipe", action="append", default=[], help="NAME=ARGS (repeat)")
    parser.add_argument("--jobs", type=int, default=2, help="runs at once (default 2)")
    parser.add_argument("--summary", action="store_true", help="only print the table from the logs")
    args = parser.parse_args(argv)
    try:
        recipes = [parse_recipe(text) for text in args.recipe]
    except ValueError as error:
        parser.error(str(error))
    if not recipes or len({name for name, _ in recipes}) != len(recipes):
        parser.error("give at least one --recipe, each under its own name")
    if not args.summary and (not args.data or args.jobs < 1):
        parser.error("training needs --data and --jobs of at least 1")
    common = shlex.split(args.common)
    outcome = {} if args.summary else run_all(args.data, args.out, common, recipes, args.jobs)
    print(summary(args.out, recipes, common))
    return 1 if any(result.startswith("failed") for result in outcome.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
