"""Imports read from the source with `ast`: who imports what, and the circles among modules.

An import anywhere in a file counts (at the top, inside a function, a relative one, or one through
`importlib.import_module("x")` / `__import__("x")` with a literal name), whether or not it ever runs:
a lazy import is still an arrow. Used by tests/test_arena_imports.py and tests/test_imports.py.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterable, Mapping
from pathlib import Path

DYNAMIC_IMPORTS = ("import_module", "__import__")  # importlib.import_module("x"), __import__("x")


def package_files(package: str) -> dict[str, Path]:
    """Every module of an installed package (its subpackages too), by dotted name, and its file."""
    folders = [Path(folder) for folder in importlib.import_module(package).__path__]
    modules = {}
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join((package, *parts))] = path
    return modules


def package_of(module: str, path: Path) -> str:
    """The dotted package a module's relative imports start from (a package's own name for its __init__)."""
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


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


def imported_known(source: str, package: str, known: Iterable[str]) -> set[str]:
    """The known modules a source imports, each name resolved to the deepest known module it designates.

    `from garfish.arena import stats` designates garfish.arena.stats; `from garfish.engine import
    Searcher` designates garfish.engine (its __init__), since Searcher is not a module.
    """
    names = set(known)
    found = set()
    for _, name in imported_modules(source, package):
        parts = name.split(".")
        target = next((prefix for end in range(len(parts), 0, -1)
                       if (prefix := ".".join(parts[:end])) in names), None)
        if target is not None:
            found.add(target)
    return found


def import_graph(sources: Mapping[str, tuple[str, str]]) -> dict[str, set[str]]:
    """Module -> the modules (among `sources`) it imports; `sources` maps a module to (its source, its package)."""
    return {module: imported_known(source, package, sources) - {module}
            for module, (source, package) in sources.items()}


def installed_sources(packages: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Module -> (source, package for relative imports) for every module of the installed packages."""
    return {module: (path.read_text(encoding="utf-8"), package_of(module, path))
            for package in packages for module, path in package_files(package).items()}


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The import circles: each strongly connected component of more than one module, sorted (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        """Tarjan's step: number the node, visit what it imports, pop a component at its root."""
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for child in graph.get(node, ()):
            if child not in index:
                visit(child)
                low[node] = min(low[node], low[child])
            elif child in on_stack:
                low[node] = min(low[node], index[child])
        if low[node] == index[node]:
            component = []
            while (member := stack.pop()) != node:
                on_stack.discard(member)
                component.append(member)
            on_stack.discard(node)
            component.append(node)
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)
