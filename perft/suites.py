"""Perft suites from ../shared/data/perft: reading them and checking their counts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import chess

# Files whose castling rights use Chess960 (Shredder/X-FEN) semantics.
CHESS960_FILES = {"chess960_fischer.epd", "tricky_python_chess.epd"}


@dataclass
class PerftCase:
    """One suite line: a position and its known leaf counts by depth."""

    fen: str
    counts: dict[int, int]
    chess960: bool
    source: str
    line: int

    def board(self) -> chess.Board:
        """The position as a python-chess board."""
        return chess.Board(self.fen, chess960=self.chess960)


def read_suite(path: Path) -> Iterator[PerftCase]:
    """Parse a perft EPD file: `FEN ;D1 n ;D2 n ...` per line."""
    chess960 = path.name in CHESS960_FILES
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            fields = line.split(";")
            counts = {}
            for field in fields[1:]:
                parts = field.split()
                if len(parts) == 2 and parts[0].upper().startswith("D") and parts[0][1:].isdigit():
                    counts[int(parts[0][1:])] = int(parts[1])
            yield PerftCase(fields[0].strip(), counts, chess960, path.name, number)


def suite_files(folder: Path) -> list[Path]:
    """The perft suites in a data folder (its perft/ subfolder)."""
    return sorted((folder / "perft").glob("*.epd"))
