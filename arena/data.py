"""The shared data folder beside the project (opening books, test suites, training data).

Also used by garfish.perft and the tests, so that every tool finds the data by the same rule.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

DATA_ENV = "GARFISH_DATA"
PROJECT_ROOT = Path(__file__).resolve().parent.parent  # the checkout (the folder holding arena/)


def data_dir() -> Optional[Path]:
    """The shared data folder: $GARFISH_DATA, else ../shared/data beside the project, else None."""
    env = os.environ.get(DATA_ENV)
    if env:
        path = Path(env)
        return path if path.is_dir() else None
    for candidate in (PROJECT_ROOT.parent / "shared" / "data", Path.cwd().parent / "shared" / "data"):
        if candidate.is_dir():
            return candidate
    return None
