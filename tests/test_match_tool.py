"""`garfish match`: forfeits, restarts, adjudication, SPRT and PGN output, driven through the command line.

The engines are tests/scripted_engine.py in its various modes (and Garfish once). Every game is
deterministic: the scripted engines pick moves by a seeded hash of the position.
"""

from __future__ import annotations

import json
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Optional

import chess
import chess.pgn
import pytest

from conftest import (CLI_TIMEOUT, PNG_SIGNATURE, ROOT, SCRIPTED, WITHOUT_MATPLOTLIB, data_missing, read_games,
                      until_first_go)
from garfish.arena import journal, match
from garfish.arena.driver import DEFAULT_COMMAND, EngineProcess, EngineSpec
from garfish.arena.game import PGN_TERMINATION, Adjudication, AdjudicationTracker, GameRecord, TimeControl
from garfish.arena.openings import GameTask
from garfish.arena.report import MatchState, game_line, print_summary, summary_dict
from garfish.arena.tools import EXIT_INTERRUPTED

OPENINGS = [
    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
    "rnbqkb1r/pppppppp/5n2/8/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 1 2",
    "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
]


def scripted(*args: str) -> str:
    """`cmd=...` for the scripted engine with these arguments."""
    return "cmd=" + " ".join(shlex.quote(part) for part in (sys.executable, str(SCRIPTED), *args))


def run_match(*args: str) -> subprocess.CompletedProcess:
    """Run `python -m garfish.uci match ...` and capture its output."""
    return subprocess.run([sys.executable, "-m", "garfish.uci", "match", *args], cwd=str(ROOT), capture_output=True,
                          text=True, timeout=CLI_TIMEOUT)


def finished_without_forfeits(proc: subprocess.CompletedProcess, report: Path, games: int) -> dict:
    """The JSON report of a match that exited 0 after `games` games and no forfeit."""
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(report.read_text())
    assert data["games"] == games
    assert all(count == 0 for counts in data["forfeits"].values() for count in counts.values()), proc.stdout
    return data


@pytest.fixture
def openings(tmp_path: Path) -> Path:
    """A small FEN-per-line book with one bad line."""
    path = tmp_path / "book.epd"
    path.write_text("\n".join(OPENINGS[:2] + ["not a fen"] + OPENINGS[2:]) + "\n")
    return path


def test_normal_match_completes_with_pgn_and_report(tmp_path: Path, openings: Path) -> None:
    """A 6-game match completes with W+D+L = games, pairs sharing openings, and PGN reasons."""
    pgn, report = tmp_path / "games.pgn", tmp_path / "report.json"
    proc = run_match("--engine", scripted("--play", "random", "--seed", "1"), "name=alpha",
                     "--engine", scripted("--play", "greedy", "--seed", "2"), "name=beta",
                     "--tc", "5+0.05", "--games", "6", "--openings", str(openings), "--seed", "11",
                     "--concurrency", "2", "--max-moves", "60", "--pgnout", str(pgn), "--report", str(report))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "book.epd:3: skipped opening" in proc.stderr
    data = json.loads(report.read_text())
    assert data["games"] == 6
    assert data["wins"] + data["draws"] + data["losses"] == 6
    assert sum(data["pentanomial"]) == 3
    assert data["forfeits"] == {"alpha": {"illegal": 0, "time": 0, "crash": 0},
                                "beta": {"illegal": 0, "time": 0, "crash": 0}}
    assert "Elo difference" in proc.stdout and "LOS" in proc.stdout
    assert proc.stdout.count("Game ") >= 6
    games = read_games(pgn)
    assert len(games) == 6
    by_round = {int(game.headers["Round"]): game for game in games}
    for number in (1, 3, 5):
        first, second = by_round[number], by_round[number + 1]
        assert first.headers["FEN"] == second.headers["FEN"]  # a pair shares its opening
        assert first.headers["FEN"] in OPENINGS
        assert (first.headers["White"], second.headers["White"]) == ("alpha", "beta")
    for game in games:
        assert game.headers["Result"] in ("1-0", "0-1", "1/2-1/2")
        assert game.headers["Termination"] in ("normal", "adjudication")
        assert game.headers["ResultReason"]
        board = game.end().board()
        if game.headers["ResultReason"] == "checkmate":
            assert board.is_checkmate()


def test_same_seed_same_games(tmp_path: Path, openings: Path) -> None:
    """The same seeds give the same games."""
    texts = []
    for run in range(2):
        pgn = tmp_path / f"games{run}.pgn"
        proc = run_match("--engine", scripted("--play", "random", "--seed", "1"),
                         "--engine", scripted("--play", "random", "--seed", "2"),
                         "--nodes", "1", "--games", "2", "--openings", str(openings), "--seed", "5",
                         "--max-moves", "30", "--pgnout", str(pgn))
        assert proc.returncode == 0, proc.stderr
        texts.append([[move.uci() for move in game.mainline_moves()] for game in read_games(pgn)])
    assert len(texts[0]) == 2 and texts[0] == texts[1]


@pytest.mark.parametrize("mode, kind, bad_first", [
    ("illegal", "illegal", True),
    ("null", "illegal", False),
    ("none", "illegal", True),
    ("crash", "crash", False),
    ("flag", "time", True),
    ("stall", "time", False),
])
def test_forfeits_are_detected_and_attributed(tmp_path: Path, mode: str, kind: str, bad_first: bool) -> None:
    """Each misbehaviour is a forfeit of the right kind, charged to the right engine."""
    report, pgn = tmp_path / "report.json", tmp_path / "games.pgn"
    bad = [scripted("--play", "random", "--misbehave", mode, "--after", "2"), "name=bad"]
    good = [scripted("--play", "random", "--seed", "9"), "name=good"]
    first, second = (bad, good) if bad_first else (good, bad)
    proc = run_match("--engine", *first, "--engine", *second, "--tc", "0.5+0", "--games", "2",
                     "--max-moves", "40", "--report", str(report), "--pgnout", str(pgn))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(report.read_text())
    assert data["games"] == 2  # the match went on after the forfeit (a crashed/killed engine is restarted)
    assert data["forfeits"]["bad"][kind] == 2
    assert sum(data["forfeits"]["bad"].values()) == 2
    assert sum(data["forfeits"]["good"].values()) == 0
    assert data["endings"] == {f"forfeit: {kind}": 2}
    bad_points = data["points"] if bad_first else data["games"] - data["points"]
    assert bad_points == 0
    assert f"Forfeits bad: illegal {data['forfeits']['bad']['illegal']}, time" in proc.stdout
    for game in read_games(pgn):
        assert game.headers["Termination"] == PGN_TERMINATION[kind]
        assert "(bad)" in game.headers["ResultReason"]
        loser = game.headers["White"] if game.headers["Result"] == "0-1" else game.headers["Black"]
        assert loser == "bad"
        assert len(list(game.mainline_moves())) in (2, 3)  # the bad engine's 2nd move was its first or second ply


def test_crashed_engine_is_restarted_and_match_continues(tmp_path: Path) -> None:
    """An engine that crashes in every game is restarted and all games are played."""
    report = tmp_path / "report.json"
    proc = run_match("--engine", scripted("--play", "random", "--misbehave", "crash", "--after", "3"), "name=crashy",
                     "--engine", scripted("--play", "random", "--seed", "4"), "name=steady",
                     "--nodes", "1", "--games", "4", "--concurrency", "2", "--report", str(report))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(report.read_text())
    assert data["games"] == 4 and data["losses"] == 4
    assert data["forfeits"]["crashy"]["crash"] == 4
    assert "crashed / disconnected" in proc.stdout


def test_time_margin_turns_a_late_move_into_a_legal_one(tmp_path: Path) -> None:
    """A move within movetime + --time-margin is not a time loss."""
    report = tmp_path / "report.json"
    proc = run_match("--engine", scripted("--play", "random", "--misbehave", "flag", "--after", "1"), "name=slow",
                     "--engine", scripted("--play", "random"), "name=fast",
                     "--movetime", "50", "--time-margin", "2000", "--games", "2", "--max-moves", "2",
                     "--report", str(report))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(report.read_text())
    assert data["forfeits"]["slow"]["time"] == 0
    assert data["endings"] == {"adjudication: move limit": 2}


def test_resign_adjudication(tmp_path: Path) -> None:
    """Engines agreeing on a decisive score end the game by resign adjudication."""
    pgn, report = tmp_path / "games.pgn", tmp_path / "report.json"
    proc = run_match("--engine", scripted("--score", "800"), "name=optimist",
                     "--engine", scripted("--score", "-800"), "name=pessimist",
                     "--nodes", "10", "--games", "4", "--resign-score", "500", "--resign-moves", "3",
                     "--pgnout", str(pgn), "--report", str(report))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(report.read_text())
    assert data["wins"] == 4
    assert data["endings"] == {"adjudication: resign": 4}
    for game in read_games(pgn):
        assert game.headers["Termination"] == "adjudication"
        assert "resign adjudication" in game.headers["ResultReason"]
        assert game.headers["PlyCount"] == "6"  # 3 moves of each engine


def test_one_sided_scores_do_not_resign() -> None:
    """Resign adjudication needs both engines to agree."""
    tracker = AdjudicationTracker(Adjudication(resign_score=500, resign_moves=2))
    board = chess.Board()
    for move in ("e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"):
        mover = board.turn
        board.push_uci(move)
        # White claims +600 but Black (to its own eyes) only -100: no agreement, no adjudication
        assert tracker.update(board, mover, 600 if mover == chess.WHITE else -100) is None


def test_draw_adjudication(tmp_path: Path) -> None:
    """Near-zero scores from move K on end the game by draw adjudication."""
    pgn, report = tmp_path / "games.pgn", tmp_path / "report.json"
    proc = run_match("--engine", scripted("--play", "random", "--score", "5"),
                     "--engine", scripted("--play", "random", "--seed", "3", "--score", "-5"),
                     "--nodes", "10", "--games", "2", "--draw-score", "10", "--draw-moves", "4",
                     "--draw-after", "10", "--pgnout", str(pgn), "--report", str(report))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(report.read_text())
    assert data["draws"] == 2
    assert data["endings"] == {"adjudication: draw": 2}
    assert data["engines"][0] != data["engines"][1]  # equal engine names are made unique
    for game in read_games(pgn):
        assert "draw adjudication" in game.headers["ResultReason"]
        assert game.headers["PlyCount"] == "26"  # from move 10 (ply 19) on, 4 moves each


@pytest.mark.parametrize("strong_first, decision", [(True, "H1"), (False, "H0")])
def test_sprt_stops_early(tmp_path: Path, strong_first: bool, decision: str) -> None:
    """The SPRT stops the match as soon as the LLR crosses a bound."""
    report = tmp_path / "report.json"
    strong = [scripted("--score", "900"), "name=strong"]
    weak = [scripted("--score", "-900"), "name=weak"]
    first, second = (strong, weak) if strong_first else (weak, strong)
    proc = run_match("--engine", *first, "--engine", *second, "--nodes", "1", "--games", "60",
                     "--resign-score", "500", "--resign-moves", "1",
                     "--sprt", "elo0=0", "elo1=200", "alpha=0.05", "beta=0.05", "--report", str(report))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(report.read_text())
    sprt = data["sprt"]
    assert sprt["decision"] == decision
    assert data["games"] < 60
    assert data["games"] == 16 if decision == "H1" else data["games"] == 10
    assert sprt["lower_bound"] == pytest.approx(-2.944, abs=0.001)
    assert sprt["upper_bound"] == pytest.approx(2.944, abs=0.001)
    assert (sprt["llr"] >= sprt["upper_bound"]) if decision == "H1" else (sprt["llr"] <= sprt["lower_bound"])
    assert f"{decision} accepted" in proc.stdout


def test_sprt_play_on_plays_every_game_and_keeps_the_first_decision(tmp_path: Path) -> None:
    """With --sprt-play-on the match goes on to --games; the report says when the SPRT first decided."""
    report = tmp_path / "report.json"
    proc = run_match("--engine", scripted("--score", "900"), "name=strong",
                     "--engine", scripted("--score", "-900"), "name=weak", "--nodes", "1", "--games", "24",
                     "--resign-score", "500", "--resign-moves", "1",
                     "--sprt", "elo0=0", "elo1=200", "--sprt-play-on", "--report", str(report))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(report.read_text())
    assert data["games"] == 24
    sprt = data["sprt"]
    assert sprt["play_on"] is True
    assert sprt["decided"]["decision"] == "H1" and sprt["decided"]["games"] == 16  # as when it stops there
    assert sprt["decided"]["llr"] >= sprt["upper_bound"]
    assert sprt["llr"] > sprt["decided"]["llr"]  # eight more wins
    assert "SPRT first decided after 16 games: H1 accepted" in proc.stdout


def test_sprt_play_on_without_sprt_is_refused() -> None:
    """--sprt-play-on alone is an error with a message, not a silent no-op."""
    proc = run_match("--engine", "cmd=x", "--engine", "cmd=y", "--nodes", "1", "--games", "2", "--sprt-play-on")
    assert proc.returncode != 0
    assert "--sprt-play-on needs --sprt" in proc.stderr


def test_pgn_openings_use_the_final_position(tmp_path: Path) -> None:
    """PGN openings start from the final position of each book game."""
    book = tmp_path / "book.pgn"
    book.write_text('[Event "a"]\n\n1. e4 e5 2. Nf3 Nc6 1/2-1/2\n\n[Event "b"]\n\n1. d4 d5 2. c4 e6 1/2-1/2\n')
    finals = set()
    for game in read_games(book):
        finals.add(game.end().board().fen())
    pgn = tmp_path / "games.pgn"
    proc = run_match("--engine", scripted("--play", "random"), "--engine", scripted("--play", "greedy"),
                     "--nodes", "1", "--games", "4", "--openings", str(book), "--seed", "1", "--max-moves", "20",
                     "--pgnout", str(pgn))
    assert proc.returncode == 0, proc.stderr
    used = {game.headers["FEN"] for game in read_games(pgn)}
    assert used == finals


def test_garfish_plays_a_real_game_without_forfeits(tmp_path: Path, openings: Path) -> None:
    """Garfish plays real games against the scripted engine without forfeits."""
    report, pgn = tmp_path / "report.json", tmp_path / "games.pgn"
    proc = run_match("--engine", "name=garfish", "--engine", scripted("--play", "greedy"), "name=greedy",
                     "--nodes", "500", "--games", "2", "--openings", str(openings), "--seed", "3",
                     "--max-moves", "40", "--report", str(report), "--pgnout", str(pgn))
    finished_without_forfeits(proc, report, 2)
    games = read_games(pgn)
    assert {game.headers["White"] for game in games} == {"garfish", "greedy"}
    assert all(len(list(game.mainline_moves())) > 1 for game in games)


def check_clean_error(proc: subprocess.CompletedProcess, code: int, text: str) -> None:
    """The run failed with exit status `code`, a message containing `text` and no traceback."""
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert text in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_engine_that_does_not_start(tmp_path: Path) -> None:
    """An engine that exits at once gives a clear error and exit status 1."""
    proc = run_match("--engine", scripted("--fail-start"), "--engine", scripted(), "--nodes", "1", "--games", "2")
    check_clean_error(proc, 1, "cannot start engine")


def test_engine_options_are_passed_and_checked(tmp_path: Path) -> None:
    """option.X=V reaches the engine (its log holds each `setoption` before the first `go` of every process of
    it); an option the engine does not declare is a clear error."""
    log = tmp_path / "options.log"
    good = run_match("--engine", scripted("--options", "--log", str(log)), "option.Skill=3", "option.Flag=true",
                     "--engine", scripted(), "--nodes", "1", "--games", "2", "--max-moves", "5")
    assert good.returncode == 0, good.stderr
    for received in until_first_go(log):
        assert {"setoption name Skill value 3", "setoption name Flag value true"} <= set(received), received
    bad = run_match("--engine", scripted("--options"), "option.Bogus=3", "--engine", scripted(),
                    "--nodes", "1", "--games", "2")
    check_clean_error(bad, 1, "no option 'Bogus'")


@pytest.mark.parametrize("args, text", [
    (["--engine", "cmd=x", "--nodes", "1", "--games", "2"], "exactly twice"),
    (["--engine", "cmd=x", "--engine", "cmd=y", "--tc", "abc", "--games", "2"], "BASE+INC"),
    (["--engine", "cmd=x", "--engine", "bogus=y", "--nodes", "1", "--games", "2"], "unknown key"),
    (["--engine", "cmd=x", "--engine", "cmd=y", "--nodes", "1", "--games", "2", "--openings", "/no/such.epd"],
     "cannot read openings"),
    (["--engine", "cmd=x", "--engine", "cmd=y", "--nodes", "1", "--games", "2", "--sprt", "elo0=5", "elo1=1"],
     "elo1 > elo0"),
    (["--engine", "cmd=x", "--engine", "cmd=y", "--nodes", "1", "--games", "2", "--resign-score", "500"],
     "go together"),
])
def test_bad_arguments_are_clear_errors(args: list[str], text: str) -> None:
    """Bad arguments give a message and exit status 2, no traceback."""
    check_clean_error(run_match(*args), 2, text)


@pytest.mark.extra("plot")
def test_plot(tmp_path: Path) -> None:
    """--plot writes a PNG."""
    plot = tmp_path / "elo.png"
    proc = run_match("--engine", scripted("--play", "random"), "--engine", scripted("--play", "greedy"),
                     "--nodes", "1", "--games", "2", "--max-moves", "20", "--plot", str(plot))
    assert proc.returncode == 0, proc.stderr
    assert plot.read_bytes().startswith(PNG_SIGNATURE)


def test_plot_without_matplotlib_says_how_to_install_it(tmp_path: Path) -> None:
    """--plot where matplotlib is missing: a clear error before any game."""
    plot = tmp_path / "elo.png"
    proc = subprocess.run([*WITHOUT_MATPLOTLIB, "match", "--engine", scripted("--play", "random"), "--engine",
                           scripted("--play", "greedy"), "--nodes", "1", "--games", "2", "--plot", str(plot)],
                          cwd=str(ROOT), capture_output=True, text=True, timeout=CLI_TIMEOUT)
    check_clean_error(proc, 2, "--plot needs matplotlib: pip install 'garfish[plot]'")
    assert not plot.exists()


def test_a_game_ending_after_an_interrupt_is_not_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C kills the engines, which ends the games in play with crash forfeits: those are not
    counted (the summary says unfinished games are not), a game finished before it is."""
    state = MatchState(names=["a", "b"], total=2, sprt_config=None)
    tasks: "queue.Queue" = queue.Queue()
    for number in (1, 2):
        tasks.put(GameTask(number=number, pair=0, opening=1, fen=chess.STARTING_FEN, chess960=False,
                           engine1_white=number == 1))

    def play(task: GameTask, *args: object) -> GameRecord:
        """The first game ends normally; the user interrupts the match during the second."""
        if task.number == 2:
            state.abort.set()
        return GameRecord(number=task.number, pair=0, opening=1, white="a", black="b", engine1_white=True,
                          result="0-1", termination="abandoned", reason="crashed", category="forfeit: crash",
                          forfeit_engine=0, forfeit_kind="crash")

    monkeypatch.setattr(match, "play_game", play)
    config = match.MatchConfig(engines=[], tc=TimeControl("nodes", nodes=1), games=2, concurrency=1,
                               adjudication=Adjudication(), sprt=None, seed=1)
    counted: list[GameRecord] = []
    match.slot_worker(0, [], tasks, config, state, counted.append)
    assert [record.number for record in counted] == [1]


def test_a_two_game_match_prints_no_infinite_elo_and_no_empty_interval() -> None:
    """After a lost game the live line says there is no Elo yet (not -inf); after a loss and a draw, one pair, the
    Elo has no interval (not +/- 0.0), and the summary and its JSON say why."""
    state = MatchState(names=["a", "b"], total=2, sprt_config=None)
    lines: list[str] = []
    for number, result in ((1, "0-1"), (2, "1/2-1/2")):
        record = GameRecord(number=number, pair=0, opening=1, white="a", black="b", engine1_white=True,
                            result=result, termination="normal", reason="checkmate", category="checkmate")
        state.add(record)
        lines.append(game_line(record, state))
    assert lines[0].endswith("W 0 D 0 L 1  Elo none yet: all games lost")
    assert lines[1].endswith("W 0 D 1 L 1  Elo -190.8, no interval yet: too few games")
    printed: list[str] = []
    print_summary(state, printed.append)
    assert "Elo difference: -190.8, no interval yet: too few games; from the pentanomial of finished pairs" in printed
    assert not any("inf" in line or "+/-" in line or "interval [" in line for line in lines + printed)
    summary = summary_dict(state)
    assert summary["elo_lower"] is None and summary["elo_upper"] is None
    assert summary["elo_no_interval"] == "too few games"


@pytest.mark.parametrize("text, expected", [("10+0.1", (10.0, 0.1)), ("60", (60.0, 0.0)), (" 5 + 0 ", (5.0, 0.0))])
def test_parse_tc(text: str, expected: tuple[float, float]) -> None:
    """BASE+INC time controls are parsed."""
    assert match.parse_tc(text) == expected


def test_parse_engine_options() -> None:
    """--engine KEY=VALUE tokens become an EngineSpec; cmd defaults to Garfish."""
    spec = match.parse_engine(["cmd=my engine --fast", "name=E", "option.Hash=64", "option.Move Overhead=10"], 1)
    assert spec.argv == ["my", "engine", "--fast"]
    assert spec.name == "E"
    assert spec.options == {"Hash": "64", "Move Overhead": "10"}
    assert not spec.ponder
    default: Optional[list[str]] = match.parse_engine(["name=G"], 2).argv
    assert default == list(DEFAULT_COMMAND)
    assert match.parse_engine(["ponder=true"], 1).ponder
    with pytest.raises(ValueError, match="ponder takes true or false"):
        match.parse_engine(["ponder=maybe"], 1)


def test_the_default_engine_is_the_installed_garfish_not_a_checkout_in_the_working_folder(tmp_path: Path) -> None:
    """The tools' default command, started from a folder that holds a `garfish/` package (a checkout, here a fake
    that names itself Fake), starts the installed Garfish: the working folder is not on its sys.path."""
    fake = tmp_path / "garfish" / "uci"
    fake.mkdir(parents=True)
    (tmp_path / "garfish" / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text('print("id name Fake")\nprint("uciok")\n')
    proc = subprocess.run(list(DEFAULT_COMMAND), input="uci\nquit\n", cwd=str(tmp_path), capture_output=True,
                          text=True, timeout=CLI_TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert "id name Garfish" in proc.stdout and "Fake" not in proc.stdout


# --------------------------------------------------------------------------- Chess960
# The only mate in one is castling f1h1 (king to g1, rook to f1); f1g1 would be the king's plain step.
CASTLE_MATES_960 = "4R3/8/8/8/8/5k2/6R1/5K1R w H - 0 1"


def comments_by_engine(game: chess.pgn.Game) -> dict[str, list[str]]:
    """The move comments of a game, by the name of the engine that played the move."""
    names = {chess.WHITE: game.headers["White"], chess.BLACK: game.headers["Black"]}
    comments: dict[str, list[str]] = {name: [] for name in names.values()}
    for node in game.mainline():
        comments[names[not node.board().turn]].append(node.comment)
    return comments


def test_garfish_plays_chess960_openings_and_castles_king_takes_rook(tmp_path: Path, data: Path) -> None:
    """A Chess960 book (found to be one by its castling rights, no --chess960) played by Garfish
    against itself: Chess960 games, no forfeit, and the castling mate played by both engines."""
    book = data / "books" / "FRC_openings.epd"
    if not book.is_file():
        data_missing(f"{book} not in the shared data")
    openings = tmp_path / "frc.epd"
    openings.write_text(CASTLE_MATES_960 + "\n" + book.read_text().splitlines()[0] + "\n")
    pgn, report = tmp_path / "games.pgn", tmp_path / "report.json"
    proc = run_match("--engine", "name=A", "--engine", "name=B", "--nodes", "1000", "--games", "4",
                     "--openings", str(openings), "--seed", "1", "--max-moves", "12",
                     "--pgnout", str(pgn), "--report", str(report))
    finished_without_forfeits(proc, report, 4)
    assert "castling rights valid only in Chess960" in proc.stderr
    games = read_games(pgn)
    assert all(game.headers["Variant"] == "Chess960" for game in games)
    mates = [game for game in games if game.board().board_fen() == CASTLE_MATES_960.split()[0]]
    assert len(mates) == 2 and {game.headers["White"] for game in mates} == {"A", "B"}
    for game in mates:
        moves = list(game.mainline_moves())
        assert len(moves) == 1 and game.board().is_castling(moves[0]) and game.end().board().is_checkmate()
    others = [game for game in games if game not in mates]
    assert all(int(game.headers["PlyCount"]) > 10 for game in others)


def test_chess960_openings_need_engines_that_declare_uci_chess960(tmp_path: Path) -> None:
    """An engine without UCI_Chess960 is refused before the first game; one with it plays."""
    openings = tmp_path / "frc.epd"
    openings.write_text(CASTLE_MATES_960 + "\n")
    refused = run_match("--engine", scripted("--chess960"), "--engine", scripted(), "name=plain",
                        "--nodes", "1", "--games", "2", "--openings", str(openings))
    check_clean_error(refused, 1, "engine 'plain' does not declare the UCI_Chess960 option")
    report = tmp_path / "report.json"
    played = run_match("--engine", scripted("--chess960", "--play", "greedy"), "name=g1",
                       "--engine", scripted("--chess960", "--play", "greedy"), "name=g2",
                       "--nodes", "1", "--games", "2", "--openings", str(openings), "--report", str(report))
    assert played.returncode == 0, played.stderr
    assert json.loads(report.read_text())["endings"] == {"checkmate": 2}


# --------------------------------------------------------------------------- pondering
THINK = 0.6  # seconds the opponent of a ponderer thinks
STOP_DELAY = 0.7  # seconds a ponderer takes to answer stop (more than THINK)


def test_ponderhit_and_stop_are_sent_and_pondering_costs_no_clock_time(tmp_path: Path, openings: Path) -> None:
    """A pondering engine gets `go ponder` on its expected reply, then `ponderhit` when it comes
    (its move timed from the ponderhit, not from when its opponent started thinking) or `stop`
    (whose slow answer is not charged either) and a normal `go`.

    The times are the tool's own wall-clock measures of real processes, so no stepping clock can stand in:
    a move charged less than THINK proves that neither the opponent's thinking (at least THINK, as measured)
    nor the slow stop (STOP_DELAY, more) was in its charge. It fails on a correct tool only if the ponderer,
    whose replies take milliseconds (up to 65 ms seen on a busy 2-core machine), waited THINK for a core."""
    log, pgn, report = tmp_path / "ponderer.log", tmp_path / "games.pgn", tmp_path / "report.json"
    # The greedy opponent plays the random engine's predicted reply unless it can capture or mate.
    proc = run_match("--engine", scripted("--play", "random", "--ponder", "--stop-delay", str(STOP_DELAY),
                                          "--log", str(log)),
                     "name=ponderer", "ponder=true",
                     "--engine", scripted("--play", "greedy", "--delay", str(THINK)), "name=greedy",
                     "--tc", "10+0", "--games", "2", "--openings", str(openings), "--seed", "3",
                     "--max-moves", "7", "--pgnout", str(pgn), "--report", str(report))
    data = finished_without_forfeits(proc, report, 2)
    hits = data["ponderhits"]["ponderer"]
    assert 0 < hits["hits"] < hits["moves"] and "greedy" not in data["ponderhits"]
    assert f"Ponderhits ponderer: {hits['hits']} of {hits['moves']} moves" in proc.stdout
    received = log.read_text().splitlines()
    assert any(line.startswith("go ponder wtime") for line in received)
    assert "ponderhit" in received and "stop" in received
    assert ponder_protocol_kept(received)
    after_hits = []
    greedy_left = []
    for game in read_games(pgn):
        comments = comments_by_engine(game)
        assert all(float(text.split()[-1].rstrip("s")) >= THINK for text in comments["greedy"])
        greedy_left.append(10 - sum(float(text.split()[-1].rstrip("s")) for text in comments["greedy"]))
        for text in comments["ponderer"]:
            seconds = float(text.split()[-2 if text.endswith("ponderhit") else -1].rstrip("s"))
            assert seconds < THINK, text  # neither the opponent's thinking nor the slow stop is charged
            if text.endswith("ponderhit"):
                after_hits.append(seconds)
    assert len(after_hits) == hits["hits"] and round(hits["longest"], 3) == max(after_hits)
    assert hits["largest_share"] == pytest.approx(max(after_hits) / 10, abs=0.005)  # of a clock near 10 s
    # The clock each engine had left at the end (no increment here: 10 s less its moves' times).
    left = data["clock_left"]["greedy"]
    assert left["games"] == 2 and left["median"] == pytest.approx(sum(greedy_left) / 2, abs=0.01)
    assert left["min"] == pytest.approx(min(greedy_left), abs=0.01) and left["min"] < 10 - THINK
    assert f"Clock left at the end greedy: median {left['median']:.2f} s" in proc.stdout


def ponder_protocol_kept(received: list[str]) -> bool:
    """Whether each `go ponder` in an engine's input was ended by `ponderhit` or `stop` before
    anything else came (isready excepted) and each ponderhit or stop ended one."""
    pondering = False
    for line in received:
        if pondering != (line in ("ponderhit", "stop")) and line != "isready":
            return False
        pondering = line.startswith("go ponder") or (pondering and line == "isready")
    return True


def test_a_ponder_search_left_at_the_end_of_a_game_is_stopped(tmp_path: Path) -> None:
    """The opponent plays the reply pondered on except at its 2nd move: in the first game White
    (the ponderer) plays its 3rd move after that miss and ponders on Black's 3rd, which comes,
    and the move limit ends the game. That ponder search gets `stop`, not a ponderhit that would
    leave it searching into the next game; the next game starts with a normal `go`."""
    log, pgn = tmp_path / "ponderer.log", tmp_path / "games.pgn"
    report = tmp_path / "report.json"
    proc = run_match("--engine", scripted("--play", "random", "--ponder", "--log", str(log)), "name=ponderer",
                     "ponder=true", "--engine", scripted("--play", "random", "--deviate", "2"), "name=half",
                     "--nodes", "1", "--games", "2", "--max-moves", "3", "--pgnout", str(pgn), "--report", str(report))
    data = finished_without_forfeits(proc, report, 2)
    assert data["endings"] == {"adjudication: move limit": 2}
    assert (data["ponderhits"]["ponderer"]["hits"], data["ponderhits"]["ponderer"]["moves"]) == (2, 6)
    first = comments_by_engine(read_games(pgn)[0])["ponderer"]
    assert [text.endswith("ponderhit") for text in first] == [False, True, False]
    received = log.read_text().splitlines()
    assert received.count("ponderhit") == 2 and received.count("stop") == 4 and ponder_protocol_kept(received)


def test_garfish_ponders_in_a_match_without_forfeits(tmp_path: Path, openings: Path) -> None:
    """Garfish against itself with --ponder on a fast clock: ponderhits and stops, no forfeit."""
    report = tmp_path / "report.json"
    # Both engines search all the time here (one thinks, the other ponders): on a busy machine a
    # move may stall past its clock's small reserve for want of a core. The margin forgives a
    # second; a ponder search that goes on after ponderhit (until stop: never) still loses on time.
    proc = run_match("--engine", "name=A", "--engine", "name=B", "--ponder", "--tc", "2+0.05", "--time-margin", "1000",
                     "--games", "2", "--openings", str(openings), "--seed", "3", "--max-moves", "12",
                     "--report", str(report), "-v")
    data = finished_without_forfeits(proc, report, 2)
    assert sum(counts["hits"] for counts in data["ponderhits"].values()) > 0
    sent = [line.split(": << ", 1)[1] for line in proc.stderr.splitlines() if ": << " in line]
    assert any(line.startswith("go ponder wtime") for line in sent)
    assert "ponderhit" in sent and "stop" in sent


# --------------------------------------------------------------------------- resuming (arena.journal)
def resumable_command(book: Path, pgn: Path, report: Path, *alpha: str) -> list[str]:
    """A 6-game match of two deterministic scripted engines written to `pgn` (the same games every run;
    `alpha`: more arguments of the first engine)."""
    return ["--engine", scripted("--play", "random", "--seed", "1", *alpha), "name=alpha",
            "--engine", scripted("--play", "greedy", "--seed", "2"), "name=beta",
            "--nodes", "1", "--games", "6", "--openings", str(book), "--seed", "5", "--max-moves", "40",
            "--pgnout", str(pgn), "--report", str(report), "--no-progress"]


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three openings."""
    path = tmp_path_factory.mktemp("book") / "book.epd"
    path.write_text("\n".join(OPENINGS) + "\n")
    return path


def game_moves(pgn: Path) -> list[tuple[str, str, list[str]]]:
    """Each game's round, result and moves."""
    return [(game.headers["Round"], game.headers["Result"], [move.uci() for move in game.mainline_moves()])
            for game in read_games(pgn)]


def comparable(report: Path) -> dict:
    """A report without what depends on the machine's speed."""
    data = json.loads(report.read_text())
    data.pop("clock_left", None)
    return data


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory, book: Path) -> tuple[Path, Path]:
    """The PGN and report of the match played through."""
    folder = tmp_path_factory.mktemp("whole")
    pgn, report = folder / "games.pgn", folder / "report.json"
    proc = run_match(*resumable_command(book, pgn, report))
    assert proc.returncode == 0, proc.stderr
    return pgn, report


def test_a_resumed_match_plays_only_the_games_its_journal_lacks(tmp_path: Path,
                                                                book: Path, uninterrupted: tuple[Path, Path]) -> None:
    """Cut after two games (the journal's third line broken off mid-write, the PGN holding more than the
    journal says), --resume plays games 3-6 only, and the PGN and report are the uninterrupted match's."""
    whole_pgn, whole_report = uninterrupted
    pgn, report = tmp_path / "games.pgn", tmp_path / "report.json"
    lines = journal.journal_path(whole_pgn).read_text().splitlines(keepends=True)
    assert len(lines) == 7 and lines[0].startswith(journal.HEADER)
    journal.journal_path(pgn).write_text("".join(lines[:3]) + lines[3][:25])
    pgn.write_bytes(whole_pgn.read_bytes()[:-100])  # two games and most of the others: cut back to two
    proc = run_match(*resumable_command(book, pgn, report), "--resume")
    assert proc.returncode == 0, proc.stderr
    assert "resumed after 2 games" in proc.stdout
    assert sorted(re.findall(r"^Game (\d+) ", proc.stdout, re.M), key=int) == ["3", "4", "5", "6"]
    assert game_moves(pgn) == game_moves(whole_pgn)
    assert comparable(report) == comparable(whole_report)
    assert len(journal.journal_path(pgn).read_text().splitlines()) == 7


def held_in_game(log: Path, game: int) -> bool:
    """Whether the scripted engine logging to `log` has been sent a `go` in its `game`-th game."""
    received = log.read_text().splitlines() if log.exists() else []
    starts = [index for index, line in enumerate(received) if line == "ucinewgame"]
    return len(starts) >= game and any(line.startswith("go") for line in received[starts[game - 1]:])


def test_a_match_killed_mid_game_resumes(tmp_path: Path, book: Path, uninterrupted: tuple[Path, Path]) -> None:
    """kill -9 in the middle of game 3, where alpha holds its move until a file exists (so the kill comes there
    however busy the machine: never after the match has ended): alpha dies with the runner, and the same
    command with --resume plays games 3-6 and ends the match as if nothing had happened."""
    whole_pgn, whole_report = uninterrupted
    pgn, report = tmp_path / "games.pgn", tmp_path / "report.json"
    hold, log = tmp_path / "go-on", tmp_path / "alpha.log"
    command = resumable_command(book, pgn, report, "--hold-file", str(hold), "--hold-game", "3", "--log", str(log))
    process = subprocess.Popen([sys.executable, "-m", "garfish.uci", "match", *command], cwd=str(ROOT),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + CLI_TIMEOUT
        while not held_in_game(log, 3):
            assert process.poll() is None and time.monotonic() < deadline, "the match never reached game 3"
            time.sleep(0.05)
        process.kill()
    finally:
        process.kill()
        process.wait()
    assert not report.exists()
    if Path("/proc/self/cmdline").exists() and sys.platform.startswith("linux"):
        # alpha, held in its move and reading nothing (as GNU Chess 6.2.7 spins without reading), dies with the
        # runner: the kernel's parent-death signal, since no runner is left to kill it
        deadline = time.monotonic() + CLI_TIMEOUT
        while processes_naming(str(log)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not processes_naming(str(log)), "an engine outlived the runner killed by SIGKILL"
    hold.touch()  # the resumed match's alpha holds nothing (its third game would be the match's fifth)
    proc = run_match(*command, "--resume")
    assert proc.returncode == 0, proc.stderr
    assert "resumed after 2 games" in proc.stdout
    assert sorted(re.findall(r"^Game (\d+) ", proc.stdout, re.M), key=int) == ["3", "4", "5", "6"]
    assert game_moves(pgn) == game_moves(whole_pgn)
    assert comparable(report) == comparable(whole_report)


def processes_naming(text: str) -> list[int]:
    """The processes whose command line holds `text` (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue  # gone meanwhile
    return found


def test_an_engine_outlives_the_thread_that_started_it() -> None:
    """The parent-death signal comes when the thread that forked the engine ends: a match starts its engines
    from short-lived threads, so the engine must be forked by one that lives as long as it (python-chess's own)."""
    started: list[EngineProcess] = []
    thread = threading.Thread(target=lambda: started.append(EngineProcess(EngineSpec(argv=[sys.executable,
                                                                                           str(SCRIPTED)]))))
    thread.start()
    thread.join()
    engine = started[0]
    try:
        assert engine.engine is not None
        engine.engine.ping()  # answers after its starting thread has ended
        assert engine.alive()
    finally:
        engine.close()


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux's /proc to find the engines")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_match_started_in_the_background_stops_cleanly_on_a_signal(
        tmp_path: Path, book: Path, uninterrupted: tuple[Path, Path], signum: int) -> None:
    """A match started as a shell script starts a background job (SIGINT ignored, inherited) is stopped in game
    3 by `kill -INT` or `kill` (SIGTERM) as by Ctrl-C: it says so, leaves no engine running, and resumes."""
    whole_pgn, whole_report = uninterrupted
    pgn, report = tmp_path / "games.pgn", tmp_path / "report.json"
    hold, log = tmp_path / "go-on", tmp_path / "alpha.log"
    command = resumable_command(book, pgn, report, "--hold-file", str(hold), "--hold-game", "3", "--log", str(log))
    process = subprocess.Popen([sys.executable, "-m", "garfish.uci", "match", *command], cwd=str(ROOT),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        deadline = time.monotonic() + CLI_TIMEOUT
        while not held_in_game(log, 3):
            assert process.poll() is None and time.monotonic() < deadline, "the match never reached game 3"
            time.sleep(0.05)
        assert processes_naming(str(log))  # alpha runs, held in its game
        process.send_signal(signum)
        out, err = process.communicate(timeout=CLI_TIMEOUT)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == EXIT_INTERRUPTED and "interrupted by the user" in out + err, (out, err)
    assert not processes_naming(str(log))  # no engine left behind
    hold.touch()
    proc = run_match(*command, "--resume")
    assert proc.returncode == 0, proc.stderr
    assert sorted(re.findall(r"^Game (\d+) ", proc.stdout, re.M), key=int) == ["3", "4", "5", "6"]
    assert game_moves(pgn) == game_moves(whole_pgn)
    assert comparable(report) == comparable(whole_report)


def test_a_match_stopped_while_its_engines_start_says_so(tmp_path: Path, book: Path) -> None:
    """SIGTERM while an engine has not yet answered `uci`: a clear message and exit status 130, no traceback."""
    pgn, report = tmp_path / "games.pgn", tmp_path / "report.json"
    hold, log = tmp_path / "go-on", tmp_path / "alpha.log"
    command = resumable_command(book, pgn, report, "--hold-file", str(hold), "--hold-game", "0", "--log", str(log))
    process = subprocess.Popen([sys.executable, "-m", "garfish.uci", "match", *command], cwd=str(ROOT),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + CLI_TIMEOUT
        while not (log.exists() and "uci" in log.read_text().split()):
            assert process.poll() is None and time.monotonic() < deadline, "alpha never got `uci`"
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=CLI_TIMEOUT)
    finally:
        process.kill()
        process.wait()
        hold.touch()  # the held engine answers, reads the end of its input and exits
    assert process.returncode == EXIT_INTERRUPTED, (out, err)
    assert "interrupted by the user before the games began" in err and "Traceback" not in out + err


def test_resuming_with_other_settings_is_refused(tmp_path: Path, book: Path, uninterrupted: tuple[Path, Path]) -> None:
    """A journal of another match (here another seed) is not continued, and says what differs."""
    whole_pgn, _ = uninterrupted
    pgn = tmp_path / "games.pgn"
    pgn.write_bytes(whole_pgn.read_bytes())
    journal.journal_path(pgn).write_bytes(journal.journal_path(whole_pgn).read_bytes())
    command = resumable_command(book, pgn, tmp_path / "report.json")
    command[command.index("--seed") + 1] = "6"
    proc = run_match(*command, "--resume")
    assert proc.returncode == 2
    assert "cannot resume" in proc.stderr and "seed was 5, now 6" in proc.stderr
    assert pgn.read_bytes() == whole_pgn.read_bytes()  # left as it was


def test_resuming_a_finished_match_plays_nothing(tmp_path: Path, book: Path, uninterrupted: tuple[Path, Path]) -> None:
    """Every game in the journal: the summary again, no game played."""
    whole_pgn, whole_report = uninterrupted
    pgn, report = tmp_path / "games.pgn", tmp_path / "report.json"
    pgn.write_bytes(whole_pgn.read_bytes())
    journal.journal_path(pgn).write_bytes(journal.journal_path(whole_pgn).read_bytes())
    proc = run_match(*resumable_command(book, pgn, report), "--resume")
    assert proc.returncode == 0, proc.stderr
    assert "nothing left to play: 6 of 6 games played" in proc.stdout and "Game " not in proc.stdout
    assert comparable(report) == comparable(whole_report)
    assert pgn.read_bytes() == whole_pgn.read_bytes()


def test_resume_without_a_journal_starts_the_match_and_needs_a_pgn(tmp_path: Path,
                                                                   book: Path, uninterrupted: tuple[Path, Path]) -> None:
    """--resume where nothing was played plays the whole match; without --pgnout it is an error."""
    whole_pgn, whole_report = uninterrupted
    pgn, report = tmp_path / "games.pgn", tmp_path / "report.json"
    proc = run_match(*resumable_command(book, pgn, report), "--resume")
    assert proc.returncode == 0, proc.stderr
    assert game_moves(pgn) == game_moves(whole_pgn)
    proc = run_match("--engine", "cmd=x", "--engine", "cmd=y", "--nodes", "1", "--games", "2", "--resume")
    assert proc.returncode == 2 and "--resume needs --pgnout" in proc.stderr


@pytest.mark.parametrize("damage, message", [
    (lambda lines: lines[:2] + ["{not json\n"] + lines[3:], "line 3: malformed game line"),
    (lambda lines: lines[:3] + lines[2:], "again or out of order"),
    (lambda lines: ["# something else\n"] + lines[1:], "is not a garfish match journal"),
])
def test_a_damaged_journal_is_a_clear_error(tmp_path: Path, book: Path, uninterrupted: tuple[Path, Path], damage: Callable,
                                            message: str) -> None:
    """A journal changed by hand is refused with the line at fault; only a broken-off last line is dropped."""
    whole_pgn, _ = uninterrupted
    pgn = tmp_path / "games.pgn"
    pgn.write_bytes(whole_pgn.read_bytes())
    lines = journal.journal_path(whole_pgn).read_text().splitlines(keepends=True)
    journal.journal_path(pgn).write_text("".join(damage(lines)))
    proc = run_match(*resumable_command(book, pgn, tmp_path / "report.json"), "--resume")
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
