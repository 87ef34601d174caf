"""The record files beside a run's output that let it resume: `garfish datagen`'s OUT.datagen,
`garfish match`'s GAMES.pgn.match and `garfish analyse`'s OUT.pgn.analyse. Each begins with a line of
a magic prefix and the run's settings as JSON; a rerun reads them back, takes the recorded seed when
none is given, and refuses settings that would make other games. The journals beside a PGN (match,
analyse) then hold a line a game, written right after the game went into the PGN, with the PGN's
size after it (load_records, open_record_files)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import IO, Any, Callable, Optional, TypeVar

SEED_RANGE = 2**31  # a seed is drawn from this range when none is given or recorded
Record = TypeVar("Record")


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


def load_records(path: Path, settings: dict[str, Any], magic: str, kind: str, what: str,
                 parse: Callable[[str], tuple[Record, int, int]]) -> Optional[tuple[list[Record], int, int]]:
    """The games a PGN's journal records (parse: a line -> its record, the game's number and the PGN's size
    after it; ValueError when malformed), the PGN's size after the last of them and the journal's own size
    up to there; None when there is no journal or no complete first line (nothing was recorded).
    ValueError when its settings differ from these (naming the first that does: "'PATH' is {what} with other
    settings"), or a line other than the last is malformed, repeats a game or goes back in the PGN; an
    unfinished last line is a write the interruption broke off, and is dropped."""
    try:
        lines = path.read_bytes().splitlines(keepends=True)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"cannot read '{path}': {exc.strerror or exc}") from None
    if not lines or not lines[0].endswith(b"\n"):
        return None
    stored = parse_header(lines[0], path, magic, kind)
    for key in sorted(set(stored) | set(settings)):
        if stored.get(key) != settings.get(key):
            raise ValueError(f"'{path}' is {what} with other settings: {key} was "
                             f"{json.dumps(stored.get(key))}, now {json.dumps(settings.get(key))}")
    journal_end = len(lines[0])
    records: list[Record] = []
    seen: set[int] = set()
    pgn_end = 0
    for index, raw in enumerate(lines[1:], 2):
        if index == len(lines) and not raw.endswith(b"\n"):
            break
        try:
            record, number, end = parse(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ValueError(f"'{path}', line {index}: {exc}") from None
        if number in seen or end < pgn_end:
            raise ValueError(f"'{path}', line {index}: game {number} again or out of order")
        seen.add(number)
        records.append(record)
        pgn_end = end
        journal_end += len(raw)
    return records, pgn_end, journal_end


def open_record_files(pgn: Path, journal: Path, magic: str, settings: dict[str, Any],
                      ends: Optional[tuple[int, int]]) -> tuple[IO[str], IO[str]]:
    """A PGN and its journal opened for appending. Resuming (ends: the PGN's and the journal's sizes after the
    last game recorded), both are cut back to there (ValueError when the PGN is shorter than its journal
    says); else both start empty, the journal with its settings line. OSError when a file cannot be written."""
    if ends is not None:
        pgn_end, journal_end = ends
        size = pgn.stat().st_size if pgn.exists() else 0
        if size < pgn_end:
            raise ValueError(f"'{pgn}' is shorter than its journal '{journal}' says ({size} bytes, "
                             f"not {pgn_end}): was it changed?")
        for path, end in ((pgn, pgn_end), (journal, journal_end)):
            with path.open("ab") as handle:
                handle.truncate(end)
        return pgn.open("a", encoding="utf-8"), journal.open("a", encoding="utf-8")
    pgn_handle = pgn.open("w", encoding="utf-8")
    journal_handle = journal.open("w", encoding="utf-8")
    journal_handle.write(header(magic, settings))
    journal_handle.flush()
    return pgn_handle, journal_handle
