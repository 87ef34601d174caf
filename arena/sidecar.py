"""The record files beside a run's output that let it resume: `garfish datagen`'s OUT.datagen and
`garfish match`'s GAMES.pgn.match. Each begins with a line of a magic prefix and the run's settings
as JSON; a rerun reads them back, takes the recorded seed when none is given, and refuses settings
that would make other games."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Optional

SEED_RANGE = 2**31  # a seed is drawn from this range when none is given or recorded


def header(magic: str, settings: dict[str, Any]) -> str:
    """A record file's first line."""
    return magic + json.dumps(settings, sort_keys=True) + "\n"


def parse_header(line: bytes, path: Path, magic: str, what: str,
                 error: type[Exception] = ValueError) -> dict[str, Any]:
    """The settings of a record file's first line (`error` when it is not one of `what`)."""
    text = line.decode("utf-8", errors="replace")
    if not text.startswith(magic):
        raise error(f"'{path}' is not a {what}")
    try:
        settings = json.loads(text[len(magic):])
    except ValueError:
        settings = None
    if not isinstance(settings, dict):
        raise error(f"'{path}': unreadable settings line")
    return settings


def read_header(path: Path, magic: str, what: str, error: type[Exception] = ValueError) -> Optional[dict[str, Any]]:
    """The settings recorded in a record file, or None when it has no complete first line (`error` when
    it cannot be read or is not one of `what`)."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise error(f"cannot read '{path}': {exc.strerror or exc}") from None
    return parse_header(first, path, magic, what, error) if first.endswith(b"\n") else None


def choose_seed(given: Optional[int], recorded: Optional[dict[str, Any]]) -> int:
    """The run's seed: the one given, else the one recorded, else a random one."""
    if given is not None:
        return given
    if recorded is not None and isinstance(recorded.get("seed"), int):
        return recorded["seed"]
    return random.SystemRandom().randrange(SEED_RANGE)
