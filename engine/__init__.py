"""Garfish's engine: search, evaluation, transposition table. Knows nothing of UCI.

    >>> import chess
    >>> from garfish.engine import Engine, Limits
    >>> result = Engine().search(chess.Board(), Limits(depth=4))

Names are imported lazily, so `import garfish.engine` alone does not load Numba.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Engine", "EngineError", "Searcher", "SearchResult", "SearchInfo", "Limits", "evaluate", "run_bench"]

_LOCATIONS = {
    "Engine": "garfish.engine.engine",
    "EngineError": "garfish.engine.engine",
    "Searcher": "garfish.engine.search",
    "SearchResult": "garfish.engine.search",
    "SearchInfo": "garfish.engine.search",
    "Limits": "garfish.engine.types",
    "evaluate": "garfish.engine.evaluate",
    "run_bench": "garfish.engine.bench",
}


def __getattr__(name: str) -> Any:
    """Import the public names on first use."""
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
