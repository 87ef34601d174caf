"""A real UCI conversation with Garfish through python-chess's engine client.

python-chess plays the GUI here: it parses `uci`/`option` lines, sends `setoption`,
`ucinewgame`/`isready`, `position ... moves ...`, `go ...`, `stop` and `ponderhit`,
and checks every `bestmove` against the board. One engine process serves the module
(the self-play game starts two more); one test talks to the engine over raw pipes.
"""

from __future__ import annotations

import logging
import queue
import subprocess
import threading
import time
from typing import Callable, Iterator, Optional

import chess
import chess.engine
import pytest

from conftest import ENGINE_CMD, ROOT

MATE_IN_1 = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"  # 1.Ra8#
MATE_IN_2 = "kbK5/pp6/1P6/8/8/8/8/R7 w - - 0 1"  # Morphy: 1.Ra6! bxa6 2.b7#
MATED_IN_1 = "4k3/8/8/8/8/r7/1r6/7K w - - 0 1"  # 1.Kg1 (forced) Ra1#
STALEMATE = "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"
CHECKMATED = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"  # fool's mate
MIDDLEGAME = "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5"
# A Chess960 arrangement (start position 700, RBQKNNBR) with the king-side pieces
# cleared, so that castling d1h1 (king d1 -> g1, rook h1 -> f1) is legal at once.
CHESS960_FEN = "rbqk3r/pppppppp/8/8/8/8/PPPPPPPP/RBQK3R w HAha - 0 1"


def mates_in(board: chess.Board, moves: int) -> bool:
    """Brute force: can the side to move force mate within `moves` moves? (small positions only)"""
    for move in board.legal_moves:
        board.push(move)
        try:
            if board.is_checkmate():
                return True
            if moves > 1 and not board.is_game_over() and all(
                _after(board, reply, lambda b: mates_in(b, moves - 1)) for reply in list(board.legal_moves)
            ):
                return True
        finally:
            board.pop()
    return False


def _after(board: chess.Board, move: chess.Move, check: Callable[[chess.Board], bool]) -> bool:
    """check(board) after playing move (the board is restored)."""
    board.push(move)
    try:
        return check(board)
    finally:
        board.pop()


@pytest.fixture(scope="module")
def engine(engine_cmd: list[str]) -> Iterator[chess.engine.SimpleEngine]:
    eng = chess.engine.SimpleEngine.popen_uci(engine_cmd, cwd=str(ROOT), timeout=30)
    try:
        eng.ping()  # wait for the Numba engine to finish loading
        yield eng
    finally:
        eng.quit()


# --------------------------------------------------------------------------- handshake
def test_handshake_identifies_garfish(engine: chess.engine.SimpleEngine) -> None:
    assert engine.id["name"].startswith("Garfish")
    assert engine.id.get("author")


@pytest.mark.parametrize(
    "name, type_, default, min_, max_",
    [
        ("Hash", "spin", 16, 1, 32768),
        ("Clear Hash", "button", None, None, None),
        ("Threads", "spin", 1, 1, 512),
        ("Move Overhead", "spin", 30, 0, 5000),
        ("Ponder", "check", False, None, None),
        ("UCI_Chess960", "check", False, None, None),
        ("OwnBook", "check", False, None, None),
        ("BookFile", "string", "<empty>", None, None),  # python-chess keeps UCI's word for the empty string
        ("BookBestMove", "check", False, None, None),
        ("SyzygyPath", "string", "<empty>", None, None),
        ("SyzygyProbeDepth", "spin", 1, 1, 100),
        ("Syzygy50MoveRule", "check", True, None, None),
        ("SyzygyProbeLimit", "spin", 7, 0, 7),
    ],
)
def test_options_are_declared(engine: chess.engine.SimpleEngine, name: str, type_: str,
                              default: object, min_: Optional[int], max_: Optional[int]) -> None:
    option = engine.options[name]
    assert option.name == name
    assert option.type == type_
    assert option.default == default
    assert option.min == min_
    assert option.max == max_


# --------------------------------------------------------------------------- options
def test_configure_options(engine: chess.engine.SimpleEngine, caplog: pytest.LogCaptureFixture) -> None:
    # python-chess logs every engine line at DEBUG level (">> ..."): an `info string
    # error: ...` in reply to a setoption would show up there.
    caplog.set_level(logging.DEBUG, logger="chess.engine")
    engine.configure({"Hash": 32, "Move Overhead": 50, "Threads": 1})
    engine.configure({"Clear Hash": None})
    engine.ping()
    result = engine.play(chess.Board(), chess.engine.Limit(depth=3))
    assert result.move in chess.Board().legal_moves
    engine.configure({"Hash": 16, "Move Overhead": 30})
    engine.ping()
    received = [r.getMessage() for r in caplog.records if ">> " in r.getMessage()]
    assert any("readyok" in text for text in received)  # the log capture works
    errors = [text for text in received if "info string" in text and "error" in text]
    assert not errors, errors


# --------------------------------------------------------------------------- searching
def test_play_with_movetime_returns_a_legal_move_in_time(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board(MIDDLEGAME)
    start = time.perf_counter()
    result = engine.play(board, chess.engine.Limit(time=0.3))
    elapsed = time.perf_counter() - start
    print(f"go movetime 300 took {elapsed:.3f} s")
    assert result.move in board.legal_moves
    assert elapsed < 3.0  # generous: the engine aims at 0.3 s minus Move Overhead


def test_depth_limit_reaches_the_depth(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board(MIDDLEGAME)
    info = engine.analyse(board, chess.engine.Limit(depth=4), info=chess.engine.INFO_ALL)
    assert info["depth"] == 4
    assert info.get("seldepth", 4) >= 4
    assert "score" in info and info["nodes"] > 0
    walk = board.copy()
    assert info["pv"]
    for move in info["pv"]:  # the principal variation must be playable
        assert move in walk.legal_moves
        walk.push(move)


def test_node_limit_is_honoured_and_reproducible(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board(MIDDLEGAME)
    limit = chess.engine.Limit(nodes=5000)
    results = []
    for _ in range(2):
        # A new game object makes python-chess send `ucinewgame` (TT and histories cleared).
        result = engine.play(board, limit, game=object(), info=chess.engine.INFO_ALL)
        assert result.move in board.legal_moves
        assert 0 < result.info["nodes"] <= 5000
        results.append((result.move, result.info["nodes"], result.info.get("depth")))
    assert results[0] == results[1]


def test_infinite_analysis_stops_with_a_legal_move(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board(MIDDLEGAME)
    with engine.analysis(board) as analysis:
        time.sleep(0.5)
        analysis.stop()
        best = analysis.wait()
        info = analysis.info
    assert best.move in board.legal_moves
    assert info.get("depth", 0) >= 1


@pytest.mark.parametrize("fen, mate", [(MATE_IN_1, 1), (MATE_IN_2, 2)])
def test_mate_scores(engine: chess.engine.SimpleEngine, fen: str, mate: int) -> None:
    board = chess.Board(fen)
    assert mates_in(board, mate) and (mate == 1 or not mates_in(board, mate - 1))  # the FEN is right
    result = engine.play(board, chess.engine.Limit(depth=5), info=chess.engine.INFO_ALL, game=object())
    assert result.info["score"].relative.mate() == mate
    assert result.info["score"].white().mate() == mate
    board.push(result.move)
    if mate == 1:
        assert board.is_checkmate()
    else:  # whatever the reply, the engine's side still mates in one
        assert all(_after(board, reply, lambda b: mates_in(b, 1)) for reply in list(board.legal_moves))


def test_mated_side_reports_negative_mate(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board(MATED_IN_1)
    assert all(_after(board, move, lambda b: mates_in(b, 1)) for move in list(board.legal_moves))
    result = engine.play(board, chess.engine.Limit(depth=5), info=chess.engine.INFO_ALL, game=object())
    assert result.move in board.legal_moves
    assert result.info["score"].relative.mate() == -1


@pytest.mark.parametrize("fen", [STALEMATE, CHECKMATED])
def test_no_legal_move_gives_null_bestmove(engine: chess.engine.SimpleEngine, fen: str) -> None:
    board = chess.Board(fen)
    assert not any(board.legal_moves)
    result = engine.play(board, chess.engine.Limit(depth=3))
    # The engine sent `bestmove 0000`: python-chess 1.11 turns that into the null move
    # (Move.null(), which is falsy), and `bestmove (none)` into None; accept either.
    assert result.move is None or result.move == chess.Move.null()


@pytest.mark.parametrize("uci", ["a2a3", "f3g1", "e1g1"])
def test_searchmoves_restricts_the_root(engine: chess.engine.SimpleEngine, uci: str) -> None:
    board = chess.Board(MIDDLEGAME)
    move = chess.Move.from_uci(uci)
    assert move in board.legal_moves
    result = engine.play(board, chess.engine.Limit(depth=3), root_moves=[move])
    assert result.move == move


def test_ponder_then_ponderhit(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board(MIDDLEGAME)
    game = object()
    limit = chess.engine.Limit(white_clock=5, black_clock=5, white_inc=0.1, black_inc=0.1)
    start = time.perf_counter()
    first = engine.play(board, limit, ponder=True, game=game)
    assert first.move in board.legal_moves
    assert time.perf_counter() - start < 3.0
    # The engine is now pondering on the predicted reply (`go ponder`).
    board.push(first.move)
    if first.ponder is not None:
        assert first.ponder in board.legal_moves
        board.push(first.ponder)  # the predicted move is played: python-chess sends `ponderhit`
    else:
        board.push(next(iter(board.legal_moves)))
    time.sleep(0.2)
    second = engine.play(board, limit, ponder=True, game=game)
    assert second.move in board.legal_moves
    # A different position in a new game: python-chess sends `stop` to end the ponder search.
    third = engine.play(chess.Board(), chess.engine.Limit(depth=2), game=object())
    assert third.move in chess.Board().legal_moves


def test_chess960_castling_notation(engine: chess.engine.SimpleEngine) -> None:
    # python-chess manages UCI_Chess960 itself (engine.configure refuses managed
    # options): a chess960 board makes it send `setoption name UCI_Chess960 value true`.
    board = chess.Board(CHESS960_FEN, chess960=True)
    castle = board.parse_uci("d1h1")  # king takes own rook
    assert board.is_castling(castle)
    result = engine.play(board, chess.engine.Limit(depth=2), root_moves=[castle], game=object())
    assert result.move == castle
    result = engine.play(board, chess.engine.Limit(depth=3))
    assert result.move in board.legal_moves
    after = board.copy()
    after.push(castle)
    result = engine.play(after, chess.engine.Limit(depth=3))
    assert result.move in after.legal_moves
    # And back to standard chess: UCI_Chess960 goes back to false.
    standard = chess.Board("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1")
    castle = chess.Move.from_uci("e1g1")
    result = engine.play(standard, chess.engine.Limit(depth=2), root_moves=[castle], game=object())
    assert result.move == castle


# --------------------------------------------------------------------------- raw pipes
class RawEngine:
    """Minimal raw UCI pipe: write lines, read stdout lines with a timeout."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(list(ENGINE_CMD), cwd=str(ROOT), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lines: queue.Queue[Optional[str]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def expect(self, predicate, timeout: float) -> tuple[str, list[str]]:
        """Read until a line satisfies predicate; return it and the lines before it."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"timed out after {timeout} s; got {seen[-10:]}") from None
            if line is None:
                raise AssertionError(f"engine exited; got {seen[-10:]}")
            if predicate(line):
                return line, seen
            seen.append(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=5)


def test_isready_is_answered_during_an_infinite_search() -> None:
    raw = RawEngine()
    try:
        raw.send("uci")
        raw.expect(lambda s: s == "uciok", 10)
        raw.send("isready")
        raw.expect(lambda s: s == "readyok", 30)
        raw.send("position startpos moves e2e4")
        raw.send("go infinite")
        time.sleep(0.3)
        sent = time.monotonic()
        raw.send("isready")
        _, before = raw.expect(lambda s: s == "readyok", 2.0)
        print(f"readyok during search after {time.monotonic() - sent:.3f} s")
        assert not any(s.startswith("bestmove") for s in before)
        time.sleep(0.3)
        raw.send("stop")
        line, before = raw.expect(lambda s: s.startswith("bestmove"), 5)
        assert not any(s.startswith("bestmove") for s in before)
        board = chess.Board()
        board.push_uci("e2e4")
        assert chess.Move.from_uci(line.split()[1]) in board.legal_moves
        # Exactly one bestmove: nothing else arrives before the next readyok.
        raw.send("isready")
        _, before = raw.expect(lambda s: s == "readyok", 5)
        assert not any(s.startswith("bestmove") for s in before)
    finally:
        raw.close()


# --------------------------------------------------------------------------- self-play
@pytest.mark.slow
def test_self_play_game_on_a_fast_clock() -> None:
    """Garfish vs Garfish at 3 s + 0.05 s per side, clocks kept here from wall time."""
    base, inc = 3.0, 0.05
    max_moves = 120
    # Each play() call's wall time includes python-chess and pipe overhead that a real
    # GUI would not charge to the engine, so a clock may dip this far below zero.
    tolerance = 0.1
    engines = [chess.engine.SimpleEngine.popen_uci(list(ENGINE_CMD), cwd=str(ROOT), timeout=30) for _ in range(2)]
    try:
        for eng in engines:
            eng.ping()
        games = [object(), object()]
        board = chess.Board()
        clocks = {chess.WHITE: base, chess.BLACK: base}
        lowest = {chess.WHITE: base, chess.BLACK: base}
        started = time.perf_counter()
        while not board.is_game_over(claim_draw=True) and board.fullmove_number <= max_moves:
            side = board.turn
            eng = engines[0] if side == chess.WHITE else engines[1]
            limit = chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK],
                                       white_inc=inc, black_inc=inc)
            t0 = time.perf_counter()
            result = eng.play(board, limit, game=games[side])
            elapsed = time.perf_counter() - t0
            clocks[side] -= elapsed
            lowest[side] = min(lowest[side], clocks[side])
            assert clocks[side] > -tolerance, (
                f"{'white' if side else 'black'} lost on time at move {board.fullmove_number}: {clocks[side]:.3f} s")
            assert result.move is not None and result.move in board.legal_moves, (board.fen(), result.move)
            board.push(result.move)
            clocks[side] += inc
        outcome = board.outcome(claim_draw=True)
        print(f"self-play: {board.ply()} plies in {time.perf_counter() - started:.1f} s, "
              f"outcome {outcome.result() if outcome else 'adjudicated'} "
              f"({outcome.termination.name if outcome else f'{max_moves} moves'}), "
              f"lowest clocks white {lowest[chess.WHITE]:.3f} s black {lowest[chess.BLACK]:.3f} s")
        assert outcome is not None or board.fullmove_number > max_moves
    finally:
        for eng in engines:
            eng.quit()
