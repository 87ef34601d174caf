"""Where Numba caches the compiled kernels: chosen before any kernel is compiled, without compiling any.

Imported by engine.board.bits (which every kernel module imports first) and by engine.services.warmup, which must
find the cache without compiling anything: a first start decides from it whether to compile the
kernels in child processes.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Mapping, Optional

from numba import config


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
# when each @njit of the kernel modules is decorated (os.environ is left alone).
_cache_dir = numba_cache_dir(Path(__file__).resolve().parent, os.environ,
                             os.getuid() if hasattr(os, "getuid") else 0)
if _cache_dir is not None:
    # Numba makes its settings at run time (numba.core.config.reload_config): no type checker sees them.
    setattr(config, "CACHE_DIR", _cache_dir)
