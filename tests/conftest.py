"""Shared fixtures: the engine's command line, the shared data folder, a searcher."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

import chess.pgn
import pytest

from garfish.arena.data import data_dir

ROOT = Path(__file__).resolve().parent.parent
# Set (to anything but "" or "0") where the shared data must be present, as in CI:
# a test that would skip for want of it fails instead.
REQUIRE_DATA_ENV = "GARFISH_REQUIRE_DATA"


def data_missing(reason: str) -> NoReturn:
    """Skip the test for want of shared data, or fail it when $GARFISH_REQUIRE_DATA is set."""
    if os.environ.get(REQUIRE_DATA_ENV, "") not in ("", "0"):
        pytest.fail(f"{reason} (and {REQUIRE_DATA_ENV} is set: the data is required here)", pytrace=False)
    pytest.skip(reason)


# The optional extras a test may need: the modules each must make importable (the one returned last) and how to
# install it. `./garfish` installs the `test` extra, which brings distributed (the cluster tests call require_extra),
# and none of the others: a test that needs one of those is marked `extra(NAME)`, and `-m extra` selects them all.
EXTRAS = {
    "train": (("matplotlib", "torch"), "pip install torch==2.13.0, then pip install -e .[train]"),
    "plot": (("matplotlib",), "pip install -e .[plot]"),
    "cluster": (("distributed",), "pip install -e .[cluster]"),
}
# Set to a comma-separated list of the extras above that must be installed, as in CI: a test that would skip
# for want of one of them fails instead.
REQUIRE_EXTRAS_ENV = "GARFISH_REQUIRE_EXTRAS"


def require_extra(name: str) -> Any:
    """The last module of the extra `name`, or skip the test for want of the extra (fail when $GARFISH_REQUIRE_EXTRAS
    names it); at a module's top level, the whole module."""
    modules, hint = EXTRAS[name]
    required = name in os.environ.get(REQUIRE_EXTRAS_ENV, "").replace(" ", "").split(",")
    for module_name in modules:
        reason = f"{module_name} is not installed: the test needs the {name} extra ({hint})"
        if required and importlib.util.find_spec(module_name) is None:
            pytest.fail(f"{reason} (and {REQUIRE_EXTRAS_ENV} names it: it is required here)", pytrace=False)
        module = pytest.importorskip(module_name, reason=reason)
    return module


def pytest_addoption(parser: pytest.Parser) -> None:
    """--slow: run the tests marked `slow` too."""
    parser.addoption("--slow", action="store_true", default=False,
                     help="also run the tests marked slow, which `./garfish test` leaves out (CI runs them)")


def pytest_configure(config: pytest.Config) -> None:
    """Declare the `extra` mark, beside EXTRAS."""
    config.addinivalue_line("markers", "extra(name): needs the optional extra `name`, which ./garfish does not "
                            "install; skipped without it, or failed when $GARFISH_REQUIRE_EXTRAS names it")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the tests marked `slow` (reported as deselected), unless --slow is given, a -m expression
    chooses the tests itself (`-m slow`: only them) or the test is named (`tests/test_x.py::test_y`)."""
    if config.getoption("--slow") or config.getoption("markexpr"):
        return
    named = [arg.replace(os.sep, "/") for arg in config.args if "::" in arg]

    def left_out(item: pytest.Item) -> bool:
        return item.get_closest_marker("slow") is not None and not any(
            item.nodeid == name or item.nodeid.startswith(name + "[") or name.endswith(item.nodeid)
            for name in named)

    slow = [item for item in items if left_out(item)]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not left_out(item)]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a test marked `extra(NAME)`, or fail it, before its fixtures when that extra is missing."""
    for mark in item.iter_markers("extra"):
        require_extra(mark.args[0])


ENGINE_CMD = [sys.executable, "-m", "garfish.uci"]
# The suite's own openings (8, each after three moves a side; tests/data/README.md), for a test that needs a few
# openings and not the shared books.
OPENINGS_3MOVES = ROOT / "tests" / "data" / "openings_3moves.epd"
# A $GARFISH_DATA that can never be a folder: a tool run with it finds no shared data, as in a user's clone.
NO_DATA = os.path.join(os.devnull, "no-shared-data")
# `python -m garfish.uci` as where matplotlib is not installed (None in sys.modules: not found, not importable).
WITHOUT_MATPLOTLIB = [sys.executable, "-c", "import runpy, sys; sys.modules['matplotlib'] = None; "
                      "runpy.run_module('garfish.uci', run_name='__main__', alter_sys=True)"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"  # the first bytes of every PNG file
SCRIPTED = Path(__file__).resolve().parent / "scripted_engine.py"  # tests/scripted_engine.py, a scripted UCI engine
CLI_TIMEOUT = 600  # a hang guard: seconds a tool run through its command line may take in a test (the cluster
# SPRT test ran past 120 s at nice 19 beside a match on both cores, 52 s at nice 0 there; no assertion rests on it)


def until_first_go(log: Path) -> list[list[str]]:
    """What the scripted engine run with `--log FILE` received before its first `go`, a list for each process
    that wrote FILE (one at a time, each from its `uci` on); a process that received no `go` fails the test,
    so that nothing said of "before the first go" holds vacuously."""
    received = log.read_text().splitlines()
    sessions: list[list[str]] = []
    searched: list[bool] = []
    for line in received:
        if line == "uci":
            sessions.append([])
            searched.append(False)
        elif sessions and not searched[-1]:
            if line.split()[:1] == ["go"]:
                searched[-1] = True
            else:
                sessions[-1].append(line)
    assert sessions and all(searched), f"a process of the engine received no go: {received}"
    return sessions


def children(pid: int) -> list[int]:
    """The processes whose parent is pid (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def cpu_seconds(pid: int) -> float:
    """The CPU time a process has used, its ended threads' included (user and system, from /proc;
    in steps of 1/SC_CLK_TCK, 10 ms on Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def read_games(path: Path) -> list[chess.pgn.Game]:
    """All games of a PGN file."""
    games = []
    with open(path) as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            games.append(game)
    return games


def wait_gone(pids: list[int], seconds: float) -> list[int]:
    """The pids still running (and not zombies) after waiting up to `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        alive = []
        for pid in pids:
            try:
                if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.append(pid)
            except OSError:
                continue
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def run_interpreted(code: str, data: Any) -> Any:
    """Run Python code with the Numba kernels interpreted (NUMBA_DISABLE_JIT=1) in a child process
    in the project folder, the data on its stdin as JSON; what it prints, read as JSON."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    out = subprocess.run([sys.executable, "-c", code], input=json.dumps(data), capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=300, check=True)
    return json.loads(out.stdout)


@pytest.fixture(scope="session")
def engine_cmd() -> list[str]:
    """Command line that starts Garfish's UCI loop (run with cwd=ROOT)."""
    return ENGINE_CMD


@pytest.fixture(scope="session")
def data() -> Path:
    """The shared test data folder ($GARFISH_DATA or ../shared/data); skip when absent (fail under $GARFISH_REQUIRE_DATA)."""
    folder = data_dir()
    if folder is None:
        data_missing("shared test data not found: set GARFISH_DATA or put it at ../shared/data")
    return folder


@pytest.fixture(scope="session")
def books(data: Path) -> Path:
    """The shared Polyglot books folder (performance.bin, lasker-trap.bin)."""
    folder = data / "books" / "polyglot"
    for name in ("performance.bin", "lasker-trap.bin"):
        if not (folder / name).is_file():
            data_missing(f"{folder / name} not found")
    return folder
