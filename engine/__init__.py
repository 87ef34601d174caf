"""Garfish's engine: search, evaluation, transposition table. Knows nothing of UCI.

    >>> import chess
    >>> from garfish.engine import Searcher, Limits
    >>> result = Searcher().search(chess.Board(), Limits(depth=4))

Names are imported lazily, so `import garfish.engine` alone does not load Numba.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional

__all__ = ["Searcher", "SearchResult", "SearchInfo", "Limits", "evaluate", "run_bench"]

_LOCATIONS = {
    "Searcher": "garfish.engine.search",
    "SearchResult": "garfish.engine.search",
    "SearchInfo": "garfish.engine.search",
    "Limits": "garfish.engine.types",
    "evaluate": "garfish.engine.evaluate",
    "run_bench": "garfish.engine.bench",
}


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


_cache = numba_cache_dir(Path(__file__).resolve().parent, os.environ, os.getuid() if hasattr(os, "getuid") else 0)
if _cache is not None:
    os.environ["NUMBA_CACHE_DIR"] = _cache


def __getattr__(name: str) -> Any:
    """Import the public names on first use."""
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
