"""`garfish epd`: EPD suites run through the command line, with the scripted engine and with Garfish."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import chess
import pytest

from conftest import CLI_TIMEOUT, ROOT, SCRIPTED, until_first_go


# Easy positions Garfish solves at depth 3 (checked), one of them a mate in 1.
EASY_SUITE = """\
6k1/5ppp/8/8/8/8/8/R5K1 w - - bm Ra8#; id "mate1";
5rk1/1ppb3p/p1pb4/6q1/3P1p1r/2P1R2P/PP1BQ1P1/5RKN w - - bm Rg3; id "WAC.003";
r1bq2rk/pp3pbp/2p1p1pQ/7P/3P4/2PB1N2/PP3PPR/2KR4 w - - bm Qxh7+; id "WAC.004";
this line is not EPD at all
5k2/6pp/p1qN4/1p1p4/3P4/2PKP2Q/PP3r2/3R4 b - - bm Qc4+; id "WAC.005";
"""
BAD_LINE = 4
MIDDLEGAME = "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq -"
ENDGAME = "8/5pk1/6p1/8/3R4/6P1/5PK1/r7 w - -"


def scripted(*args: str) -> str:
    """The shell-quoted command line of the scripted engine."""
    return " ".join(shlex.quote(part) for part in (sys.executable, str(SCRIPTED), *args))


def run_epd(*args: str) -> subprocess.CompletedProcess:
    """Run `python -m garfish.uci epd ...` and capture its output."""
    return subprocess.run([sys.executable, "-m", "garfish.uci", "epd", *args], cwd=str(ROOT), capture_output=True,
                          text=True, timeout=CLI_TIMEOUT)


def first_move(fen: str) -> chess.Move:
    """The move the scripted engine (--play first) plays."""
    return next(iter(chess.Board(fen).legal_moves))


def other_move(fen: str) -> chess.Move:
    """A legal move that is not the first one."""
    return list(chess.Board(fen).legal_moves)[1]


@pytest.fixture
def scripted_suite(tmp_path: Path) -> Path:
    """A suite whose expected results with `scripted_engine.py --play first` are known.

    solved: bm = first move; missed: bm = another move; avoided: am = first move (failed);
    sts: c0 gives the first move 7 points and another 10; a bad line.
    """
    board = chess.Board(MIDDLEGAME)
    end = chess.Board(ENDGAME)
    first, other = first_move(MIDDLEGAME), other_move(MIDDLEGAME)
    lines = [
        board.epd(bm=first, id="solved"),
        board.epd(bm=other, id="missed"),
        "8/8/8/8 w - - bm e4; id \"broken\";",
        end.epd(am=first_move(ENDGAME), id="avoided"),
        end.epd(id="sts", c0=f"{end.san(other_move(ENDGAME))}=10, {end.san(first_move(ENDGAME))}=7"),
    ]
    path = tmp_path / "scripted.epd"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_scripted_engine_suite_with_report(scripted_suite: Path, tmp_path: Path) -> None:
    """bm, am and c0 points are judged, bad lines skipped, and the JSON report holds it all."""
    report = tmp_path / "report.json"
    proc = run_epd(str(scripted_suite), "--depth", "1", "--engine", scripted("--play", "first"),
                   "--report", str(report))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"{scripted_suite}:3: skipped" in proc.stderr
    out = proc.stdout
    assert "solved" in out and "SOLVED" in out
    assert "Solved: 1/4" in out
    assert "Points: 7/10" in out
    assert "Failed (3): missed, avoided, sts" in out
    data = json.loads(report.read_text())
    summary = data["summary"]
    assert summary["positions"] == 4 and summary["solved"] == 1
    assert summary["points"] == 7 and summary["max_points"] == 10
    assert summary["average_depth"] == 1
    assert data["failed"] == ["missed", "avoided", "sts"]
    assert data["skipped_lines"][0]["line"] == 3
    assert data["engine"]["name"] == "scripted-first"
    by_id = {position["id"]: position for position in data["positions"]}
    assert by_id["solved"]["solved"] and by_id["solved"]["move"] == first_move(MIDDLEGAME).uci()
    assert by_id["solved"]["depth"] == 1 and by_id["solved"]["nodes"] == 1
    assert not by_id["avoided"]["solved"]
    assert by_id["sts"]["points"] == 7 and by_id["sts"]["max_points"] == 10 and not by_id["sts"]["solved"]


def test_parallel_jobs_give_the_same_results(scripted_suite: Path, tmp_path: Path) -> None:
    """-j 2 gives the same results, in suite order, as one job."""
    report = tmp_path / "report.json"
    proc = run_epd(str(scripted_suite), "--nodes", "100", "-j", "2", "--engine", scripted("--play", "first"),
                   "--report", str(report))
    assert proc.returncode == 0, proc.stderr
    assert "2 job(s)" in proc.stdout
    data = json.loads(report.read_text())
    assert data["jobs"] == 2
    assert [position["id"] for position in data["positions"]] == ["solved", "missed", "avoided", "sts"]
    assert data["summary"]["solved"] == 1 and data["summary"]["points"] == 7


def test_garfish_solves_easy_positions(tmp_path: Path) -> None:
    """Garfish at depth 3 solves a mate in 1 and three easy WAC positions."""
    suite = tmp_path / "easy.epd"
    suite.write_text(EASY_SUITE)
    report = tmp_path / "report.json"
    proc = run_epd(str(suite), "--depth", "3", "--report", str(report))
    assert proc.returncode == 0, proc.stderr
    assert f"{suite}:{BAD_LINE}: skipped" in proc.stderr
    assert "engine: Garfish" in proc.stdout
    assert "Solved: 4/4" in proc.stdout
    assert "mate1" in proc.stdout and "Ra8#" in proc.stdout
    data = json.loads(report.read_text())
    assert data["summary"]["average_depth"] == 3
    assert data["summary"]["nodes"] > 0 and data["summary"]["nps"] > 0
    assert data["failed"] == []
    assert [line["line"] for line in data["skipped_lines"]] == [BAD_LINE]


def test_limit_option_runs_the_first_positions(tmp_path: Path) -> None:
    """--limit N runs only the first N positions."""
    suite = tmp_path / "easy.epd"
    suite.write_text(EASY_SUITE)
    proc = run_epd(str(suite), "--time", "0.05", "--limit", "2", "--engine", scripted("--play", "first"))
    assert proc.returncode == 0, proc.stderr
    assert "2 positions" in proc.stdout and "[2/2]" in proc.stdout and "[3/" not in proc.stdout


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    """A missing suite file gives a message and a non-zero exit, no traceback."""
    proc = run_epd(str(tmp_path / "nope.epd"), "--depth", "1")
    assert proc.returncode != 0
    assert "cannot read" in proc.stderr and "nope.epd" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_engine_that_does_not_start(scripted_suite: Path, jobs: str) -> None:
    """An engine that exits at once gives a clear error and exit status 1."""
    proc = run_epd(str(scripted_suite), "--depth", "1", "-j", jobs, "--engine", scripted("--fail-start"))
    assert proc.returncode == 1
    assert "cannot start engine" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_engine_command_not_found(scripted_suite: Path, tmp_path: Path) -> None:
    """A command that does not exist gives a clear error and exit status 1."""
    proc = run_epd(str(scripted_suite), "--depth", "1", "--engine", str(tmp_path / "no-such-engine"))
    assert proc.returncode == 1
    assert "cannot start engine" in proc.stderr and "no-such-engine" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_crashing_engine_is_restarted_and_reported(scripted_suite: Path) -> None:
    """A crashing engine is restarted for every position and its errors are reported."""
    proc = run_epd(str(scripted_suite), "--depth", "1", "--engine", scripted("--misbehave", "crash"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("ERROR crash") == 4
    assert "engine restarted after crash" in proc.stdout
    assert "Engine errors: 4" in proc.stdout


def test_illegal_answers_are_errors(scripted_suite: Path) -> None:
    """bestmove 0000 is reported as an illegal answer."""
    proc = run_epd(str(scripted_suite), "--depth", "1", "--limit", "1", "--engine", scripted("--misbehave", "null"))
    assert proc.returncode == 0, proc.stderr
    assert "ERROR illegal: null move" in proc.stdout
    assert "Solved: 0/1" in proc.stdout


def test_options_are_passed_and_checked(scripted_suite: Path, tmp_path: Path) -> None:
    """--option values reach the engine (its log holds each `setoption` before its first `go`); an undeclared
    option is a clear error."""
    log = tmp_path / "options.log"
    good = run_epd(str(scripted_suite), "--depth", "1", "--limit", "1", "--engine",
                   scripted("--options", "--log", str(log)), "--option", "Skill=5", "--option", "Flag=true")
    assert good.returncode == 0, good.stderr
    for received in until_first_go(log):
        assert {"setoption name Skill value 5", "setoption name Flag value true"} <= set(received), received
    bad = run_epd(str(scripted_suite), "--depth", "1", "--limit", "1", "--engine", scripted("--options"),
                  "--option", "Bogus=1")
    assert bad.returncode == 1
    assert "no option 'Bogus'" in bad.stderr and "Traceback" not in bad.stderr


def test_a_limit_is_required(scripted_suite: Path) -> None:
    """Without --time/--depth/--nodes argparse explains what is missing."""
    proc = run_epd(str(scripted_suite))
    assert proc.returncode == 2
    assert "--time" in proc.stderr and "Traceback" not in proc.stderr
