"""`garfish match --cluster`, `garfish epd --cluster` and `garfish datagen --cluster`: campaigns on Dask
(garfish.arena.cluster).

A LocalCluster started by the tool (`--cluster local:2`), and a real `dask scheduler` with two
`dask worker` processes on 127.0.0.1, one of which is killed in the middle of a match or of a data
generation (and a scheduler restarted in the middle of one). The engines are tests/scripted_engine.py,
whose games are deterministic, and Stockfish where it is installed.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from conftest import CLI_TIMEOUT, ROOT, SCRIPTED, read_games, require_extra
from garfish.arena import cluster, datagen, match

distributed = require_extra("cluster")

OPENINGS = [
    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
    "rnbqkb1r/pppppppp/5n2/8/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 1 2",
    "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
    "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1",
]
DASK = [sys.executable, "-m", "dask"]
START_SECONDS = 60.0  # how long the scheduler and workers may take to come up


def scripted(*args: str) -> str:
    """`cmd=...` for the scripted engine (absolute paths, as a cluster needs)."""
    return "cmd=" + " ".join([sys.executable, str(SCRIPTED), *args])


def tool(*args: str) -> list[str]:
    """The command line of a garfish tool."""
    return [sys.executable, "-m", "garfish.uci", *args]


def run_tool(*args: str) -> subprocess.CompletedProcess:
    """Run a garfish tool and capture its output."""
    return subprocess.run(tool(*args), cwd=str(ROOT), capture_output=True, text=True, timeout=CLI_TIMEOUT)


def check_games_against_report(pgn: Path, report: Path, games: int) -> None:
    """Every game is in the PGN once, in game order, and the report's W/D/L are the PGN's results."""
    played = read_games(pgn)
    assert [int(game.headers["Round"]) for game in played] == list(range(1, games + 1))
    first = json.loads(report.read_text())
    name = first["engines"][0]
    points = []
    for game in played:
        white_points = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[game.headers["Result"]]
        points.append(white_points if game.headers["White"] == name else 1.0 - white_points)
    assert first["games"] == games
    assert [first["wins"], first["draws"], first["losses"]] == [points.count(1.0), points.count(0.5),
                                                                 points.count(0.0)]


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """Four openings, one per line."""
    path = tmp_path / "book.epd"
    path.write_text("\n".join(OPENINGS) + "\n")
    return path


# --------------------------------------------------------------------------- a LocalCluster
def test_local_cluster_match_writes_every_game_once_in_order_and_reuses_engines(tmp_path: Path, book: Path) -> None:
    """`--cluster local:2`: 8 games in 4 pair tasks; PGN in game order, report = PGN, the same games and names
    as a local run (deterministic engines), and each worker keeps its engines from task to task (also those
    that told the client their names)."""
    log = tmp_path / "alpha.log"
    common = ["--nodes", "1", "--games", "8", "--openings", str(book), "--seed", "5", "--max-moves", "40"]
    pgn, report = tmp_path / "cluster.pgn", tmp_path / "cluster.json"
    proc = run_tool("match", "--engine", scripted("--play", "random", "--seed", "1", "--log", str(log)),
                    "--engine", scripted("--play", "greedy", "--seed", "2", "--name", "beta"), *common,
                    "--cluster", "local:2", "--pgnout", str(pgn), "--report", str(report))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "cluster local:2 (2 worker threads)" in proc.stdout
    check_games_against_report(pgn, report, 8)
    starts = log.read_text().splitlines().count("uci")
    assert 1 <= starts <= 2, f"alpha started {starts} times for 4 tasks on 2 workers"

    local_pgn, local_report = tmp_path / "local.pgn", tmp_path / "local.json"
    local = run_tool("match", "--engine", scripted("--play", "random", "--seed", "1"),
                     "--engine", scripted("--play", "greedy", "--seed", "2", "--name", "beta"), *common,
                     "--concurrency", "2", "--pgnout", str(local_pgn), "--report", str(local_report))
    assert local.returncode == 0, local.stderr[-3000:]
    def games(path: Path) -> list[tuple[str, str, list[str]]]:
        return [(game.headers["White"], game.headers["Black"], [move.uci() for move in game.mainline_moves()])
                for game in read_games(path)]

    assert games(pgn) == games(local_pgn)
    assert {name for white, black, _ in games(pgn) for name in (white, black)} == {"beta", "scripted-random"}
    assert json.loads(report.read_text())["pentanomial"] == json.loads(local_report.read_text())["pentanomial"]


def test_local_cluster_sprt_stops_early(tmp_path: Path, book: Path) -> None:
    """An SPRT decision on the cluster stops the match before all games, with the games counted so far."""
    pgn, report = tmp_path / "games.pgn", tmp_path / "report.json"
    proc = run_tool("match", "--engine", scripted("--play", "greedy"), "name=strong",
                    "--engine", scripted("--play", "first"), "name=weak", "--nodes", "1", "--games", "400",
                    "--openings", str(book), "--sprt", "elo0=0", "elo1=400", "--cluster", "local:2",
                    "--pgnout", str(pgn), "--report", str(report))
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(report.read_text())
    assert data["sprt"]["decision"] == "H1"
    assert 0 < data["games"] < 400
    played = read_games(pgn)
    assert len(played) == data["games"]
    rounds = [int(game.headers["Round"]) for game in played]
    assert rounds == sorted(set(rounds))


def test_local_cluster_epd_gives_the_local_results(tmp_path: Path) -> None:
    """`garfish epd --cluster local:2` solves the same positions with the same moves as one local engine."""
    suite = tmp_path / "suite.epd"
    suite.write_text("\n".join([
        '6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - bm Ra8#; id "mate";',
        'r3k3/8/8/8/8/8/8/R3K3 w Q - bm Rxa8+; id "capture";',
        '4k3/8/8/3q4/8/8/3R4/4K3 w - - bm Rxd5; id "queen";',
        '4k3/8/8/8/8/8/4P3/4K3 w - - bm Kd2; id "quiet";',
    ]) + "\n")
    reports = {}
    for where in (["--cluster", "local:2"], ["-j", "1"]):
        report = tmp_path / f"{where[0].strip('-')}.json"
        proc = run_tool("epd", str(suite), "--engine", f"{sys.executable} {SCRIPTED} --play greedy", "--nodes", "1",
                        "--report", str(report), *where)
        assert proc.returncode == 0, proc.stderr[-3000:]
        reports[where[0]] = json.loads(report.read_text())
    moves = {key: [position["move"] for position in data["positions"]] for key, data in reports.items()}
    assert moves["--cluster"] == moves["-j"]
    assert reports["--cluster"]["summary"]["solved"] == reports["-j"]["summary"]["solved"] == 3
    assert reports["--cluster"]["cluster"] == "local:2"


def test_a_worker_without_the_engine_is_named_in_the_error(tmp_path: Path, book: Path) -> None:
    """A command the workers cannot run: exit 1 and an error naming the worker, its host and the command."""
    missing = tmp_path / "no-such-engine"
    proc = run_tool("match", "--engine", f"cmd={missing}", "--engine", scripted(), "--nodes", "1", "--games", "2",
                    "--cluster", "local:1")
    assert proc.returncode == 1
    assert "worker tcp://127.0.0.1:" in proc.stderr and "on host" in proc.stderr
    assert str(missing) in proc.stderr
    epd = tmp_path / "one.epd"
    epd.write_text('4k3/8/8/8/8/8/4P3/4K3 w - - bm Kd2; id "quiet";\n')
    proc = run_tool("epd", str(epd), "--engine", str(missing), "--nodes", "1", "--cluster", "local:1")
    assert proc.returncode == 1
    assert "worker tcp://127.0.0.1:" in proc.stderr and str(missing) in proc.stderr


def test_cluster_arguments_are_checked(book: Path) -> None:
    """Bad --cluster values and --cluster with --concurrency / -j are usage errors: exit 2, the message that
    says what is wrong, no traceback."""
    base = ["match", "--engine", scripted(), "--engine", scripted(), "--nodes", "1", "--games", "2"]
    for extra, message in (
            (["--cluster", "local:0"], "garfish match: --cluster local:N needs a positive number of workers, not '0'"),
            (["--cluster", "local:x"], "garfish match: --cluster local:N needs a positive number of workers, not 'x'"),
            (["--cluster", " "], "garfish match: --cluster needs a scheduler address (tcp://HOST:8786) or local[:N]"),
            (["--cluster", "local", "--concurrency", "2"],
             "garfish match: error: argument --concurrency: not allowed with argument --cluster")):
        proc = run_tool(*base, *extra)
        assert proc.returncode == 2, (extra, proc.stderr)
        assert message in proc.stderr.splitlines() and "Traceback" not in proc.stderr, (extra, proc.stderr)
    proc = run_tool("epd", str(book), "--nodes", "1", "--cluster", "local", "-j", "2")
    assert proc.returncode == 2
    assert "garfish epd: error: argument -j/--jobs: not allowed with argument --cluster" in proc.stderr.splitlines()
    assert "Traceback" not in proc.stderr


def test_an_unreachable_scheduler_is_a_clear_error(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """No scheduler at the address: a message naming it, exit 1, no traceback."""
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", 2.0)
    status = match.main(["--engine", scripted(), "--engine", scripted(), "--nodes", "1", "--games", "2",
                         "--cluster", "tcp://127.0.0.1:9", "--no-progress"])
    assert status == 1
    err = capsys.readouterr().err
    assert "Dask cluster tcp://127.0.0.1:9: cannot reach the scheduler" in err
    assert "Traceback" not in err


# --------------------------------------------------------------------------- dask scheduler + dask worker
def run_meanwhile(tmp_path: Path, command: list[str], marker: str, meanwhile: Callable[[], None]) -> str:
    """Run a tool; once it prints its first line starting with `marker` (a game is in), call `meanwhile`; the
    tool's output (it must succeed)."""
    errors = tmp_path / "stderr.txt"
    with open(errors, "w") as err_handle:
        proc = subprocess.Popen(command, cwd=str(ROOT), stdout=subprocess.PIPE, stderr=err_handle, text=True)
    out = ""
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        while first and not first.startswith(marker):
            first = proc.stdout.readline()
        meanwhile()
        out = first + proc.stdout.read()
        proc.wait(CLI_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, errors.read_text()[-3000:] + out[-3000:]
    return out


def held_in(hold: Path, worker: subprocess.Popen) -> bool:
    """Whether a scripted engine run with `--hold-file HOLD` is held (waiting for the file) in `worker`'s session:
    an engine that `worker` (started in a session of its own, with its nanny) runs."""
    for mark in hold.parent.glob(f"{hold.name}.held.*"):
        try:
            if os.getsid(int(mark.name.rsplit(".", 1)[1])) == worker.pid:
                return True
        except ProcessLookupError:
            continue  # a process of an earlier try, gone
    return False


def kill_held_worker(tmp_path: Path, command: list[str], hold: Path, worker: subprocess.Popen) -> str:
    """Run a tool whose engines hold their moves (from a game on) until `hold` exists; once one of `worker`'s
    engines is held, in the middle of a game, SIGKILL `worker` with its nanny, then let the engines go on. The
    tool's output (it must succeed). However slow the machine, the kill lands in a game, and only there."""
    errors, output = tmp_path / "stderr.txt", tmp_path / "stdout.txt"
    with open(errors, "w") as err_handle, open(output, "w") as out_handle:
        proc = subprocess.Popen(command, cwd=str(ROOT), stdout=out_handle, stderr=err_handle, text=True)
    try:
        deadline = time.monotonic() + CLI_TIMEOUT
        while not held_in(hold, worker):
            assert proc.poll() is None and time.monotonic() < deadline, \
                f"no engine of the worker was held: {errors.read_text()[-3000:]}"
            time.sleep(0.05)
        kill_group(worker)
        hold.touch()
        proc.wait(CLI_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        hold.touch()  # no engine left waiting, whatever happened
    assert proc.returncode == 0, errors.read_text()[-3000:] + output.read_text()[-3000:]
    return output.read_text()


def start(command: list[str], log: Path) -> subprocess.Popen:
    """A process in its own process group (so that it can be killed with its children)."""
    with open(log, "ab") as handle:
        return subprocess.Popen(command, cwd=str(ROOT), stdin=subprocess.DEVNULL, stdout=handle, stderr=handle,
                                start_new_session=True)


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL a process and everything in its process group."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(10)


def start_scheduler(tmp_path: Path, processes: list[subprocess.Popen], port: int = 0, name: str = "scheduler") -> str:
    """Start `dask scheduler` on 127.0.0.1 (port 0: a free one), added to `processes`; its address once it is up."""
    file = tmp_path / f"{name}.json"
    processes.append(start([*DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard",
                            "--scheduler-file", str(file)], tmp_path / f"{name}.log"))
    deadline = time.monotonic() + START_SECONDS
    while not file.exists() or not file.read_text().strip():
        assert time.monotonic() < deadline, (tmp_path / f"{name}.log").read_text()
        time.sleep(0.2)
    return json.loads(file.read_text())["address"]


def start_workers(tmp_path: Path, processes: list[subprocess.Popen], address: str,
                  names: list[str]) -> list[subprocess.Popen]:
    """Start a `dask worker` process (one thread) a name on 127.0.0.1, added to `processes`; they, once all joined."""
    workers = [start([*DASK, "worker", address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
                      "--host", "127.0.0.1", "--name", name], tmp_path / f"worker-{name}.log") for name in names]
    processes += workers
    with distributed.Client(address, timeout=START_SECONDS) as client:
        client.wait_for_workers(len(names), timeout=START_SECONDS)
    return workers


@pytest.fixture
def scheduler_and_workers(tmp_path: Path) -> Iterator[tuple[str, list[subprocess.Popen]]]:
    """`dask scheduler` and two `dask worker` processes (one thread each) on 127.0.0.1: (address, workers)."""
    processes: list[subprocess.Popen] = []
    try:
        address = start_scheduler(tmp_path, processes)
        yield address, start_workers(tmp_path, processes, address, ["w0", "w1"])
    finally:
        for process in processes:
            kill_group(process)


@pytest.mark.slow  # a real scheduler and workers
def test_a_worker_killed_mid_match_loses_no_game(tmp_path: Path, book: Path,
                                                 scheduler_and_workers: tuple[str, list[subprocess.Popen]]) -> None:
    """Two workers; one is SIGKILLed (with its nanny) in the middle of a game, its engine holding its move in its
    second game until the kill is done: its pair is played again on the other worker, and every game is in the
    PGN exactly once, the report agreeing with the PGN."""
    address, workers = scheduler_and_workers
    pgn, report = tmp_path / "games.pgn", tmp_path / "report.json"
    games = 12
    log, hold = tmp_path / "alpha.log", tmp_path / "go-on"
    command = tool("match", "--engine", scripted("--play", "random", "--seed", "1", "--log", str(log),
                                                 "--hold-file", str(hold), "--hold-game", "2"), "name=alpha",
                   "--engine", scripted("--play", "greedy", "--seed", "2"), "name=beta",
                   "--nodes", "1", "--games", str(games), "--openings", str(book), "--seed", "9",
                   "--max-moves", "20", "--cluster", address, "--pgnout", str(pgn), "--report", str(report),
                   "--no-progress")
    out = kill_held_worker(tmp_path, command, hold, workers[0])
    assert workers[0].poll() is not None
    assert sum(line.startswith("Game ") for line in out.splitlines()) == games
    check_games_against_report(pgn, report, games)
    assert log.read_text().splitlines().count("ucinewgame") > games, "no game was cut short by the kill"


def test_a_local_match_resumes_on_a_cluster(tmp_path: Path, book: Path) -> None:
    """A match cut after three games (mid-pair) goes on with `--cluster local:2 --resume`: only games
    4-8 are played (game 4 alone in its pair task), and the PGN and pentanomial are the whole match's."""
    engines = ["--engine", scripted("--play", "random", "--seed", "1"),
               "--engine", scripted("--play", "greedy", "--seed", "2", "--name", "beta")]
    common = ["--nodes", "1", "--games", "8", "--openings", str(book), "--seed", "5", "--max-moves", "40"]
    whole_pgn, whole_report = tmp_path / "whole.pgn", tmp_path / "whole.json"
    proc = run_tool("match", *engines, *common, "--pgnout", str(whole_pgn), "--report", str(whole_report))
    assert proc.returncode == 0, proc.stderr[-3000:]
    pgn, report = tmp_path / "games.pgn", tmp_path / "games.json"
    lines = (tmp_path / "whole.pgn.match").read_text().splitlines(keepends=True)
    (tmp_path / "games.pgn.match").write_text("".join(lines[:4]))
    pgn.write_bytes(whole_pgn.read_bytes())  # longer than the journal says: cut back on resuming
    proc = run_tool("match", *engines, *common, "--cluster", "local:2", "--pgnout", str(pgn),
                    "--report", str(report), "--resume")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "resumed after 3 games" in proc.stdout
    played = sorted(int(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("Game "))
    assert played == [4, 5, 6, 7, 8]
    check_games_against_report(pgn, report, 8)

    def games(path: Path) -> list[list[str]]:
        return [[move.uci() for move in game.mainline_moves()] for game in read_games(path)]

    assert games(pgn) == games(whole_pgn)
    assert json.loads(report.read_text())["pentanomial"] == json.loads(whole_report.read_text())["pentanomial"]


# --------------------------------------------------------------------------- garfish datagen --cluster
def datagen_command(out: Path, book: Path, engine: list[str], games: int, *where: str, plies: int = 50) -> list[str]:
    """`garfish datagen` with the scripted engine (its moves do not depend on timing), seed 7."""
    return tool("datagen", str(out), "--engine", shlex.join([sys.executable, str(SCRIPTED), *engine]),
                "--openings", str(book), "--random-plies", "2", "--max-plies", str(plies), "--games", str(games),
                "--seed", "7", "--no-progress", *where)


def one_process_pack(tmp_path: Path, book: Path, engine: list[str], games: int, plies: int = 50) -> bytes:
    """The pack that `-j 1` writes for these games (with the engine's --delay left out: it only slows the
    engine, so that a kill lands in a game, and changes no move)."""
    out = tmp_path / "one-process.gfpk"
    if "--delay" in engine:
        at = engine.index("--delay")
        engine = engine[:at] + engine[at + 2:]
    proc = subprocess.run(datagen_command(out, book, engine, games, "-j", "1", plies=plies), cwd=str(ROOT),
                          capture_output=True, text=True, timeout=CLI_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out.read_bytes()


def test_local_cluster_datagen_writes_the_pack_of_one_process(tmp_path: Path, book: Path) -> None:
    """`--cluster local:2`: two workers finish games of different lengths in another order than their numbers,
    and OUT is the pack `-j 1` writes, byte for byte; each worker keeps its engine from game to game, and no
    game waits in the ahead file at the end."""
    engine = ["--play", "greedy", "--delay", "0.002"]
    log = tmp_path / "engine.log"
    out = tmp_path / "cluster.gfpk"
    command = datagen_command(out, book, [*engine, "--log", str(log)], 10, "--cluster", "local:2", plies=200)
    proc = subprocess.run(command, cwd=str(ROOT), capture_output=True, text=True, timeout=CLI_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "cluster local:2: 2 worker threads" in proc.stdout and "holds 10 of 10 games" in proc.stdout
    assert out.read_bytes() == one_process_pack(tmp_path, book, engine, 10, plies=200)
    lengths = [int(line.split()[2]) for line in datagen.sidecar_path(out).read_text().splitlines()[1:]]
    assert len(lengths) == 10 and len(set(lengths)) > 3 and not datagen.ahead_path(out).exists()
    assert 1 <= log.read_text().splitlines().count("uci") <= 2


@pytest.mark.skipif(shutil.which("stockfish") is None and not Path("/usr/games/stockfish").exists(),
                    reason="Stockfish is not installed (not on PATH nor at /usr/games/stockfish)")
def test_local_cluster_datagen_with_stockfish_writes_the_pack_of_one_process(tmp_path: Path, book: Path) -> None:
    """Stockfish at 500 nodes a move (one thread, 16 MB hash) plays the same games in two worker processes as in
    one: the same pack, byte for byte."""
    stockfish = shutil.which("stockfish") or "/usr/games/stockfish"
    packs = []
    for where in (["--cluster", "local:2"], ["-j", "1"]):
        out = tmp_path / f"{where[0].strip('-')}.gfpk"
        proc = run_tool("datagen", str(out), "--engine", stockfish, "--option", "Hash=16", "--nodes", "500",
                        "--openings", str(book), "--games", "4", "--seed", "3", "--max-plies", "80", "--no-progress",
                        *where)
        assert proc.returncode == 0, proc.stderr[-3000:]
        packs.append(out.read_bytes())
    assert packs[0] == packs[1]


@pytest.mark.slow  # a real scheduler and workers
def test_a_worker_killed_mid_datagen_loses_no_game(tmp_path: Path, book: Path,
                                                   scheduler_and_workers: tuple[str, list[subprocess.Popen]]) -> None:
    """Two workers; one is SIGKILLed (with its nanny) in the middle of a game, its engine holding its move in its
    second game until the kill is done: the scheduler gives that game to the other worker, which plays it again
    from its start, and OUT is the pack of one process, every game once."""
    address, workers = scheduler_and_workers
    engine = ["--play", "random"]
    log, hold = tmp_path / "engine.log", tmp_path / "go-on"
    out = tmp_path / "cluster.gfpk"
    command = datagen_command(out, book, [*engine, "--log", str(log), "--hold-file", str(hold), "--hold-game", "2"],
                              8, "--cluster", address)
    output = kill_held_worker(tmp_path, command, hold, workers[0])
    assert workers[0].poll() is not None
    assert [line.split(":")[0] for line in output.splitlines() if line.startswith("game ")] == [
        f"game {number}" for number in range(1, 9)]
    assert out.read_bytes() == one_process_pack(tmp_path, book, engine, 8)
    assert log.read_text().splitlines().count("ucinewgame") > 8, "no game was cut short by the kill"


@pytest.mark.slow  # a real scheduler and workers, and engines slowed so that the kill lands in a game
def test_a_scheduler_restarted_mid_datagen_loses_no_game(tmp_path: Path, book: Path) -> None:
    """The scheduler is SIGKILLed once the first game is written (its worker ends with it) and started again at the
    same address, with a new worker: the games in progress are handed out again, and OUT is the pack of one
    process."""
    engine = ["--play", "random", "--delay", "0.03"]
    processes: list[subprocess.Popen] = []
    try:
        address = start_scheduler(tmp_path, processes)
        start_workers(tmp_path, processes, address, ["w0"])

        def restart() -> None:
            """Kill the scheduler and its worker; start both again."""
            for process in processes:
                kill_group(process)
            start_scheduler(tmp_path, processes, port=int(address.rsplit(":", 1)[1]), name="scheduler-again")
            start_workers(tmp_path, processes, address, ["w1"])

        out = tmp_path / "cluster.gfpk"
        output = run_meanwhile(tmp_path, datagen_command(out, book, engine, 6, "--cluster", address), "game ", restart)
    finally:
        for process in processes:
            kill_group(process)
    assert f"lost the Dask scheduler at {address}; back:" in output
    assert out.read_bytes() == one_process_pack(tmp_path, book, engine, 6)
