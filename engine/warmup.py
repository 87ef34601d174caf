"""The first start: Numba compiles the kernels in two processes at once, so that it fits a client's timeout.

Importing the engine compiles its Numba kernels (explicit signatures, `cache=True`): about 8 s of
CPU on the project's 2-core machine when nothing is cached (twice that on one half as fast), against
python-chess's 10 s and Cute Chess's 15 s wait for `readyok`; later starts load them from the cache
in a fraction of a second. Each kernel is compiled once (tests/test_warmup.py): Numba compiles a
callee again for every literal argument, so constant arguments are passed as int64 values. On a
first start, `load_kernels` has a second Python process compile the evaluation's kernels (engine.evaluate and
engine.nnue, about half the work) into the cache while this one compiles the search's (checks,
SEE, Zobrist, the capture lists, the TT's store); it then imports the evaluation's from the cache
and compiles the quiescence search (engine.qsearch), which calls both.
With the cache warm it does what an import does; a cache left by other sources (an upgrade keeps
the old version's files) counts as cold, as Numba compiles everything again for it. This module
imports no kernel itself.
"""

from __future__ import annotations

import glob
import os
import pickle
import subprocess
import sys
from types import SimpleNamespace
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from numba.core.caching import _CacheLocator

EVALUATION_MODULES = ("garfish.engine.evaluate", "garfish.engine.nnue")  # compiled by the second process
SEARCH_MODULES = ("garfish.engine.checks", "garfish.engine.see", "garfish.engine.zobrist",  # ... and this one
                  "garfish.engine.captures", "garfish.engine.tt")
# ... and then this one the quiescence search, which calls the kernels of both
QUIESCENCE_MODULES = ("garfish.engine.qsearch",)
PROBE_KERNEL = "nnue.network_update_kernel"  # its index file in Numba's cache says the cache is warm
HELPER_TIMEOUT = 300.0  # seconds the second process may take before this one compiles on its own


def _locator(source: str) -> Optional[_CacheLocator]:
    """Numba's cache locator for the module file `source` (its own choice of NUMBA_CACHE_DIR, the
    __pycache__ beside the source, or the user-wide cache), or None."""
    from numba.core import caching

    import garfish.engine.bits  # noqa: F401 (it chooses a writable cache folder for a read-only install)

    stand_in = SimpleNamespace(__code__=SimpleNamespace(co_firstlineno=1))  # the locators read only this
    for locator_class in (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator,
                          caching.UserWideCacheLocator):
        locator = locator_class.from_function(stand_in, source)
        if locator is not None:
            return locator
    return None


def _fresh_index(path: str, stamp: object) -> bool:
    """Whether the Numba cache index at path was written by this Numba for the source as it is
    now (its stamp, Numba's own from the locator: a hash of the source's content). An index left by another version
    of the engine (an upgrade keeps the old cache files beside the new sources) is not fresh:
    Numba would compile everything again, so the start must be taken as a first one."""
    import numba

    try:
        with open(path, "rb") as index:
            if pickle.load(index) != numba.__version__:
                return False
            found, _ = pickle.loads(index.read())
    except Exception:  # unreadable or of another format: not a cache this Numba would use
        return False
    return found == stamp


def kernels_cached() -> bool:
    """Whether the network's kernels are in the cache, fresh for the sources as they are now."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nnue.py")
    try:
        locator = _locator(source)
        if locator is None:
            return True
        folder, stamp = str(locator.get_cache_path()), locator.get_source_stamp()
    except Exception:  # Numba's locators are internal: when they change, take the plain path
        return True
    return any(_fresh_index(path, stamp)
               for path in glob.glob(os.path.join(glob.escape(folder), f"{PROBE_KERNEL}-*.nbi")))


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
    for name in EVALUATION_MODULES + QUIESCENCE_MODULES:
        __import__(name)
