"""Garfish's engine: search, evaluation, transposition table. Knows nothing of UCI.

    >>> import chess
    >>> from garfish.engine import Engine, Limits
    >>> result = Engine().search(chess.Board(), Limits(depth=4))

Names are imported lazily, so `import garfish.engine` alone does not load Numba.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from typing import Any, Optional

__all__ = ["Engine", "EngineError", "Searcher", "SearchResult", "SearchInfo", "Limits", "TranspositionTable",
           "evaluate", "load_evaluator", "run_bench"]

_LOCATIONS = {
    "Engine": "garfish.engine.engine",
    "EngineError": "garfish.engine.engine",
    "Searcher": "garfish.engine.search.driver",
    "SearchResult": "garfish.engine.search.driver",
    "SearchInfo": "garfish.engine.search.driver",
    "Limits": "garfish.engine.types",
    "TranspositionTable": "garfish.engine.search.tt",
    "evaluate": "garfish.engine.evaluation.classic",
    "load_evaluator": "garfish.engine.evaluation.evalfile",
    "run_bench": "garfish.engine.services.bench",
}

# The modules of 0.2.0's flat engine/ and where they live now (0.3.0 put engine/ in parts): importing
# an old name still works, with a DeprecationWarning, until 0.4.0 (tests/test_imports.py imports each).
# 0.2.0's engine/board.py (now board/searchboard.py) is not among them: the name is the board/ package's.
MOVED = {
    "bits": "board.bits", "moves": "board.moves", "zobrist": "board.zobrist", "flags": "board.flags",
    "checks": "board.checks", "see": "board.see", "captures": "board.captures",
    "evaluate": "evaluation.classic", "network": "evaluation.network", "nnue": "evaluation.nnue",
    "evalfile": "evaluation.evalfile", "wdl": "evaluation.wdl", "tree": "search.tree", "qsearch": "search.qsearch",
    "tt": "search.tt", "history": "search.history", "timeman": "search.timeman", "smp": "services.smp",
    "warmup": "services.warmup", "quick": "services.quick", "book": "services.book", "syzygy": "services.syzygy",
    "skill": "search.skill", "bench": "services.bench",
}


class _OldName(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds garfish.engine.OLD for a module that moved (MOVED): a module that mirrors the new one's
    names, made with a DeprecationWarning that says where it went."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Optional[importlib.machinery.ModuleSpec]:
        """A spec for an old module name, else None (the other finders go on)."""
        prefix, _, name = fullname.rpartition(".")
        if prefix != __name__ or name not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def exec_module(self, module: types.ModuleType) -> None:
        """Fill the old name's module with the new module's names."""
        new = f"{__name__}.{MOVED[module.__name__.rpartition('.')[2]]}"
        warnings.warn(f"{module.__name__} is now {new}", DeprecationWarning, stacklevel=2)
        target = importlib.import_module(new)
        module.__dict__.update({key: value for key, value in vars(target).items() if not key.startswith("__")})


sys.meta_path.append(_OldName())


def __getattr__(name: str) -> Any:
    """Import the public names on first use."""
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
