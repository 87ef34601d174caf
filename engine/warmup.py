"""The first start: Numba compiles the kernels in two processes at once, so that it fits a client's timeout.

Importing the engine compiles its Numba kernels (explicit signatures, `cache=True`): about 8 s of
CPU on the project's 2-core machine when nothing is cached (twice that on one half as fast), against
python-chess's 10 s and Cute Chess's 15 s wait for `readyok`; later starts load them from the cache
in a fraction of a second. Each kernel is compiled once (tests/test_warmup.py): Numba compiles a
callee again for every literal argument, so constant arguments are passed as int64 values. On a
first start, `load_kernels` has a second Python process compile the evaluation's kernels (engine.evaluate and
engine.nnue, about half the work) into the cache while this one compiles the search's (checks,
SEE, Zobrist, the capture lists, the TT's store); it then imports the evaluation's from the cache.
With the cache warm it does what an import does. This module imports no kernel itself.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from types import SimpleNamespace
from typing import Optional

EVALUATION_MODULES = ("garfish.engine.evaluate", "garfish.engine.nnue")  # compiled by the second process
SEARCH_MODULES = ("garfish.engine.checks", "garfish.engine.see", "garfish.engine.zobrist",  # ... and this one
                  "garfish.engine.captures", "garfish.engine.tt")
PROBE_KERNEL = "nnue.network_update_kernel"  # its index file in Numba's cache says the cache is warm
HELPER_TIMEOUT = 300.0  # seconds the second process may take before this one compiles on its own


def cache_folder(source: str) -> Optional[str]:
    """The folder where Numba caches the kernels of the module file `source` (its own choice of
    NUMBA_CACHE_DIR, the __pycache__ beside the source, or the user-wide cache), or None."""
    from numba.core import caching

    import garfish.engine.bits  # noqa: F401 (it chooses a writable cache folder for a read-only install)

    stand_in = SimpleNamespace(__code__=SimpleNamespace(co_firstlineno=1))  # the locators read only this
    for locator_class in (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator,
                          caching.UserWideCacheLocator):
        locator = locator_class.from_function(stand_in, source)
        if locator is not None:
            return str(locator.get_cache_path())
    return None


def kernels_cached() -> bool:
    """Whether the network's kernels have been compiled into the cache before (the cache may still
    be stale; Numba then compiles, as on any start)."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nnue.py")
    try:
        folder = cache_folder(source)
    except Exception:  # Numba's locators are internal: when they change, take the plain path
        return True
    return folder is None or bool(glob.glob(os.path.join(glob.escape(folder), f"{PROBE_KERNEL}-*.nbi")))


def load_kernels() -> None:
    """Import the kernel modules: from the cache, or compiled in two processes when nothing is cached."""
    helper = None
    if not kernels_cached():
        code = "; ".join(f"import {name}" for name in EVALUATION_MODULES)
        try:
            helper = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:
            helper = None  # no second process: compile everything here
    for name in SEARCH_MODULES:
        __import__(name)
    if helper is not None:
        try:
            helper.wait(HELPER_TIMEOUT)
        except subprocess.TimeoutExpired:
            helper.kill()
            helper.wait()
    for name in EVALUATION_MODULES:
        __import__(name)
