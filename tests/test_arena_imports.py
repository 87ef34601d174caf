"""arena/ talks to engines over UCI only: no arena module imports garfish.engine, garfish.uci or garfish.perft.

The rule is read from the source with `ast`, so an import anywhere in a module (also one inside a
function, a relative one, or one through importlib) fails the test, whether or not it ever runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import garfish.arena

ARENA = "garfish.arena"
FORBIDDEN = ("garfish.engine", "garfish.uci", "garfish.perft")
DYNAMIC_IMPORTS = ("import_module", "__import__")  # importlib.import_module("x"), __import__("x")


def arena_files() -> list[Path]:
    """Every Python file of the installed garfish.arena package."""
    return sorted(path for folder in garfish.arena.__path__ for path in Path(folder).rglob("*.py"))


def package_of(path: Path) -> str:
    """The dotted package a file of garfish.arena belongs to (for its relative imports)."""
    folder = next(Path(root) for root in garfish.arena.__path__ if Path(root) in path.parents)
    return ".".join((ARENA, *path.parent.relative_to(folder).parts))


def imported_modules(source: str, package: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in the source, `from X import Y` counted as X and X.Y."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(part for part in (*parent, base) if part)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in DYNAMIC_IMPORTS and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value))
    return found


def forbidden_imports(source: str, package: str = ARENA) -> list[str]:
    """`line: module` for each import of the engine, the protocol or perft."""
    return [f"{line}: {module}" for line, module in imported_modules(source, package)
            if any(module == name or module.startswith(name + ".") for name in FORBIDDEN)]


def test_arena_imports_nothing_of_engine_uci_or_perft() -> None:
    """The rule holds for every arena module."""
    files = arena_files()
    assert {"driver.py", "epd.py", "game.py", "match.py", "openings.py", "rating.py", "report.py",
            "stats.py"} <= {path.name for path in files}
    problems = {str(path): bad for path in files
                if (bad := forbidden_imports(path.read_text(encoding="utf-8"), package_of(path)))}
    assert problems == {}


@pytest.mark.parametrize("source", [
    "import garfish.engine.search",
    "import garfish.uci",
    "from garfish.uci.protocol import run_session",
    "from garfish import engine",
    "from garfish import perft as p",
    "from .. import uci",
    "from ..engine import bench",
    "def lazy():\n    from garfish.engine.bench import run_bench",
    "import importlib\nimportlib.import_module('garfish.engine.search')",
    "__import__('garfish.uci.main')",
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
