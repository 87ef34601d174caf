"""`garfish analyse` and garfish.arena.analyse: verdicts, the annotated PGN, bad input, resuming, -j.

The searches are limited by nodes, so that the same input gives the same output on any machine.
"""

from __future__ import annotations

import io
import math
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import pytest

from conftest import CLI_TIMEOUT, ENGINE_CMD, PNG_SIGNATURE, ROOT, WITHOUT_MATPLOTLIB, read_games, require_extra
from garfish.arena import analyse, annotate
from garfish.arena.annotate import GameAnalysis, Judgement, MoveEval

NODES = 400  # per search: enough for Garfish to see a mate in one and to play sensible moves
INTERRUPT_COPIES = 2  # copies of GAMES in the interrupted run: games after the second, at which it is interrupted
SCRIPTED_ENGINE = ROOT / "tests" / "scripted_engine.py"
MISSED_MATE = """\
[Event "missed mate"]
[White "Careless"]
[Black "Lucky"]
[Result "*"]
[SetUp "1"]
[FEN "6k1/5ppp/8/8/8/2q5/r4PPP/3R2K1 w - - 0 1"]

1. h3 { White had Rd8# } h6 2. Rd8+ Kh7 *
"""
# Short games with the things a user's PGN has: comments, NAGs, a variation, clock comments.
GAMES = """\
[Event "one"]
[White "Anna"]
[Black "Ben"]
[Result "1-0"]
[ECO "C50"]

{ An Italian. } 1. e4 e5 2. Nf3 Nc6 3. Bc4 $1 { [%clk 0:01:00] } Nf6 ( 3... Bc5 4. c3 ) 4. Ng5 d5 1-0

[Event "two"]
[White "Ben"]
[Black "Anna"]
[Result "0-1"]

1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7 0-1

[Event "three"]
[White "Anna"]
[Black "Ben"]
[Result "1/2-1/2"]

1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 1/2-1/2

[Event "four"]
[White "Ben"]
[Black "Anna"]
[Result "*"]

1. c4 e5 2. Nc3 Nf6 3. g3 d5 *
"""


def run_analyse(*args: str) -> subprocess.CompletedProcess:
    """Run `python -m garfish.uci analyse ...` and capture its output."""
    return subprocess.run([sys.executable, "-m", "garfish.uci", "analyse", *args], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=CLI_TIMEOUT)


def one_game(text: str) -> chess.pgn.Game:
    """The first game of a PGN text."""
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    return game


def move_eval(best: chess.engine.Score, played: chess.engine.Score, best_expected: float,
              played_expected: float) -> MoveEval:
    """A MoveEval of ply 0 with these scores."""
    return MoveEval(0, "e2e4", ["d2d4"], best, played, best_expected, played_expected)


# --------------------------------------------------------------------------- verdicts, no engine
@pytest.mark.parametrize("loss, expected", [
    (0.0, None), (0.049, None), (0.05, Judgement.INACCURACY), (0.099, Judgement.INACCURACY),
    (0.10, Judgement.MISTAKE), (0.149, Judgement.MISTAKE), (0.15, Judgement.BLUNDER), (0.6, Judgement.BLUNDER),
])
def test_verdicts_follow_the_expected_score_thresholds(loss: float, expected: Judgement) -> None:
    move = move_eval(chess.engine.Cp(0), chess.engine.Cp(-100), 0.6, 0.6 - loss)
    assert annotate.judge(move).judgement == expected


def test_a_move_scored_above_the_best_loses_nothing() -> None:
    move = move_eval(chess.engine.Cp(10), chess.engine.Cp(40), 0.52, 0.55)
    assert move.loss == 0.0 and annotate.judge(move).judgement is None


@pytest.mark.parametrize("best, played, expected", [
    (chess.engine.Mate(2), chess.engine.Cp(1200), Judgement.INACCURACY),  # still winning: lichess's inaccuracy
    (chess.engine.Mate(2), chess.engine.Cp(800), Judgement.MISTAKE),
    (chess.engine.Mate(1), chess.engine.Cp(300), Judgement.BLUNDER),
    (chess.engine.Mate(1), chess.engine.Mate(-3), Judgement.BLUNDER),
    (chess.engine.Mate(1), chess.engine.Mate(4), None),  # a slower mate is not judged
    (chess.engine.Cp(-1200), chess.engine.Mate(-5), Judgement.INACCURACY),  # lost anyway
    (chess.engine.Cp(0), chess.engine.Mate(-2), Judgement.BLUNDER),
])
def test_mates_let_go_or_allowed_are_judged_as_lichess_does(best: chess.engine.Score, played: chess.engine.Score,
                                                             expected: Judgement) -> None:
    # The expected scores say nothing here (equal); the verdict comes from the mate rules alone.
    assert annotate.judge(move_eval(best, played, 0.99, 0.99)).judgement == expected


def test_move_accuracy_is_lichess_s_curve() -> None:
    assert annotate.move_accuracy(0.6, 0.6) == 100.0
    assert annotate.move_accuracy(0.5, 0.7) == 100.0
    assert annotate.move_accuracy(0.6, 0.5) == pytest.approx(103.1668100711649 * math.exp(-0.4354415386753951)
                                                            - 3.166924740191411 + 1)
    assert annotate.move_accuracy(1.0, 0.0) == 0.0


def test_game_accuracy_is_perfect_without_loss_and_falls_with_a_blunder() -> None:
    movers = {ply: chess.WHITE if ply % 2 == 0 else chess.BLACK for ply in range(20)}
    clean = [MoveEval(ply, "a", [], chess.engine.Cp(0), chess.engine.Cp(0), 0.5, 0.5) for ply in range(20)]
    assert annotate.game_accuracy(clean, movers) == {chess.WHITE: 100.0, chess.BLACK: 100.0}
    spoiled = list(clean)
    spoiled[6] = MoveEval(6, "a", [], chess.engine.Cp(0), chess.engine.Cp(-600), 0.5, 0.1)
    accuracy = annotate.game_accuracy(spoiled, movers)
    assert accuracy[chess.BLACK] == 100.0 and accuracy[chess.WHITE] is not None and accuracy[chess.WHITE] < 80


def test_expected_score_takes_the_engine_s_wdl_else_lichess_s_curve() -> None:
    wdl = chess.engine.PovWdl(chess.engine.Wdl(500, 300, 200), chess.WHITE)
    assert annotate.expected_score({"wdl": wdl}, chess.WHITE) == pytest.approx(0.65)
    assert annotate.expected_score({"wdl": wdl}, chess.BLACK) == pytest.approx(0.35)
    score = chess.engine.PovScore(chess.engine.Cp(100), chess.WHITE)
    assert annotate.expected_score({"score": score}, chess.WHITE) == pytest.approx(
        1 / (1 + math.exp(-0.00368208 * 100)), abs=1e-3)
    assert annotate.expected_score({}, chess.WHITE) is None


def test_evaluations_are_written_for_the_position_after_the_move() -> None:
    assert annotate.format_eval(annotate.eval_after(chess.engine.Cp(35), chess.BLACK)) == "-0.35"
    assert annotate.format_eval(annotate.eval_after(chess.engine.Mate(3), chess.WHITE)) == "#2"
    assert annotate.format_eval(annotate.eval_after(chess.engine.Mate(-2), chess.WHITE)) == "#-2"
    node = chess.pgn.Game().add_variation(chess.Move.from_uci("e2e4"))
    node.set_eval(annotate.eval_after(chess.engine.Mate(1), chess.WHITE))  # mate given: no eval to write
    assert node.comment == ""


def test_annotation_keeps_what_the_game_had() -> None:
    game = one_game(GAMES)
    plies = len(list(game.mainline_moves()))
    moves = [MoveEval(ply, "", [], chess.engine.Cp(20), chess.engine.Cp(20), 0.52, 0.52) for ply in range(plies)]
    moves[4] = MoveEval(4, "f1c4", ["d2d4", "e5d4"], chess.engine.Cp(50), chess.engine.Cp(-400), 0.55, 0.2)
    annotated = annotate.annotate(game, GameAnalysis(1, "Engine", "nodes 1", moves))
    assert str(game) == str(one_game(GAMES))  # the game given is not changed
    node = annotated.next().next().next().next().next()  # 3. Bc4
    assert node.san() == "Bc4" and node.nags == {chess.pgn.NAG_GOOD_MOVE}  # the input's verdict stays
    assert "[%clk 0:01:00]" in node.comment and "Blunder" in node.comment and "Best move was d4" in node.comment
    assert [variation.san() for variation in node.parent.variations] == ["Bc4", "d4"]
    assert annotated.comment.startswith("An Italian.") and "Engine, nodes 1 a move." in annotated.comment
    assert annotated.headers["ECO"] == "C50" and annotated.headers["Annotator"] == "Engine (nodes 1)"
    black = node.next()
    assert [variation.san() for variation in black.parent.variations] == ["Nf6", "Bc5"]


# --------------------------------------------------------------------------- with Garfish
def test_a_missed_mate_in_one_is_a_blunder_with_the_mate_as_the_better_line() -> None:
    annotated = analyse.analyse_game(one_game(MISSED_MATE), chess.engine.Limit(nodes=NODES), ENGINE_CMD)
    first = annotated.next()
    assert first is not None and first.san() == "h3" and first.nags == {chess.pgn.NAG_BLUNDER}
    assert "White had Rd8#" in first.comment and "Best move was Rd8#" in first.comment
    better = annotated.variations[1]
    assert better.san() == "Rd8#" and better.board().is_checkmate()
    others = [node for node in annotated.mainline() if node is not first]
    assert all(not node.nags for node in others)
    assert all(node.eval() is not None for node in annotated.mainline())


def engine_game(plies: int) -> chess.pgn.Game:
    """A game of Garfish's own best moves: each the first line of the search analyse makes (MultiPV 2, NODES)."""
    game = chess.pgn.Game()
    node: chess.pgn.GameNode = game
    board = chess.Board()
    key = object()
    with chess.engine.SimpleEngine.popen_uci(ENGINE_CMD) as engine:
        for _ in range(plies):
            lines = engine.analyse(board, chess.engine.Limit(nodes=NODES), multipv=analyse.MULTIPV, game=key,
                                   info=analyse.INFO, options={analyse.SHOW_WDL: True})
            move = lines[0]["pv"][0]
            node = node.add_variation(move)
            board.push(move)
    return game


def test_a_game_of_best_moves_has_no_marks() -> None:
    game = engine_game(16)
    moves = analyse.analyse_moves(game, chess.engine.Limit(nodes=NODES), ENGINE_CMD)
    assert len(moves.moves) == 16 and all(move.evaluated and move.loss == 0.0 for move in moves.moves)
    annotated = annotate.annotate(game, moves)
    assert all(not node.nags for node in annotated.mainline())
    assert len(annotated.variations) == 1 and all(len(node.variations) <= 1 for node in annotated.mainline())


def test_a_game_that_cannot_be_read_is_refused_with_the_move() -> None:
    game = one_game("1. e4 e5 2. Ke3 *")
    with pytest.raises(analyse.GameError, match="illegal san: 'Ke3'"):
        analyse.analyse_game(game, chess.engine.Limit(nodes=NODES), ENGINE_CMD)
    with pytest.raises(analyse.GameError, match="move 2. Ke3: illegal in"):
        analyse.parse_game("1. e4 e5 2. Ke3 *")
    with pytest.raises(analyse.GameError, match="variant 'Atomic'"):
        analyse.parse_game('[Variant "Atomic"]\n\n1. e4 e5 *')
    with pytest.raises(analyse.GameError, match="broken header line '\\[White \"A'"):
        analyse.parse_game('[Event "x"]\n[White "A\n\n1. e4 e5 *')
    # A comment wrapped onto a line of its own that starts with "[" is no header (an analysed game read again).
    assert analyse.parse_game('[Event "x"]\n\n1. e4 {\n[%eval 0.20] } e5 *').next().eval() is not None


def test_the_python_api_example_runs() -> None:
    """The example of docs/python-api.md's section on analysing games, run as it stands there, prints what the
    page says it prints (at 2,000 nodes a move the same on any machine): 3...Nf6 marked a blunder, `$4`, with
    White's mate in one as its evaluation and the page's comment; no other move is; the game given is unchanged."""
    page = (ROOT / "docs" / "python-api.md").read_text()
    section = page[page.index("## Analysing games"):]
    code = section[section.index("```python") + len("```python"):section.index("```", section.index("```python") + 9)]
    printed = code.split("print(annotated)", 1)[1].split("\n", 1)[0].split("#", 1)[1].strip()
    assert printed.endswith("...") and printed.startswith("3... Nf6 $4 {"), printed  # the page's promise
    namespace: dict = {}
    exec(compile(code, "docs/python-api.md (Analysing games)", "exec"), namespace)
    annotated, game = namespace["annotated"], namespace["game"]
    assert isinstance(annotated, chess.pgn.Game)
    assert printed.removesuffix("...") in str(annotated), str(annotated)
    moves = list(annotated.mainline())
    assert [node.san() for node in moves] == ["e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6", "Qxf7#"]
    blunder = moves[5]
    assert [node.san() for node in moves if chess.pgn.NAG_BLUNDER in node.nags] == ["Nf6"]
    evaluation = blunder.eval()
    assert evaluation is not None and evaluation.white() == chess.engine.Mate(1)
    assert all(node.eval() is not None for node in moves[:-1])  # every move but the mate has its evaluation
    assert "Annotator" not in game.headers and not game.comment
    assert all(not node.comment and not node.nags and len(node.parent.variations) == 1 for node in game.mainline())


# --------------------------------------------------------------------------- the command line
@pytest.fixture
def games_file(tmp_path: Path) -> Path:
    """GAMES in a file."""
    path = tmp_path / "games.pgn"
    path.write_text(GAMES)
    return path


def test_the_output_reads_back_with_evaluations_and_verdicts(games_file: Path, tmp_path: Path) -> None:
    source = tmp_path / "all.pgn"
    source.write_text(GAMES + "\n" + MISSED_MATE)
    out = tmp_path / "out.pgn"
    done = run_analyse(str(source), "-o", str(out), "--nodes", str(NODES))
    assert done.returncode == 0, done.stderr
    games = read_games(out)
    originals = read_games(source)
    assert len(games) == len(originals) == 5
    for game, original in zip(games, originals):
        assert not game.errors
        assert {key: value for key, value in game.headers.items() if key != "Annotator"} == dict(original.headers)
        assert [node.move for node in game.mainline()] == [node.move for node in original.mainline()]
        assert all(node.eval() is not None for node in game.mainline())
    assert games[0].comment.startswith("An Italian.") and "[%clk 0:01:00]" in str(games[0])
    assert "( 3... Bc5 4. c3 )" in str(games[0])
    assert games[4].next().nags == {chess.pgn.NAG_BLUNDER}
    assert "Careless" in done.stdout and "accuracy" in done.stdout


@pytest.mark.extra("plot")
def test_plot_draws_a_png_for_each_game(tmp_path: Path) -> None:
    source = tmp_path / "all.pgn"
    source.write_text(GAMES + "\n" + MISSED_MATE)
    done = run_analyse(str(source), "-o", str(tmp_path / "out.pgn"), "--nodes", str(NODES), "--plot",
                       str(tmp_path / "plots"))
    assert done.returncode == 0, done.stderr
    plots = sorted((tmp_path / "plots").iterdir())
    assert [path.name for path in plots] == [f"game-000{n}.png" for n in range(1, 6)]
    assert all(path.read_bytes().startswith(PNG_SIGNATURE) for path in plots)


def test_plot_without_matplotlib_says_how_to_install_it(games_file: Path, tmp_path: Path) -> None:
    done = subprocess.run([*WITHOUT_MATPLOTLIB, "analyse", str(games_file), "-o", str(tmp_path / "out.pgn"),
                           "--nodes", str(NODES), "--plot", str(tmp_path / "plots")], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=CLI_TIMEOUT)
    assert done.returncode == 2 and "--plot needs matplotlib: pip install 'garfish[plot]'" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out.pgn").exists()


def test_bad_games_are_reported_and_copied_and_the_rest_analysed(tmp_path: Path) -> None:
    illegal = '[Event "illegal"]\n[Result "*"]\n\n1. e4 e5 2. Ke3 Nc6 *'
    variant = '[Event "variant"]\n[Variant "Crazyhouse"]\n[Result "*"]\n\n1. e4 e5 *'
    broken = '[Event "broken header\n[Result "*"]\n\n1. d4 d5 *'
    source = tmp_path / "bad.pgn"
    source.write_text("\n\n".join([illegal, MISSED_MATE.strip(), variant, broken]) + "\n")
    out = tmp_path / "out.pgn"
    done = run_analyse(str(source), "-o", str(out), "--nodes", str(NODES))
    assert done.returncode == 0, done.stderr
    assert "game 1 (line 1): move 2. Ke3: illegal in" in done.stderr
    assert "game 3 (line 15): headers: variant 'Crazyhouse'" in done.stderr
    assert "game 4 (line 21): headers: broken header line" in done.stderr
    text = out.read_text()
    for original in (illegal, variant, broken):
        assert original in text
    games = read_games(out)
    assert games[1].next().nags == {chess.pgn.NAG_BLUNDER}
    assert "Not analysed (3): games 1, 3, 4" in done.stdout


def test_an_interrupted_run_resumes_to_the_same_output(tmp_path: Path) -> None:
    # The engine (tests/scripted_engine.py) answers the first two games' searches, then holds every
    # search until the hold file exists: the interrupted run cannot end before the interrupt
    # arrives, however fast or slow the machine.
    games_file = tmp_path / "games.pgn"
    games_file.write_text("\n".join([GAMES] * INTERRUPT_COPIES))
    hold = tmp_path / "go-on"
    engine = shlex.join([sys.executable, str(SCRIPTED_ENGINE), "--play", "greedy", "--score", "25", "--multipv",
                         "--hold-file", str(hold), "--hold-game", "3"])
    settings = ("--nodes", str(NODES), "--engine", engine)
    hold.touch()
    whole = tmp_path / "whole.pgn"
    assert run_analyse(str(games_file), "-o", str(whole), *settings).returncode == 0
    hold.unlink()
    out = tmp_path / "out.pgn"
    command = [sys.executable, "-m", "garfish.uci", "analyse", str(games_file), "-o", str(out), *settings]
    # SIGINT as a terminal sends it, whatever this process inherited (a shell starts background
    # jobs with SIGINT ignored, and an ignored signal stays ignored across exec).
    process = subprocess.Popen(command, cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert process.stdout is not None
    finished = 0
    for line in process.stdout:  # a line a game, printed once the game is in the PGN and the journal
        finished += " game " in line and line.startswith("[")
        if finished == 2:
            process.send_signal(signal.SIGINT)
            break
    try:
        process.communicate(timeout=CLI_TIMEOUT)
    finally:
        process.kill()  # no-op once it has ended; a run that ignored the interrupt fails, not hangs
    assert process.returncode == 130
    journal = analyse.journal_path(out)
    assert len(journal.read_text().splitlines()) == 3  # the settings and two games
    with out.open("a") as handle:
        handle.write('[Event "a game whose writing was cut')  # as if the interruption broke off a write
    hold.touch()
    resumed = run_analyse(str(games_file), "-o", str(out), *settings, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed after" in resumed.stdout
    assert out.read_text() == whole.read_text()
    assert "Anna" in resumed.stdout.split("-" * 72)[1]  # the table counts the games of both runs
    changed = run_analyse(str(games_file), "-o", str(out), "--nodes", str(NODES + 1), "--engine", engine, "--resume")
    assert changed.returncode == 2 and "limit was" in changed.stderr


def test_two_jobs_write_what_one_job_writes(games_file: Path, tmp_path: Path) -> None:
    one, two = tmp_path / "one.pgn", tmp_path / "two.pgn"
    assert run_analyse(str(games_file), "-o", str(one), "--nodes", str(NODES), "-j", "1").returncode == 0
    done = run_analyse(str(games_file), "-o", str(two), "--nodes", str(NODES), "-j", "2")
    assert done.returncode == 0, done.stderr
    assert two.read_text() == one.read_text()


def test_a_local_cluster_writes_what_one_job_writes(games_file: Path, tmp_path: Path) -> None:
    require_extra("cluster")
    one, cluster = tmp_path / "one.pgn", tmp_path / "cluster.pgn"
    assert run_analyse(str(games_file), "-o", str(one), "--nodes", str(NODES), "--limit", "2").returncode == 0
    done = run_analyse(str(games_file), "-o", str(cluster), "--nodes", str(NODES), "--limit", "2",
                       "--cluster", "local:2")
    assert done.returncode == 0, done.stderr
    assert cluster.read_text() == one.read_text()


def test_usage_errors(games_file: Path) -> None:
    assert run_analyse(str(games_file)).returncode == 2  # no limit
    done = run_analyse(str(games_file), "--nodes", "0")
    assert done.returncode == 2 and "--nodes must be at least 1" in done.stderr
    done = run_analyse(str(games_file), "--nodes", "10", "-o", str(games_file))
    assert done.returncode == 2 and "must not be the input" in done.stderr


# A test suite: two positions with a best move (a mate in one, and WAC's Nf5 that Garfish finds), one without.
SUITE = """\
6k1/5ppp/8/8/8/2q5/r4PPP/3R2K1 w - - bm Rd8#; id "mate.1";
r1b1k2r/ppppnppp/2n2q2/2b5/3NP3/2P1B3/PP3PPP/RN1QKB1R w KQkq - bm Nf5; id "nf5";
rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1
"""


def test_a_suite_s_positions_are_one_move_games_with_the_best_move_unmarked(tmp_path: Path) -> None:
    source = tmp_path / "suite.epd"
    source.write_text(SUITE)
    out = tmp_path / "out.pgn"
    done = run_analyse(str(source), "-o", str(out), "--nodes", str(NODES))
    assert done.returncode == 0, done.stderr
    games = read_games(out)
    assert [game.headers["Event"] for game in games] == ["mate.1", "nf5", "suite position 3"]
    for game, line in zip(games, SUITE.splitlines()):
        board, ops = analyse.read_position(line)
        assert game.headers["SetUp"] == "1" and game.board().epd() == board.epd()
        assert [move for move in game.mainline_moves()] == ops.get("bm", [])[:1]
    assert all(not node.nags for game in games[:2] for node in game.mainline())  # a suite's best move is no mistake
    assert games[1].next().eval() is not None and games[1].headers["White"] == "suite"
    assert "game 3 (line 3): no bm: no move played to judge" in done.stderr
    assert "Not analysed (1): games 3" in done.stdout
    same = tmp_path / "suite.txt"  # recognised by its content as well
    same.write_text(SUITE)
    again = run_analyse(str(same), "-o", str(tmp_path / "again.pgn"), "--nodes", str(NODES))
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again.pgn").read_text() == out.read_text().replace('"suite.epd"', '"suite.txt"')
