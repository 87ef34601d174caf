"""arena.pipe: datagen's UCI client on raw pipes writes what python-chess's client writes, reads the
score and the move, and turns an engine's faults into the same errors as arena.driver."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import chess
import chess.engine
import pytest

from conftest import SCRIPTED, until_first_go
from garfish.arena.driver import EngineSpec, EngineStartError, MoveError
from garfish.arena.pipe import (PipeEngine, declared_options, go_command, parse_score, position_command,
                                setoption_lines)

NODES = chess.engine.Limit(nodes=10)
STALL_DEADLINE = 0.5  # the stalling engine never answers: any deadline ends in a timeout


def scripted_spec(*args: str, options: dict[str, str] | None = None) -> EngineSpec:
    """The scripted test engine with these arguments."""
    return EngineSpec([sys.executable, str(SCRIPTED), *args], options=options or {})


def client_position(board: chess.Board) -> str:
    """The `position` line python-chess's UCI client writes for this board."""
    sent: list[str] = []

    async def build() -> None:
        """python-chess's protocol object, its output captured instead of sent."""
        protocol = chess.engine.UciProtocol()
        protocol.send_line = sent.append  # type: ignore[method-assign]
        protocol._position(board)

    asyncio.run(build())
    return sent[-1] + "\n"


@pytest.mark.parametrize("start, moves", [
    (chess.STARTING_FEN, ["e2e4", "e7e5", "g1f3"]),
    (chess.STARTING_FEN, []),
    ("rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2", ["c2c4", "d5c4"]),
    ("8/8/8/3k4/8/8/4P3/4K3 w - - 0 1", ["e2e4"]),  # en passant square in the history
])
def test_position_is_written_as_python_chess_writes_it(start: str, moves: list[str]) -> None:
    """The same `position` line as python-chess's client, so that an engine plays the same games."""
    board = chess.Board(start)
    for move in moves:
        board.push_uci(move)
    assert position_command(board) == client_position(board)


def test_a_history_with_a_null_move_is_sent_as_the_position_alone() -> None:
    """As python-chess: a null move cannot be sent, so the current position goes without moves."""
    board = chess.Board()
    board.push_uci("e2e4")
    board.push(chess.Move.null())
    assert position_command(board) == client_position(board) == f"position fen {board.fen(en_passant='fen')}\n"


def test_go_and_scores() -> None:
    """`go` carries the limit; a score is read from the side to move's view, mate or centipawns."""
    assert go_command(chess.engine.Limit(nodes=2000)) == "go nodes 2000\n"
    assert go_command(chess.engine.Limit(depth=3, nodes=50)) == "go depth 3 nodes 50\n"
    cp = parse_score("info depth 9 seldepth 12 multipv 1 score cp -35 lowerbound nodes 2001 pv e2e4", chess.BLACK)
    assert cp is not None and cp.white() == chess.engine.Cp(35)
    mate = parse_score("info depth 3 score mate -2 pv a1a2", chess.WHITE)
    assert mate is not None and mate.white() == chess.engine.Mate(-2)
    assert parse_score("info depth 3 score", chess.WHITE) is None
    assert parse_score("info depth 3 score wdl 1 2 3", chess.WHITE) is None


def test_options_are_checked_against_the_declared_ones() -> None:
    """Names case-insensitively, spins as integers, checks as true/false; unknown and managed ones refused."""
    declared = declared_options(["option name Hash type spin default 16 min 1 max 33554432",
                                 "option name Ponder type check default false", "option name Clear Hash type button",
                                 "option name Use NNUE type check default true"])
    assert setoption_lines(declared, {"hash": "16", "Use NNUE": "False", "Clear Hash": ""}) == [
        "setoption name Hash value 16\n", "setoption name Use NNUE value false\n", "setoption name Clear Hash\n"]
    with pytest.raises(ValueError, match="no option 'Hashes'"):
        setoption_lines(declared, {"Hashes": "16"})
    with pytest.raises(ValueError, match="takes an integer"):
        setoption_lines(declared, {"Hash": "big"})
    with pytest.raises(ValueError, match="true or false"):
        setoption_lines(declared, {"Use NNUE": "maybe"})
    with pytest.raises(ValueError, match="set by garfish datagen"):
        setoption_lines(declared, {"Ponder": "true"})


def test_a_move_with_its_score_then_a_restart(tmp_path: Path) -> None:
    """A legal move and the last info line's score; the options reach the engine, under the names it declared,
    before its first `go` (its log says so), and again after a restart, which plays the same move."""
    log = tmp_path / "options.log"
    engine = PipeEngine(scripted_spec("--score", "-40", "--options", "--log", str(log),
                                      options={"skill": "3", "Flag": "true"}))
    try:
        assert engine.name == "scripted-first" and engine.alive()
        board = chess.Board()
        board.push_uci("e2e4")
        engine.new_game(object())
        played = engine.play(board, NODES, None, 10.0)
        assert played.move in board.legal_moves
        assert played.info["score"].white() == chess.engine.Cp(40)  # -40 for Black, to move
        engine.restart()
        assert engine.play(board, NODES, None, 10.0).move == played.move
    finally:
        engine.close()
    assert not engine.alive()
    processes = until_first_go(log)
    assert len(processes) == 2, processes  # the first process and the restarted one
    for received in processes:
        assert {"setoption name Skill value 3", "setoption name Flag value true"} <= set(received), received


@pytest.mark.parametrize("misbehave, kind", [
    ("illegal", "illegal"), ("null", "illegal"), ("none", "illegal"), ("crash", "crash"), ("stall", "timeout"),
])
def test_faults_are_the_drivers_errors(misbehave: str, kind: str) -> None:
    """An illegal move, 0000, (none), a crash and a stall: MoveError of the same kind as arena.driver's;
    a stalled engine is killed at its deadline."""
    engine = PipeEngine(scripted_spec("--misbehave", misbehave))
    try:
        engine.new_game(object())
        with pytest.raises(MoveError) as raised:
            engine.play(chess.Board(), NODES, None, STALL_DEADLINE)
        assert raised.value.kind == kind
        if kind != "illegal":
            assert not engine.alive()
    finally:
        engine.close()


@pytest.mark.parametrize("args, options, message", [
    (["--fail-start"], {}, "failed to get ready"),
    ([], {"Hash": "16"}, "has no option 'Hash'"),
    (["--options"], {"Skill": "many"}, "takes an integer"),
])
def test_an_engine_that_cannot_start_is_a_start_error(args: list[str], options: dict[str, str], message: str) -> None:
    """An engine that exits before uciok, or an option it does not have or cannot take."""
    with pytest.raises(EngineStartError, match=message):
        PipeEngine(scripted_spec(*args, options=options))


def test_a_missing_program_is_a_start_error(tmp_path: Path) -> None:
    """A command that does not exist."""
    with pytest.raises(EngineStartError, match="cannot start engine"):
        PipeEngine(EngineSpec([str(tmp_path / "no-such-engine")]))
