"""arena/ talks to engines over UCI only: no arena module imports garfish.engine, garfish.uci or garfish.perft.

The rule is read from the source with `ast`, so an import anywhere in a module (also one inside a
function, a relative one, or one through importlib) fails the test, whether or not it ever runs.
"""

from __future__ import annotations

import pytest

from importgraph import imported_modules, package_files, package_of

ARENA = "garfish.arena"
FORBIDDEN = ("garfish.engine", "garfish.uci", "garfish.perft")


def forbidden_imports(source: str, package: str = ARENA) -> list[str]:
    """`line: module` for each import of the engine, the protocol or perft."""
    return [f"{line}: {module}" for line, module in imported_modules(source, package)
            if any(module == name or module.startswith(name + ".") for name in FORBIDDEN)]


def test_arena_imports_nothing_of_engine_uci_or_perft() -> None:
    """The rule holds for every arena module."""
    files = package_files(ARENA)
    assert {"driver.py", "epd.py", "game.py", "match.py", "openings.py", "rating.py", "report.py",
            "stats.py"} <= {path.name for path in files.values()}
    problems = {str(path): bad for module, path in files.items()
                if (bad := forbidden_imports(path.read_text(encoding="utf-8"), package_of(module, path)))}
    assert problems == {}


@pytest.mark.parametrize("source", [
    "import garfish.engine.search.driver",
    "import garfish.uci",
    "from garfish.uci.protocol import run_session",
    "from garfish import engine",
    "from garfish import perft as p",
    "from .. import uci",
    "from ..engine import bench",
    "def lazy():\n    from garfish.engine.services.bench import run_bench",
    "import importlib\nimportlib.import_module('garfish.engine.search.driver')",
    "__import__('garfish.uci.protocol')",
])
def test_the_check_catches_a_forbidden_import(source: str) -> None:
    """Each way of importing the engine, the protocol or perft is reported."""
    assert forbidden_imports(source)


@pytest.mark.parametrize("source", [
    "import chess.engine",
    "from garfish.arena import stats",
    "from . import stats",
    "from .driver import EngineProcess",
    "import garfish.engineering",
    "DEFAULT_COMMAND = (sys.executable, '-m', 'garfish.uci')",
])
def test_the_check_allows_other_imports(source: str) -> None:
    """python-chess's chess.engine, arena's own modules and a command line naming garfish.uci are fine."""
    assert forbidden_imports(source) == []
