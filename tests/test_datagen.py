"""`garfish datagen`: the line format, game ends and results, resuming after an interruption, dropped games.

Most runs use tests/scripted_engine.py (its moves are a seeded hash of the position, so every game
is deterministic); one uses Garfish at a few hundred nodes, one Stockfish when it is installed.
"""

from __future__ import annotations

import gzip
import multiprocessing
import os
import shlex
import signal
import subprocess
import sys
import time
import weakref
import zlib
from pathlib import Path
from typing import Optional

import chess
import chess.engine
import pytest

from conftest import CLI_TIMEOUT, ENGINE_CMD, NO_DATA, OPENINGS_3MOVES, ROOT, SCRIPTED, children, wait_gone
from garfish.arena import datagen
from garfish.arena.data import DATA_ENV
from garfish.arena.datagen import Book, FinishedGame, Output, OutputError, game_start, white_score
from garfish.arena.driver import DEFAULT_COMMAND
from garfish.arena.workers import shut_down

OPENINGS = [  # 1. d4 d5, 1. c4 e5, 1. Nf3 d5
    "rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2",
    "rnbqkbnr/pppp1ppp/8/4p3/2P5/8/PP1PPPPP/RNBQKBNR w KQkq - 0 2",
    "rnbqkbnr/ppp1pppp/8/3p4/8/5N2/PPPPPPPP/RNBQKB1R w KQkq - 0 2",
]
WHITE_MATES = "r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"  # Qxf7#
BLACK_MATES = "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2"  # Qh4#
LAST_PLY_ENDS_GAME = "7k/6Q1/8/8/8/8/8/K7 b - - 0 1"  # Kxg7 is the only move: bare kings
SETTINGS = {"seed": 1, "nodes": 10, "random_plies": 0, "max_plies": 40, "adjudicate_score": 2500,
            "adjudicate_ply": 20, "openings": "book.epd", "openings_sha256": "0" * 16, "engine": "e", "options": {}}


def scripted(*args: str) -> str:
    """The shell-quoted command line of the scripted engine with these arguments."""
    return shlex.join([sys.executable, str(SCRIPTED), *args])


def run_datagen(*args: str, timeout: float = CLI_TIMEOUT, data: Optional[Path] = None) -> subprocess.CompletedProcess:
    """Run `python -m garfish.uci datagen ...` to the end and capture its output; it sees the shared data folder
    `data`, or none (as in a user's clone), so that a test which needs the data says so."""
    env = dict(os.environ, **{DATA_ENV: str(data) if data is not None else NO_DATA})
    return subprocess.run([sys.executable, "-m", "garfish.uci", "datagen", *args, "--no-progress"], cwd=str(ROOT),
                          env=env, capture_output=True, text=True, timeout=timeout)


def write_book(path: Path, lines: list[str]) -> Path:
    """An opening book of these FEN lines."""
    path.write_text("\n".join(lines) + "\n")
    return path


def read_lines(path: Path) -> list[str]:
    """The lines of OUT (gzip or text); the file must end with a whole line."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as handle:
        text = handle.read()
    assert text == "" or text.endswith("\n")
    return text.splitlines()


def split_games(lines: list[str]) -> list[list[list[str]]]:
    """Check every line and group them into games by the seed data's README rule: a line starts a new game
    exactly when its FEN is not the previous line's position after the previous line's BEST."""
    games: list[list[list[str]]] = []
    after: Optional[str] = None
    for line in lines:
        fields = line.split(";")
        assert len(fields) == 4, line
        fen, score, best, result = fields
        board = chess.Board(fen)
        assert board.is_valid() and board.fen() == fen and len(fen.split()) == 6, line
        assert -20000 <= int(score) <= 20000 and result in ("1", "0.5", "0"), line
        move = chess.Move.from_uci(best)
        assert move in board.legal_moves, line
        if fen != after:
            games.append([])
        games[-1].append(fields)
        board.push(move)
        after = board.fen()
    for game in games:
        assert len({fields[3] for fields in game}) == 1, game
    return games


def recorded(out: Path) -> list[tuple[int, int, int]]:
    """The sidecar's (game number, OUT size after it, positions) records."""
    lines = datagen.sidecar_path(out).read_text().splitlines()
    assert lines[0].startswith(datagen.SIDECAR_MAGIC)
    return [(int(a), int(b), int(c)) for a, b, c in (line.split() for line in lines[1:])]


def checked_games(out: Path, games: int) -> list[list[list[str]]]:
    """OUT's games, checked against the sidecar: `games` games, each as long as recorded, no number twice."""
    found = split_games(read_lines(out))
    records = recorded(out)
    assert len(found) == len(records) == games
    assert [len(game) for game in found] == [positions for _, _, positions in records]
    assert len({number for number, _, _ in records}) == games
    assert records[-1][1] == out.stat().st_size
    return found


def board_after(fields: list[str]) -> chess.Board:
    """The position after a line's BEST."""
    board = chess.Board(fields[0])
    board.push_uci(fields[2])
    return board


# --------------------------------------------------------------------------- pieces
def test_white_score_maps_mates_and_clips() -> None:
    """Scores are from White's side; a mate in n is 32000 - n before the clip to +-20000."""
    assert white_score(chess.engine.PovScore(chess.engine.Cp(150), chess.BLACK)) == -150
    assert white_score(chess.engine.PovScore(chess.engine.Cp(-40), chess.WHITE)) == -40
    assert white_score(chess.engine.PovScore(chess.engine.Cp(25000), chess.WHITE)) == 20000
    assert white_score(chess.engine.PovScore(chess.engine.Mate(3), chess.BLACK)) == -20000
    assert white_score(chess.engine.PovScore(chess.engine.Mate(-2), chess.BLACK)) == 20000
    assert white_score(None) is None


def test_white_score_mate_distance_before_the_clip(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the clip a mate in 3 for White is 31997 and a mate in 3 against it -31997."""
    monkeypatch.setattr(datagen, "SCORE_CLIP", 40000)
    assert white_score(chess.engine.PovScore(chess.engine.Mate(3), chess.WHITE)) == 31997
    assert white_score(chess.engine.PovScore(chess.engine.Mate(3), chess.BLACK)) == -31997


def test_game_starts_are_reproducible_and_games_ended_by_random_plies_skipped(tmp_path: Path) -> None:
    """A game's opening and random plies depend on (seed, number) only; bad book lines are reported once;
    a game whose random plies end it is skipped."""
    warnings: list[str] = []
    book = Book(write_book(tmp_path / "book.epd", OPENINGS + ["not a position"]), warnings.append)
    starts = [game_start(book, 5, number, 4) for number in range(1, 13)]
    assert starts == [game_start(book, 5, number, 4) for number in range(1, 13)]
    assert starts != [game_start(book, 6, number, 4) for number in range(1, 13)]
    assert all(start is not None and len(start.moves) == 4 and start.fen in OPENINGS for start in starts)
    assert len({start.moves for start in starts if start is not None}) > 6
    assert len(warnings) <= 1 and all("book.epd:4: skipped opening" in warning for warning in warnings)
    ending = Book(write_book(tmp_path / "end.epd", [LAST_PLY_ENDS_GAME]), warnings.append)
    assert game_start(ending, 1, 1, 1) is None
    assert game_start(ending, 1, 1, 0) == datagen.GameStart(1, LAST_PLY_ENDS_GAME, ())


def finished(number: int, positions: int) -> FinishedGame:
    """A made-up finished game of `positions` lines."""
    line = f"{OPENINGS[0]};{number};g1f3;0.5\n"
    return FinishedGame(number, line * positions, positions, "0.5", "test")


@pytest.mark.parametrize("name", ["out.txt", "out.txt.gz"])
def test_output_cuts_an_unfinished_write_and_keeps_recorded_games(tmp_path: Path, name: str) -> None:
    """Reopening OUT after a torn write cuts OUT and the sidecar back to the last recorded game."""
    path = tmp_path / name
    output = Output(path, SETTINGS, print)
    output.append(finished(3, 5))
    output.append(finished(1, 2))
    output.close()
    size = path.stat().st_size
    with open(path, "ab") as handle:
        handle.write(b"rnbqkbnr/pppp1ppp/8/4p3")
    with open(datagen.sidecar_path(path), "ab") as handle:
        handle.write(b"7 99")
    warnings: list[str] = []
    output = Output(path, SETTINGS, warnings.append)
    assert output.done == {1, 3} and output.positions == 7 and path.stat().st_size == size
    assert len(warnings) == 2 and all("cut" in warning for warning in warnings)
    output.append(finished(2, 1))
    output.close()
    assert [fields[1] for fields in (line.split(";") for line in read_lines(path))] == ["3"] * 5 + ["1"] * 2 + ["2"]
    assert [number for number, _, _ in recorded(path)] == [3, 1, 2]


def test_gzip_output_is_one_stream_of_members(tmp_path: Path) -> None:
    """Each game of a .gz OUT is a gzip member of its own, and gzip reads them back as one stream."""
    path = tmp_path / "out.txt.gz"
    output = Output(path, SETTINGS, print)
    for number in (1, 2, 3):
        output.append(finished(number, number))
    output.close()
    data, members = path.read_bytes(), 0
    while data:
        decompressor = zlib.decompressobj(wbits=31)
        decompressor.decompress(data)
        data, members = decompressor.unused_data, members + 1
    assert members == 3
    with gzip.open(path, "rt") as handle:
        assert [line.split(";")[1] for line in handle] == ["1", "2", "2", "3", "3", "3"]


def test_output_refuses_what_it_cannot_continue(tmp_path: Path) -> None:
    """Other settings, a foreign file, a file shorter than recorded, and a second writer are refused."""
    path = tmp_path / "out.txt"
    output = Output(path, SETTINGS, print)
    output.append(finished(1, 3))
    with pytest.raises(OutputError, match="another garfish datagen"):
        Output(path, SETTINGS, print)
    output.close()
    with pytest.raises(OutputError, match="nodes 10 -> 20"):
        Output(path, dict(SETTINGS, nodes=20), print)
    warnings: list[str] = []
    Output(path, dict(SETTINGS, engine="other"), warnings.append).close()
    assert warnings and "engine 'e' -> 'other'" in warnings[0]
    foreign = tmp_path / "foreign.txt"
    foreign.write_text("some data\n")
    with pytest.raises(OutputError, match="no sidecar"):
        Output(foreign, SETTINGS, print)
    path.write_text("x")
    with pytest.raises(OutputError, match="was cut or replaced"):
        Output(path, SETTINGS, print)


class ScriptedPlayers:
    """Players (datagen.Players) whose games come back in a given order, made up (game N: N positions); when the
    next game of the order has not been handed out, or the order is played, the run stops with an error."""

    def __init__(self, order: list[int]) -> None:
        """Players that will give back the games of `order`, in that order."""
        self.order = list(order)
        self.submitted: list[int] = []

    def start(self) -> None:
        """Nothing to start."""

    def slots(self) -> int:
        """Two games at once."""
        return 2

    def submit(self, start: datagen.GameStart) -> None:
        """Note the game handed out."""
        self.submitted.append(start.number)

    def next_event(self, seconds: float) -> Optional[tuple[str, object]]:
        """The next game of the order, or the stop."""
        if seconds <= 0:
            return None
        if self.order and self.order[0] in self.submitted:
            number = self.order.pop(0)
            return "game", finished(number, number)
        return "fatal", "the test stops here"

    def gone(self) -> Optional[str]:
        """Never."""
        return None

    def close(self, completed: bool) -> None:
        """Nothing to stop."""


def run_with(players: ScriptedPlayers, path: Path, book: Book, games: int) -> datagen.RunState:
    """A run of `games` games (seed 1, no random plies) on these players, OUT at `path`."""
    config = datagen.RunConfig(spec=datagen.EngineSpec(argv=["unused"]), rules=datagen.Rules(10, 40, 0, 20, 1.0),
                               book=book, seed=1, random_plies=0, games=games, jobs=1, progress=False)
    output = Output(path, SETTINGS, print)
    try:
        return datagen.Run(config, output, lambda line: None).play(players)
    finally:
        output.close()


def test_a_game_finished_ahead_of_an_older_one_is_kept_for_the_next_run(tmp_path: Path) -> None:
    """Game 2 comes back before game 1 and the run stops before game 1 does: game 2 waits in the ahead file
    (also past a torn line), the next run takes it from there instead of playing it again, and OUT is the
    in-order run's, byte for byte; the ahead file then goes."""
    book = Book(write_book(tmp_path / "book.epd", OPENINGS), print)
    path, ahead = tmp_path / "out.txt", datagen.ahead_path(tmp_path / "out.txt")
    first = ScriptedPlayers([2])
    assert run_with(first, path, book, 4).error == "the test stops here"
    assert first.submitted == [1, 2, 3, 4] and path.read_bytes() == b"" and recorded(path) == []
    assert ahead.read_text().count("\n") == 2  # the settings, then game 2
    with open(ahead, "ab") as handle:
        handle.write(b'{"number": 3, "te')
    second = ScriptedPlayers([1, 3, 4])
    state = run_with(second, path, book, 4)
    assert state.error is None and state.games == 4
    assert second.submitted == [1, 3, 4] and not ahead.exists()
    assert [number for number, _, _ in recorded(path)] == [1, 2, 3, 4]
    reference = tmp_path / "reference.txt"
    output = Output(reference, SETTINGS, print)
    for number in (1, 2, 3, 4):
        output.append(finished(number, number))
    output.close()
    assert path.read_bytes() == reference.read_bytes()


def test_an_ahead_file_of_other_settings_is_not_used(tmp_path: Path) -> None:
    """Games kept for a file of other settings (an OUT of the same name made again) are dropped, with a warning."""
    path = tmp_path / "out.txt"
    output = Output(path, dict(SETTINGS, seed=2), print)
    output.keep_ahead(finished(2, 2))
    output.close()
    (tmp_path / "out.txt").unlink()
    datagen.sidecar_path(path).unlink()
    warnings: list[str] = []
    output = Output(path, SETTINGS, warnings.append)
    assert output.ahead == {} and any("other settings" in warning for warning in warnings)
    output.close()
    assert not datagen.ahead_path(path).exists()


def test_default_engine_is_stockfish_when_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stockfish on PATH, else at the fallback path, else Garfish; the reason says which."""
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "stockfish"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))
    assert datagen.default_engine(tmp_path / "none") == ([str(fake)], "the default: Stockfish found on PATH")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert datagen.default_engine(fake)[0] == [str(fake)]
    argv, why = datagen.default_engine(tmp_path / "none")
    assert argv == list(DEFAULT_COMMAND) and "Garfish" in why


# --------------------------------------------------------------------------- runs
def test_garfish_run_writes_valid_labelled_games(tmp_path: Path) -> None:
    """Garfish at a few hundred nodes, two workers: whole games in the seed data's format, every BEST legal."""
    out = tmp_path / "garfish.txt"
    proc = run_datagen(str(out), "--engine", shlex.join(ENGINE_CMD), "--nodes", "300", "--games", "2", "-j", "2",
                       "--seed", "7", "--max-plies", "36", "--openings", str(OPENINGS_3MOVES))
    assert proc.returncode == 0, proc.stderr
    assert "engine: Garfish" in proc.stdout and "holds 2 of 2 games" in proc.stdout
    for game in checked_games(out, 2):
        first = chess.Board(game[0][0])
        assert first.ply() == 10  # three moves each, then four random plies
        assert len({fields[1] for fields in game}) > 1  # real scores, not a constant


def test_verbose_logs_the_engines_traffic(tmp_path: Path) -> None:
    """-v: the workers log every line to and from the engine on stderr; the data are the same."""
    book = write_book(tmp_path / "book.epd", OPENINGS[:1])
    common = ["--engine", scripted("--play", "random"), "--openings", str(book), "--random-plies", "0",
              "--max-plies", "6", "--games", "1", "--seed", "3"]
    quiet, verbose = tmp_path / "quiet.txt", tmp_path / "verbose.txt"
    proc = run_datagen(str(verbose), *common, "-v")
    assert proc.returncode == 0, proc.stderr
    assert "<< go nodes 5000" in proc.stderr and ">> bestmove " in proc.stderr and ">> uciok" in proc.stderr
    assert run_datagen(str(quiet), *common).stderr == ""
    assert read_lines(quiet) == read_lines(verbose)


def test_scores_and_results_are_from_whites_side(tmp_path: Path) -> None:
    """A game White mates in is a 1, one Black mates in a 0; SCORE (the engine's +7) is negated for Black."""
    book = write_book(tmp_path / "mates.epd", [WHITE_MATES, BLACK_MATES])
    out = tmp_path / "mates.txt"
    proc = run_datagen(str(out), "--engine", scripted("--play", "greedy", "--score", "7"), "--openings", str(book),
                       "--random-plies", "0", "--games", "4", "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    games = checked_games(out, 4)
    results = set()
    for game in games:
        (fen, score, _, result), = game
        assert board_after(game[0]).is_checkmate()
        white_to_move = chess.Board(fen).turn == chess.WHITE
        assert (score, result) == (("7", "1") if white_to_move else ("-7", "0"))
        results.add(result)
    assert results == {"1", "0"}
    assert "checkmate" in proc.stdout


def test_adjudication_after_ply_20_and_the_ply_limit(tmp_path: Path) -> None:
    """|score| > 2500 ends a game only in a position after ply 20 (it is the last line); the ply limit
    ends one as a draw."""
    book = write_book(tmp_path / "start.epd", [chess.STARTING_FEN])
    out = tmp_path / "adjudicated.txt"
    proc = run_datagen(str(out), "--engine", scripted("--play", "random", "--score", "3000"), "--openings", str(book),
                       "--random-plies", "0", "--games", "1", "--seed", "1")
    assert proc.returncode == 0, proc.stderr
    (game,) = checked_games(out, 1)
    assert [chess.Board(fields[0]).ply() for fields in game] == list(range(22))
    assert game[-1][1] == "-3000" and game[-1][3] == "0"  # ply 21: Black to move, 30 pawns up
    out = tmp_path / "capped.txt"
    proc = run_datagen(str(out), "--engine", scripted("--play", "random", "--score", "3000"), "--openings", str(book),
                       "--random-plies", "0", "--games", "1", "--seed", "1", "--adjudicate-score", "0",
                       "--max-plies", "30")
    assert proc.returncode == 0, proc.stderr
    (game,) = checked_games(out, 1)
    assert len(game) == 30 and game[-1][3] == "0.5" and board_after(game[-1]).ply() == 30


def test_games_are_written_in_their_numbers_order_so_jobs_change_no_byte(tmp_path: Path) -> None:
    """-j 1 and -j 3 write the same bytes (a pack): the workers finish games of different lengths in
    another order than their numbers, and OUT gets them in the order of their numbers."""
    book = write_book(tmp_path / "book.epd", OPENINGS)
    common = ["--engine", scripted("--play", "greedy", "--delay", "0.002"), "--openings", str(book),
              "--random-plies", "3", "--max-plies", "200", "--games", "12", "--seed", "5"]
    outs = []
    for jobs in ("1", "3"):
        out = tmp_path / f"j{jobs}.gfpk"
        proc = run_datagen(str(out), *common, "-j", jobs)
        assert proc.returncode == 0, proc.stderr
        outs.append(out)
    numbers = [number for number, _, _ in recorded(outs[1])]
    assert len(numbers) == 12 and numbers == sorted(numbers)
    assert len({positions for _, _, positions in recorded(outs[1])}) > 3  # games of different lengths
    assert outs[0].read_bytes() == outs[1].read_bytes()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find the worker processes")
@pytest.mark.parametrize("signum, group", [(signal.SIGKILL, False), (signal.SIGINT, False), (signal.SIGTERM, True)],
                         ids=["kill-9", "ctrl-c", "sigterm-to-the-group"])
def test_an_interrupted_run_resumes_without_duplicates(tmp_path: Path, signum: int, group: bool) -> None:
    """Interrupted after two games (kill -9, Ctrl-C, or SIGTERM to the whole process group as `timeout`
    sends it, which reaches the workers too), and with a torn write left at the end of OUT, the same
    command finishes the run; OUT then holds exactly the games of an uninterrupted run."""
    book = write_book(tmp_path / "book.epd", OPENINGS)
    out = tmp_path / "out.txt.gz"
    slow = scripted("--play", "random", "--delay", "0.03", "--log", str(tmp_path / "engine.log"))
    common = ["--openings", str(book), "--random-plies", "2", "--max-plies", "30", "--games", "6", "-j", "2"]
    command = [sys.executable, "-m", "garfish.uci", "datagen", str(out), "--engine", slow, *common, "--no-progress"]
    proc = subprocess.Popen(command, cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=group)
    sidecar = datagen.sidecar_path(out)
    deadline = time.monotonic() + 60
    while not (sidecar.exists() and len(sidecar.read_text().splitlines()) >= 3):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    workers = children(proc.pid)
    helpers = workers + [pid for worker in workers for pid in children(worker)]  # and the engines
    if group:
        os.killpg(proc.pid, signum)
    else:
        os.kill(proc.pid, signum)
    stdout, stderr = proc.communicate(timeout=60)
    assert wait_gone(helpers, 15) == []  # workers and engines end with the run, even after kill -9
    if signum != signal.SIGKILL:
        assert proc.returncode == 130 and "interrupted" in stderr and "exited early" not in stderr, stderr
    done = len(recorded(out))
    assert 2 <= done < 6
    # Whole games only; after kill -9 a game may have been written but not yet recorded (the rerun cuts it).
    found = split_games(read_lines(out))
    assert [len(game) for game in found[:done]] == [positions for _, _, positions in recorded(out)]
    assert len(found) - done in ((0, 1) if signum == signal.SIGKILL else (0,))
    if signum == signal.SIGKILL:
        with open(out, "ab") as handle:
            handle.write(b"\x1f\x8b\x08\x00 torn")
    proc = run_datagen(str(out), "--engine", slow, *common)
    assert proc.returncode == 0, proc.stderr
    assert f"holds {done} of 6 games" in proc.stdout and "holds 6 of 6 games" in proc.stdout
    if signum == signal.SIGKILL:
        assert "bytes of an unfinished write" in proc.stderr
    seed = str(datagen.read_settings(sidecar)["seed"])
    reference = tmp_path / "reference.txt"
    proc = run_datagen(str(reference), "--engine", scripted("--play", "random"), *common, "--seed", seed)
    assert proc.returncode == 0, proc.stderr
    resumed, whole = checked_games(out, 6), checked_games(reference, 6)
    assert sorted(map(str, resumed)) == sorted(map(str, whole))
    assert sorted(number for number, _, _ in recorded(out)) == sorted(number for number, _, _ in recorded(reference))


def failing_engine(tmp_path: Path, misbehave: str, lives: int) -> str:
    """A scripted engine command that crashes or stalls after 3 moves in its first `lives` lives, then plays."""
    normal = scripted("--play", "random")
    failing = scripted("--play", "random", "--misbehave", misbehave, "--after", "3")
    count = shlex.quote(str(tmp_path / "lives"))
    script = (f"n=$(cat {count} 2>/dev/null || echo 0); echo $((n + 1)) > {count}; "
              f"if [ $n -ge {lives} ]; then exec {normal}; else exec {failing}; fi")
    return shlex.join(["sh", "-c", script])


@pytest.mark.parametrize("misbehave", ["crash", "stall"])
def test_a_failing_engines_game_is_played_again_the_same(tmp_path: Path, misbehave: str) -> None:
    """An engine that crashes or stalls in game 1 (only in its first life) is restarted and plays game 1
    again from its start: the run's file is the one a run without the failure writes."""
    book = write_book(tmp_path / "book.epd", OPENINGS)
    common = ("--openings", str(book), "--random-plies", "0", "--max-plies", "20", "--games", "2", "--seed", "1",
              "--timeout", "1")
    out = tmp_path / "out.txt"
    proc = run_datagen(str(out), "--engine", failing_engine(tmp_path, misbehave, 1), *common)
    assert proc.returncode == 0, proc.stderr
    kind = "crash" if misbehave == "crash" else "timeout"
    assert f"game 1 played again: {kind}" in proc.stdout and "engine restarted" in proc.stdout
    assert "1 played again, 0 dropped" in proc.stdout
    reference = tmp_path / "reference.txt"
    assert run_datagen(str(reference), "--engine", scripted("--play", "random"), *common).returncode == 0
    assert read_lines(out) == read_lines(reference) and len(checked_games(out, 2)) == 2
    assert [number for number, _, _ in recorded(out)] == [1, 2]


def test_a_game_that_fails_every_time_is_dropped(tmp_path: Path) -> None:
    """An engine that fails RETRIES + 1 times in a row on game 1 costs that game; the run goes on."""
    book = write_book(tmp_path / "book.epd", OPENINGS)
    out = tmp_path / "out.txt"
    proc = run_datagen(str(out), "--engine", failing_engine(tmp_path, "crash", datagen.RETRIES + 1),
                       "--openings", str(book), "--random-plies", "0", "--max-plies", "20", "--games", "2",
                       "--seed", "1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("game 1 played again: crash") == datagen.RETRIES
    assert "game 1 dropped: crash" in proc.stdout
    checked_games(out, 2)
    assert [number for number, _, _ in recorded(out)] == [2, 3]


def test_an_engine_that_always_fails_stops_the_run(tmp_path: Path) -> None:
    """Games dropped MAX_DROPS_IN_A_ROW times in a row stop the run with exit status 1."""
    book = write_book(tmp_path / "book.epd", OPENINGS)
    out = tmp_path / "out.txt"
    proc = run_datagen(str(out), "--engine", scripted("--misbehave", "crash"), "--openings", str(book),
                       "--games", "3", "-j", "2")
    assert proc.returncode == 1
    assert f"{datagen.MAX_DROPS_IN_A_ROW} games dropped in a row" in proc.stderr
    assert read_lines(out) == [] and recorded(out) == []


@pytest.mark.parametrize("command", ["no-such-engine-5ef1", "{tmp}/no-such-engine"])
def test_a_missing_engine_is_a_usage_error(tmp_path: Path, command: str) -> None:
    """A missing engine command: a clear message, exit status 2, no output file."""
    out = tmp_path / "out.txt"
    proc = run_datagen(str(out), "--engine", command.format(tmp=tmp_path), "--games", "1")
    assert proc.returncode == 2
    assert "engine command not found" in proc.stderr and "no-such-engine" in proc.stderr
    assert "Traceback" not in proc.stderr and not out.exists()


def test_the_default_openings_are_the_shared_books(tmp_path: Path, data: Path) -> None:
    """Without --openings a run plays noob_3moves from the shared data folder."""
    out = tmp_path / "out.txt"
    proc = run_datagen(str(out), "--engine", scripted("--play", "random"), "--games", "1", "--seed", "1",
                       "--random-plies", "0", "--max-plies", "8", data=data)
    assert proc.returncode == 0, proc.stderr
    assert f"openings {data / datagen.DEFAULT_BOOK} + 0 random plies" in proc.stdout
    with open(data / datagen.DEFAULT_BOOK) as book:
        assert read_lines(out)[0].split(";")[0] in {line.strip() for line in book}


def test_the_default_openings_without_shared_data_are_a_clear_usage_error(tmp_path: Path) -> None:
    """Without --openings and without the shared data (a user's clone): exit status 2 and what to do, no file."""
    out = tmp_path / "out.txt"
    proc = run_datagen(str(out), "--engine", scripted("--play", "random"), "--games", "1")
    assert proc.returncode == 2
    assert "no shared data folder found for the default openings: set GARFISH_DATA or give --openings" in proc.stderr
    assert "Traceback" not in proc.stderr and not out.exists()


def stockfish() -> Optional[str]:
    """Stockfish's path, as the default engine finds it, or None."""
    argv, why = datagen.default_engine()
    return argv[0] if "Stockfish" in why else None


@pytest.mark.skipif(stockfish() is None, reason="Stockfish is not installed (not on PATH nor at /usr/games/stockfish)")
def test_stockfish_is_the_default_engine(tmp_path: Path) -> None:
    """With Stockfish installed and no --engine, it plays at the seed data's 5,000 nodes; OUT in gzip."""
    out = tmp_path / "sf.txt.gz"
    proc = run_datagen(str(out), "--games", "2", "--seed", "1", "--max-plies", "60", "--option", "Hash=16",
                       "--openings", str(OPENINGS_3MOVES))
    assert proc.returncode == 0, proc.stderr
    assert "the default: Stockfish found" in proc.stdout and "engine: Stockfish" in proc.stdout
    assert "5000 nodes a move" in proc.stdout
    checked_games(out, 2)


def test_shut_down_leaves_the_task_queues_semaphores_to_its_owner() -> None:
    """After shut_down the task queue's feeder thread has ended: the semaphores it held (the queue's write
    lock and size) are freed, and unregistered, by the caller, not by a daemon thread that the interpreter's
    exit stops halfway (the resource tracker would then report "leaked semaphore objects" on stderr)."""
    context = multiprocessing.get_context("spawn")
    tasks, results = context.Queue(), context.Queue()
    for number in range(3):
        tasks.put(number)  # starts the queue's feeder thread
    shut_down([], tasks, results, graceful=False)
    semaphores = [weakref.ref(tasks._wlock), weakref.ref(tasks._sem)]  # CPython's Queue, 3.8-3.14
    del tasks
    assert [semaphore() for semaphore in semaphores] == [None, None]
