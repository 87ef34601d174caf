"""Shared fixtures: the engine's command line, the shared data folder, a searcher."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from garfish.perft.suites import data_dir

ROOT = Path(__file__).resolve().parent.parent

ENGINE_CMD = [sys.executable, "-m", "garfish.uci"]


@pytest.fixture(scope="session")
def engine_cmd() -> list[str]:
    """Command line that starts Garfish's UCI loop (run with cwd=ROOT)."""
    return ENGINE_CMD


@pytest.fixture(scope="session")
def data() -> Path:
    """The shared test data folder ($GARFISH_DATA or ../shared/data); skip when absent."""
    folder = data_dir()
    if folder is None:
        pytest.skip("shared test data not found: set GARFISH_DATA or put it at ../shared/data")
    return folder
