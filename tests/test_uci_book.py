"""The opening book through the UCI layer: OwnBook, BookFile and BookBestMove in the in-process
UciEngine and in a real engine process driven by python-chess."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Iterator

import chess
import chess.engine
import pytest

from conftest import ROOT
from garfish.uci.options import String
from garfish.uci.protocol import book_applies, parse_go
from test_book import (ALAPIN, ALAPIN_MOVES, CORRUPT_KINDS, ENDGAME, LASKER_TRAP, RUY_LOPEZ, START_MOVES, board_after,
                       corrupt_files)
from test_uci_engine import THREAD_TIMEOUT, Session, bestmoves, errors

GAME_CLOCK = "go wtime 600000 btime 600000"  # ten minutes each: a search would go on to its soft limit, 14 s


def test_the_string_option_declares_and_reads_the_empty_string() -> None:
    option = String("BookFile")
    assert option.declaration() == "option name BookFile type string default <empty>"
    assert String("Path", "a b.bin").declaration() == "option name Path type string default a b.bin"
    assert [option.parse(text) for text in (None, "", "<empty>", " /x/a b.bin ")] == ["", "", "", "/x/a b.bin"]


# --------------------------------------------------------------------------- an in-process UciEngine
@pytest.fixture
def uci(books: Path) -> Iterator[Session]:
    """An in-process engine with performance.bin as its book and OwnBook on."""
    session = Session()
    lines = session.built() + session.send(f"setoption name BookFile value {books / 'performance.bin'}",
                         "setoption name OwnBook value true")
    assert f"info string book '{books / 'performance.bin'}': 92954 entries" in lines and not errors(lines)
    try:
        yield session
    finally:
        session.engine.handle("quit")


def go(session: Session, position: str, command: str = GAME_CLOCK) -> list[str]:
    """Set the position and run `go` to its bestmove without stopping it: the output."""
    session.engine.handle(position)
    session.output()
    session.engine.handle(command)
    thread = session.engine.engine.search_thread
    assert thread is not None
    thread.join(THREAD_TIMEOUT)
    assert not thread.is_alive(), f"no bestmove within {THREAD_TIMEOUT} s"
    return session.output()


def book_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("info string book move")]


def searched(lines: list[str]) -> bool:
    return any(line.startswith("info depth") for line in lines)


def test_go_on_the_clock_plays_a_book_move_at_once(uci: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a ten-minute clock, and with `go movetime 60000`, the book's move comes at once: the engine's search
    is never called (counted, not timed: the same on a busy machine) and no `info depth` is printed."""
    engine = uci.engine.engine
    searches: list[object] = []
    search = engine.search

    def counted(*args: object, **kwargs: object) -> object:
        searches.append(args)
        return search(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "search", counted)
    lines = go(uci, "position startpos")
    moves = bestmoves(lines)
    assert len(moves) == 1 and moves[0] in START_MOVES, lines
    assert book_lines(lines) == [f"info string book move {moves[0]} (weight 1 of 3, performance.bin)"]
    assert not searched(lines) and not errors(lines) and not searches, lines
    lines = go(uci, "position startpos", "go movetime 60000")
    assert book_lines(lines) and bestmoves(lines)[0] in START_MOVES and not searched(lines) and not searches
    lines = go(uci, "position startpos", "go depth 1")  # no book under a depth limit: the count counts
    assert searched(lines) and len(searches) == 1, lines


def test_book_moves_come_with_the_books_reply_as_ponder_move(uci: Session) -> None:
    lines = go(uci, f"position startpos moves {RUY_LOPEZ}")
    assert lines[-1] == "bestmove e1g1 ponder f8e7"


def test_book_best_move_plays_the_highest_weight(uci: Session) -> None:
    uci.send("setoption name BookBestMove value true")
    for _ in range(3):
        lines = go(uci, f"position startpos moves {ALAPIN}")
        assert book_lines(lines) == ["info string book move g8f6 (weight 1443 of 2970, performance.bin)"]
        assert bestmoves(lines) == ["g8f6"]


def test_the_weighted_choice_reaches_the_bestmove(uci: Session) -> None:
    seen = set()
    for _ in range(12):
        lines = go(uci, "position startpos", "go wtime 1000 btime 1000")
        seen.update(bestmoves(lines))
    assert seen <= set(START_MOVES) and len(seen) >= 2, seen  # all three equal: not always the same one


def test_out_of_book_the_engine_searches(uci: Session) -> None:
    lines = go(uci, f"position fen {ENDGAME}", "go wtime 1000 btime 1000")
    assert searched(lines) and not book_lines(lines) and not errors(lines)
    assert chess.Move.from_uci(bestmoves(lines)[0]) in chess.Board(ENDGAME).legal_moves


def test_with_own_book_off_the_book_is_ignored(uci: Session) -> None:
    uci.send("setoption name OwnBook value false")
    lines = go(uci, "position startpos", "go wtime 1000 btime 1000")
    assert searched(lines) and not book_lines(lines)


def test_in_analyse_mode_the_book_is_never_played(uci: Session) -> None:
    """UCI_AnalyseMode (a GUI analysing): a clock `go` in the book position searches; off again, it is a book move."""
    assert "option name UCI_AnalyseMode type check default false" in uci.send("uci")
    uci.send("setoption name UCI_AnalyseMode value true")
    lines = go(uci, "position startpos", "go wtime 1000 btime 1000")
    assert searched(lines) and not book_lines(lines) and not errors(lines)
    uci.send("setoption name UCI_AnalyseMode value false")
    lines = go(uci, "position startpos", "go wtime 1000 btime 1000")
    assert book_lines(lines) and not searched(lines)


@pytest.mark.parametrize(("line", "book"), [
    ("wtime 1000 btime 1000", True), ("btime 1000", True), ("movetime 500", True),
    ("ponder wtime 1000 btime 1000", True),  # the book move waits for ponderhit
    ("infinite", False), ("", False), ("depth 5", False), ("nodes 1000", False), ("mate 2", False),
    ("ponder", False), ("wtime 1000 btime 1000 depth 5", False), ("movetime 500 mate 3", False),
])
def test_the_book_answers_game_moves_and_leaves_analysis_to_the_search(line: str, book: bool) -> None:
    limits, _ = parse_go(line.split(), chess.Board(), pytest.fail)
    assert book_applies(limits) == book


@pytest.mark.parametrize("command", ["go depth 2", "go nodes 300", "go wtime 60000 btime 60000 depth 2"])
def test_analysis_searches_even_in_book(uci: Session, command: str) -> None:
    lines = go(uci, "position startpos", command)
    assert searched(lines) and not book_lines(lines) and len(bestmoves(lines)) == 1


def test_go_infinite_in_book_searches_until_stop(uci: Session) -> None:
    uci.engine.handle("position startpos")
    early = uci.go_until_held("go infinite")  # until it reports a search (or, wrongly, answers)
    assert not bestmoves(early) and not book_lines(early), early
    lines = early + uci.send("stop")
    assert searched(lines) and len(bestmoves(lines)) == 1


def test_go_ponder_in_book_waits_for_ponderhit_then_plays_the_book_move(uci: Session) -> None:
    uci.engine.handle(f"position startpos moves {RUY_LOPEZ}")
    uci.output()
    early = uci.go_until_held(f"go ponder {GAME_CLOCK[3:]}")  # until its book move waits for ponderhit
    assert not bestmoves(early), early  # UCI: no bestmove before ponderhit or stop
    uci.engine.handle("ponderhit")
    thread = uci.engine.engine.search_thread
    assert thread is not None
    thread.join(THREAD_TIMEOUT)
    lines = early + uci.output()
    assert bestmoves(lines) == ["e1g1"] and book_lines(lines) and not searched(lines), lines


def test_searchmoves_restrict_the_book(uci: Session) -> None:
    lines = go(uci, "position startpos", f"{GAME_CLOCK} searchmoves d2d4")
    assert book_lines(lines) == ["info string book move d2d4 (weight 1 of 1, performance.bin)"]
    assert bestmoves(lines) == ["d2d4"]
    lines = go(uci, "position startpos", "go wtime 1000 btime 1000 searchmoves a2a3")
    assert bestmoves(lines) == ["a2a3"] and searched(lines) and not book_lines(lines)


def test_chess960_book_castling_is_king_takes_rook(uci: Session) -> None:
    uci.send("setoption name UCI_Chess960 value true")
    lines = go(uci, f"position startpos moves {RUY_LOPEZ}")
    assert bestmoves(lines) == ["e1h1"] and book_lines(lines)[0].startswith("info string book move e1h1 ")


def test_a_second_book_replaces_the_first(uci: Session, books: Path) -> None:
    uci.send(f"setoption name BookFile value {books / 'lasker-trap.bin'}")
    lines = go(uci, f"position startpos moves {LASKER_TRAP}")
    assert bestmoves(lines) == ["f2g1n"]
    assert book_lines(lines) == ["info string book move f2g1n (weight 2 of 2, lasker-trap.bin)"]
    lines = go(uci, "position startpos", "go wtime 1000 btime 1000")  # not in this book
    assert searched(lines) and not book_lines(lines)


@pytest.mark.parametrize("kind", CORRUPT_KINDS)
def test_a_bad_book_file_is_reported_and_the_previous_book_kept(uci: Session, kind: str, tmp_path: Path,
                                                                books: Path) -> None:
    path, reason = corrupt_files(tmp_path, books)[kind]
    lines = uci.send(f"setoption name BookFile value {path}")
    error = errors(lines)
    assert len(error) == 1 and f"could not use the book '{path}'" in error[0] and reason in error[0], lines
    assert error[0].endswith(f"keeping the book '{books / 'performance.bin'}'")
    assert uci.engine.options.book_file.value == str(books / "performance.bin")
    lines = go(uci, "position startpos")
    assert "performance.bin" in book_lines(lines)[0] and bestmoves(lines)[0] in START_MOVES


@pytest.mark.parametrize("kind", ["noise", "missing"])
def test_without_a_working_book_the_engine_still_plays(kind: str, tmp_path: Path, books: Path) -> None:
    path, _ = corrupt_files(tmp_path, books)[kind]
    session = Session()
    try:
        lines = session.send("setoption name OwnBook value true", f"setoption name BookFile value {path}")
        assert len(errors(lines)) == 1 and errors(lines)[0].endswith("; no book is used"), lines
        lines = go(session, "position startpos", "go wtime 1000 btime 1000")
        assert searched(lines) and chess.Move.from_uci(bestmoves(lines)[0]) in chess.Board().legal_moves
    finally:
        session.engine.handle("quit")


def test_an_empty_book_file_switches_the_book_off(uci: Session) -> None:
    for empty in ("<empty>", ""):
        uci.send(f"setoption name BookFile value {empty}")
        assert uci.engine.engine.book is None and uci.engine.options.book_file.value == ""
        lines = go(uci, "position startpos", "go wtime 1000 btime 1000")
        assert searched(lines) and not book_lines(lines) and not errors(lines)


def test_a_book_that_fails_on_read_mid_game_falls_back_to_the_search(uci: Session, tmp_path: Path,
                                                                     books: Path) -> None:
    copy = tmp_path / "growing.bin"
    shutil.copyfile(books / "lasker-trap.bin", copy)
    copy.chmod(0o644)
    assert not errors(uci.send(f"setoption name BookFile value {copy}"))
    with copy.open("ab") as grow:  # a book tool writing the file while the engine has it open
        grow.write(b"\xff" * 16 * 64)
    lines = go(uci, f"position startpos moves {LASKER_TRAP}", "go wtime 1000 btime 1000")
    assert len(errors(lines)) == 1 and f"could not read the book '{copy}'" in errors(lines)[0], lines
    assert errors(lines)[0].endswith("; searching") and searched(lines) and not book_lines(lines)
    assert chess.Move.from_uci(bestmoves(lines)[0]) in board_after(LASKER_TRAP).legal_moves


# --------------------------------------------------------------------------- a real engine process
@pytest.fixture(scope="module")
def engine(engine_cmd: list[str]) -> Iterator[chess.engine.SimpleEngine]:
    eng = chess.engine.SimpleEngine.popen_uci(engine_cmd, cwd=str(ROOT), timeout=30)
    try:
        eng.ping()
        yield eng
    finally:
        eng.quit()


def engine_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The `info string error` lines python-chess logged as received."""
    return [record.getMessage() for record in caplog.records
            if ">> info string error" in record.getMessage()]


def test_python_chess_plays_from_the_book_and_survives_a_bad_one(engine: chess.engine.SimpleEngine, books: Path,
                                                                  tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """Through python-chess, on a ten-minute clock: the book's move with its `info string` and no search
    reported (that none runs is counted in-process, test_go_on_the_clock_plays_a_book_move_at_once); a bad
    book file is reported and the previous book kept; a missing one too; a position out of book is searched."""
    caplog.set_level(logging.DEBUG, logger="chess.engine")
    engine.configure({"OwnBook": True, "BookFile": str(books / "performance.bin")})
    limit = chess.engine.Limit(white_clock=600, black_clock=600)
    result = engine.play(chess.Board(), limit, info=chess.engine.INFO_ALL)
    assert result.move is not None and result.move.uci() in START_MOVES
    assert result.info.get("string", "").startswith(f"book move {result.move.uci()} (weight 1 of 3")
    assert "depth" not in result.info  # no search
    noise, _ = corrupt_files(tmp_path, books)["noise"]
    engine.configure({"BookFile": str(noise)})
    engine.ping()
    assert len(engine_errors(caplog)) == 1 and f"could not use the book '{noise}'" in engine_errors(caplog)[0]
    board = board_after(ALAPIN)
    result = engine.play(board, limit, info=chess.engine.INFO_ALL)  # the previous book still serves
    assert result.move is not None and result.move.uci() in ALAPIN_MOVES and "depth" not in result.info
    engine.configure({"BookFile": str(tmp_path / "missing.bin")})
    engine.ping()
    assert len(engine_errors(caplog)) == 2
    board = chess.Board(ENDGAME)
    # A clock whose hard limit (1.2 s) leaves time to finish depth 1 on a busy machine too (a 1 s
    # clock's, 5 ms, may end the search inside depth 1, which reports depth 0).
    result = engine.play(board, chess.engine.Limit(white_clock=10, black_clock=10), info=chess.engine.INFO_ALL)
    assert result.move in board.legal_moves and result.info.get("depth", 0) >= 1
    engine.configure({"OwnBook": False, "BookFile": ""})
