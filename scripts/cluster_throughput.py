"""Games per minute of one `garfish match`, run locally and through a Dask cluster on the same machine.

    python scripts/cluster_throughput.py [--workers 2] [--games 40] [--tc 2+0.05] [--rounds 1] [--openings FILE]

Starts a `dask scheduler` and --workers `dask worker` processes (one thread each) on 127.0.0.1,
then plays the same match (Garfish against Garfish, --games games from --openings, seed 1717)
with `--concurrency W` locally and with `--cluster ADDRESS`, alternating for --rounds rounds. The wall time of each run includes starting the engines (and, for the cluster, the
client's connection), as a user would see it; games per minute and the cluster's time relative
to the local run are printed. Run it with the project's interpreter (`.venv/bin/python`) on an
otherwise idle machine with at least --workers cores.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT.parent / "shared" / "data" / "books" / "noob_3moves.epd"
START_SECONDS = 60.0


def start(command: list[str], log: Path) -> subprocess.Popen:
    """A background process in its own process group."""
    with open(log, "ab") as handle:
        return subprocess.Popen(command, stdout=handle, stderr=handle, stdin=subprocess.DEVNULL,
                                start_new_session=True)


def stop(process: subprocess.Popen) -> None:
    """Kill a background process with its group."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def start_cluster(workers: int, folder: Path) -> tuple[str, list[subprocess.Popen]]:
    """A scheduler and `workers` single-threaded workers on 127.0.0.1: (address, processes)."""
    dask = [sys.executable, "-m", "dask"]
    file = folder / "scheduler.json"
    processes = [start([*dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                        "--scheduler-file", str(file)], folder / "scheduler.log")]
    deadline = time.monotonic() + START_SECONDS
    while not file.exists() or not file.read_text().strip():
        if time.monotonic() > deadline:
            raise SystemExit("the dask scheduler did not start: see " + str(folder / "scheduler.log"))
        time.sleep(0.2)
    address = json.loads(file.read_text())["address"]
    for index in range(workers):
        processes.append(start([*dask, "worker", address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
                                "--host", "127.0.0.1"], folder / f"worker{index}.log"))
    from distributed import Client

    with Client(address, timeout=START_SECONDS) as client:
        client.wait_for_workers(workers, timeout=START_SECONDS)
    return address, processes


def play(games: int, tc: str, book: Path, where: list[str], folder: Path, label: str) -> float:
    """Run one match; its wall time in seconds (exits when the match fails)."""
    report = folder / f"{label}.json"
    command = [sys.executable, "-m", "garfish.uci", "match", "--engine", "name=A", "--engine", "name=B",
               "--tc", tc, "--games", str(games), "--openings", str(book), "--seed", "1717", "--no-progress",
               "--report", str(report), *where]
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{label}: match failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    data = json.loads(report.read_text())
    if data["games"] != games:
        raise SystemExit(f"{label}: {data['games']} games instead of {games}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2, help="worker processes and local concurrency (default 2)")
    parser.add_argument("--games", type=int, default=40, help="games per match (default 40)")
    parser.add_argument("--tc", default="2+0.05", help="time control (default 2+0.05)")
    parser.add_argument("--rounds", type=int, default=1, help="local/cluster runs each, alternating (default 1)")
    parser.add_argument("--openings", type=Path, default=BOOK, help="opening file (default: noob_3moves.epd)")
    args = parser.parse_args()
    if not args.openings.exists():
        raise SystemExit(f"opening file not found: {args.openings}")
    with tempfile.TemporaryDirectory(prefix="garfish-cluster-") as temp:
        folder = Path(temp)
        address, processes = start_cluster(args.workers, folder)
        times: dict[str, list[float]] = {"local": [], "cluster": []}
        try:
            for round_ in range(args.rounds):
                for label, where in (("local", ["--concurrency", str(args.workers)]),
                                     ("cluster", ["--cluster", address])):
                    seconds = play(args.games, args.tc, args.openings, where, folder, f"{label}{round_}")
                    times[label].append(seconds)
                    print(f"round {round_ + 1} {label:>7}: {args.games} games in {seconds:7.1f} s = "
                          f"{60 * args.games / seconds:5.2f} games/min", flush=True)
        finally:
            for process in reversed(processes):
                stop(process)
    local, remote = sum(times["local"]), sum(times["cluster"])
    print(f"local   ({args.workers} slots): {60 * args.games * args.rounds / local:5.2f} games/min")
    print(f"cluster ({args.workers} workers): {60 * args.games * args.rounds / remote:5.2f} games/min; "
          f"wall time {remote / local:.3f}x the local run's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
