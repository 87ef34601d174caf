"""The search: the driver in Python (driver: iterative deepening, aspiration windows, MultiPV, the clock),
below the root one compiled search (tree: every node, its move picker, make and draws), the
quiescence search (qsearch), the transposition table (tt), the history and killers (history) and the
time manager (timeman), the strength limit (skill).

The driver's public names are kept here too, imported on first use: `from garfish.engine.search import
Searcher` (importing a part of the search, say its time manager, loads no kernel).
"""

from __future__ import annotations

from typing import Any

__all__ = ["SearchInfo", "SearchResult", "Searcher", "StopFlag"]


def __getattr__(name: str) -> Any:
    """The driver's public names on first use."""
    if name not in __all__:
        raise AttributeError(f"module 'garfish.engine.search' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module("garfish.engine.search.driver"), name)
