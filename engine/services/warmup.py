"""The first start: the Numba kernels are compiled in child processes, so that the engine answers at once.

Importing the engine compiles its Numba kernels (explicit signatures, `cache=True`): about 20 s of
CPU on the project's 2-core machine when nothing is cached, against python-chess's 10 s and Cute
Chess's 15 s wait for `readyok`; later starts load them from the cache in a second or two. Each
kernel is compiled once (tests/test_warmup.py): Numba compiles a callee again for every literal
argument, so constant arguments are passed as int64 values.

On a first start (kernels_cached() is False) compile_kernels has child processes do it, never the
engine's own process, whose threads must go on answering the GUI: one compiles the search's kernels
(checks, SEE, Zobrist, the capture lists, the TT's store) while another compiles the evaluation's
(engine/evaluation/classic.py and accumulators.py, about half the work); then one compiles the quiescence search
(engine.search.qsearch) and the compiled search (engine.search.tree), which call both. Numba caches each kernel
as soon as it is compiled, so a start killed half-way leaves what it compiled for the next. Engines that start cold together (a
tournament manager's first round) compile once: the first takes a lock in the cache folder, the
others wait for it and then find the cache warm. load_kernels then imports every module, from the
cache. A cache left by other sources (an upgrade keeps the old version's files) counts as cold, as
Numba compiles everything again for it. This module imports no kernel itself.
"""

from __future__ import annotations

import glob
import os
import pickle
import subprocess
import sys
from types import SimpleNamespace
from typing import IO, TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from numba.core.caching import _CacheLocator

EVALUATION_MODULES = ("garfish.engine.evaluation.classic", "garfish.engine.evaluation.accumulators")  # compiled by one child process ...
SEARCH_MODULES = ("garfish.engine.board.checks", "garfish.engine.board.see", "garfish.engine.board.zobrist",  # ... these by another
                  "garfish.engine.board.captures", "garfish.engine.search.tt")
QUIESCENCE_MODULES = ("garfish.engine.search.qsearch", "garfish.engine.search.tree")  # ... and then these, which call both
# Their index files in Numba's cache, fresh for the sources as they are, say the cache is warm.
PROBE_KERNELS = (("evaluation/accumulators.py", "accumulators.network_update_kernel"), ("search/qsearch.py", "qsearch.quiescence_kernel"),
                 ("search/tree.py", "tree.perft_kernel"))
ENGINE_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # engine/, whose parts hold the kernels
COMPILE_TIMEOUT = 600.0  # seconds a child process may take before this one compiles on its own
LOCK_NAME = "garfish-compile.lock"  # in the cache folder: one engine compiles at a time


def _locator(source: str) -> Optional[_CacheLocator]:
    """Numba's cache locator for the module file `source` (its own choice of NUMBA_CACHE_DIR, the
    __pycache__ beside the source, or the user-wide cache), or None."""
    from numba.core import caching

    import garfish.engine.kernel  # noqa: F401 (it chooses a writable cache folder for a read-only install)

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
    """Whether the kernels are in the cache, fresh for the sources as they are now (both the
    network's and the quiescence search's, the last compiled)."""
    for source_name, kernel in PROBE_KERNELS:
        try:
            locator = _locator(os.path.join(ENGINE_FOLDER, source_name))
            if locator is None:
                return True
            cache, stamp = str(locator.get_cache_path()), locator.get_source_stamp()
        except Exception:  # Numba's locators are internal: when they change, take the plain path
            return True
        if not any(_fresh_index(path, stamp) for path in glob.glob(os.path.join(glob.escape(cache), f"{kernel}-*.nbi"))):
            return False
    return True


def _compile_lock() -> Optional[IO[bytes]]:
    """Hold the compile lock of the cache folder (blocking until the engine holding it is done);
    the open lock file, to close when done, or None where there is no such lock (no fcntl, no
    writable cache folder)."""
    try:
        import fcntl
    except ImportError:
        return None
    try:
        locator = _locator(os.path.join(ENGINE_FOLDER, "evaluation", "accumulators.py"))
        if locator is None:
            return None
        locator.ensure_cache_path()
        handle = open(os.path.join(str(locator.get_cache_path()), LOCK_NAME), "ab")
    except Exception:  # no cache folder to lock in: each engine compiles for itself
        return None
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    return handle


def _run_children(groups: tuple[tuple[str, ...], ...]) -> bool:
    """Import each group of modules in a child process of its own, all at once; whether they all
    finished well within COMPILE_TIMEOUT (a child that fails or hangs is ended)."""
    children = []
    for modules in groups:
        code = "; ".join(f"import {name}" for name in modules)
        try:
            children.append(subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        except OSError:
            return False
    good = True
    for child in children:
        try:
            good = child.wait(COMPILE_TIMEOUT) == 0 and good
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            good = False
    return good


def compile_kernels() -> None:
    """Fill the cache with every kernel, compiled in child processes (see the module's
    description); a no-op when another engine did it while this one waited for the lock. What a
    child could not compile, the import in this process compiles."""
    lock = _compile_lock()
    try:
        if kernels_cached():
            return
        if _run_children((SEARCH_MODULES, EVALUATION_MODULES)):
            _run_children((QUIESCENCE_MODULES,))
    finally:
        if lock is not None:
            lock.close()


def import_kernels() -> None:
    """Import the kernel modules (from the cache when it is warm, else compiling here)."""
    for name in SEARCH_MODULES + EVALUATION_MODULES + QUIESCENCE_MODULES:
        __import__(name)


def load_kernels() -> None:
    """Import the kernel modules: from the cache, compiled first in child processes when it is cold."""
    if not kernels_cached():
        compile_kernels()
    import_kernels()
