"""How long Garfish takes to answer `stop` with `bestmove`, at several Threads settings.

    python scripts/stop_latency.py [--threads 1 2 8 16] [--positions 8] [--think 1.0] [--engine CMD]

For each Threads setting an engine is started and given its helpers; then for each of the first
--positions bench positions it gets `position` and `go infinite`, thinks --think seconds, and gets
`stop`: the time from writing `stop` to reading `bestmove` is the latency (the UCI limit GUIs
expect is 100 ms). Prints each latency, then per setting the median and the worst. More threads
than cores is the hard case: the main process then competes with its helpers for a core.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
READY_WAIT = 5.0  # seconds given to the helper processes to start
ANSWER_TIMEOUT = 30.0


class Engine:
    """A UCI engine on raw pipes (so that the stop is written and the answer read without a client in between)."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def wait_for(self, prefix: str) -> str:
        """The first line starting with prefix (exits if the engine ends first)."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + ANSWER_TIMEOUT
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit("the engine exited")
            if line.startswith(prefix):
                return line
        raise SystemExit(f"no '{prefix}' within {ANSWER_TIMEOUT} s")

    def quit(self) -> None:
        self.send("quit")
        self.process.wait(ANSWER_TIMEOUT)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2, 8, 16], help="Threads settings")
    parser.add_argument("--positions", type=int, default=8, help="bench positions used (default 8)")
    parser.add_argument("--think", type=float, default=1.0, help="seconds of search before stop (default 1)")
    parser.add_argument("--engine", default=str(ROOT / "garfish"), help="engine command (default ./garfish)")
    args = parser.parse_args()
    from garfish.engine.services.bench import BENCH_FENS

    fens = list(BENCH_FENS)[:args.positions]
    results = {}
    for threads in args.threads:
        engine = Engine(shlex.split(args.engine))
        try:
            engine.send("uci")
            engine.wait_for("uciok")
            engine.send(f"setoption name Threads value {threads}")
            engine.send("isready")
            engine.wait_for("readyok")
            time.sleep(READY_WAIT)
            latencies = []
            for index, fen in enumerate(fens):
                engine.send("ucinewgame")
                engine.send(f"position fen {fen}")
                engine.send("isready")
                engine.wait_for("readyok")
                engine.send("go infinite")
                time.sleep(args.think)
                started = time.perf_counter()
                engine.send("stop")
                answer = engine.wait_for("bestmove")
                latency = (time.perf_counter() - started) * 1000
                latencies.append(latency)
                print(f"Threads {threads} position {index + 1}: {answer.split()[1]} after {latency:.1f} ms",
                      flush=True)
        finally:
            engine.quit()
        results[threads] = latencies
    for threads, latencies in results.items():
        print(f"Threads {threads}: stop -> bestmove median {statistics.median(latencies):.1f} ms, "
              f"worst {max(latencies):.1f} ms over {len(latencies)} searches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
