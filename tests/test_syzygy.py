"""Syzygy tablebases: opening the tables (SyzygyPath and the other options), root move ranking,
probes in the tree (tbhits), a table that fails mid-search, and self-play through the UCI loop
from won and drawn endings to their end, checked against the tables themselves."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Callable, Iterator

import chess
import chess.engine
import chess.syzygy
import pytest

import garfish.engine.services.syzygy
from conftest import ROOT, data_missing
from garfish.arena.rules import game_outcome
from garfish.engine.search.driver import Searcher
from garfish.engine.search.tt import TranspositionTable
from garfish.engine.services.syzygy import Tablebases, TablebaseError
from garfish.engine.types import MATE_BOUND, TB_WIN, TB_WIN_BOUND, Limits
from garfish.cli import main
from test_uci_engine import Session, bestmoves, errors

KRVK = "7K/3R4/4k3/8/8/8/8/8 w - - 0 1"  # white mates in 16 (DTZ 31)
KQVKR = "8/7k/8/4K3/2Q5/8/1r6/8 w - - 0 1"  # DTZ 17: the rook falls, then mate
KPVK_WIN = "8/8/8/1k6/5P2/8/8/3K4 w - - 0 1"  # DTZ 13
# Black to move holds the draw only by taking the opposition, 1...Kf6; without the tables Garfish
# plays 1...Ke6 here (at go nodes 1000 and 2000), which loses.
KPVK_DRAW = "8/5k2/8/8/5K2/4P3/8/8 b - - 0 1"
FIVE_MEN = "4k3/8/8/3n4/8/4N3/8/R3K3 w - - 0 1"  # 5 pieces: Nxd5 leads into the KRNvK table
GO = "go nodes 1000"  # per move in self-play: deterministic, ~0.1 s of search
MAX_PLIES = 200  # a won ending must be mated within 100 moves


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


@pytest.fixture
def uci(syzygy: Path) -> Iterator[Session]:
    """An in-process engine with the shared tables as its SyzygyPath."""
    session = Session()
    lines = session.built() + session.send(f"setoption name SyzygyPath value {syzygy}")
    assert lines == ["readyok", "info string Found 35 WDL and 35 DTZ tablebase files (up to 4-man)"], lines
    try:
        yield session
    finally:
        session.engine.handle("quit")


def think(session: Session, fen: str, moves: list[str], command: str = GO) -> list[str]:
    """Set the position, run `go` to its own end (no stop), and return what the engine printed."""
    session.engine.handle(f"position fen {fen}" + (f" moves {' '.join(moves)}" if moves else ""))
    session.output()
    session.engine.handle(command)
    thread = session.engine.engine.search_thread
    assert thread is not None
    thread.join(60)
    assert not thread.is_alive(), "no bestmove within a minute"
    return session.output()


def play_out(session: Session, fen: str, max_plies: int,
             check: Callable[[chess.Board, chess.Move], None], command: str = GO) -> chess.Board:
    """Garfish plays both sides from fen until the game ends by a rule in effect or
    max_plies; check(board, move) sees each move before it is made."""
    board = chess.Board(fen)
    session.send("ucinewgame")
    moves: list[str] = []
    while game_outcome(board) is None and len(moves) < max_plies:
        lines = think(session, fen, moves, command)
        assert not errors(lines), lines
        move = chess.Move.from_uci(bestmoves(lines)[0])
        assert move in board.legal_moves, (board.fen(), move)
        check(board, move)
        board.push(move)
        moves.append(move.uci())
    return board


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


# --------------------------------------------------------------------------- self-play to the end
@pytest.mark.parametrize("fen", [KRVK, KQVKR, KPVK_WIN], ids=["KRvK", "KQvKR", "KPvK"])
def test_a_won_ending_is_converted_to_mate(uci: Session, tables: chess.syzygy.Tablebase, fen: str) -> None:
    winner = chess.Board(fen).turn
    assert tables.probe_wdl(chess.Board(fen)) == 2

    def fastest(board: chess.Board, move: chess.Move) -> None:
        if board.turn == winner:  # the winner never lets the win slip, nor dawdles
            assert move in fastest_wins(tables, board), f"{move} is not among the fastest wins in {board.fen()}"

    board = play_out(uci, fen, MAX_PLIES, fastest)
    assert board.is_checkmate() and board.turn != winner, (board.fen(), game_outcome(board))
    assert len(board.move_stack) <= MAX_PLIES and board.halfmove_clock < 100


def test_a_drawn_ending_is_held_by_the_defender(uci: Session, tables: chess.syzygy.Tablebase) -> None:
    defender = chess.Board(KPVK_DRAW).turn
    assert tables.probe_wdl(chess.Board(KPVK_DRAW)) == 0

    def still_drawn(board: chess.Board, move: chess.Move) -> None:
        if board.turn == defender:
            after = board.copy()
            after.push(move)
            assert after.is_insufficient_material() or tables.probe_wdl(after) == 0, f"{move} loses in {board.fen()}"

    board = play_out(uci, KPVK_DRAW, 60, still_drawn)
    assert board.move_stack[0] == chess.Move.from_uci("f7f6")  # the one drawing move
    assert not board.is_checkmate()


# --------------------------------------------------------------------------- at a fast game's speed
TIMED_SEED = 30  # the random endings below, drawn once with this seed
TIMED_WINS = ("KQvK", "KRvK", "KBNvK", "KPvK", "KQvKR", "KQvKN", "KPPvK")
TIMED_DRAWS = ("KRvKR", "KPvK")
TIMED_EACH = 2  # random wins of each table
TIMED_DRAW_PLIES = 40  # a draw is held for this many plies (or to its end by a rule)
MIN_TIMED_DTZ = 2  # a win chosen for the test is more than a capture or pawn move away from its next phase


def random_ending(tables: chess.syzygy.Tablebase, rng: random.Random, name: str, wdl: int) -> str:
    """A random legal position of the table `name` (White the first side), the side to move at WDL `wdl`."""
    pieces = [chess.Piece.from_symbol(symbol if side == 0 else symbol.lower())
              for side, group in enumerate(name.split("v")) for symbol in group]
    while True:
        board = chess.Board(None)
        for piece, square in zip(pieces, rng.sample(chess.SQUARES, len(pieces))):
            board.set_piece_at(square, piece)
        board.turn = rng.choice(chess.COLORS)
        if (board.is_valid() and not board.is_game_over() and board.legal_moves.count() > 1
                and tables.probe_wdl(board) == wdl and (wdl == 0 or tables.probe_dtz(board) > MIN_TIMED_DTZ)):
            return board.fen()


def timed_endings(tables: chess.syzygy.Tablebase) -> list[tuple[str, str, int]]:
    """(table, FEN, WDL of the side to move): TIMED_EACH random wins of each TIMED_WINS, a won KRvK whose
    halfmove clock leaves the win just within the fifty-move rule, and one draw of each TIMED_DRAWS."""
    rng = random.Random(TIMED_SEED)
    endings = [(name, random_ending(tables, rng, name, 2), 2) for name in TIMED_WINS for _ in range(TIMED_EACH)]
    late = chess.Board(random_ending(tables, rng, "KRvK", 2))
    late.halfmove_clock = 100 - tables.probe_dtz(late) - 4  # 4 plies to spare
    endings.append(("KRvK-late", late.fen(), 2))
    return endings + [(name, random_ending(tables, rng, name, 0), 0) for name in TIMED_DRAWS]


@pytest.mark.parametrize("movetime", [50, 100])
def test_endings_are_converted_and_held_at_a_fast_games_speed(uci: Session, tables: chess.syzygy.Tablebase,
                                                            movetime: int) -> None:
    """At `go movetime 100` and 50 a move (a 10+0.1 game's late moves, and less), every win is
    mated before the fifty-move rule, KBNvK and a late halfmove clock included, and no draw is let
    slip; the root ranking, not the search's depth, makes the progress (a win ranked by WDL alone
    was shuffled), and it completes whatever the machine's speed (its probes are not cut by time
    before a winning move is found), so the test does not depend on the CPU the engine gets."""
    failures = []
    for name, fen, wdl in timed_endings(tables):
        side = chess.Board(fen).turn
        drawn: list[str] = []

        def holds(board: chess.Board, move: chess.Move) -> None:
            after = board.copy()
            after.push(move)
            if wdl == 0 and board.turn == side and not after.is_insufficient_material() and tables.probe_wdl(after):
                drawn.append(f"{move} changes the result in {board.fen()}")

        board = play_out(uci, fen, MAX_PLIES if wdl else TIMED_DRAW_PLIES, holds, f"go movetime {movetime}")
        outcome = game_outcome(board)
        if wdl and not (outcome and outcome.winner == side and outcome.termination == chess.Termination.CHECKMATE):
            failures.append(f"{name} {fen}: not mated ({outcome}, {board.fen()})")
        failures += [f"{name}: {text}" for text in drawn]
    assert not failures, failures


# --------------------------------------------------------------------------- root moves and tbhits
def test_the_root_keeps_only_the_fastest_winning_moves(syzygy: Path, tables: chess.syzygy.Tablebase) -> None:
    board = chess.Board(KRVK)
    fastest = set(fastest_wins(tables, board))
    legal = board.legal_moves.count()
    assert len(fastest) == 6 and legal == 17  # slower wins (Rc7, Rg7: 33 plies) and draws (Rd6+?? Kxd6)
    tablebase = Tablebases(str(syzygy))
    ranking = tablebase.rank_root_moves(board, list(board.legal_moves))
    assert ranking is not None and ranking.by_dtz and ranking.moves and set(ranking.moves) <= fastest
    assert ranking.score == TB_WIN and 1 <= ranking.probes < legal  # it stops at a fastest win
    for first in fastest:  # the move probed first (the TT's) is kept when it is one of them
        assert tablebase.rank_root_moves(board, list(board.legal_moves), first=first).moves == [first]
    searcher = Searcher(TranspositionTable(1), tablebase=tablebase)
    infos = []
    result = searcher.search(board, Limits(depth=3), on_info=infos.append)
    assert result.move in fastest and infos[-1].tbhits == ranking.probes
    assert infos[-1].score == TB_WIN and infos[-1].cp == 20000  # shown as Stockfish shows a TB win


def test_tbhits_and_tablebase_scores_appear_in_the_info_lines(uci: Session) -> None:
    board = chess.Board(KQVKR)
    lines = think(uci, KQVKR, [], "go depth 3")
    info = [line for line in lines if line.startswith("info depth")]
    hits = {line.split(" tbhits ")[1].split()[0] for line in info}
    assert info and len(hits) == 1 and 1 <= int(hits.pop()) <= board.legal_moves.count(), lines
    assert all(" score cp 20000 " in line for line in info), lines
    # Five pieces: no table at the root; the tree probes the positions after a capture.
    lines = think(uci, FIVE_MEN, [], "go depth 4")
    last = [line for line in lines if line.startswith("info depth")][-1].split()
    assert int(last[last.index("tbhits") + 1]) > 0, lines
    assert int(last[last.index("cp") + 1]) > 19000 and bestmoves(lines) == ["e3d5"], lines  # the knight trade wins


def test_the_probe_limit_and_path_switch_probing_off(uci: Session) -> None:
    uci.send("setoption name SyzygyProbeLimit value 0")
    lines = think(uci, KQVKR, [], "go depth 2")
    assert " tbhits 0 " in lines[-2] and " score cp 20000 " not in lines[-2], lines
    uci.send("setoption name SyzygyProbeLimit value 7")
    assert " tbhits 0 " not in think(uci, KQVKR, [], "go depth 2")[-2]
    assert uci.send("setoption name SyzygyPath value <empty>") == []
    assert uci.engine.engine.searcher is not None and uci.engine.engine.searcher.tablebase is None
    assert uci.engine.engine.tablebase is None
    assert " tbhits 0 " in think(uci, KQVKR, [], "go depth 2")[-2]


def test_the_other_options_reach_the_tables(uci: Session, syzygy: Path) -> None:
    searcher = uci.engine.engine.searcher
    assert searcher is not None and searcher.tablebase is not None
    uci.send("setoption name SyzygyProbeDepth value 5", "setoption name Syzygy50MoveRule value false",
             "setoption name SyzygyProbeLimit value 3")
    tablebase = searcher.tablebase
    assert (tablebase.probe_depth, tablebase.rule50, tablebase.probe_limit) == (5, False, 3)
    assert (tablebase.cardinality, tablebase.depth) == (3, 5)
    uci.send(f"setoption name SyzygyPath value {syzygy}")  # new tables take the options' values
    assert searcher.tablebase is not tablebase and not searcher.tablebase.rule50
    assert (searcher.tablebase.cardinality, searcher.tablebase.depth) == (3, 5)
    uci.send("setoption name SyzygyProbeLimit value 7")  # above the largest tables: probe at any depth
    assert (searcher.tablebase.cardinality, searcher.tablebase.depth) == (4, 0)


# --------------------------------------------------------------------------- tables that cannot serve
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


def test_a_bad_path_is_refused_and_the_previous_tables_kept(uci: Session, syzygy: Path, tmp_path: Path) -> None:
    searcher = uci.engine.engine.searcher
    assert searcher is not None
    kept = searcher.tablebase
    bad_magic = some_tables(tmp_path / "bad", syzygy)
    (bad_magic / "KPvK.rtbz").write_bytes(b"\0" * 80)  # the right size, not a table
    empty = tmp_path / "empty"
    empty.mkdir()
    queen_for_rook = damaged_header(tmp_path / "header", syzygy)
    for path, why in [(tmp_path / "missing", f"cannot read the folder '{tmp_path / 'missing'}'"),
                      (bad_magic, f"'{bad_magic / 'KPvK.rtbz'}' is not a Syzygy table"),
                      (queen_for_rook, f"'{queen_for_rook / 'KRvK.rtbw'}' has a damaged header"),
                      (empty, "no Syzygy WDL tables")]:
        lines = uci.send(f"setoption name SyzygyPath value {path}")
        assert len(lines) == 1 and lines[0].startswith(f"info string error: could not use SyzygyPath '{path}': ")
        assert why in lines[0] and lines[0].endswith(f"; keeping the tablebases of '{syzygy}'"), lines
        assert searcher.tablebase is kept and uci.engine.options.syzygy_path.value == str(syzygy)
    lines = think(uci, KRVK, [], "go depth 2")
    assert not errors(lines) and " score cp 20000 " in lines[-2] and " tbhits 0 " not in lines[-2]  # still served
    fresh = Session()
    try:
        lines = fresh.built() + fresh.send(f"setoption name SyzygyPath value {tmp_path / 'missing'}")
        assert errors(lines)[0].endswith("; no tablebases are used")
        assert bestmoves(think(fresh, KRVK, [], "go depth 2"))
    finally:
        fresh.engine.handle("quit")


def corrupt_tables(folder: Path, syzygy: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every table, with all but the first 16 bytes of the WDL table `name` overwritten: python-chess's
    probes of it raise IndexError. Opening would refuse its header; the check is switched off
    here, standing for damage that only a probe meets."""
    monkeypatch.setattr(garfish.engine.services.syzygy, "check_table_header", lambda table: None)
    folder.mkdir()
    for table in syzygy.glob("*.rtb?"):
        shutil.copyfile(table, folder / table.name)
    damaged = bytearray((folder / f"{name}.rtbw").read_bytes())
    damaged[16:] = b"\xff" * (len(damaged) - 16)
    (folder / f"{name}.rtbw").write_bytes(damaged)
    return folder


def test_a_table_that_fails_is_reported_once_and_the_search_goes_on(uci: Session, syzygy: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    folder = corrupt_tables(tmp_path / "corrupt", syzygy, "KRvK", monkeypatch)
    assert uci.send(f"setoption name SyzygyPath value {folder}")[0].startswith("info string Found 35 WDL")
    lines = think(uci, KRVK, [], "go depth 3")
    assert len(errors(lines)) == 1 and "Syzygy probe failed in " in errors(lines)[0], lines
    assert "IndexError" in errors(lines)[0] and errors(lines)[0].endswith("until SyzygyPath is set again")
    assert chess.Move.from_uci(bestmoves(lines)[0]) in chess.Board(KRVK).legal_moves
    lines = think(uci, KQVKR, [], "go depth 3")  # probing is off: no more reports, nor tbhits
    assert not errors(lines) and " tbhits 0 " in lines[-2] and bestmoves(lines), lines


def test_a_table_that_fails_inside_the_tree_stops_the_probes(syzygy: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    failures: list[str] = []
    folder = corrupt_tables(tmp_path / "corrupt", syzygy, "KRNvK", monkeypatch)
    searcher = Searcher(TranspositionTable(1), tablebase=Tablebases(str(folder), on_failure=failures.append))
    result = searcher.search(chess.Board(FIVE_MEN), Limits(depth=4))
    assert len(failures) == 1 and failures[0].startswith("Syzygy probe failed in ") and "IndexError" in failures[0]
    assert result.move in chess.Board(FIVE_MEN).legal_moves and searcher.tablebase.cardinality == 0
    assert abs(result.score) < TB_WIN_BOUND  # no tablebase score came out of the broken table


def damaged_header(folder: Path, syzygy: Path) -> Path:
    """Every table, with KRvK.rtbw's header saying queen where it means rook (byte 8 holds the
    third piece's code for both sides: 0x44, white rook). Its size and magic pass; python-chess,
    probing it, looks for a queen that is not on the board and loops for ever."""
    folder.mkdir()
    for table in syzygy.glob("*.rtb?"):
        shutil.copyfile(table, folder / table.name)
    damaged = bytearray((folder / "KRvK.rtbw").read_bytes())
    assert damaged[8] == 0x44
    damaged[8] = 0x55
    (folder / "KRvK.rtbw").write_bytes(damaged)
    return folder


def test_a_damaged_header_is_refused_at_opening_not_probed(syzygy: Path, tmp_path: Path) -> None:
    folder = damaged_header(tmp_path / "header", syzygy)
    with pytest.raises(TablebaseError, match=r"KRvK.rtbw' has a damaged header \(its pieces are not those of KRvK\)"):
        Tablebases(str(folder))
    # Every sound table of the shared set passes the same check (each is opened and read).
    assert Tablebases(str(syzygy)).wdl_count == 35


def test_a_tablebase_error_is_an_exception_not_a_crash(tmp_path: Path) -> None:
    with pytest.raises(TablebaseError, match="no folder given"):
        Tablebases(os.pathsep)


# --------------------------------------------------------------------------- bench and a real process
def test_bench_refuses_a_missing_syzygy_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "1", "--syzygy", str(tmp_path / "missing")]) == 2
    assert "cannot use the Syzygy tables: cannot read the folder" in capsys.readouterr().err


def test_python_chess_reads_tbhits_and_a_tablebase_score(engine_cmd: list[str], syzygy: Path) -> None:
    engine = chess.engine.SimpleEngine.popen_uci(engine_cmd, cwd=str(ROOT), timeout=30)
    try:
        engine.configure({"SyzygyPath": str(syzygy)})
        info = engine.analyse(chess.Board(KQVKR), chess.engine.Limit(depth=3))
        assert 1 <= info["tbhits"] <= chess.Board(KQVKR).legal_moves.count()  # root moves ranked
        score = info["score"].white()
        assert not score.is_mate() and score.score() == 20000 and 20000 < MATE_BOUND
    finally:
        engine.quit()


def test_out_of_time_the_root_still_keeps_a_win_the_fifty_move_counter_cannot_spoil(
        syzygy: Path, tables: chess.syzygy.Tablebase) -> None:
    """With no time left to probe (the deadline passed: a slow or busy machine), the ranking may stop at the
    first move that keeps the win, but not at one the fifty-move counter then spoils. KBNvK (its table holds
    the loser to move, so the moves' DTZ is probed one by one): with the counter at 57 it is won in 42 plies
    (57 + 42 = 99) by Nb6 alone, and Kd6 or Bc3 (44, 46 plies) would pass 100: a game that plays such moves
    shuffles the win into a fifty-move draw (as one was drawn under load at movetime 50). With the counter at
    0 they spoil nothing, and the ranking out of time stops at the one probed first, as before."""
    board = chess.Board("N7/2K5/8/8/8/8/8/k3B3 w - - 57 1")
    fastest = chess.Move.from_uci("a8b6")
    assert set(fastest_wins(tables, board)) == {fastest}
    tablebase = Tablebases(str(syzygy))
    for slower in (chess.Move.from_uci("c7d6"), chess.Move.from_uci("e1c3")):
        ranking = tablebase.rank_root_moves(board, list(board.legal_moves), deadline=0.0, first=slower)
        assert ranking is not None and ranking.moves == [fastest], ranking
        board.halfmove_clock = 0
        ranking = tablebase.rank_root_moves(board, list(board.legal_moves), deadline=0.0, first=slower)
        assert ranking is not None and ranking.moves == [slower] and ranking.probes == 1, ranking
        board.halfmove_clock = 57


def test_once_a_position_repeats_no_win_goes_round_in_a_circle(syzygy: Path, tables: chess.syzygy.Tablebase) -> None:
    """A win whose ranking was cut by the deadline (slower wins, each keeping the result) went round in a
    circle into a threefold repetition in KBNvK at movetime 50 on a busy machine: once a position has stood
    twice since the last capture or pawn move, a move after which the loser can bring one back a third time
    ranks as a draw, and the deadline no longer cuts the ranking (Stockfish ranks every win by DTZ then).
    Here Bh6 lets Ka8 repeat the start a third time; Bf8, another win, does not."""
    board = chess.Board("k6K/8/7B/1N6/8/8/8/8 w - - 0 1")
    for uci in ("h6g7", "a8b8", "g7h6", "b8a8", "h6g7", "a8b8"):
        board.push_uci(uci)
    back, other = chess.Move.from_uci("g7h6"), chess.Move.from_uci("g7f8")
    for move in (back, other):
        after = board.copy()
        after.push(move)
        assert tables.probe_wdl(after) == -2  # both keep the win in the tables' eyes
    tablebase = Tablebases(str(syzygy))
    ranking = tablebase.rank_root_moves(board, [back, other], deadline=0.0, first=back)
    assert ranking is not None and ranking.moves == [other] and ranking.probes == 2, ranking
    fresh = chess.Board(board.fen())  # the same position without its game: Bh6 is a win like any other
    ranking = tablebase.rank_root_moves(fresh, [back, other], deadline=0.0, first=back)
    assert ranking is not None and ranking.moves == [back] and ranking.probes == 1, ranking
    full = tablebase.rank_root_moves(board, list(board.legal_moves), deadline=0.0)
    assert full is not None and back not in full.moves and set(full.moves) <= set(fastest_wins(tables, board))
