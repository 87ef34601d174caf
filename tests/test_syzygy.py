"""Syzygy tablebases in the engine: opening the tables, root move ranking, and a table that
fails inside the tree."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterator

import chess
import chess.syzygy
import pytest

from conftest import data_missing
from garfish.engine.search import Searcher
from garfish.engine.syzygy import Tablebases, TablebaseError
from garfish.engine.types import TB_WIN, TB_WIN_BOUND, Limits

KRVK = "7K/3R4/4k3/8/8/8/8/8 w - - 0 1"  # white mates in 16 (DTZ 31)
KQVKR = "8/5r2/7k/8/6K1/8/Q7/8 w - - 0 1"  # DTZ 27: the rook falls, then mate
FIVE_MEN = "4k3/8/8/3n4/8/4N3/8/R3K3 w - - 0 1"  # 5 pieces: Nxd5 leads into the KRNvK table


@pytest.fixture(scope="module")
def syzygy(data: Path) -> Path:
    """The shared folder of all 3- and 4-man Syzygy tables."""
    folder = data / "syzygy"
    if not (folder / "KQvKR.rtbz").is_file():
        data_missing(f"{folder} has no Syzygy tables")
    return folder


@pytest.fixture(scope="module")
def tables(syzygy: Path) -> Iterator[chess.syzygy.Tablebase]:
    """python-chess's own view of the tables: the referee of the games below."""
    with chess.syzygy.open_tablebase(str(syzygy)) as opened:
        yield opened


def fastest_wins(tables: chess.syzygy.Tablebase, board: chess.Board) -> dict[chess.Move, int]:
    """The side to move's winning moves that reach mate, a capture or a pawn move soonest by
    the tables' DTZ, with the plies they take (empty when there is no win)."""
    plies = {}
    for move in board.legal_moves:
        zeroing = board.is_zeroing(move)
        board.push(move)
        if board.is_checkmate() or (zeroing and tables.probe_wdl(board) == -2):
            plies[move] = 1
        elif not zeroing and tables.probe_dtz(board) < 0:
            plies[move] = 1 - tables.probe_dtz(board)
        board.pop()
    return {move: n for move, n in plies.items() if n == min(plies.values())}


def test_the_root_keeps_only_the_fastest_winning_moves(syzygy: Path, tables: chess.syzygy.Tablebase) -> None:
    board = chess.Board(KRVK)
    fastest = set(fastest_wins(tables, board))
    legal = board.legal_moves.count()
    assert len(fastest) == 6 and legal == 17  # slower wins (Rc7, Rg7: 33 plies) and draws (Rd6+?? Kxd6)
    tablebase = Tablebases(str(syzygy))
    ranking = tablebase.rank_root_moves(board, list(board.legal_moves))
    assert ranking is not None and ranking.by_dtz and set(ranking.moves) == fastest
    assert ranking.score == TB_WIN and ranking.probes == legal
    searcher = Searcher(1)
    searcher.tablebase = tablebase
    infos = []
    result = searcher.search(board, Limits(depth=3), on_info=infos.append)
    assert result.move in fastest and infos[-1].tbhits == legal
    assert infos[-1].score == TB_WIN and infos[-1].cp == 20000  # shown as Stockfish shows a TB win


def some_tables(folder: Path, syzygy: Path, names: tuple[str, ...] = ("KRvK", "KPvK")) -> Path:
    """A folder holding copies of a few tables (WDL and DTZ)."""
    folder.mkdir()
    for name in names:
        for suffix in (".rtbw", ".rtbz"):
            shutil.copyfile(syzygy / (name + suffix), folder / (name + suffix))
    return folder


def test_several_folders_are_separated_as_paths_are(syzygy: Path, tmp_path: Path) -> None:
    first = some_tables(tmp_path / "a", syzygy, ("KRvK",))
    second = some_tables(tmp_path / "b", syzygy, ("KPvK", "KQvK", "KQvKR"))  # KQvKR's captures lead to KQvK, KRvK
    tablebase = Tablebases(f"{first}{os.pathsep}{second}")
    assert (tablebase.wdl_count, tablebase.dtz_count, tablebase.max_pieces) == (4, 4, 4)
    assert tablebase.probe_wdl(chess.Board(KRVK)) == 2 and tablebase.probe_wdl(chess.Board(KQVKR)) == 2
    assert tablebase.probe_wdl(chess.Board("8/8/4k3/8/8/8/4B3/4K3 w - - 0 1")) is None  # no KBvK here


def corrupt_tables(folder: Path, syzygy: Path, name: str) -> Path:
    """Every table, with the body of the WDL table `name` overwritten: its size and header pass
    the checks at opening, and python-chess's probes of it raise IndexError."""
    folder.mkdir()
    for table in syzygy.glob("*.rtb?"):
        shutil.copyfile(table, folder / table.name)
    damaged = bytearray((folder / f"{name}.rtbw").read_bytes())
    damaged[16:] = b"\xff" * (len(damaged) - 16)
    (folder / f"{name}.rtbw").write_bytes(damaged)
    return folder


def test_a_table_that_fails_inside_the_tree_stops_the_probes(syzygy: Path, tmp_path: Path) -> None:
    failures: list[str] = []
    searcher = Searcher(1)
    folder = corrupt_tables(tmp_path / "corrupt", syzygy, "KRNvK")
    searcher.tablebase = Tablebases(str(folder), on_failure=failures.append)
    result = searcher.search(chess.Board(FIVE_MEN), Limits(depth=4))
    assert len(failures) == 1 and failures[0].startswith("Syzygy probe failed in ") and "IndexError" in failures[0]
    assert result.move in chess.Board(FIVE_MEN).legal_moves and searcher.tablebase.cardinality == 0
    assert abs(result.score) < TB_WIN_BOUND  # no tablebase score came out of the broken table


def test_a_tablebase_error_is_an_exception_not_a_crash(tmp_path: Path) -> None:
    with pytest.raises(TablebaseError, match="no folder given"):
        Tablebases(os.pathsep)
