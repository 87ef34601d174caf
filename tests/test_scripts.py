"""The measuring scripts in scripts/ run, and the test suite's own rule for missing shared data."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import re
import signal
import subprocess
import sys
import types
from pathlib import Path

import chess
import pytest

from conftest import ENGINE_CMD, OPENINGS_3MOVES, REQUIRE_DATA_ENV, ROOT, require_extra
from garfish.engine.search.skill import strength_at

SCRIPTS = ROOT / "scripts"


def run_script(name: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run scripts/NAME with this interpreter and capture its output."""
    return subprocess.run([sys.executable, str(SCRIPTS / name), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def load_script(name: str, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """scripts/NAME imported as a module."""
    spec = importlib.util.spec_from_file_location(name.removesuffix(".py"), SCRIPTS / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_startup_times_uciok_before_readyok() -> None:
    proc = run_script("startup.py", "--runs", "1", "--", *ENGINE_CMD)
    assert proc.returncode == 0, proc.stderr
    match = re.search(r"run 1: uciok ([\d.]+) s, readyok ([\d.]+) s", proc.stdout)
    assert match, proc.stdout
    assert 0 < float(match.group(1)) <= float(match.group(2))


def test_engine_nps_reports_both_engines_and_their_ratio(tmp_path: Path) -> None:
    fens = tmp_path / "fens.txt"
    fens.write_text("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n"
                    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1\n")
    command = " ".join(ENGINE_CMD)
    proc = run_script("engine_nps.py", "--engine", command, "--engine", command, "--movetime", "200",
                      "--fens", str(fens))
    assert proc.returncode == 0, proc.stderr
    rates = [float(x) for x in re.findall(r"(\d+) nodes/s \(2 positions\)", proc.stdout)]
    assert len(rates) == 2 and all(rate > 0 for rate in rates), proc.stdout
    assert re.search(r"ratio first/second: [\d.]+x", proc.stdout)


def test_ab_builds_the_working_tree_as_an_installed_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ab = load_script("ab.py", monkeypatch)
    side = ab.build("A", ".", tmp_path)
    assert side.module == "garfish.uci"
    assert ((side.site / "garfish" / "engine" / "search" / "driver.py").read_text()
            == (ROOT / "engine" / "search" / "driver.py").read_text())
    assert not (side.site / "engine").exists()
    totals = "Total time (ms) : 1500\nNodes searched  : 30000\nNodes/second    : 20000\n"
    assert ab.NODES_RE.search(totals).group(1) == "30000" and ab.NPS_RE.search(totals).group(1) == "20000"


@pytest.mark.slow  # real games at 2+0.05
def test_calibrate_plays_each_setting_once_and_tabulates_it(tmp_path: Path) -> None:
    # Garfish itself stands in for Stockfish: it takes the same two options.
    args = ("--elos", "1400", "--games", "2", "--tc", "2+0.05", "--stockfish", " ".join(ENGINE_CMD),
            "--openings", str(OPENINGS_3MOVES))
    proc = run_script("calibrate.py", str(tmp_path), *args)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "elo-1400.json").exists() and not (tmp_path / "elo-1400.partial.json").exists()
    assert float((tmp_path / "elo-1400.strength").read_text()) == strength_at(1400)  # for --fit
    row = re.search(r"^\| 1400 \| 1400 \| (\d) (\d) (\d) \| (-?\d+) \[(-?\d+), (-?\d+)\] \| ([+-]\d+) \|$", proc.stdout, re.M)
    assert row, proc.stdout
    assert sum(int(row.group(i)) for i in (1, 2, 3)) == 2
    assert int(row.group(5)) <= int(row.group(4)) <= int(row.group(6)) and int(row.group(7)) == int(row.group(4)) - 1400
    again = run_script("calibrate.py", str(tmp_path), *args)  # the finished setting is not played again
    assert again.returncode == 0 and "# UCI_Elo 1400" not in again.stdout and row.group(0) in again.stdout
    # A second round: only it is played, with the next seed, and the row pools both rounds' games.
    more = run_script("calibrate.py", str(tmp_path), *args, "--rounds", "2")
    assert more.returncode == 0, more.stderr
    assert more.stdout.count("# UCI_Elo 1400") == 1 and "# UCI_Elo 1400, round 2" in more.stdout
    assert "--seed 13 " in more.stdout and (tmp_path / "elo-1400.r2.json").exists()
    pooled = re.search(r"^\| 1400 \| 1400 \| (\d) (\d) (\d) \| ", more.stdout, re.M)
    assert pooled and sum(int(pooled.group(i)) for i in (1, 2, 3)) == 4, more.stdout


@pytest.mark.slow  # real games at 2+0.05
def test_calibrate_resumes_an_interrupted_setting_from_its_journal(tmp_path: Path) -> None:
    # A setting whose match stopped before its report: the games its journal holds are not played again.
    args = ("--elos", "1400", "--games", "4", "--tc", "2+0.05", "--stockfish", " ".join(ENGINE_CMD),
            "--openings", str(OPENINGS_3MOVES))
    first = run_script("calibrate.py", str(tmp_path), *args)
    assert first.returncode == 0, first.stderr
    # Made as a kill after the second game leaves it: no report, the journal's header and first two games.
    (tmp_path / "elo-1400.json").unlink()
    journal = tmp_path / "elo-1400.pgn.match"
    lines = journal.read_text().splitlines(keepends=True)
    assert len(lines) == 5
    journal.write_text("".join(lines[:3]))
    kept = (tmp_path / "elo-1400.pgn").read_bytes()[:json.loads(lines[2])["pgn_end"]]
    again = run_script("calibrate.py", str(tmp_path), *args)
    assert again.returncode == 0, again.stderr
    assert "--resume" in again.stdout and "resumed after 2 games" in again.stdout
    assert json.loads((tmp_path / "elo-1400.json").read_text())["games"] == 4
    pgn = (tmp_path / "elo-1400.pgn").read_bytes()
    assert pgn.startswith(kept) and pgn.count(b"[Event ") == 4


def test_calibrate_fit_makes_the_ratings_rise_and_spans_the_floor_to_the_full_engine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calibrate = load_script("calibrate.py", monkeypatch)
    Measured = calibrate.Measured
    # Pool-adjacent violators: 1700 measured below 1600 are pooled into one point by their games.
    points = [Measured(1500, 1400, 80), Measured(1900, 1600, 80), Measured(1800, 1700, 240), Measured(2300, 1900, 80)]
    assert calibrate.isotonic(points) == [points[0], Measured(1825, 1675, 320), points[3]]
    table = calibrate.fit_table(points, full_rating=2561)
    # The floor extrapolated from the two lowest points, the full engine at the top, rising throughout.
    assert table == [(1350, 1273), (1500, 1400), (1825, 1675), (2300, 1900), (2560, 2000)]
    assert [rating for rating, _ in table] == sorted(rating for rating, _ in table)
    # A weakest setting that plays below the floor: the floor interpolated between it and the next.
    assert calibrate.fit_table([Measured(1250, 1000, 80), Measured(1450, 1200, 80)], 2000)[0] == (1350, 1100)
    with pytest.raises(SystemExit, match="nothing to fit"):
        calibrate.fit_table([Measured(2600, 1900, 80)], 2561)  # every setting at or above the full engine
    # Written into a copy of skill.py's block, the table is what the module then reads.
    source = tmp_path / "skill.py"
    source.write_text((ROOT / "engine" / "search" / "skill.py").read_text())
    calibrate.write_table(table, "a test", source)
    namespace: dict = {}
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    assert namespace["CALIBRATION"] == tuple(table) and namespace["CALIBRATED"] == "a test"
    assert (namespace["ELO_MIN"], namespace["ELO_MAX"]) == (1350, 2560)
    assert namespace["Skill"](2560).nodes is None and namespace["Skill"](1825).strength == 1675


def test_calibrate_fit_reads_the_reports_of_a_folder(tmp_path: Path) -> None:
    def report(name: str, opponent: int, pentanomial: list[int]) -> None:
        wins = pentanomial[4] * 2 + pentanomial[3]
        losses = pentanomial[0] * 2 + pentanomial[1]
        draws = 2 * sum(pentanomial) - wins - losses
        (tmp_path / name).write_text(json.dumps({"engines": ["Garfish", f"Stockfish{opponent}"],
                                                 "pentanomial": pentanomial, "wins": wins, "draws": draws,
                                                 "losses": losses}))
    for elo, pentanomial in ((1400, [2, 8, 20, 8, 2]), (1700, [1, 5, 20, 10, 4])):
        report(f"elo-{elo}.json", elo, pentanomial)
        (tmp_path / f"elo-{elo}.strength").write_text(f"{elo}.0\n")
    proc = run_script("calibrate.py", str(tmp_path), "--fit")
    assert proc.returncode == 1 and "rate the full engine first" in proc.stderr
    report("full-2200.json", 2200, [2, 8, 20, 8, 2])
    proc = run_script("calibrate.py", str(tmp_path), "--fit")
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^\| 1400 \| 1400 \| 12 56 12 \| 1400 \[\d+, \d+\] \| \+0 \|$", proc.stdout, re.M), proc.stdout
    assert re.search(r"^\| full \| 2000 \| 12 56 12 \| 2200 ", proc.stdout, re.M), proc.stdout
    table = re.search(r"^CALIBRATION = (\(.*\))  \(was", proc.stdout, re.M)
    assert table, proc.stdout
    points = eval(table.group(1))
    assert points[0][0] == 1350 and points[-1] == (2200, 2000) and (1400, 1400) in points
    assert [rating for rating, _ in points] == sorted(rating for rating, _ in points)


def test_calibrate_fit_pools_the_folders_of_several_rounds(tmp_path: Path) -> None:
    # The same setting's name in two rounds is two points (two strengths under two tables), and the
    # full engine's reports of every folder are pooled.
    def report(folder: Path, name: str, opponent: int, pentanomial: list[int]) -> None:
        wins = pentanomial[4] * 2 + pentanomial[3]
        losses = pentanomial[0] * 2 + pentanomial[1]
        draws = 2 * sum(pentanomial) - wins - losses
        folder.mkdir(exist_ok=True)
        (folder / name).write_text(json.dumps({"engines": ["Garfish", f"Stockfish{opponent}"],
                                               "pentanomial": pentanomial, "wins": wins, "draws": draws,
                                               "losses": losses}))
    first, second = tmp_path / "r1", tmp_path / "v1"
    report(first, "elo-1600.json", 1600, [2, 8, 20, 8, 2])
    (first / "elo-1600.strength").write_text("1500.0\n")
    report(first, "full-2200.json", 2200, [2, 8, 20, 8, 2])
    report(second, "elo-1600.json", 1600, [4, 12, 20, 4, 0])  # played weaker: under the new table, less strength
    (second / "elo-1600.strength").write_text("1450.0\n")
    report(second, "full-2300.json", 2300, [2, 8, 20, 8, 2])
    proc = run_script("calibrate.py", str(first), "--fit", "--also", str(second))
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^\| 1600 \(r1\) \| 1500 \| 12 56 12 \| 1600 ", proc.stdout, re.M), proc.stdout
    assert re.search(r"^\| 1600 \(v1\) \| 1450 \| 4 56 20 \| 15\d\d ", proc.stdout, re.M), proc.stdout
    assert re.search(r"^\| full \| 2000 \| 24 112 24 \| 2250 ", proc.stdout, re.M), proc.stdout
    points = eval(re.search(r"^CALIBRATION = (\(.*\))  \(was", proc.stdout, re.M).group(1))
    assert (1600, 1500) in points and points[-1] == (2250, 2000) and any(strength == 1450 for _, strength in points)
    proc = run_script("calibrate.py", str(first), "--fit", "--also", str(tmp_path / "nowhere"))
    assert proc.returncode == 1 and "no such folder" in proc.stderr


@pytest.mark.slow  # real games at 2+0.05
def test_calibrate_full_strength_rates_each_level_and_all_together(tmp_path: Path) -> None:
    # Garfish itself stands in for Stockfish; two levels, then the combined rating of both.
    args = ("--elos", "1400,1700", "--games", "2", "--tc", "2+0.05", "--stockfish", " ".join(ENGINE_CMD),
            "--full-strength", "--openings", str(OPENINGS_3MOVES))
    proc = run_script("calibrate.py", str(tmp_path), *args)
    assert proc.returncode == 0, proc.stderr
    assert "--engine name=Garfish --engine" in proc.stdout  # no strength limit on Garfish's side
    assert sorted(path.name for path in tmp_path.glob("*.json")) == ["full-1400.json", "full-1700.json"]
    rows = re.findall(r"^\| (\d+|all) \| (\d+) (\d+) (\d+) \| \**(-?\d+)\** \[(-?\d+), (-?\d+)\] \|$",
                      proc.stdout, re.M)
    assert [row[0] for row in rows] == ["1400", "1700", "all"], proc.stdout
    for row in rows:
        assert int(row[5]) <= int(row[4]) <= int(row[6])
    assert [sum(int(row[i]) for row in rows[:2]) for i in (1, 2, 3)] == [int(rows[2][i]) for i in (1, 2, 3)]
    assert sum(int(rows[2][i]) for i in (1, 2, 3)) == 4


def test_random_network_writes_a_network_of_the_sizes_asked(tmp_path: Path) -> None:
    from garfish.engine.evaluation.network import CRELU, read_network

    proc = run_script("random_network.py", str(tmp_path), "--hidden", "16", "--buckets", "2", "--activation", "crelu")
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip())
    assert path.parent == tmp_path and path.name.startswith("nn-")
    network = read_network(path)
    assert (network.hidden, network.buckets, network.activation) == (16, 2, CRELU)


@pytest.mark.slow  # a match played twice, once on a cluster
def test_cluster_throughput_plays_the_match_locally_and_on_a_cluster(tmp_path: Path) -> None:
    require_extra("cluster")
    book = tmp_path / "book.epd"
    book.write_text("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\n")
    proc = run_script("cluster_throughput.py", "--workers", "1", "--games", "2", "--tc", "1+0.02",
                      "--openings", str(book))
    assert proc.returncode == 0, proc.stderr
    for label in ("local", "cluster"):
        assert re.search(rf"^round 1 +{label}: 2 games in +[\d.]+ s = +[\d.]+ games/min$", proc.stdout, re.M), proc.stdout
    assert re.search(r"wall time [\d.]+x the local run's$", proc.stdout, re.M), proc.stdout


def test_stop_latency_times_each_stop_at_each_setting() -> None:
    proc = run_script("stop_latency.py", "--threads", "1", "2", "--positions", "1", "--think", "0.2",
                      "--engine", " ".join(ENGINE_CMD))
    assert proc.returncode == 0, proc.stderr
    for threads in (1, 2):
        assert re.search(rf"^Threads {threads} position 1: [a-h][1-8][a-h][1-8]\w? after [\d.]+ ms$", proc.stdout, re.M)
        assert re.search(rf"^Threads {threads}: stop -> bestmove median [\d.]+ ms, worst [\d.]+ ms over 1 searches$",
                         proc.stdout, re.M), proc.stdout


@pytest.mark.slow  # a first start with an empty cache: a cold compile
def test_first_start_plays_a_move_through_python_chess() -> None:
    proc = run_script("first_start.py", "--runs", "1", "--warm", timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^run 1 engine 1: uciok [\d.]+ s, move [\d.]+ s \(play [\d.]+ s\)$", proc.stdout, re.M), \
        proc.stdout
    assert re.search(r"^1 engine\(s\) at once, 0 busy process\(es\) beside, warm cache, 1 runs: .* 0 failed$",
                     proc.stdout, re.M), proc.stdout


def test_time_to_depth_times_both_engines_on_each_position() -> None:
    command = " ".join(ENGINE_CMD)
    proc = run_script("time_to_depth.py", "--engine", command, "--engine", command, "--depth", "3",
                      "--positions", "2")
    assert proc.returncode == 0, proc.stderr
    rows = re.findall(r"^ ?\d+  A +[\d.]+ s +(\d+) nodes   B +[\d.]+ s +(\d+) nodes$", proc.stdout, re.M)
    assert len(rows) == 2 and all(a == b and int(a) > 0 for a, b in rows), proc.stdout  # the same engine: the same tree
    assert re.search(r"^B's time / A's time to depth 3: [\d.]+$", proc.stdout, re.M), proc.stdout


def test_nnue_speed_tabulates_each_kernel_against_the_hand_written_one() -> None:
    proc = run_script("nnue_speed.py", "--rounds", "1", "--hidden", "8", "--positions", "1")
    assert proc.returncode == 0, proc.stderr
    for label in ("classic", "H=8 scratch", "H=8 incremental"):
        assert re.search(rf"^{label} +[\d.]+ us per evaluation, x[\d.]+ the hand-written kernel", proc.stdout, re.M), \
            proc.stdout


@pytest.mark.parametrize("required", [False, True])
def test_missing_shared_data_skips_for_users_and_fails_under_ci(tmp_path: Path, required: bool) -> None:
    env = dict(os.environ, GARFISH_DATA=str(tmp_path / "no-such-folder"))
    env.pop(REQUIRE_DATA_ENV, None)
    if required:
        env[REQUIRE_DATA_ENV] = "1"
    proc = subprocess.run([sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
                           "tests/test_movepick.py::test_perft_suites_at_small_depths"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    if required:
        assert proc.returncode == 1, proc.stdout
        assert "4 errors" in proc.stdout and "data is required here" in proc.stdout
    else:
        assert proc.returncode == 0, proc.stdout
        assert "4 skipped" in proc.stdout and "shared test data not found" in proc.stdout


def test_clock_left_replays_each_players_clock_from_the_move_times(tmp_path: Path) -> None:
    pgn = tmp_path / "games.pgn"
    pgn.write_text(
        '[White "A"]\n[Black "B"]\n[Result "0-1"]\n[TimeControl "10+0.1"]\n[ResultReason "checkmate"]\n\n'
        "1. f3 { +0.10/5 1.500s } 1... e5 { -0.10/5 0.250s } 2. g4 { -1.00/4 2.000s } "
        "2... Qh4# { +M1/3 0.100s } 0-1\n\n"
        '[White "B"]\n[Black "A"]\n[Result "1-0"]\n[TimeControl "10+0.1"]\n[Termination "time forfeit"]\n'
        '[ResultReason "Black (A) loses on time: e5 took 12.000 s with 10.000 s left (margin 0 ms)"]\n\n'
        "1. e4 { +0.20/5 0.500s } 1... e5 { +0.00/5 12.000s } 1-0\n\n"
        '[White "A"]\n[Black "B"]\n[Result "1/2-1/2"]\n[TimeControl "40/60"]\n\n1. e4 { 1.000s } 1/2-1/2\n\n')
    proc = run_script("clock_left.py", str(pgn))
    assert proc.returncode == 0, proc.stderr
    # A: 10 - 1.5 + 0.1 - 2.0 + 0.1 = 6.70 s; B: 10 - 0.25 + 0.1 - 0.1 + 0.1 = 9.85 s.
    assert "A: clock left at the end median 6.70 s, least 6.70 s, 1.750 s a move on average, over 1 games" in proc.stdout
    assert "B: clock left at the end median 9.85 s, least 9.85 s, 0.175 s a move on average, over 1 games" in proc.stdout
    assert "(2 games left out" in proc.stdout
    assert run_script("clock_left.py", str(tmp_path / "missing.pgn")).returncode == 1


def test_uci_overhead_times_the_client_and_the_pipe_on_the_same_moves() -> None:
    proc = run_script("uci_overhead.py", "--engine", " ".join(ENGINE_CMD), "--nodes", "50", "--positions", "5",
                      "--rounds", "1")
    assert proc.returncode == 0, proc.stderr
    times = re.findall(r"^(python-chess SimpleEngine|raw pipe): ([\d.]+) ms a move$", proc.stdout, re.M)
    assert [name for name, _ in times] == ["python-chess SimpleEngine", "raw pipe"], proc.stdout
    assert all(float(ms) > 0 for _, ms in times)


def test_sprt_queue_truncates_each_match_by_its_rule_and_skips_it_when_run_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    queue = load_script("sprt_queue.py", monkeypatch)
    assert not queue.truncated(399, -3.0, 400, 800) and queue.truncated(400, 0.0, 400, 800)
    assert not queue.truncated(799, 0.01, 400, 800) and queue.truncated(800, 2.9, 400, 800)
    book = tmp_path / "book.epd"
    book.write_text("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\n")
    for name in ("base", "cand-a"):  # checkouts as the queue sees them: a folder with a `garfish` launcher
        (tmp_path / name).mkdir()
        launcher = tmp_path / name / "garfish"
        launcher.write_text(f"#!/bin/sh\nexec {' '.join(ENGINE_CMD)} \"$@\"\n")
        launcher.chmod(0o755)
    monkeypatch.setattr(queue, "POLL_SECONDS", 0.5)
    monkeypatch.setattr(queue, "INTERRUPT_GRACE_SECONDS", 5)  # a match that ignored the stop would be killed
    args = ["--base", str(tmp_path / "base"), "--out", str(tmp_path / "out"), "--tc", "1+0.02", "--concurrency", "1",
            "--pin", str(min(os.sched_getaffinity(0))), "--openings", str(book), "--low", "2", "--cap", "2",
            str(tmp_path / "cand-a")]
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell without job control starts `queue &`
    try:
        assert queue.main(args) == 0
    finally:
        signal.signal(signal.SIGINT, handlers[0])
        signal.signal(signal.SIGTERM, handlers[1])
    log = tmp_path / "out" / "sprt-cand-a.log"
    text = log.read_text()
    games, _ = queue.last_progress(log)
    assert games >= 2 and text.count("stopped by the truncation rule") == 1, text
    assert text.count("garfish match: ") == 1 and ", concurrency 1, " in text  # one match, one game at a time
    assert f"engines pinned to processors {min(os.sched_getaffinity(0))}" in text  # --pin passed on
    assert (tmp_path / "out" / "sprt-cand-a.pgn").read_text().count("[Result ") >= games
    report = json.loads((tmp_path / "out" / "sprt-cand-a.json").read_text())
    assert report["engines"] == ["cand-a", "base"] and report["sprt"]["elo1"] == 10
    assert queue.main(args) == 0 and log.read_text() == text  # a finished match is skipped
    capsys.readouterr()
    assert queue.main(["--out", str(tmp_path / "out"), "--summary", "--upto", "1", str(tmp_path / "cand-a")]) == 0
    summary = capsys.readouterr().out  # the journal's figures, as the match's own report gives them
    assert f"the first 1 of {report['games']} games in its journal" in summary, summary
    assert "Finished 1/1 games: cand-a vs base" in summary and "SPRT elo0=0 elo1=10" in summary, summary
    (tmp_path / "out" / "sprt-bad.pgn.match").write_text("not a journal\n")
    assert queue.main(["--out", str(tmp_path / "out"), "--summary", str(tmp_path / "bad")]) == 0
    assert "sprt-bad: cannot read its journal" in capsys.readouterr().out


@pytest.mark.extra("train")
def test_recipes_trains_each_recipe_once_and_tabulates_its_losses(tmp_path: Path) -> None:
    """Two recipes trained two at a time, each into its folder with its log, and their table; run
    again, neither is trained again; a recipe that garfish train refuses is reported as failed."""
    data, rng, lines = tmp_path / "games.txt", random.Random(21), []
    for _ in range(12):  # random games, scored at random: something to fit
        board, result = chess.Board(), rng.choice(["1", "0.5", "0"])
        while len(board.move_stack) < 40 and not board.is_game_over():
            move = rng.choice(list(board.legal_moves))
            lines.append(f"{board.fen()};{rng.randint(-300, 300)};{move.uci()};{result}\n")
            board.push(move)
    data.write_text("".join(lines))
    out = tmp_path / "screen"
    recipes = ["--recipe", "small=--hidden 8", "--recipe", "mirror=--hidden 8 --mirror"]
    common = ["--common", "--epochs 1 --batch-size 256 --val-fraction 0.2 --no-cache"]
    proc = run_script("recipes.py", "--out", str(out), "--data", str(data), *common, *recipes, "--jobs", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "small: trained" in proc.stdout and "mirror: trained" in proc.stdout
    rows = [line for line in proc.stdout.splitlines() if line.startswith(("| small", "| mirror"))]
    assert len(rows) == 2 and all(re.search(r"\| 0\.\d+ / 0\.\d+ \| 0\.\d+ \| \d+ s \|$", row) for row in rows), rows
    assert "`--hidden 8 --mirror`" in rows[1] and len(list(out.glob("*/nn-*.gfnn"))) == 2
    # As if "small" had been interrupted after its epoch: its checkpoint left, no network yet.
    (checkpoint,) = (out / "small").glob("nn-*.pt")
    checkpoint.rename(out / "small" / "checkpoint.pt")
    for path in (out / "small").glob("nn-*"):
        path.unlink()
    again = run_script("recipes.py", "--out", str(out), "--data", str(data), *common, *recipes,
                       "--recipe", "bad=--hidden 0")
    assert again.returncode == 1
    assert "mirror: already trained, skipped" in again.stdout and "small: trained" in again.stdout
    log = (out / "small.log").read_text()
    commands = [line for line in log.splitlines() if line.startswith("$ ")]
    assert len(commands) == 2 and "--resume" not in commands[0] and "--resume" in commands[1]
    assert "resumed from" in log and any((out / "small").glob("nn-*.gfnn"))
    assert "bad: failed (exit 2)" in again.stdout and "--hidden must be" in (out / "bad.log").read_text()
    summary = run_script("recipes.py", "--out", str(out), "--summary", *recipes)
    assert summary.returncode == 0 and rows[1] in summary.stdout.splitlines()
    assert any(line.startswith("| small |") for line in summary.stdout.splitlines())


def test_fresh_clone_reads_pytests_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh_clone = load_script("fresh_clone.py", monkeypatch)
    full = "tests/test_zobrist.py ....  [100%]\n===== 762 passed, 112 skipped in 885.31s (0:14:45) =====\n"
    assert fresh_clone.summary_counts(full) == {"passed": 762, "skipped": 112}
    quiet = "FAILED tests/test_a.py::test_b - assert 1 == 2\n1 failed, 847 passed, 26 skipped, 2 errors in 12.50s\n"
    assert fresh_clone.summary_counts(quiet) == {"failed": 1, "passed": 847, "skipped": 26, "errors": 2}
    assert fresh_clone.summary_counts("ImportError while loading conftest\n") is None


def test_fresh_clone_clones_a_commit_with_or_without_shared_data(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    fresh_clone = load_script("fresh_clone.py", monkeypatch)
    source = tmp_path / "source"
    source.mkdir()
    git = ["git", "-C", str(source), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "--quiet", str(source)], check=True)
    (source / "garfish").write_text("first\n")
    subprocess.run([*git, "add", "garfish"], check=True)
    subprocess.run([*git, "commit", "--quiet", "-m", "first"], check=True)
    first = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    (source / "garfish").write_text("second\n")
    subprocess.run([*git, "commit", "--quiet", "-am", "second"], check=True)
    shared = tmp_path / "shared"
    (shared / "data").mkdir(parents=True)
    (tmp_path / "with").mkdir()
    clone = fresh_clone.make_clone(source, tmp_path / "with", first, shared)
    assert (clone / "garfish").read_text() == "first\n"
    assert (clone.parent / "shared" / "data").is_dir()
    (tmp_path / "without").mkdir()
    clone = fresh_clone.make_clone(source, tmp_path / "without", None, None)
    assert (clone / "garfish").read_text() == "second\n"
    assert not (clone.parent / "shared").exists()
    monkeypatch.setenv("GARFISH_VENV", "/elsewhere/venv")
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/elsewhere/cache")
    env = fresh_clone.user_env()
    assert "GARFISH_VENV" not in env and "NUMBA_CACHE_DIR" not in env and env["PATH"] == os.environ["PATH"]


def test_kernel_profile_names_numba_symbols_by_module_and_function(monkeypatch: pytest.MonkeyPatch) -> None:
    profile = load_script("kernel_profile.py", monkeypatch)
    name = "_ZN7garfish6engine6search4tree7negamaxB2v2B38c8tJTIeFIjxB2IKSgI4CrvQClQZ6FczSBAA_3dE721SearchArrays"
    assert profile.short_name(name) == "search.tree.negamax"
    wrapper = "_ZN7cpython7garfish6engine10evaluation12accumulators21network_update_kernelB3v10B40c8tJTI"
    assert profile.short_name(wrapper) == "evaluation.accumulators.network_update_kernel (Python wrapper)"
    assert profile.short_name("NRT_incref") == "NRT_incref"


def test_startup_stages_times_each_stage_of_a_warm_start() -> None:
    done = run_script("startup_stages.py", "--runs", "1")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = dict(re.findall(r"^\| (.+?) \| ([\d.]+) \|$", done.stdout, re.M))
    assert list(rows) == ["UCI layer imported", "numba imported", "kernels loaded from the cache", "network read",
                          "searcher and 16 MB table built", "total (after the interpreter's own start)"]
    stages = [float(value) for value in rows.values()]
    assert all(value >= 0 for value in stages) and abs(sum(stages[:-1]) - stages[-1]) < 0.01


def test_score_positions_prints_each_engine_s_score_at_each_depth() -> None:
    command = " ".join(ENGINE_CMD)
    won = "6k1/8/6K1/8/8/8/8/Q7 w - - 0 1"  # Qa8 mates
    proc = run_script("score_positions.py", "--engine", command, "--depth", "2", "--depth", "4", won,
                      chess.STARTING_FEN)
    assert proc.returncode == 0, proc.stderr
    rows = re.findall(r"^Garfish [^|]+\| (.+) \| Limit\(depth=(\d)\): (mate \d+|[+-]\d+\.\d\d) \(depth (\d+)",
                      proc.stdout, re.M)
    assert [(fen, depth) for fen, depth, _, _ in rows] == [(won, "2"), (won, "4"), (chess.STARTING_FEN, "2"),
                                                            (chess.STARTING_FEN, "4")], proc.stdout
    assert all(int(reached) >= int(depth) for _, depth, _, reached in rows)
    assert rows[0][2] == rows[1][2] == "mate 1", proc.stdout
    assert abs(float(rows[2][2])) < 1, proc.stdout  # the start: about equal


def test_missed_wins_counts_the_games_not_won_after_a_high_score(tmp_path: Path) -> None:
    pgn = tmp_path / "games.pgn"
    pgn.write_text(
        '[White "A"]\n[Black "B"]\n[Result "1/2-1/2"]\n[ResultReason "fifty-move rule"]\n\n'
        "1. e4 { +0.30/9 0.1s } 1... e5 { -2.90/9 0.1s } 2. Nf3 { +2.50/9 0.1s } 2... Nc6 { -0.10/9 0.1s } "
        "3. Bb5 { +1.00/9 0.1s } 1/2-1/2\n\n"
        '[White "B"]\n[Black "A"]\n[Result "0-1"]\n[ResultReason "checkmate"]\n\n'
        "1. f3 { +0.10/5 0.1s } 1... e5 { +3.00/5 0.1s } 2. g4 { -1.00/4 0.1s } 2... Qh4# { +M1/3 0.1s } 0-1\n\n"
        '[White "B"]\n[Black "A"]\n[Result "1-0"]\n[ResultReason "checkmate"]\n\n'
        "1. e4 { +0.20/5 0.1s } 1... f6 { +1.90/5 0.1s } 2. d4 { +0.00/5 0.1s } 2... g5 { -0.50/5 0.1s } "
        "3. Qh5# { +M1/5 0.1s } 1-0\n\n"
        '[White "C"]\n[Black "B"]\n[Result "1-0"]\n\n1. e4 { +5.00/5 0.1s } 1-0\n\n')
    proc = run_script("missed_wins.py", str(pgn), "--engine", "A")
    assert proc.returncode == 0, proc.stderr
    # Game 1: A's highest +2.50 (after 2. Nf3), a draw: counted. Game 2: won. Game 3: lost, highest +1.90.
    assert "game 1: against B, 1/2-1/2 (fifty-move rule); highest +2.50: " in proc.stdout
    assert "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2" not in proc.stdout  # the position after A's move, not after B's
    assert "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2" in proc.stdout
    assert "A: 3 games, 2 not won, 1 of them after a score of +2.00 or more" in proc.stdout
    assert "game 3:" not in proc.stdout
    lower = run_script("missed_wins.py", str(pgn), "--engine", "A", "--above", "1.5")
    assert "A: 3 games, 2 not won, 2 of them after a score of +1.50 or more" in lower.stdout
    assert "game 3: against B, 1-0 (checkmate); highest +1.90" in lower.stdout
    assert run_script("missed_wins.py", str(pgn), "--engine", "Z").returncode == 1
    assert run_script("missed_wins.py", str(tmp_path / "missing.pgn"), "--engine", "A").returncode == 1


def test_label_check_tabulates_outcomes_and_the_tables_disagreements(tmp_path: Path, data: Path) -> None:
    games = tmp_path / "games.txt"
    games.write_text(
        # drawn in the file, a win in the tables once the rook has taken the pawn (4 men, just after a capture)
        "8/8/8/4k3/8/3p4/7P/3R2K1 w - - 2 2;320;d1d3;0.5\n8/8/8/4k3/8/3R4/7P/6K1 b - - 0 2;700;e5e4;0.5\n"
        # won in the file and by the tables
        "8/8/4k3/8/8/8/7p/Q5K1 w - - 0 1;900;g1h2;1\n8/8/4k3/8/8/8/7K/Q7 b - - 0 1;950;e6d5;1\n")
    proc = run_script("label_check.py", str(games), "--syzygy", str(data / "syzygy"))
    assert proc.returncode == 0, proc.stderr
    assert "4 positions, 2 games" in proc.stdout
    # the quiet positions (d1d3 and g1h2 are captures) in the bands: 700 with 4 men, drawn in the file (950 is
    # above the highest band)
    assert "| 3-7 | +400 to +800 | 1 | 0.0% | 100.0% | 0.0% |" in proc.stdout
    assert "games that reach the tables (up to 4 men): 2 (100.0%); RESULT not the tables': 1 (50.00% of the games, " \
           "2 positions, 50.00%)" in proc.stdout
    assert "drawn in the file, White won by the tables: 1" in proc.stdout
    assert run_script("label_check.py", str(tmp_path / "missing.txt")).returncode == 1
