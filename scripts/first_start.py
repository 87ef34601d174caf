"""A first start as a GUI meets it: python-chess plays one move with engines whose kernels are not compiled.

    python scripts/first_start.py [--engines 1] [--load 0] [--runs 3] [--warm] [-- COMMAND ...]

Each run gives the engines an empty Numba cache of their own run (NUMBA_CACHE_DIR; --warm: one
filled first, a later start), starts --load CPU-bound processes beside them (a busy machine), then
starts --engines engines at once (what `cutechess-cli -concurrency N` does), each through
python-chess's `SimpleEngine.popen_uci` with its default 10 s timeout, and asks each for
`play(chess.Board(), Limit(time=1.0))`. Prints, per engine, the seconds to `uciok` (popen_uci's
return), to the move, from `play` to the move (python-chess's isready, then the search: what a
clock would count), and any error (python-chess's TimeoutError is a failed start); then the worst
of each over the runs. COMMAND defaults to this interpreter's `-P -m garfish.uci` (a plain
install: no launcher, which compiles at set-up).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time
from typing import Optional

import chess
import chess.engine

MOVE_TIME = 1.0  # seconds of the move asked for
CLIENT_TIMEOUT = 10.0  # python-chess's default timeout for the engine's answers


def burn() -> None:
    """A CPU-bound process: the load beside the engines."""
    while True:
        pass


def first_move(command: list[str], env: dict[str, str], results: list, index: int) -> None:
    """Start one engine through python-chess and time uciok and the first move (or the error)."""
    start = time.perf_counter()
    uciok: Optional[float] = None
    try:
        with chess.engine.SimpleEngine.popen_uci(command, timeout=CLIENT_TIMEOUT, env=env,
                                                 stderr=subprocess.DEVNULL) as engine:
            uciok = time.perf_counter() - start
            asked = time.perf_counter()
            move = engine.play(chess.Board(), chess.engine.Limit(time=MOVE_TIME)).move
            now = time.perf_counter()
            results[index] = (uciok, now - start, now - asked, None if move in chess.Board().legal_moves
                              else f"bad move {move}")
    except Exception as exc:  # a failed start: what the GUI would report
        results[index] = (uciok, None, None, f"{type(exc).__name__}: {exc}")


def one_run(command: list[str], engines: int, load: int, warm: bool) -> list:
    """One run: a fresh cache (warmed first with --warm), the load, the engines at once."""
    with tempfile.TemporaryDirectory(prefix="garfish-first-start-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        if warm:
            subprocess.run([sys.executable, "-c", "from garfish.engine.services.warmup import load_kernels; load_kernels()"],
                           env=env, check=True, timeout=900)
        burners = [multiprocessing.Process(target=burn, daemon=True) for _ in range(load)]
        for burner in burners:
            burner.start()
        try:
            results: list = [None] * engines
            threads = [threading.Thread(target=first_move, args=(command, env, results, i)) for i in range(engines)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            for burner in burners:
                burner.kill()
            end_compilers(cache)
        return results


def end_compilers(cache: str) -> None:
    """End the compile processes the run's engines left behind (an engine that quits while its
    kernels compile lets them finish, for its next start; here they would slow the next run)."""
    marker = f"NUMBA_CACHE_DIR={cache}".encode()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/environ", "rb") as environ:
                    if marker in environ.read().split(b"\0"):
                        os.kill(int(entry), 9)
            except OSError:
                continue


def seconds(value: Optional[float]) -> str:
    """A time for the report: two decimals, or '-' for none."""
    return "-" if value is None else f"{value:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engines", type=int, default=1, help="engines started at once (default 1)")
    parser.add_argument("--load", type=int, default=0, help="CPU-bound processes beside them (default 0)")
    parser.add_argument("--runs", type=int, default=3, help="runs (default 3)")
    parser.add_argument("--warm", action="store_true", help="a later start: the cache filled first")
    parser.add_argument("command", nargs="*", help="engine command (default: this Python's -P -m garfish.uci)")
    args = parser.parse_args()
    command = args.command or [sys.executable, "-P", "-m", "garfish.uci"]
    worst_uciok, worst_move, worst_play, failures = 0.0, 0.0, 0.0, 0
    for run in range(1, args.runs + 1):
        for index, (uciok, moved, played, error) in enumerate(one_run(command, args.engines, args.load, args.warm),
                                                              1):
            print(f"run {run} engine {index}: uciok {seconds(uciok)} s, move {seconds(moved)} s "
                  f"(play {seconds(played)} s)" + (f", FAILED: {error}" if error else ""), flush=True)
            worst_uciok = max(worst_uciok, uciok or 0.0)
            worst_move = max(worst_move, moved or 0.0)
            worst_play = max(worst_play, played or 0.0)
            failures += error is not None
    print(f"{args.engines} engine(s) at once, {args.load} busy process(es) beside, "
          f"{'warm' if args.warm else 'cold'} cache, {args.runs} runs: worst uciok {worst_uciok:.2f} s, "
          f"worst first move {worst_move:.2f} s (play {worst_play:.2f} s), {failures} failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
