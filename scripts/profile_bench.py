"""Where a node's time goes: `garfish bench` under py-spy, a sampling profiler that does not slow the
Python it watches (cProfile inflates every Python call), summed by function.

    python scripts/profile_bench.py [--rate 500] [--top 25] [-- BENCH ARGS ...]

Runs `python -m garfish.uci bench [BENCH ARGS]` under `py-spy record --format raw` (py-spy comes with
the `profile` extra: `pip install -e ".[profile]"`) and prints two Markdown tables of the samples
taken inside the search: by the function on top of the stack ("self": where the time is spent,
python-chess's functions named by their file) and by every function on the stack ("total", a
function counted once per sample however deep its recursion).
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FRAME = re.compile(r"^(?P<name>.+?) \((?P<file>[^():]+)(?::\d+)?\)$")
SEARCH_ROOT = "Searcher.search"  # samples outside it (start-up, printing) are left out


def function_of(frame: str) -> str:
    """'name (file)' of one raw frame, without its line."""
    match = FRAME.match(frame.strip())
    if match is None:
        return frame.strip()
    path = match["file"]
    if "site-packages/" in path:
        path = path.split("site-packages/", 1)[1]
    return f"{match['name']} ({path})"


def main() -> int:
    """Profile the bench and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=int, default=500, help="samples a second")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("bench_args", nargs="*")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        raw = Path(folder) / "bench.raw"
        py_spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
        if py_spy is None:
            sys.exit("py-spy is not installed: pip install -e '.[profile]'")
        subprocess.run([py_spy, "record", "--rate", str(args.rate), "--format", "raw",
                        "--output", str(raw), "--", sys.executable, "-m", "garfish.uci", "bench", *args.bench_args],
                       cwd=str(ROOT), check=True, stdout=subprocess.DEVNULL)
        lines = raw.read_text().splitlines()
    own: collections.Counter = collections.Counter()
    total: collections.Counter = collections.Counter()
    samples = 0
    for line in lines:
        stack, _, count_text = line.rpartition(" ")
        frames = [function_of(frame) for frame in stack.split(";")]
        if not any(frame.startswith(SEARCH_ROOT) for frame in frames):
            continue
        count = int(count_text)
        samples += count
        own[frames[-1]] += count
        for name in set(frames):
            total[name] += count
    for title, counter in (("self", own), ("total", total)):
        print(f"| function | {title} share of the search's {samples} samples |")
        print("|---|---|")
        for name, count in counter.most_common(args.top):
            print(f"| `{name}` | {100 * count / samples:.1f}% |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
