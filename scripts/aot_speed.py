"""What an ahead-of-time compiled search would give: the search's pure-Python modules compiled by
Cython, against the same code interpreted, `bench` nodes per second in alternating runs.

    python scripts/aot_speed.py [REV] [--runs 5] [--cythonize PATH] [--modules search,movepick,...]

Both sides are REV (default: the working tree) installed into folders of their own as scripts/ab.py
does; in side B the modules named (default: the search, the move picker, the board and the
histories: every hot module without Numba kernels, which Cython cannot compile) are compiled in
place with `cythonize -i -3` (Cython installed in any environment: give its `cythonize`), so
that Python imports the extension modules before the sources. The code is unchanged (no type
declarations): this measures compiling the search as it is. Prints each pair and the median
ratio B/A (above 1: compiled is faster); the node counts must be equal (the same tree).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ab import build, run_bench  # noqa: E402  (the sibling script)

MODULES = "search,movepick,board,history"


def main(argv: Optional[list[str]] = None) -> int:
    """Build both sides, compile side B's modules, alternate the benches and print the ratios."""
    parser = argparse.ArgumentParser(prog="aot_speed.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", nargs="?", default=".", help="the revision (default: the working tree)")
    parser.add_argument("--runs", type=int, default=5, help="pairs of bench runs (default 5)")
    parser.add_argument("--cythonize", default=shutil.which("cythonize") or "cythonize",
                        help="the cythonize command (default: the one on PATH)")
    parser.add_argument("--modules", default=MODULES, help=f"garfish.engine modules to compile (default {MODULES})")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="garfish-aot-") as tmp:
        work = Path(tmp)
        plain = build("A", args.rev, work)
        compiled = build("B", args.rev, work)
        engine = compiled.site / "garfish" / "engine"
        sources = [f"{name}.py" for name in args.modules.split(",")]
        started = time.perf_counter()
        subprocess.run([args.cythonize, "-i", "-3", *sources], cwd=engine, check=True, capture_output=True)
        print(f"A = {args.rev} interpreted, B = {args.rev} with {', '.join(sources)} compiled by Cython "
              f"({time.perf_counter() - started:.0f} s to compile); {args.runs} pairs, alternating; "
              f"{time.strftime('%Y-%m-%d %H:%M')}", flush=True)
        for side in (plain, compiled):
            run_bench(side, 1)  # compile and cache the Numba kernels, untimed
        ratios = []
        nodes = set()
        for i in range(args.runs):
            ra, rb = run_bench(plain, None), run_bench(compiled, None)
            nodes.update((ra.nodes, rb.nodes))
            ratios.append(rb.nps / ra.nps)
            print(f"pair {i + 1}: interpreted {ra.nps} nps, compiled {rb.nps} nps: B/A {ratios[-1]:.3f}", flush=True)
        print(f"nodes: {sorted(nodes)} ({'same tree' if len(nodes) == 1 else 'DIFFERENT trees'})")
        print(f"compiled/interpreted nodes per second: median {statistics.median(ratios):.3f} "
              f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
