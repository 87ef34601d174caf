"""The field of a gauntlet: the opponents of `garfish match --field`, written once in a small TOML file.

    # One [[engine]] table an opponent.
    [[engine]]
    name = "Toga II 3.0"                 # the display name (PGN, report); unique in the field
    cmd = "/usr/games/toga2"             # the command line, shell-quoted
    protocol = "uci"                     # "uci" (default) or "xboard" (XBoard/CECP 2)
    options = { Hash = 16, OwnBook = false }   # engine options, set before the first game
    rating = 2930                        # its published rating, when it has one: an anchor of the fit
    rating_source = "CCRL Blitz, ..."    # where that figure comes from
    note = "..."                         # anything a reader should know (version not listed, ...)

Every key but `name` and `cmd` may be left out; an engine without `rating` is not an anchor (the
fit places it from its games against the others, in a round robin). `--field NAME` with a bare name
takes the field shipped with Garfish of that name (arena/fields/NAME.toml: `debian`, the engines of
Debian's packages by other authors).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import chess.engine

from garfish.arena.driver import PROTOCOLS, EngineSpec, split_command

FIELDS_FOLDER = Path(__file__).resolve().parent / "fields"
KEYS = ("name", "cmd", "protocol", "options", "rating", "rating_source", "note")


@dataclass
class FieldEngine:
    """An opponent: how to start it, its published rating (None: not an anchor) and where that comes from."""

    spec: EngineSpec
    rating: Optional[float] = None
    rating_source: str = ""
    note: str = ""

    @property
    def name(self) -> str:
        """The opponent's display name."""
        return self.spec.name or ""


def field_path(text: str) -> Path:
    """The file a --field value names: a path, or the name of a field shipped with Garfish."""
    path = Path(text)
    if path.suffix or path.exists() or "/" in text:
        return path
    return FIELDS_FOLDER / f"{text}.toml"


def shipped_fields() -> list[str]:
    """The names of the fields shipped with Garfish."""
    return sorted(path.stem for path in FIELDS_FOLDER.glob("*.toml"))


def option_text(value: Any) -> str:
    """An option's TOML value as the text `garfish match` passes on (true/false, numbers, strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise ValueError(f"an option's value must be a string, number or true/false, not {value!r}")


def parse_engine(entry: Any, index: int) -> FieldEngine:
    """One [[engine]] table -> FieldEngine (ValueError naming the engine and the problem)."""
    where = f"engine {index}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a table of keys")
    unknown = sorted(set(entry) - set(KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown key '{unknown[0]}' (keys: {', '.join(KEYS)})")
    name, command = entry.get("name"), entry.get("cmd")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{where}: 'name' (a non-empty string) is required")
    where = f"engine '{name}'"
    if not isinstance(command, str):
        raise ValueError(f"{where}: 'cmd' (the command line, a string) is required")
    protocol = entry.get("protocol", "uci")
    if protocol not in PROTOCOLS:
        raise ValueError(f"{where}: protocol must be one of {', '.join(PROTOCOLS)}, not '{protocol}'")
    options = entry.get("options", {})
    if not isinstance(options, dict):
        raise ValueError(f"{where}: 'options' must be a table, e.g. options = {{ Hash = 16 }}")
    rating = entry.get("rating")
    if rating is not None and (isinstance(rating, bool) or not isinstance(rating, (int, float))):
        raise ValueError(f"{where}: 'rating' must be a number")
    for key in ("rating_source", "note"):
        if not isinstance(entry.get(key, ""), str):
            raise ValueError(f"{where}: '{key}' must be a string")
    managed = sorted(key for key in options if str(key).lower() in chess.engine.MANAGED_OPTIONS)
    if managed:
        raise ValueError(f"{where}: option '{managed[0]}' is set by the match itself (python-chess manages "
                         f"{', '.join(chess.engine.MANAGED_OPTIONS)}); leave it out")
    try:
        argv = split_command(command)
        texts = {str(key): option_text(value) for key, value in options.items()}
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    spec = EngineSpec(argv=argv, options=texts, name=name.strip(), protocol=protocol)
    return FieldEngine(spec, None if rating is None else float(rating), entry.get("rating_source", ""),
                       entry.get("note", ""))


def load_field(text: str) -> list[FieldEngine]:
    """The opponents of a field file (or shipped field name); ValueError with a clear message on any problem."""
    path = field_path(text)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        known = ", ".join(shipped_fields()) or "none"
        raise ValueError(f"no field file '{path}' (fields shipped with Garfish: {known})") from None
    except OSError as exc:
        raise ValueError(f"cannot read the field '{path}': {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"the field '{path}' is not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"engine"})
    if unknown:
        raise ValueError(f"the field '{path}': unknown table or key '{unknown[0]}' (one [[engine]] table an opponent)")
    entries = data.get("engine", [])
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"the field '{path}' lists no engine (one [[engine]] table an opponent)")
    engines = [parse_engine(entry, index + 1) for index, entry in enumerate(entries)]
    names = [engine.name for engine in engines]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"the field '{path}' names '{twice[0]}' twice")
    return engines


def choose(engines: list[FieldEngine], names: Optional[str]) -> list[FieldEngine]:
    """The opponents named in a comma-separated list (--opponents), in the field's order; all without one."""
    if names is None:
        return engines
    wanted = [name.strip() for name in names.split(",") if name.strip()]
    known = {engine.name: engine for engine in engines}
    missing = [name for name in wanted if name not in known]
    if missing:
        raise ValueError(f"--opponents: the field has no engine '{missing[0]}' (it has: {', '.join(known)})")
    if not wanted:
        raise ValueError("--opponents names no engine")
    return [engine for engine in engines if engine.name in wanted]
