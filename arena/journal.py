"""The match journal behind `garfish match --resume`.

With --pgnout GAMES.pgn the runner keeps GAMES.pgn.match beside the PGN: the match's settings on
its first line, then one JSON line a game, written right after the game went into the PGN, with
the PGN's size after it. `--resume` reads it back: the games it records count again (results,
pairs, forfeits, clocks), the PGN is cut back to the size its last game left (a write the
interruption broke off), and only the other games are played. So a match killed at any moment
(Ctrl-C, SIGTERM, kill -9, a machine that stops) loses only the games in progress and those
finished out of order behind one in progress. Settings that decide the games (engines and their
options, the limits, --games, the openings' content, --seed, Chess960, adjudication, SPRT bounds,
the event) must be the journal's; --concurrency, --cluster and the outputs may change.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import IO, Any, Optional

from garfish.arena.game import GameRecord, PonderStats
from garfish.arena.sidecar import load_records, open_record_files, read_header

SUFFIX = ".match"
HEADER = "# garfish match "
KIND = "garfish match journal"
SHA_DIGITS = 16


def journal_path(pgn: Path) -> Path:
    """The journal of the match written to this PGN file."""
    return pgn.with_name(pgn.name + SUFFIX)


def file_digest(path: Optional[Path]) -> Optional[str]:
    """The first SHA_DIGITS hex digits of a file's SHA-256 (None without a file; ValueError when unreadable)."""
    if path is None:
        return None
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:SHA_DIGITS]
    except OSError as exc:
        raise ValueError(f"cannot read '{path}': {exc.strerror or exc}") from None


def read_settings(path: Path) -> Optional[dict[str, Any]]:
    """The settings on a journal's first line; None when there is no journal or no complete first line
    (ValueError when it cannot be read or is not a journal)."""
    return read_header(path, HEADER, KIND)


def record_line(record: GameRecord, pgn_end: int) -> str:
    """A game's journal line (its PGN text stays in the PGN file)."""
    fields = {field.name: getattr(record, field.name) for field in dataclasses.fields(record) if field.name != "pgn"}
    fields["ponder"] = [dataclasses.asdict(stats) for stats in record.ponder]
    fields["clock_left"] = list(record.clock_left)
    fields["pgn_end"] = pgn_end
    return json.dumps(fields, sort_keys=True) + "\n"


def parse_record(line: str) -> tuple[GameRecord, int]:
    """A journal line back to its record and the PGN size after it (ValueError when malformed)."""
    try:
        fields = json.loads(line)
        pgn_end = int(fields.pop("pgn_end"))
        ponder = tuple(PonderStats(**stats) for stats in fields.pop("ponder"))
        clock_left = tuple(fields.pop("clock_left"))
        record = GameRecord(**fields, ponder=ponder, clock_left=clock_left)  # type: ignore[arg-type]
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"malformed game line ({type(exc).__name__}: {exc})") from None
    if len(ponder) != 2 or len(clock_left) != 2 or pgn_end < 0:
        raise ValueError("malformed game line (two engines' figures and a PGN size expected)")
    return record, pgn_end


def numbered_record(line: str) -> tuple[GameRecord, int, int]:
    """A journal line back to its record, the game's number and the PGN size after it (ValueError when malformed)."""
    record, pgn_end = parse_record(line)
    return record, record.number, pgn_end


def load(path: Path, settings: dict[str, Any]) -> Optional[tuple[list[GameRecord], int, int]]:
    """The games a journal records, the PGN size after the last of them and the journal's own size
    up to there; None when there is no journal or no complete first line (nothing was recorded).
    ValueError when its settings differ from these (naming the first that does) or a line other than
    the last is malformed; an unfinished last line is a write the interruption broke off, and is dropped."""
    return load_records(path, settings, HEADER, KIND, "a match played", numbered_record)


class GameFiles:
    """Where finished games go: the PGN file (optional) and, beside it, the journal."""

    def __init__(self, pgn: Optional[IO[str]], journal: Optional[IO[str]], pgn_size: int = 0) -> None:
        """Files opened for appending; pgn_size: the PGN's size in bytes now."""
        self.pgn = pgn
        self.journal = journal
        self.pgn_size = pgn_size

    def write(self, record: GameRecord) -> None:
        """Append a game to the PGN, then its line to the journal."""
        if self.pgn is None:
            return
        text = record.pgn + "\n\n"
        self.pgn.write(text)
        self.pgn.flush()
        self.pgn_size += len(text.encode("utf-8"))
        if self.journal is not None:
            self.journal.write(record_line(record, self.pgn_size))
            self.journal.flush()

    def close(self) -> None:
        """Close both files."""
        for handle in (self.pgn, self.journal):
            if handle is not None:
                handle.close()


def open_files(pgn: Optional[Path], settings: dict[str, Any], resume: bool
               ) -> tuple[GameFiles, list[GameRecord]]:
    """The files a match writes to, and the games already played when it resumes one (ValueError when
    the journal does not fit; OSError when a file cannot be written). Without resume the PGN and the
    journal start empty; with it and a journal, the PGN is cut back to the journal's last game."""
    if pgn is None:
        return GameFiles(None, None), []
    journal = journal_path(pgn)
    loaded = load(journal, settings) if resume else None
    ends = None if loaded is None else loaded[1:]
    pgn_handle, journal_handle = open_record_files(pgn, journal, HEADER, settings, ends)
    return GameFiles(pgn_handle, journal_handle, 0 if ends is None else ends[0]), [] if loaded is None else loaded[0]
