"""Gauntlets and round robins (`garfish match --field`), the field file, core pinning, XBoard opponents, and the
maximum-likelihood rating fit (arena.mlrating) on games whose true ratings are known."""

from __future__ import annotations

import json
import math
import shlex
import subprocess
import sys
import time
from pathlib import Path

import chess
import numpy as np
import pytest

from conftest import CLI_TIMEOUT, ROOT, SCRIPTED, read_games
from garfish.arena import field, gauntlet, mlrating
from garfish.arena.game import GameRecord

SCRIPTED_XBOARD = Path(__file__).resolve().parent / "scripted_xboard.py"
OPENINGS = [
    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
    "rnbqkb1r/pppppppp/5n2/8/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 1 2",
    "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
]


# --------------------------------------------------------------------------- the fit
def simulate(true: list[float], pairings: list[tuple[int, int]], games: int, draw_elo: float, advantage: float,
             seed: int) -> list[mlrating.Game]:
    """Games drawn from the fit's own model with these true ratings (both colours in turn)."""
    rng = np.random.default_rng(seed)
    played = []
    for first, second in pairings:
        for number in range(games):
            white, black = (first, second) if number % 2 == 0 else (second, first)
            win, draw, _ = (float(p[0]) for p in mlrating.probabilities(
                np.array([true[white] - true[black] + advantage]), draw_elo))
            roll = rng.random()
            played.append(mlrating.Game(white, black, 1.0 if roll < win else 0.5 if roll < win + draw else 0.0))
    return played


def test_the_expected_score_has_the_logistic_elo_slope_at_any_draw_rate() -> None:
    """Near equal strength a rating difference reads as Elo whatever the draw parameter: the expected score's
    slope at 0 is the logistic curve's (ln 10 / 1600 a point of Elo)."""
    for draw_elo in (0.0, 100.0, 300.0):
        slope = (mlrating.expected_score(1.0, draw_elo) - mlrating.expected_score(-1.0, draw_elo)) / 2.0
        assert slope == pytest.approx(math.log(10) / 1600, rel=1e-3)
    assert mlrating.expected_score(0.0, 250.0) == pytest.approx(0.5)
    win, draw, loss = mlrating.probabilities(np.array([0.0]), 250.0)
    assert float(draw[0]) > 0.5 and float(win[0]) == pytest.approx(float(loss[0]))


def test_the_fit_finds_a_known_rating_within_its_interval() -> None:
    """4 anchors, 120 games each against an engine rated 2900 (with draws and White's advantage): the fitted
    rating's 95% profile interval holds 2900, and the draw parameter and advantage come out near the truth."""
    true = [2900.0, 2644.0, 2850.0, 3150.0, 2700.0]
    anchors = {player: true[player] for player in range(1, 5)}
    games = simulate(true, [(0, 1), (0, 2), (0, 3), (0, 4)], 120, draw_elo=150.0, advantage=30.0, seed=7)
    result = mlrating.fit(games, 5, anchors)
    rating = result.ratings[0]
    assert rating.lower is not None and rating.upper is not None and rating.rating is not None
    assert rating.lower < 2900.0 < rating.upper
    assert 20.0 < rating.upper - rating.lower < 120.0
    assert abs(result.draw_elo - 150.0) < 40.0
    assert abs(result.white_advantage - 30.0) < 30.0
    assert [r.rating for r in result.ratings[1:]] == [true[p] for p in range(1, 5)]  # anchors held
    quick = mlrating.fit(games, 5, anchors, "curvature").ratings[0]
    assert quick.rating == pytest.approx(rating.rating, abs=1.0)
    assert quick.lower == pytest.approx(rating.lower, abs=10.0) and quick.upper == pytest.approx(rating.upper, abs=10.0)


def test_a_player_with_no_link_to_an_anchor_is_not_placed_and_every_win_is_open_above() -> None:
    """Player 2 meets only player 3, neither an anchor: not placed. Player 0 won all its games: no upper end."""
    games = [mlrating.Game(0, 1, 1.0), mlrating.Game(1, 0, 0.0)] * 6 + [mlrating.Game(2, 3, 0.5)] * 4
    result = mlrating.fit(games, 4, {1: 2000.0})
    assert not result.ratings[2].placed and not result.ratings[3].placed
    assert any("player 2" in note for note in result.notes)
    best = result.ratings[0]
    assert best.rating is not None and best.rating > 2000.0 and best.upper == math.inf
    assert best.lower is not None and 2000.0 < best.lower < best.rating


def test_a_round_robin_places_unanchored_players_and_the_anchors_fix_only_the_offset() -> None:
    """A round robin of 4 with 2 anchors whose published ratings are 100 too high together: every player is
    placed, the anchors' fitted ratings average to their published ones, and the spread of the true ratings
    is found (each within its bootstrap interval); the same games give the same intervals."""
    true = [2500.0, 2300.0, 2700.0, 2600.0]
    published = {1: 2400.0, 2: 2800.0}  # both +100: the offset moves, the differences stay
    pairings = gauntlet.pairings_for("round robin", 4)
    games = simulate(true, pairings, 100, draw_elo=120.0, advantage=20.0, seed=3)
    groups = [index // 100 for index in range(len(games))]
    result = mlrating.fit_relative(games, 4, published, groups, samples=60)
    assert result is not None
    fitted = [r.rating for r in result.ratings]
    assert all(value is not None for value in fitted)
    assert (fitted[1] + fitted[2]) / 2 == pytest.approx(2600.0)
    for player, rating in enumerate(result.ratings):
        assert rating.lower is not None and rating.upper is not None
        assert rating.lower < true[player] + 100.0 < rating.upper, (player, rating)
    again = mlrating.fit_relative(games, 4, published, groups, samples=60)
    assert again is not None and [r.lower for r in again.ratings] == [r.lower for r in result.ratings]
    assert mlrating.fit_relative(games[:100], 4, published, groups[:100]) is None  # 2 and 3 unlinked


# --------------------------------------------------------------------------- pairings and tasks
def test_every_pairing_plays_the_same_openings_with_both_colours() -> None:
    """Gauntlet tasks: each pairing plays opening pair p twice (its first player White first), pairings take
    turns pair by pair, pair numbers are unique, an odd --games leaves one game of the last pair."""
    openings = [(index, chess.Board(fen)) for index, fen in enumerate(OPENINGS)]
    pairings = gauntlet.pairings_for("gauntlet", 4)
    assert pairings == [(0, 1), (0, 2), (0, 3)]
    assert gauntlet.pairings_for("round robin", 3) == [(0, 1), (0, 2), (1, 2)]
    tasks = gauntlet.make_tasks(pairings, 5, openings)
    assert [task.number for task in tasks] == list(range(1, len(tasks) + 1))
    assert len(tasks) == 15
    for index in range(3):
        mine = [task for task in tasks if task.pairing == index]
        assert [task.opening for task in mine] == [0, 0, 1, 1, 2]
        assert [task.engine1_white for task in mine] == [True, False, True, False, True]
    assert len({task.pair for task in tasks}) == 9
    assert [task.pairing for task in tasks[:6]] == [0, 0, 1, 1, 2, 2]


# --------------------------------------------------------------------------- the field file
def write_field(path: Path, text: str) -> Path:
    """A field file with this text."""
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_field_lists_debians_engines_with_their_sources() -> None:
    """`--field debian`: every engine has a command under /usr/games, an anchor has a source, and the
    book is off where the engine has one (the gauntlet's openings decide the first moves)."""
    engines = field.load_field("debian")
    names = [engine.name for engine in engines]
    assert "Phalanx XXV" in names and "Ethereal 12" in names and "Toga II 3.0" in names
    assert "debian" in field.shipped_fields()
    for engine in engines:
        assert engine.spec.argv[0].startswith("/usr/games/"), engine.name
        if engine.rating is not None:
            assert "CCRL" in engine.rating_source, engine.name
        else:
            assert engine.note, f"{engine.name}: an engine that is not an anchor says why"
        if "OwnBook" in engine.spec.options:
            assert engine.spec.options["OwnBook"] == "false"
    protocols = {engine.name: engine.spec.protocol for engine in engines}
    assert protocols["Phalanx XXV"] == "xboard" and protocols["Toga II 3.0"] == "uci"


@pytest.mark.parametrize("text, message", [
    ('[[engine]]\ncmd = "x"\n', "'name'"),
    ('[[engine]]\nname = "A"\n', "'cmd'"),
    ('[[engine]]\nname = "A"\ncmd = "x"\nprotocol = "winboard"\n', "protocol must be one of uci, xboard"),
    ('[[engine]]\nname = "A"\ncmd = "x"\nratng = 2000\n', "unknown key 'ratng'"),
    ('[[engine]]\nname = "A"\ncmd = "x"\nrating = "high"\n', "'rating' must be a number"),
    ('[[engine]]\nname = "A"\ncmd = "x"\n[[engine]]\nname = "A"\ncmd = "y"\n', "names 'A' twice"),
    ('[[engine]\nname = "A"\n', "not valid TOML"),
    ('title = "x"\n', "unknown table or key 'title'"),
    ('[[engine]]\nname = "A"\ncmd = "\'unclosed"\n', "engine 'A'"),
    ('[[engine]]\nname = "A"\ncmd = "x"\noptions = { Ponder = false }\n', "option 'Ponder' is set by the match"),
])
def test_a_bad_field_file_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    """Each mistake in a field file is named, with the engine it is in."""
    with pytest.raises(ValueError, match=message):
        field.load_field(str(write_field(tmp_path / "field.toml", text)))


def test_a_missing_field_names_the_shipped_ones(tmp_path: Path) -> None:
    """A field that is neither a file nor a shipped name: the error lists the shipped fields."""
    with pytest.raises(ValueError, match="debian"):
        field.load_field("no-such-field")
    engines = field.load_field("debian")
    assert [e.name for e in field.choose(engines, "Toga II 3.0,Phalanx XXV")] == ["Phalanx XXV", "Toga II 3.0"]
    with pytest.raises(ValueError, match="no engine 'Togga'"):
        field.choose(engines, "Togga")


# --------------------------------------------------------------------------- through the command line
def command(path: Path, *args: str) -> str:
    """A field file's cmd string for a Python script with these arguments."""
    return " ".join(shlex.quote(part) for part in (sys.executable, str(path), *args))


def run_match(*args: str) -> subprocess.CompletedProcess:
    """Run `garfish match ...` and capture its output."""
    return subprocess.run([sys.executable, "-m", "garfish.cli", "match", *args], cwd=str(ROOT), capture_output=True,
                          text=True, timeout=CLI_TIMEOUT)


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """Three openings."""
    path = tmp_path / "book.epd"
    path.write_text("\n".join(OPENINGS) + "\n")
    return path


@pytest.fixture
def small_field(tmp_path: Path) -> Path:
    """Three opponents: a greedy UCI engine (anchor 2000), a first-move XBoard engine (anchor 1500, logging
    what it receives and the processors it may use) and an unrated random UCI engine with an option set."""
    log = tmp_path / "xboard.log"
    affinity = tmp_path / "xboard.cpus"
    return write_field(tmp_path / "field.toml", f"""
[[engine]]
name = "Greedy"
cmd = {json.dumps(command(SCRIPTED, "--play", "greedy", "--name", "Greedy"))}
rating = 2000
rating_source = "a test"

[[engine]]
name = "First XB"
cmd = {json.dumps(command(SCRIPTED_XBOARD, "--log", str(log), "--affinity-file", str(affinity)))}
protocol = "xboard"
rating = 1500
rating_source = "a test"

[[engine]]
name = "Random"
cmd = {json.dumps(command(SCRIPTED, "--play", "random", "--seed", "5", "--options"))}
options = {{ Skill = 3 }}
note = "not an anchor"
""")


def test_a_gauntlet_plays_every_opponent_and_fits_one_rating(tmp_path: Path, book: Path, small_field: Path) -> None:
    """The engine (scripted, greedy) plays each of three opponents, UCI and XBoard, 4 games with the same
    openings and both colours, pinned to processor 0: the report has each pairing's W D L and pentanomial
    adding up to its games, one fitted rating for the engine from the two anchors with an interval that
    holds it, a relative rating for every player, and the PGN every game with the field's names; the XBoard
    opponent got `new`, `setboard` with the openings and ran on processor 0 only."""
    report, pgn = tmp_path / "g.json", tmp_path / "g.pgn"
    proc = run_match("--engine", "cmd=" + command(SCRIPTED, "--play", "greedy", "--seed", "1"), "name=Engine",
                     "--field", str(small_field), "--nodes", "1", "--games", "4", "--openings", str(book),
                     "--seed", "11", "--pgnout", str(pgn), "--report", str(report), "--concurrency", "2",
                     "--pin", "0")
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    assert "Engine against a field of 3 (Greedy, First XB, Random), 12 games (4 a pairing)" in proc.stdout
    assert "engines pinned to processors 0" in proc.stdout
    data = json.loads(report.read_text())
    assert data["mode"] == "gauntlet" and data["games"] == 12
    assert [p["engines"] for p in data["pairings"]] == [["Engine", "Greedy"], ["Engine", "First XB"],
                                                        ["Engine", "Random"]]
    for pairing in data["pairings"]:
        assert pairing["wins"] + pairing["draws"] + pairing["losses"] == 4
        assert sum(pairing["pentanomial"]) == 2
        assert all(count == 0 for counts in pairing["forfeits"].values() for count in counts.values())
    xb = data["pairings"][1]
    assert xb["wins"] >= 3, "greedy captures beat a first-move player"
    rating = data["rating"]
    assert set(rating["anchors"]) == {"Greedy", "First XB"}
    assert rating["games"] == 12
    lower = -math.inf if rating["lower"] is None else rating["lower"]
    upper = math.inf if rating["upper"] is None else rating["upper"]
    assert lower < rating["rating"] < upper
    assert "Rating of Engine:" in proc.stdout and "profile likelihood" in proc.stdout
    assert {entry["name"] for entry in data["relative"]["ratings"]} == {"Engine", "Greedy", "First XB", "Random"}
    games = read_games(pgn)
    assert len(games) == 12
    assert {g.headers["White"] for g in games} | {g.headers["Black"] for g in games} == {
        "Engine", "Greedy", "First XB", "Random"}
    received = (tmp_path / "xboard.log").read_text().splitlines()
    assert "protover 2" in received and "new" in received
    assert {line[len("setboard "):] for line in received if line.startswith("setboard ")} <= set(OPENINGS)
    assert any(line.startswith("setboard ") for line in received)
    assert (tmp_path / "xboard.cpus").read_text().strip() == "0"
    assert "Rated" not in proc.stderr


def test_a_round_robin_of_the_field_alone_rates_every_player(tmp_path: Path, book: Path, small_field: Path) -> None:
    """--round-robin without --engine: the three opponents play each other (3 pairings of 2 games); the report
    places all three relative to the anchors and gives no single engine's rating."""
    report = tmp_path / "rr.json"
    proc = run_match("--field", str(small_field), "--round-robin", "--nodes", "1", "--games", "2",
                     "--openings", str(book), "--seed", "3", "--report", str(report), "--max-moves", "40")
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(report.read_text())
    assert data["mode"] == "round robin" and data["games"] == 6
    assert [p["engines"] for p in data["pairings"]] == [["Greedy", "First XB"], ["Greedy", "Random"],
                                                        ["First XB", "Random"]]
    assert "rating" not in data
    ratings = {entry["name"]: entry for entry in data["relative"]["ratings"]}
    assert set(ratings) == {"Greedy", "First XB", "Random"}
    assert (ratings["Greedy"]["rating"] + ratings["First XB"]["rating"]) / 2 == pytest.approx(1750.0)


def test_an_interrupted_gauntlet_resumes_where_it_stopped(tmp_path: Path, book: Path, small_field: Path) -> None:
    """A gauntlet's journal: the same command with --resume after the first run played only some pairings'
    games (--games 2, then the journal cut to 3 games) plays the other games, and the report counts all."""
    pgn, report = tmp_path / "g.pgn", tmp_path / "g.json"
    args = ["--engine", "cmd=" + command(SCRIPTED, "--play", "greedy"), "name=Engine", "--field", str(small_field),
            "--nodes", "1", "--games", "2", "--openings", str(book), "--seed", "5", "--pgnout", str(pgn),
            "--report", str(report), "--max-moves", "40"]
    first = run_match(*args)
    assert first.returncode == 0, first.stderr[-3000:]
    whole = json.loads(report.read_text())
    journal_file = pgn.with_name(pgn.name + ".match")
    lines = journal_file.read_text().splitlines(keepends=True)
    assert len(lines) == 7  # the settings, then six games
    journal_file.write_text("".join(lines[:4]))
    again = run_match(*args, "--resume")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resumed after 3 games" in again.stdout
    resumed = json.loads(report.read_text())
    assert resumed["games"] == 6
    assert [(p["wins"], p["draws"], p["losses"]) for p in resumed["pairings"]] == [
        (p["wins"], p["draws"], p["losses"]) for p in whole["pairings"]]
    assert len(read_games(pgn)) == 6
    other = run_match(*[arg if arg != "2" else "4" for arg in args], "--resume")
    assert other.returncode == 2 and "cannot resume" in other.stderr


@pytest.mark.parametrize("args, text", [
    (["--field", "debian", "--engine", "name=A", "--engine", "name=B"], "give --engine once"),
    (["--field", "debian"], "give --engine once"),
    (["--field", "debian", "--engine", "name=A", "--sprt"], "not a gauntlet"),
    (["--engine", "name=A", "--engine", "name=B", "--round-robin"], "need --field"),
    (["--field", "debian", "--engine", "name=A", "--opponents", "Nobody"], "no engine 'Nobody'"),
    (["--field", "/no/such/field.toml", "--engine", "name=A"], "no field file"),
    (["--engine", "name=A", "--engine", "name=B", "--pin", "9999"], "is not one of this machine's"),
    (["--engine", "name=A", "--engine", "name=B", "--pin", "0,x"], "--pin takes processor numbers"),
    (["--engine", "name=A", "proto=winboard", "--engine", "name=B"], "proto takes uci or xboard"),
    (["--engine", "name=A", "proto=xboard", "ponder=true", "--engine", "name=B"], "ponder=true needs a UCI engine"),
])
def test_bad_gauntlet_arguments_are_clear_errors(args: list[str], text: str) -> None:
    """Usage errors exit with status 2 and say what is wrong, never a traceback."""
    proc = run_match(*args, "--nodes", "1", "--games", "2")
    assert proc.returncode == 2, proc.stderr
    assert text in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_field_engine_that_does_not_start_is_named(tmp_path: Path) -> None:
    """An opponent whose program does not start stops the gauntlet before any game with its name, and leaves
    no PGN or journal behind (a journal of no games would refuse the corrected command's --resume)."""
    path = write_field(tmp_path / "field.toml", f"""
[[engine]]
name = "Broken"
cmd = {json.dumps(command(SCRIPTED, "--fail-start"))}
rating = 2000
""")
    pgn = tmp_path / "g.pgn"
    proc = run_match("--engine", "cmd=" + command(SCRIPTED), "--field", str(path), "--nodes", "1",
                     "--games", "2", "--pgnout", str(pgn), "--resume")
    assert proc.returncode == 1
    assert "Broken" in proc.stderr and "Traceback" not in proc.stderr
    assert not pgn.exists() and not pgn.with_name("g.pgn.match").exists(), "no journal of a run that played nothing"


def test_the_live_line_gives_the_pairing_and_the_engine_rating() -> None:
    """After a game: the pairing's W D L and the engine's rating so far (a curvature interval)."""
    state = gauntlet.GauntletState(names=["E", "A", "B"], pairings=[(0, 1), (0, 2)], ratings=[None, 2000.0, 1800.0],
                                   total=8)
    record = GameRecord(number=1, pair=0, opening=3, white="E", black="A", engine1_white=True, result="1-0",
                        termination="normal", reason="checkmate", category="checkmate", pairing=0)
    state.add(record)
    line = gauntlet.gauntlet_line(record, state)
    assert line.startswith("Game 1 (E vs A, opening 3): 1-0 [checkmate]  1/8 done; E vs A: W 1 D 0 L 0; E rated ")
    assert state.live is not None and state.live.rating is not None and state.live.rating > 2000.0


def process_state(pid: int) -> str:
    """The state letter of a process (/proc/PID/stat): 'T' when stopped."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        return handle.read().rsplit(")", 1)[1].split()[0]


def wait_state(pid: int, stopped: bool) -> bool:
    """Whether the process reaches (stopped) or leaves (not stopped) state T within a hang guard's time
    (a signal is delivered when the kernel next schedules the process)."""
    for _ in range(500):
        if (process_state(pid) == "T") == stopped:
            return True
        time.sleep(0.01)
    return False


def test_an_idle_engine_waits_stopped_and_answers_once_resumed() -> None:
    """pause() stops the engine's process (state T, so one that polls while idle takes no processor time
    from the games on its core); resume() lets it run and it answers again; close() ends a paused one."""
    from garfish.arena.driver import EngineProcess, EngineSpec

    engine = EngineProcess(EngineSpec(argv=[sys.executable, str(SCRIPTED)]))
    try:
        assert engine.pid is not None
        engine.pause()
        assert wait_state(engine.pid, stopped=True)
        engine.resume()
        assert wait_state(engine.pid, stopped=False)
        assert engine.engine is not None
        engine.engine.ping()
        engine.pause()
    finally:
        engine.close()
    assert engine.engine is None and not engine.paused
