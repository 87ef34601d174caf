"""Games end by the rules in effect (arena.rules), in `garfish match` and `garfish datagen` alike.

A draw the side to move merely *could* claim (python-chess's `outcome(claim_draw=True)`) does not
end a game: the winning side plays on. A third occurrence and the 100th quiet ply do, at the ply
cutechess-cli ends them.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest

from conftest import CLI_TIMEOUT, ROOT, SCRIPTED, read_games
from garfish.arena.game import forfeit_ending
from garfish.arena.rules import game_outcome

# Garfish-Stockfish (UCI_Elo 2300), 2026-11-25: White to move in `5Q2/5B1k/6p1/5p1p/2P2q2/7P/r4PK1/8 w`
# after it had occurred twice; Bg8+ would repeat (so a draw could be claimed), Qg8+ mates in 2. The
# line below starts one ply after Bg8+ and reaches that position twice, then mates.
REPEATED_START = "5QB1/7k/6p1/5p1p/2P2q2/7P/r4PK1/8 b - - 13 51"
TO_THE_CLAIM = ["h7h8", "g8f7", "h8h7", "f7g8", "h7h8", "g8f7", "h8h7"]
MATING_LINE = ["f8g8", "h7h6", "g8g6"]
CUTECHESS_GAMES = Path(__file__).resolve().parent / "data" / "cutechess_rules.pgn"  # see tests/data/README.md
CUTECHESS_REASONS = {"3-fold repetition": "threefold repetition", "fifty moves rule": "fifty-move rule"}


def board_after(fen: str, moves: list[str]) -> chess.Board:
    """The board after these UCI moves from fen."""
    board = chess.Board(fen)
    for uci in moves:
        board.push_uci(uci)
    return board


def scripted(*args: str) -> str:
    """`cmd=...` for the scripted engine with these arguments."""
    return "cmd=" + shlex.join([sys.executable, str(SCRIPTED), *args])


def play_script(tmp_path: Path, fen: str, moves: list[str], *extra: str) -> chess.pgn.Game:
    """Two scripted engines play `moves` from `fen` in `garfish match` (then their own moves): the first game."""
    book, pgn = tmp_path / "book.epd", tmp_path / "games.pgn"
    book.write_text(fen + "\n")
    script = ",".join(moves)
    proc = subprocess.run([sys.executable, "-m", "garfish.uci", "match",
                           "--engine", scripted("--moves", script, "--play", "random", "--seed", "1"), "name=one",
                           "--engine", scripted("--moves", script, "--play", "random", "--seed", "2"), "name=two",
                           "--nodes", "1", "--games", "2", "--openings", str(book), "--pgnout", str(pgn),
                           "--no-progress", *extra],
                          cwd=str(ROOT), capture_output=True, text=True, timeout=CLI_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return read_games(pgn)[0]


# --------------------------------------------------------------------------- the rule itself
def test_a_draw_that_could_be_claimed_does_not_end_the_game() -> None:
    """The position of the Stockfish game, reached twice: claimable (Bg8+ repeats), not over."""
    board = board_after(REPEATED_START, TO_THE_CLAIM)
    assert board.is_repetition(2) and not board.is_repetition(3)
    assert board.outcome(claim_draw=True) is not None  # python-chess: the side to move may claim
    assert game_outcome(board) is None
    board.push_uci("f7g8")  # Bg8+ again: its position's third occurrence
    outcome = game_outcome(board)
    assert outcome is not None and outcome.termination == chess.Termination.THREEFOLD_REPETITION
    assert outcome.result() == "1/2-1/2"


def test_the_fifty_move_rule_ends_the_game_at_the_100th_quiet_ply_not_before() -> None:
    """Halfmove clock 99: a quiet move ends the game, a capture or pawn move resets the count."""
    board = chess.Board("8/8/4k3/8/2r5/8/3RK3/8 w - - 99 120")
    assert board.outcome(claim_draw=True) is not None  # a move to 100 could be claimed
    assert game_outcome(board) is None
    board.push_uci("d2d3")
    outcome = game_outcome(board)
    assert outcome is not None and outcome.termination == chess.Termination.FIFTY_MOVES
    capture = chess.Board("8/8/4k3/8/2r5/8/2R1K3/8 w - - 99 120")
    capture.push_uci("c2c4")
    assert capture.halfmove_clock == 0 and game_outcome(capture) is None


def test_a_mate_on_the_100th_quiet_ply_is_a_mate() -> None:
    """Checkmate is tested first, as by cutechess-cli and the FIDE rules."""
    board = chess.Board("7k/8/6K1/8/8/8/8/R7 w - - 99 80")
    board.push_uci("a1a8")
    outcome = game_outcome(board)
    assert outcome is not None and outcome.termination == chess.Termination.CHECKMATE and outcome.winner


def test_rules_that_need_no_claim() -> None:
    """Stalemate, dead material, 75 moves and fivefold are over as before."""
    assert game_outcome(chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")).termination == chess.Termination.STALEMATE
    assert (game_outcome(chess.Board("8/8/4k3/8/8/3NK3/8/8 w - - 0 1")).termination
            == chess.Termination.INSUFFICIENT_MATERIAL)
    assert game_outcome(chess.Board()) is None


# --------------------------------------------------------------------------- the runners
def test_the_match_runner_plays_on_to_the_mate(tmp_path: Path) -> None:
    """garfish match does not end the Stockfish game where a draw could be claimed: White mates."""
    game = play_script(tmp_path, REPEATED_START, TO_THE_CLAIM + MATING_LINE)
    assert game.headers["Result"] == "1-0"
    assert game.headers["ResultReason"] == "checkmate"
    assert [move.uci() for move in game.mainline_moves()] == TO_THE_CLAIM + MATING_LINE


def test_the_match_runner_ends_a_repetition_at_its_third_occurrence(tmp_path: Path) -> None:
    """The same line with Bg8+ played again ends at once, a ply later, by threefold repetition."""
    game = play_script(tmp_path, REPEATED_START, TO_THE_CLAIM + ["f7g8", "h7h8"])
    assert game.headers["ResultReason"] == "threefold repetition"
    assert len(list(game.mainline_moves())) == len(TO_THE_CLAIM) + 1


@pytest.mark.parametrize("game", read_games(CUTECHESS_GAMES), ids=lambda game: f"round{game.headers['Round']}")
def test_games_end_where_cutechess_cli_ended_them(tmp_path: Path, game: chess.pgn.Game) -> None:
    """Each game cutechess-cli ended by threefold repetition or the fifty-move rule, replayed move by
    move in garfish match, ends at the same ply (none earlier) for the same reason."""
    moves = [move.uci() for move in game.mainline_moves()]
    fen = game.headers.get("FEN", chess.STARTING_FEN)
    theirs = next(reason for reason in CUTECHESS_REASONS if reason in game.end().comment)
    replay = play_script(tmp_path, fen, moves)
    assert [move.uci() for move in replay.mainline_moves()] == moves
    assert replay.headers["ResultReason"] == CUTECHESS_REASONS[theirs]
    assert replay.headers["Result"] == game.headers["Result"] == "1/2-1/2"


def test_the_cutechess_games_hold_both_rules() -> None:
    """The record holds games of both endings."""
    endings = {reason for game in read_games(CUTECHESS_GAMES) for reason in CUTECHESS_REASONS
               if reason in game.end().comment}
    assert endings == set(CUTECHESS_REASONS)


def test_datagen_plays_on_to_the_mate(tmp_path: Path) -> None:
    """garfish datagen labels the whole Stockfish line and writes White's win."""
    book, out = tmp_path / "book.epd", tmp_path / "out.txt"
    book.write_text(REPEATED_START + "\n")
    command = shlex.join([sys.executable, str(SCRIPTED), "--moves", ",".join(TO_THE_CLAIM + MATING_LINE)])
    proc = subprocess.run([sys.executable, "-m", "garfish.uci", "datagen", str(out), "--engine", command,
                           "--openings", str(book), "--random-plies", "0", "--games", "1", "--seed", "1",
                           "--no-progress"], cwd=str(ROOT), capture_output=True, text=True, timeout=CLI_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = out.read_text().splitlines()
    assert [line.split(";")[2] for line in lines] == TO_THE_CLAIM + MATING_LINE
    assert {line.split(";")[3] for line in lines} == {"1"}


@pytest.mark.parametrize("kind", ["illegal", "time", "crash"])
def test_a_forfeit_is_a_draw_when_the_opponent_cannot_mate(kind: str) -> None:
    """As in cutechess-cli: the lone king's forfeit loses, the queen's side's forfeit draws."""
    board = chess.Board("8/8/4k3/8/8/3QK3/8/8 w - - 0 1")
    assert forfeit_ending(board, chess.BLACK, kind, "lone", "detail").result == "1-0"
    drawn = forfeit_ending(board, chess.WHITE, kind, "queen", "detail")
    assert drawn.result == "1/2-1/2" and "insufficient mating material" in drawn.reason
