"""The protocol layer in-process: `go` parsing into Limits, and a UciEngine driven through string streams."""

from __future__ import annotations

import chess
import pytest

from garfish.engine.types import Limits
from garfish.uci.protocol import parse_go


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
