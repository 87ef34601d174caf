"""The first start compiles the kernels in two processes (engine.services.warmup); later starts load them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

FIRST_START = """
import time
import garfish.engine.services.warmup as warmup
assert not warmup.kernels_cached()
warmup.load_kernels()
assert warmup.kernels_cached()
import garfish.engine.evaluation.accumulators as nnue, garfish.engine.board.checks as checks, garfish.engine.search.tree as tree
# Every kernel was compiled by a child process and loaded from the cache here: this process, whose
# threads answer the GUI, compiled none.
for kernel in (nnue.network_update_kernel, checks.gives_check_kernel, tree.search_kernel):
    assert kernel.stats.cache_hits and not kernel.stats.cache_misses, kernel.stats
# An engine that waited for another's compile (the lock) finds the cache warm and compiles nothing.
start = time.perf_counter()
warmup.compile_kernels()
print(time.perf_counter() - start)
"""


@pytest.mark.slow  # a cold compile of every kernel: minutes
def test_a_first_start_compiles_in_child_processes_and_the_next_loads(tmp_path: Path) -> None:
    """With an empty cache, load_kernels has child processes compile every kernel and loads them from
    the cache; afterwards the cache counts as warm, and compiling again does nothing."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    proc = subprocess.run([sys.executable, "-c", FIRST_START], cwd=str(ROOT), env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    again = subprocess.run([sys.executable, "-c", "import garfish.engine.services.warmup as w; assert w.kernels_cached()"],
                           cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]


COMPILE_ONCE = """
from collections import Counter, defaultdict
from numba.core import event

compiled = Counter()
signatures = defaultdict(set)


class Recorder(event.Listener):
    def on_start(self, ev):
        function = ev.data["dispatcher"].py_func
        if function.__module__.startswith("garfish"):  # not Numba's own overloads (min, max, ...)
            name = function.__module__ + "." + function.__qualname__
            compiled[name] += 1
            signatures[name].add(str(getattr(ev.data["args"][0], "dtype", "")))  # the first argument: acc

    def on_end(self, ev):
        pass


event.register("numba:compile", Recorder())
import garfish.engine.search.driver, garfish.engine.evaluation.nnue  # what the launcher's set-up compiles
# Numba compiles a function with an object-mode block twice, the second time with the block lifted
# out: the compiled search's two ways back to Python (engine.search.callbacks), each a few lines.
OBJECT_MODE = {"garfish.engine.search.callbacks.poll", "garfish.engine.search.callbacks.probe_wdl"}
# The network's accumulator code is compiled once for each accumulator type, int16 and int32 (the
# network's params[NARROW] picks one at run time): two signatures, the accumulator (the first
# argument) int16 in one and int32 in the other.
ACCUMULATOR = {"garfish.engine.evaluation.accumulators." + name for name in ("_accumulate", "_update", "_refresh",
                                                                            "_output")}
twice = {name: count for name, count in compiled.items() if count > (2 if name in OBJECT_MODE | ACCUMULATOR else 1)}
assert not twice, twice
for name in ACCUMULATOR:
    assert signatures[name] == {"int16", "int32"} and compiled[name] == 2, (name, signatures[name])
assert "garfish.engine.evaluation.accumulators.network_update_kernel" in compiled and len(compiled) > 20, compiled
"""


@pytest.mark.slow  # a cold compile of every kernel: minutes
def test_a_first_start_compiles_each_kernel_once(tmp_path: Path) -> None:
    """No Numba function is compiled for two signatures on a first start (but the network's
    accumulator code, once for int16 and once for int32): a literal argument (a colour, a count) or
    a second entry to the same code would compile a callee again, and the compile is what a first
    start waits for (issue 30.3)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    proc = subprocess.run([sys.executable, "-c", COMPILE_ONCE], cwd=str(ROOT), env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]


STALE_CACHE = """
import os, pickle
import numba
import garfish.engine.services.warmup as warmup
here = warmup.ENGINE_FOLDER
probes = [(warmup._locator(os.path.join(here, source)), kernel) for source, kernel in warmup.PROBE_KERNELS]


def write(version, stamp=None, content=None):
    for locator, kernel in probes:
        folder = str(locator.get_cache_path())
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, kernel + "-1.py311.nbi"), "wb") as out:
            if content is not None:
                out.write(content)
            else:
                pickle.dump(version, out)
                out.write(pickle.dumps((stamp if stamp is not None else locator.get_source_stamp(), {})))


assert not warmup.kernels_cached()  # nothing there
write(numba.__version__, (0.0, 0))  # left by another version of the sources (an upgrade)
assert not warmup.kernels_cached()
write("0.1.0")  # written by another Numba
assert not warmup.kernels_cached()
write(None, content=b"not a pickle")
assert not warmup.kernels_cached()
write(numba.__version__)  # fresh: this Numba, these sources
assert warmup.kernels_cached()
"""


def test_a_cache_left_by_other_sources_counts_as_a_first_start(tmp_path: Path) -> None:
    """An upgrade keeps the old version's cache files beside the new sources; Numba compiles all
    again for them, so the start must compile in child processes like any first start."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    proc = subprocess.run([sys.executable, "-c", STALE_CACHE], cwd=str(ROOT), env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
