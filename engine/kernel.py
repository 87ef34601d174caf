"""How the engine compiles a kernel: `@kernel` (Numba's njit, cached, without reference counting), and where
Numba caches the compiled kernels (chosen when this module is imported, before any kernel is compiled).

Numba counts the references to every array a compiled function holds: an array argument, a view of one
(`weights[row]`), an array read from a tuple or a NamedTuple (`w.pos`, SearchArrays) each takes a reference
(NRT_incref) and drops it when done (NRT_decref), two calls and two atomic operations. No kernel keeps an
array beyond its call (the Python caller holds every array it passes, and no kernel returns one), so the
counts protect nothing here, and they were 21% of the search's compiled time (`scripts/kernel_profile.py`,
issue 76): a kernel is compiled without them (Numba's `_nrt=False`). A kernel that allocates an array
(np.empty) needs the runtime and says so with `allocates=True`; it may call and be called by the others.

    @kernel                                    # njit(cache=True, _nrt=False)
    @kernel("int64(uint64, ...)", nogil=True)  # a signature (compiled when the module is imported), other options
    @kernel(allocates=True)                    # njit(cache=True): np.empty and the like work in it

Every kernel module imports this one (engine.board.bits first). engine.services.warmup imports it too, to find
the cache without compiling anything: a first start decides from it whether to compile the kernels in child
processes. The cache folder is named by a hash of the kernels' sources (sources_key): Numba checks a cached
function against its own file only, so without it an update of a callee's file alone would leave the
callers running the callee's old code.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional

from numba import config, njit

KERNEL_PARTS = ("board", "evaluation", "search")  # engine/'s folders whose modules hold kernels


def numba_cache_dir(package: Path, env: Mapping[str, str], uid: int) -> Optional[str]:
    """Where a read-only install caches its kernels, or None: when NUMBA_CACHE_DIR is set or the package folder
    is writable (an editable or user install: its __pycache__), or when no folder is writable.

    Numba would cache in ~/.cache/numba when it cannot write beside the sources; with that not writable either
    (a read-only install run by a user without a home) it cannot cache and fails. So when the package folder
    is read-only, choose a writable folder ourselves.
    """
    if env.get("NUMBA_CACHE_DIR"):
        return None
    pycache = package / "__pycache__"
    if os.access(pycache if pycache.exists() else package, os.W_OK):
        return None
    candidates = []
    base = env.get("XDG_CACHE_HOME") or (str(Path(env["HOME"]) / ".cache") if env.get("HOME") else "")
    if base:
        candidates.append(Path(base) / "garfish" / "numba")
    candidates.append(Path(tempfile.gettempdir()) / f"garfish-numba-{uid}")
    for folder in candidates:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=folder):
                pass
            return str(folder)
        except OSError:
            continue
    return None


def sources_key(package: Path) -> str:
    """A hash of the sources every kernel is compiled from: this module, engine/types.py and every module of
    engine/board/, engine/evaluation/ and engine/search/ (package: engine/)."""
    digest = hashlib.sha256()
    files = [package / "kernel.py", package / "types.py"]
    for part in KERNEL_PARTS:
        files += sorted((package / part).glob("*.py"))
    for path in files:
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()[:16]


# The kernels cache in a folder of their own for the sources as they are (kernels-KEY, sources_key): Numba
# checks a cached function against its own file's date only, not against the files of the functions it
# calls and compiled in, so a change to a callee alone (an update that changes accumulators.py but not
# tree.py) would leave the search running the old callee's code. Under NUMBA_CACHE_DIR, or the package's
# __pycache__ (an editable install), or a read-only install's folder (numba_cache_dir). Set in Numba's
# config, which its cache reads when each @kernel is decorated (os.environ is left alone).
_package = Path(__file__).resolve().parent
_root = (os.environ.get("NUMBA_CACHE_DIR")
         or numba_cache_dir(_package, os.environ, os.getuid() if hasattr(os, "getuid") else 0)
         or str(_package / "__pycache__"))
# Numba makes its settings at run time (numba.core.config.reload_config): no type checker sees them.
setattr(config, "CACHE_DIR", os.path.join(_root, f"kernels-{sources_key(_package)}"))


def kernel(*args: Any, allocates: bool = False, **options: Any) -> Any:
    """Compile a kernel: `@kernel`, or `@kernel(signature, nogil=..., allocates=...)` (module docstring)."""
    # `_nrt` is Numba's own option (numba.core.options), which its type stubs do not list: passed through a dict
    settings: dict[str, Any] = {"cache": True, "_nrt": allocates, **options}
    if len(args) == 1 and callable(args[0]) and not options and not allocates:
        return njit(**settings)(args[0])
    return njit(*args, **settings)
