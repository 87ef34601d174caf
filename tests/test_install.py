"""Installation: everything installs under garfish.*, and the editable install reads the sources."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT

IGNORED = shutil.ignore_patterns(".git", ".venv", "__pycache__", "build", "dist", "*.egg-info", ".pytest_cache",
                                 ".hypothesis", "*.nbi", "*.nbc")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of the project, built offline from a copy of the checkout."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    shutil.copytree(ROOT, source, ignore=IGNORED)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
                    "--no-build-isolation", "-w", str(work), str(source)], check=True, timeout=300)
    (built,) = work.glob("garfish-*.whl")
    return built


def test_wheel_holds_only_the_garfish_package(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist()}
        names = archive.namelist()
    assert tops == {"garfish", next(t for t in tops if t.endswith(".dist-info"))}
    for package in ("engine", "uci", "perft", "arena", "train"):
        assert f"garfish/{package}/__init__.py" in names
    assert not any(name.startswith(("engine/", "uci/", "perft/", "arena/", "train/", "tests/", "scripts/"))
                   for name in names)
    assert "garfish/engine/nets/README.md" in names  # the folder of shipped networks (EvalFile)
    assert "garfish/arena/packs.tsv" in names  # the data set's list of packs (garfish pack --verify)


def test_wheel_carries_the_version_licence_and_type_markers(wheel: Path) -> None:
    """The wheel's metadata has garfish.uci.__version__, the licence file and what a PyPI page shows; every
    package is marked typed (PEP 561)."""
    from garfish.uci import __version__

    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next(name for name in names if name.endswith(".dist-info/METADATA")).split("/")[0]
        metadata = archive.read(f"{info}/METADATA").decode()
        licence = archive.read(f"{info}/licenses/LICENSE").decode()
    assert wheel.name.startswith(f"garfish-{__version__}-") and f"\nVersion: {__version__}\n" in metadata
    assert "GNU GENERAL PUBLIC LICENSE" in licence and "License-Expression: GPL-3.0-or-later" in metadata
    assert "Classifier: Typing :: Typed" in metadata and "Keywords: " in metadata and "Project-URL: " in metadata
    for package in ("engine", "uci", "perft", "arena", "train"):
        assert f"garfish/{package}/py.typed" in names


def test_clean_venv_imports_garfish_and_no_generic_top_level_module(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True, clear=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                    "--no-index", str(wheel)], check=True, timeout=300)
    probe = (
        "import importlib.util as u, json, garfish.engine, garfish.uci.options, garfish.perft, garfish.arena\n"
        "names = ('engine', 'uci', 'perft', 'arena', 'garfish.uci')\n"
        "print(json.dumps({n: u.find_spec(n) is not None for n in names}))\n"
    )
    # cwd outside the checkout and -P: only site-packages can answer.
    out = subprocess.run([str(python), "-P", "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60, check=True)
    assert json.loads(out.stdout) == {"engine": False, "uci": False, "perft": False, "arena": False,
                                      "garfish.uci": True}
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    assert not any((site / name).exists() for name in ("engine", "uci", "perft", "engine.py", "uci.py"))
    # The console script is installed and answers without the engine's dependencies.
    usage = subprocess.run([str(env_dir / "bin" / "garfish"), "--help"], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 0 and "garfish" in usage.stdout


def test_editable_install_runs_the_checkout_sources() -> None:
    """Under `pip install -e` (the launcher's install) a module is the file in the checkout, so edits count."""
    direct = importlib.metadata.distribution("garfish").read_text("direct_url.json")
    if not direct or not json.loads(direct).get("dir_info", {}).get("editable"):
        pytest.skip("garfish is not installed in editable mode here")
    import garfish.engine.search.driver
    import garfish.perft.core
    import garfish.uci.protocol

    assert Path(garfish.engine.search.driver.__file__).resolve() == ROOT / "engine" / "search" / "driver.py"
    assert Path(garfish.uci.protocol.__file__).resolve() == ROOT / "uci" / "protocol.py"
    assert Path(garfish.perft.core.__file__).resolve() == ROOT / "perft" / "core.py"


def _launch(root: Path, venv_dir: Path, log: Path) -> list[str]:
    """Run the launcher in `root` with a stand-in Python that logs its arguments; the lines it logged."""
    log.write_text("")
    subprocess.run([str(root / "garfish"), "--version"], check=True, timeout=60, capture_output=True,
                   env={"PATH": "/usr/bin:/bin", "PYTHON": str(venv_dir / "bin" / "python"),
                        "GARFISH_VENV": str(venv_dir)})
    return log.read_text().splitlines()


def test_the_launcher_reinstalls_when_the_version_changes(tmp_path: Path) -> None:
    """A `git pull` that brings a new version (uci/__init__.py) or new dependencies (pyproject.toml)
    reinstalls, so that the installed metadata says the version the engine reports; otherwise it
    starts the engine at once."""
    root = tmp_path / "checkout"
    (root / "uci").mkdir(parents=True)
    shutil.copy(ROOT / "garfish", root / "garfish")
    (root / "pyproject.toml").write_text("")
    (root / "uci" / "__init__.py").write_text('__version__ = "0"\n')
    venv_dir, log = tmp_path / "venv", tmp_path / "calls.log"
    (venv_dir / "bin").mkdir(parents=True)
    python = venv_dir / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    python.chmod(0o755)

    first = _launch(root, venv_dir, log)
    assert any("pip install" in line for line in first) and first[-1].endswith("garfish.cli --version")
    assert _launch(root, venv_dir, log) == ["-P -m garfish.cli --version"]  # installed: straight to the engine
    stamp = (venv_dir / ".garfish-installed").stat().st_mtime_ns
    for changed in ("uci/__init__.py", "pyproject.toml"):
        path = root / changed
        os.utime(path, ns=(stamp + 10**9, stamp + 10**9))  # newer than the stamp, as a pull leaves it
        calls = _launch(root, venv_dir, log)
        assert any("pip install" in line for line in calls), changed
        stamp = (venv_dir / ".garfish-installed").stat().st_mtime_ns
