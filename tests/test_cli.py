"""The `garfish` command: every sub-command of the table runs, help and unknown commands, a light UCI start."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Union

import pytest

from conftest import ROOT
from garfish.uci import __version__
from garfish.cli import BY_NAME as COMMANDS, main

HEAVY_MODULES = ("garfish.arena", "garfish.engine", "garfish.perft", "garfish.train", "numba", "torch")


def exit_status(args: list[str]) -> Union[int, str, None]:
    """main(args)'s return value, or the code of the SystemExit it raised (argparse's --help exits)."""
    try:
        return main(args)
    except SystemExit as exc:
        return exc.code


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_of_the_table_runs(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`garfish NAME --help` reaches the sub-command, which prints its usage and succeeds."""
    assert exit_status([name, "--help"]) == 0
    captured = capsys.readouterr()
    assert f"usage: garfish {name}" in captured.out
    assert captured.err == ""


def test_help_names_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    """`garfish --help` describes the command and each sub-command."""
    assert exit_status(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(f"garfish {name}" in out for name in COMMANDS)
    assert "speaks UCI" in out


def test_unknown_command_lists_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown sub-command is an error (status 2) that lists the known ones."""
    assert exit_status(["nonsense"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'nonsense'" in err
    assert all(f"garfish {name}" in err for name in COMMANDS)


def test_the_version_is_written_once_and_agrees_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    """`garfish --version`, the UCI `id name` line and the package metadata all give garfish.uci.__version__,
    which pyproject.toml reads instead of naming a version of its own."""
    assert exit_status(["--version"]) == 0
    assert capsys.readouterr().out == f"garfish {__version__}\n"
    uci = subprocess.run([sys.executable, "-P", "-m", "garfish.uci"], input="uci\nquit\n", capture_output=True,
                         text=True, timeout=60)
    assert uci.stdout.splitlines()[0] == f"id name Garfish {__version__}"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    installed = importlib.metadata.version("garfish")
    assert installed == __version__, f"installed metadata says {installed}: reinstall (pip install -e .)"


def test_bad_bench_depth_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    """`garfish bench 0` explains the depth and exits with status 2 without searching."""
    assert exit_status(["bench", "0"]) == 2
    assert "depth must be a positive integer" in capsys.readouterr().err


def test_bench_runs_with_a_network_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`garfish bench --evalfile FILE` searches with the network and says so; a missing file is an error."""
    from garfish.engine.evaluation.network import write_network
    from test_nnue import constant_network

    path = write_network(constant_network(50), tmp_path)
    assert exit_status(["bench", "1", "--evalfile", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"Evaluation: network {path.name} (768x2 -> 1x2 CReLU -> 1, 1 output bucket)" in out
    assert "Nodes searched" in out
    assert exit_status(["bench", "1", "--evalfile", str(tmp_path / "missing.gfnn")]) == 2
    assert f"cannot use the network {tmp_path / 'missing.gfnn'}: no such file" in capsys.readouterr().err
    assert exit_status(["bench", "1", "--evalfile"]) == 2 and "--evalfile needs a path" in capsys.readouterr().err


def test_bench_uses_the_default_network_and_classic_on_request(capsys: pytest.CaptureFixture[str]) -> None:
    """Plain `garfish bench` searches with the default EvalFile; `--evalfile <classic>` with the
    hand-written evaluation, the tree of run_bench() without an evaluator."""
    from garfish.engine.services.bench import run_bench
    from garfish.engine.evaluation.evalfile import DEFAULT_EVAL_FILE

    def nodes(out: str) -> int:
        return int(out.split("Nodes searched  :")[1].split()[0])

    assert exit_status(["bench", "2"]) == 0
    network = capsys.readouterr().out
    assert f"Evaluation: network {DEFAULT_EVAL_FILE} (" in network
    assert exit_status(["bench", "2", "--evalfile", "<classic>"]) == 0
    classic = capsys.readouterr().out
    assert "Evaluation: the hand-written evaluation (<classic>)" in classic
    assert nodes(classic) == run_bench(depth=2).nodes != nodes(network)


def test_the_command_module_imports_no_tool_or_engine() -> None:
    """Loading the `garfish` command (the UCI path) imports neither arena, perft, the engine nor numba."""
    code = "import sys, garfish.uci, garfish.cli; print(' '.join(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    loaded = [name for name in proc.stdout.split() if name.startswith(HEAVY_MODULES)]
    assert loaded == []


def test_the_readme_lists_every_command() -> None:
    # The README's Tools block shows each command of the table (garfish.cli.COMMANDS), no more.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("## Tools"):readme.index("## Documentation")]
    listed = set(re.findall(r"^\./garfish (\w+)", block, re.MULTILINE))
    assert listed == set(COMMANDS)
