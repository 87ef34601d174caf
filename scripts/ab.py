"""A/B speed test of two Garfish revisions: `bench` nodes per second, paired runs.

    python scripts/ab.py REV_A REV_B [--runs 5] [--depth 6] [--concurrent] [--args-a ARGS] [--args-b ARGS]
        [--python-a PYTHON] [--python-b PYTHON]

REV is anything `git rev-parse` accepts (a commit, a branch, HEAD~1), or `.` for
the working tree as it is now (uncommitted edits included). Each side is built
from the repository into its own folder (pip install --target, no
dependencies: the running interpreter's chess/numba/numpy are used), its Numba
kernels are compiled once untimed, then the two `bench` runs alternate
A, B, A, B ... (or, with --concurrent, A and B run at the same time, one per
core, swapping cores each round). The ratio is taken pair by pair, so a drift in
the machine's speed during the test hits both sides alike; the median pair
ratio is the figure to quote. Node counts are compared too: equal counts mean
the same tree, which a "no functional change" commit must keep. --args-a and --args-b add
`bench` arguments to one side, so that one revision can be timed against itself with another
setting: `ab.py . . --args-b="--evalfile <classic>"` times the default network against the
hand-written evaluation, and `--args-a="--evalfile /abs/path/nn-....gfnn"` (a path from the root:
the bench runs in the side's install folder) another network. --python-a and --python-b run one
side under another interpreter (one with chess, numba and numpy installed, e.g. a venv made with
CPython 3.13 and `pip install .`): `ab.py . . --python-a /path/venv-3.13/bin/python` times the same
code under 3.13 against this interpreter.

Run it with the project's interpreter, e.g. `.venv/bin/python scripts/ab.py HEAD~1 HEAD`.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parent.parent
NODES_RE = re.compile(r"Nodes searched\s*:\s*(\d+)")
NPS_RE = re.compile(r"Nodes/second\s*:\s*(\d+)")
TIME_RE = re.compile(r"Total time \(ms\)\s*:\s*(\d+)")


@dataclass
class Side:
    """One revision, built and ready to run."""

    label: str
    rev: str
    site: Path
    module: str  # the UCI entry module: garfish.uci, or uci before the garfish.* layout
    cache: Path
    args: list[str]  # extra `bench` arguments
    python: str  # the interpreter that runs it


@dataclass
class BenchRun:
    """What one bench run printed, plus the CPU time the process used."""

    nodes: int
    nps: int
    seconds: float
    cpu: float


def export_tree(rev: str, dest: Path) -> None:
    """Put the files of a revision (or of the working tree for '.') into dest."""
    dest.mkdir(parents=True)
    if rev == ".":
        files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, check=True,
                               capture_output=True, text=True).stdout.split("\n")
        for name in filter(None, files):
            source = REPO / name
            if source.is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest / name)
        return
    archive = subprocess.run(["git", "archive", "--format=tar", rev], cwd=REPO, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def build(label: str, rev: str, work: Path, args: Optional[list[str]] = None, python: Optional[str] = None) -> Side:
    """Install one revision into a folder of its own, without dependencies (by this interpreter's
    pip: the files are pure Python), to be run by `python` (default: this interpreter)."""
    python = python or sys.executable
    source = work / f"src-{label}"
    site = work / f"site-{label}"
    export_tree(rev, source)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                    "--no-build-isolation", "--target", str(site), str(source)], check=True)
    module = "garfish.uci" if (site / "garfish" / "uci").is_dir() else "uci"
    cache = work / f"numba-{label}"
    cache.mkdir()
    return Side(label, rev, site, module, cache, args or [], python)


def run_bench(side: Side, depth: Optional[int], cpu: Optional[int] = None) -> BenchRun:
    """Run `bench` of one side in a child process and parse its totals."""
    env = dict(os.environ, PYTHONPATH=str(side.site), NUMBA_CACHE_DIR=str(side.cache))
    command = [side.python, "-P", "-m", side.module, "bench"] + ([str(depth)] if depth else []) + side.args
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        command = ["taskset", "-c", str(cpu)] + command if shutil.which("taskset") else command
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=side.site)
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()  # bench prints a few kB: neither pipe can fill while the other is read
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)  # reap it here, to read its CPU time
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu_seconds = usage.ru_utime + usage.ru_stime
    if proc.returncode != 0:
        raise SystemExit(f"ab: bench of {side.label} ({side.rev}) failed:\n{err}")
    nodes, nps, ms = NODES_RE.search(out), NPS_RE.search(out), TIME_RE.search(out)
    if not (nodes and nps and ms):
        raise SystemExit(f"ab: no bench totals in the output of {side.label} ({side.rev}):\n{out}")
    return BenchRun(int(nodes.group(1)), int(nps.group(1)), int(ms.group(1)) / 1000.0, cpu_seconds)


def interpreter(python: str) -> str:
    """The interpreter's implementation and version, e.g. 'CPython 3.11.7'."""
    return subprocess.run([python, "-c", "import platform; print(platform.python_implementation(), "
                           "platform.python_version())"], check=True, capture_output=True, text=True).stdout.strip()


def run_pair(a: Side, b: Side, depth: Optional[int], concurrent: bool, swap: bool) -> tuple[BenchRun, BenchRun]:
    """One A run and one B run, in turn or at the same time on two cores."""
    if not concurrent:
        return run_bench(a, depth), run_bench(b, depth)
    from concurrent.futures import ThreadPoolExecutor

    cores = (1, 0) if swap else (0, 1)
    with ThreadPoolExecutor(2) as pool:
        fa = pool.submit(run_bench, a, depth, cores[0])
        fb = pool.submit(run_bench, b, depth, cores[1])
        return fa.result(), fb.result()


def main(argv: Optional[list[str]] = None) -> int:
    """Build both revisions, run the paired benches, print each pair and the median ratio."""
    parser = argparse.ArgumentParser(prog="ab.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("rev_a", help="revision A (the candidate), or . for the working tree")
    parser.add_argument("rev_b", help="revision B (the baseline), or . for the working tree")
    parser.add_argument("--runs", type=int, default=5, help="pairs of bench runs (default 5)")
    parser.add_argument("--depth", type=int, default=None, help="bench depth (default: bench's own)")
    parser.add_argument("--concurrent", action="store_true", help="run A and B at the same time, one per core")
    parser.add_argument("--args-a", default="", help="extra bench arguments for A (one string)")
    parser.add_argument("--args-b", default="", help="extra bench arguments for B (one string)")
    parser.add_argument("--python-a", default=None, help="the interpreter that runs A (default: this one)")
    parser.add_argument("--python-b", default=None, help="the interpreter that runs B (default: this one)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="garfish-ab-") as tmp:
        work = Path(tmp)
        a = build("A", args.rev_a, work, shlex.split(args.args_a), args.python_a)
        b = build("B", args.rev_b, work, shlex.split(args.args_b), args.python_b)
        print(f"A = {' '.join([args.rev_a, *a.args])} ({interpreter(a.python)}), "
              f"B = {' '.join([args.rev_b, *b.args])} ({interpreter(b.python)}); {args.runs} pairs, "
              f"{'concurrent' if args.concurrent else 'alternating'}; {time.strftime('%Y-%m-%d %H:%M')}",
              flush=True)
        for side in (a, b):
            run_bench(side, 1)  # compile and cache the kernels, untimed
        nps_ratios, cpu_ratios = [], []
        nodes_a, nodes_b = set(), set()
        for i in range(args.runs):
            ra, rb = run_pair(a, b, args.depth, args.concurrent, swap=i % 2 == 1)
            nodes_a.add(ra.nodes)
            nodes_b.add(rb.nodes)
            nps_ratios.append(ra.nps / rb.nps)
            cpu_ratios.append(rb.cpu / ra.cpu if ra.cpu else float("nan"))
            print(f"pair {i + 1}: A {ra.nodes} nodes {ra.nps} nps ({ra.cpu:.2f} s CPU), "
                  f"B {rb.nodes} nodes {rb.nps} nps ({rb.cpu:.2f} s CPU): A/B nps {nps_ratios[-1]:.3f}", flush=True)
        same = nodes_a == nodes_b and len(nodes_a) == 1
        print(f"nodes: A {sorted(nodes_a)}, B {sorted(nodes_b)}: {'same tree' if same else 'DIFFERENT trees'}")
        print(f"A/B nodes per second: median {statistics.median(nps_ratios):.3f} "
              f"(min {min(nps_ratios):.3f}, max {max(nps_ratios):.3f})")
        print(f"B/A whole-process CPU time: median {statistics.median(cpu_ratios):.3f} "
              f"(>1: A uses less CPU; includes start-up)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
