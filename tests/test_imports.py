"""No import circle among Garfish's modules: within each package and across them.

The imports are read from the source with `ast` (tests/importgraph.py), so a lazy import inside a
function, a relative one or one through importlib is an arrow too, whether or not it ever runs.
The modules are the nodes; a circle is a set of modules each reachable from every other.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from garfish.engine import MOVED
from importgraph import cycles, import_graph, installed_sources

ENGINE = "garfish.engine"
PACKAGES = (ENGINE, "garfish.arena", "garfish.train", "garfish.uci", "garfish.perft", "garfish.cli")


def package_of_module(module: str) -> str:
    """The Garfish package a module belongs to."""
    return next(package for package in PACKAGES if module == package or module.startswith(package + "."))


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circle_in_a_package(package: str) -> None:
    """No module of the package imports itself back through the others."""
    assert cycles(import_graph(installed_sources([package]))) == []


def test_no_import_circle_across_packages() -> None:
    """Every circle of the whole graph lies inside one package (the test above judges those)."""
    graph = import_graph(installed_sources(PACKAGES))
    assert {"garfish.arena.suite", "garfish.arena.driver"} <= graph["garfish.arena.epd"]
    assert "garfish.train.trainer" in graph["garfish.train.cli"]  # imported inside main(): still an arrow
    assert [cycle for cycle in cycles(graph) if len({package_of_module(module) for module in cycle}) > 1] == []


# engine/'s parts, top to bottom: an import points down this list (docs/developing.md's layout)
# except for the two that document says why.
PARTS = ("services", "search", "evaluation", "board")
UPWARD = {
    # A SearchBoard is a board that scores its moves with the hand-written evaluation's kernel.
    ("garfish.engine.board.searchboard", "garfish.engine.evaluation.classic"),
    # The driver names the Tablebases the Engine hands it, as a type only.
    ("garfish.engine.search.driver", "garfish.engine.services.syzygy"),
}


def engine_part(module: str) -> int:
    """The module's place in PARTS, or -1 for engine/'s top (engine.py, types.py, kernel.py)."""
    name = module[len(ENGINE) + 1:].split(".")[0]
    return PARTS.index(name) if name in PARTS else -1


def test_engine_imports_point_down_its_parts_in_at_most_ten_layers() -> None:
    """services -> search -> evaluation -> board, no import back up but the two documented; and the
    longest import chain inside engine/ (Engine to kernel) is ten modules, one fewer than the
    flat engine/ of 0.2.0 had (eleven)."""
    graph = import_graph(installed_sources([ENGINE]))
    inside = {module: {target for target in targets if target.startswith(ENGINE + ".")}
              for module, targets in graph.items()}
    upward = {(module, target) for module, targets in inside.items() for target in targets
              if -1 < engine_part(target) < engine_part(module)}
    assert upward == UPWARD

    def depth(module: str, seen: tuple[str, ...] = ()) -> int:
        return 1 + max((depth(target, (*seen, module)) for target in inside.get(module, ()) if target not in seen),
                       default=0)

    assert depth("garfish.engine.engine") == max(depth(module) for module in inside) == 10


def sources(modules: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Synthetic modules of a package `p` (or its subpackage), as installed_sources gives them."""
    return {module: (source, module.rpartition(".")[0]) for module, source in modules.items()}


@pytest.mark.parametrize("modules", [
    {"p.a": "import p.b", "p.b": "import p.a"},
    {"p.a": "from p import b", "p.b": "from p.a import name"},
    {"p.a": "from . import b", "p.b": "from .a import name"},
    {"p.a": "from .b import name", "p.b": "def lazy():\n    from .a import name"},
    {"p.a": "import p.b", "p.b": "import importlib\nimportlib.import_module('p.a')"},
    {"p.a": "import p.b", "p.b": "__import__('p.a')"},
    {"p.a": "import p.b", "p.b": "import p.c", "p.c": "from p.a import name"},
    {"p.a": "from .sub import c", "p.sub.c": "from ..a import name"},
    {"p.a": "import p.b.c", "p.b.c": "import p.a", "p.b": ""},
])
def test_the_check_catches_a_circle(modules: dict[str, str]) -> None:
    """Each way of closing a circle is found: plain, relative, lazy, dynamic, through a third module."""
    found = cycles(import_graph(sources(modules)))
    assert len(found) == 1 and {"p.a"} <= set(found[0])


@pytest.mark.parametrize("modules", [
    {"p.a": "import p.b", "p.b": "import p.c", "p.c": "import chess"},
    {"p.a": "from p import b", "p.b": "from p import a_name_not_a_module", "p": "NAME = 1"},
    {"p.a": "import p.b", "p.b": "import p.b", "p.c": "from p.a import p"},
    {"p.a": "X = 'import p.b'", "p.b": "import p.a"},
])
def test_the_check_passes_a_graph_without_circle(modules: dict[str, str]) -> None:
    """A chain, a name taken from a package, a module importing itself and an import in a string are no circle."""
    assert cycles(import_graph(sources(modules))) == []


def test_cycles_lists_each_circle_once() -> None:
    """Two separate circles and a tail into one of them: two components, sorted."""
    graph = {"x": {"y"}, "y": {"x"}, "a": {"b"}, "b": {"c"}, "c": {"a"}, "t": {"a"}}
    assert cycles(graph) == [["a", "b", "c"], ["x", "y"]]



def test_each_0_2_0_module_name_imports_its_new_module_with_a_warning() -> None:
    """Every `garfish.engine.OLD` of 0.2.0's flat engine/ (MOVED) imports, in a fresh interpreter, with one
    DeprecationWarning that names its new module, and holds the new module's names (the very objects)."""
    code = f"""
import importlib, warnings
for old, new_name in {dict(MOVED)!r}.items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module("garfish.engine." + old)
    new = importlib.import_module("garfish.engine." + new_name)
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert messages == [f"garfish.engine.{{old}} is now garfish.engine.{{new_name}}"], (old, messages)
    public = [name for name in vars(new) if not name.startswith("__")]
    assert public and all(getattr(module, name) is getattr(new, name) for name in public), old
print(len({dict(MOVED)!r}))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == [str(len(MOVED))]
