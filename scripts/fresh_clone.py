"""The README's two commands on a fresh clone, as a new user meets them: `./garfish`, then `./garfish test`.

    python scripts/fresh_clone.py [--shared] [--commit REV] [--keep DIR] [-- PYTEST_ARGS ...]

Clones this checkout (its HEAD, or REV) into a new folder, with nothing of this machine's set-up:
the launcher makes its own .venv there, the Numba cache is the clone's own and the GARFISH_*
variables are unset. With --shared, the clone's ../shared is a link to the shared data beside
this checkout (as in CI); without, the clone has none (as in a user's clone). Then it starts
`./garfish` through python-chess (the first start sets up), asks for a move from the start
position (`go nodes 2000`) and quits; then runs `./garfish test` (PYTEST_ARGS, if given, after
`test`). Prints the seconds each took, the move, and the test run's summary line with its counts;
exits with the test run's exit status (1 when the engine gave no move). The folder is removed at
the end unless --keep names it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import chess
import chess.engine

ROOT = Path(__file__).resolve().parent.parent
NODES = 2000  # the first move's search
SET_UP_TIMEOUT = 1800.0  # seconds for the first start (a fresh venv: pip, then every kernel compiled)
# pytest's summary line, "=== 762 passed, 112 skipped in 885.31s (0:14:45) ===" (without the = under -q)
SUMMARY = re.compile(r"^=*\s*((?:\d+ \w+(?:, )?)+) in [\d.]+s", re.MULTILINE)


def summary_counts(output: str) -> Optional[dict[str, int]]:
    """The counts of pytest's last summary line in `output` ({"passed": 762, "skipped": 112, ...}), None if none."""
    lines = SUMMARY.findall(output)
    if not lines:
        return None
    return {word: int(number) for number, word in re.findall(r"(\d+) (\w+)", lines[-1])}


def make_clone(source: Path, folder: Path, commit: Optional[str], shared: Optional[Path]) -> Path:
    """Clone `source` into folder/p (checked out at `commit` if given), with folder/shared linked to `shared`."""
    clone = folder / "p"
    subprocess.run(["git", "clone", "--quiet", str(source), str(clone)], check=True)
    if commit:
        subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", commit], check=True)
    if shared is not None:
        (folder / "shared").symlink_to(shared.resolve(), target_is_directory=True)
    return clone


def user_env() -> dict[str, str]:
    """This process's environment as a user's shell has it: without our GARFISH_* variables or NUMBA_CACHE_DIR, which
    point at this machine's venv, data or cache."""
    return {key: value for key, value in os.environ.items()
            if not key.startswith("GARFISH_") and key != "NUMBA_CACHE_DIR"}


def first_start(clone: Path, env: dict[str, str]) -> tuple[float, Optional[str], str]:
    """Start ./garfish in `clone` through python-chess, ask for a move (`go nodes 2000` from the start) and quit:
    (seconds, the move or None, the engine's stderr's tail)."""
    start = time.monotonic()
    move = None
    with tempfile.TemporaryFile() as errors:
        try:  # the first start sets up before it answers `uci`: the timeout covers the set-up
            with chess.engine.SimpleEngine.popen_uci(["./garfish"], timeout=SET_UP_TIMEOUT, cwd=clone, env=env,
                                                     stderr=errors) as engine:
                move = engine.play(chess.Board(), chess.engine.Limit(nodes=NODES)).move
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, OSError) as exc:  # OSError: a timeout too
            errors.write(f"\n{type(exc).__name__}: {exc}\n".encode())
        errors.seek(0)
        tail = errors.read().decode(errors="replace")[-2000:]
    return time.monotonic() - start, None if move is None else move.uci(), tail


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", action="store_true", help="link the clone's ../shared to this checkout's")
    parser.add_argument("--commit", help="check this revision out in the clone (default: HEAD)")
    parser.add_argument("--keep", type=Path, help="make the clone in this new folder and keep it")
    parser.add_argument("pytest_args", nargs="*", help="after --: the arguments for ./garfish test")
    args = parser.parse_args()
    shared = ROOT.parent / "shared"
    if args.shared and not (shared / "data").is_dir():
        parser.error(f"--shared: no shared data at {shared / 'data'}")
    if args.keep is not None and args.keep.exists():
        parser.error(f"--keep: {args.keep} exists; name a new folder")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="garfish-fresh-clone-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        clone = make_clone(ROOT, folder, args.commit, shared if args.shared else None)
        revision = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True,
                                  text=True, check=True).stdout.strip()
        print(f"fresh clone of {revision} in {clone}, {'with' if args.shared else 'without'} ../shared", flush=True)
        env = user_env()
        seconds, move, errors = first_start(clone, env)
        print(f"./garfish: {seconds:.0f} s (set-up included), bestmove {move}", flush=True)
        if move is None:
            print(f"no bestmove; the engine's stderr ends:\n{errors}", file=sys.stderr)
            return 1
        start = time.monotonic()
        test = subprocess.run(["./garfish", "test", *args.pytest_args], cwd=clone, env=env, capture_output=True,
                              text=True)
        seconds = time.monotonic() - start
        output = test.stdout + test.stderr
        counts = summary_counts(output)
        if counts is None:
            print(output[-4000:], file=sys.stderr)
        failures = [line for line in output.splitlines() if line.startswith(("FAILED ", "ERROR "))]
        print("\n".join(failures + [f"./garfish test: {seconds:.0f} s, exit status {test.returncode}, {counts}"]))
        return test.returncode
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
