"""Start-up time of a UCI engine: seconds from launch to `uciok` and to `readyok`.

    python scripts/startup.py [--runs 5] [--cold] [-- COMMAND ...]

COMMAND defaults to the `garfish` launcher beside this folder. Each run starts
the engine, sends `uci`, then `isready`, and times both answers from the
launch; `--cold` gives every run an empty NUMBA_CACHE_DIR, so the kernels are
compiled as on a first start (Cute Chess waits 35 s for uciok and 15 s for
readyok). Prints each run and the median.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

LAUNCHER = Path(__file__).resolve().parent.parent / "garfish"


def wait_for(proc: subprocess.Popen, word: str, start: float, timeout: float) -> float:
    """Read lines until one starts with word; seconds since start."""
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the engine exited before '{word}'")
        if line.startswith(word):
            return time.perf_counter() - start
        if time.perf_counter() - start > timeout:
            raise RuntimeError(f"no '{word}' within {timeout} s")


def one_run(command: list[str], cold: bool) -> tuple[float, float]:
    """Launch once; (seconds to uciok, seconds to readyok)."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="garfish-startup-") as cache:
        if cold:
            env["NUMBA_CACHE_DIR"] = cache
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True, bufsize=1, env=env)
        assert proc.stdin is not None
        try:
            proc.stdin.write("uci\n")
            proc.stdin.flush()
            uciok = wait_for(proc, "uciok", start, 60)
            proc.stdin.write("isready\n")
            proc.stdin.flush()
            readyok = wait_for(proc, "readyok", start, 300)
            proc.stdin.write("quit\n")
            proc.stdin.flush()
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
    return uciok, readyok


def main(argv: Optional[list[str]] = None) -> int:
    """Time several starts and print them with the medians."""
    parser = argparse.ArgumentParser(prog="startup.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="starts to time (default 5)")
    parser.add_argument("--cold", action="store_true", help="an empty Numba cache for every start")
    parser.add_argument("command", nargs="*", help="engine command line (default: the garfish launcher)")
    args = parser.parse_args(argv)
    command = args.command or [str(LAUNCHER)]
    uci_times, ready_times = [], []
    for i in range(args.runs):
        uciok, readyok = one_run(command, args.cold)
        uci_times.append(uciok)
        ready_times.append(readyok)
        print(f"run {i + 1}: uciok {uciok:.3f} s, readyok {readyok:.3f} s", flush=True)
    print(f"median: uciok {statistics.median(uci_times):.3f} s, readyok {statistics.median(ready_times):.3f} s "
          f"({'cold' if args.cold else 'warm'} Numba cache)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
