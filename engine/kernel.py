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
processes.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional

from numba import config, njit


def numba_cache_dir(package: Path, env: Mapping[str, str], uid: int) -> Optional[str]:
    """Where Numba should cache compiled kernels, or None to keep its default.

    Numba caches beside the sources when it can write there (an editable or
    user install), else in ~/.cache/numba; with neither writable (a read-only
    install run by a user without a home) it cannot cache and fails. So when
    the package folder is read-only, choose a writable folder ourselves.
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


# A read-only install caches in a writable folder: set in Numba's config, which its cache reads
# when each @kernel of the kernel modules is decorated (os.environ is left alone).
_cache_dir = numba_cache_dir(Path(__file__).resolve().parent, os.environ,
                             os.getuid() if hasattr(os, "getuid") else 0)
if _cache_dir is not None:
    # Numba makes its settings at run time (numba.core.config.reload_config): no type checker sees them.
    setattr(config, "CACHE_DIR", _cache_dir)


def kernel(*args: Any, allocates: bool = False, **options: Any) -> Any:
    """Compile a kernel: `@kernel`, or `@kernel(signature, nogil=..., allocates=...)` (module docstring)."""
    # `_nrt` is Numba's own option (numba.core.options), which its type stubs do not list: passed through a dict
    settings: dict[str, Any] = {"cache": True, "_nrt": allocates, **options}
    if len(args) == 1 and callable(args[0]) and not options and not allocates:
        return njit(**settings)(args[0])
    return njit(*args, **settings)
