"""The protocol layer in-process: `go` parsing into Limits, and a UciEngine driven through string streams."""

from __future__ import annotations

import io
from typing import Iterator

import chess
import pytest

from garfish.engine.search import SearchResult
from garfish.engine.types import Limits
from garfish.uci.options import OptionError, Spin
from garfish.uci.protocol import UciEngine, parse_go


def go(line: str, board: chess.Board | None = None) -> tuple[Limits, int | None, list[str]]:
    """parse_go on a `go` line's arguments: the limits, the perft depth and the warnings."""
    warnings: list[str] = []
    limits, perft = parse_go(line.split(), board or chess.Board(), warnings.append)
    return limits, perft, warnings


def test_go_clock_arrives_in_seconds() -> None:
    limits, perft, warnings = go("wtime 60000 btime 59000 winc 1000 binc 500 movestogo 20")
    assert (limits.wtime, limits.btime, limits.winc, limits.binc) == (60.0, 59.0, 1.0, 0.5)
    assert limits.movestogo == 20 and not limits.infinite and perft is None and not warnings


@pytest.mark.parametrize(("line", "expected"), [
    ("", Limits(infinite=True)),  # a bare `go` searches until stop
    ("btime 1000", Limits(wtime=0.0, btime=1.0)),  # the missing clock counts as empty
    ("wtime -5 btime -1 winc -3", Limits(wtime=0.0, btime=0.0)),  # negative times: none left
    ("movetime 1.5e3", Limits(movetime=1.5)),
    ("movetime 99999999999999999999", Limits(movetime=1e17)),
    ("depth 0 nodes -5 mate 0", Limits(depth=1, nodes=1, mate=1)),  # the smallest search, not none
    ("depth 2.9", Limits(depth=2)),
    ("movestogo 0 wtime 1000 btime 1000", Limits(wtime=1.0, btime=1.0)),  # sudden death
    ("ponder wtime 1000 btime 1000", Limits(wtime=1.0, btime=1.0, ponder=True)),
    ("infinite", Limits(infinite=True)),
])
def test_go_values_without_warnings(line: str, expected: Limits) -> None:
    limits, perft, warnings = go(line)
    assert limits == expected and perft is None and not warnings


@pytest.mark.parametrize(("line", "expected", "warning"), [
    ("depth", Limits(infinite=True), "go depth needs a number"),
    ("depth inf", Limits(infinite=True), "go depth needs a finite number, not 'inf'"),
    ("wtime abc btime 1000", Limits(wtime=0.0, btime=1.0), "go wtime needs a finite number, not 'abc'"),
    ("foo depth 3", Limits(depth=3), "unknown go parameter 'foo'"),
    ("searchmoves e2e4 z9z9 depth 1", Limits(depth=1, searchmoves=[chess.Move.from_uci("e2e4")]),
     "searchmoves: 'z9z9' is not a legal move here"),
    ("searchmoves e2e5", Limits(infinite=True), "searchmoves: 'e2e5' is not a legal move here"),
])
def test_go_reports_and_skips_what_it_cannot_read(line: str, expected: Limits, warning: str) -> None:
    limits, perft, warnings = go(line)
    assert limits == expected and perft is None and warnings == [warning]


def test_go_perft_comes_back_beside_the_limits() -> None:
    assert go("perft 3")[1] == 3
    assert go("perft -1")[1] == -1  # run_perft refuses it with a message
    _, perft, warnings = go("perft abc")
    assert perft is None and warnings == ["go perft needs a finite number, not 'abc'"]


# --------------------------------------------------------------------------- a UciEngine on string streams
class Session:
    """One UciEngine writing to a string: send it lines, read back what it printed since last time."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        self.engine = UciEngine(self.out)
        self.read = 0

    def send(self, *lines: str) -> list[str]:
        """Handle the lines, let a search they started finish (stopping an infinite one), return the output."""
        for line in lines:
            self.engine.handle(line)
        self.engine.finish_search()
        return self.output()

    def output(self) -> list[str]:
        """Lines printed since the last call."""
        with self.engine.out_lock:
            text = self.out.getvalue()
        new, self.read = text[self.read:], len(text)
        return new.splitlines()


@pytest.fixture
def session() -> Iterator[Session]:
    started = Session()
    started.send("isready")
    try:
        yield started
    finally:
        started.engine.handle("quit")


def errors(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("info string error")]


def bestmoves(lines: list[str]) -> list[str]:
    return [line.split()[1] for line in lines if line.startswith("bestmove")]


def test_options_are_listed_from_their_declarations(session: Session) -> None:
    lines = session.send("uci")
    assert [line for line in lines if line.startswith("option")] == [
        "option name Hash type spin default 16 min 1 max 32768",
        "option name Clear Hash type button",
        "option name Threads type spin default 1 min 1 max 512",
        "option name Move Overhead type spin default 30 min 0 max 5000",
        "option name Ponder type check default false",
        "option name UCI_Chess960 type check default false",
    ]
    assert lines[-1] == "uciok"


def test_setoption_carries_out_the_value_through_the_declared_handler(session: Session) -> None:
    engine = session.engine
    assert engine.searcher is not None
    assert not errors(session.send("setoption name hash value 2"))
    assert engine.hash.value == 2 and engine.searcher.tt.megabytes == 2
    lines = session.send("setoption name Hash value 0", "setoption name Hash value x")
    assert len(errors(lines)) == 2 and engine.hash.value == 2 and engine.searcher.tt.megabytes == 2
    assert not errors(session.send("setoption name UCI_Chess960 value true"))
    assert engine.chess960 and engine.board.chess960
    assert session.send("setoption name Threads value 4") == ["info string Threads 4: Garfish searches with one thread"]


def test_move_overhead_reaches_the_search_in_its_limits(session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    searcher = session.engine.searcher
    assert searcher is not None
    seen: list[Limits] = []
    search = searcher.search

    def spy(board: chess.Board, limits: Limits, **kwargs: object) -> SearchResult:
        seen.append(limits)
        return search(board, limits, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(searcher, "search", spy)
    session.send("setoption name Move Overhead value 120", "go depth 1")
    assert seen[-1].move_overhead == pytest.approx(0.12) and seen[-1].depth == 1


def test_a_failed_effect_keeps_the_previous_value() -> None:
    def refuse(value: int) -> None:
        raise OptionError(f"cannot use {value}")

    option = Spin("Size", 4, on_change=refuse, min=1, max=9)
    with pytest.raises(OptionError):
        option.set(option.parse("8"))
    assert option.value == 4
