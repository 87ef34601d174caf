"""Openings for `garfish match`: EPD/FEN lines or PGN games, taken in a seeded order and paired into game tasks."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import chess
import chess.pgn

from garfish.arena.rules import game_outcome


@dataclass
class GameTask:
    """One game to play: its number, pair, opening, which colour engine 1 has and, in a gauntlet or round
    robin, which pairing of players plays it (engine 1 is the pairing's first)."""

    number: int
    pair: int
    opening: int
    fen: str
    chess960: bool
    engine1_white: bool
    pairing: int = 0


def board_from_line(text: str, chess960: bool) -> chess.Board:
    """A FEN (6 fields) or EPD line -> board (ValueError when neither)."""
    try:
        return chess.Board(text, chess960=chess960)
    except ValueError:
        board = chess.Board(chess960=chess960)
        board.set_epd(text)
        return board


def needs_chess960(text: str) -> bool:
    """Whether a FEN/EPD line's castling rights are valid only under Chess960 rules (a castling
    king or rook off its standard square)."""
    try:
        standard, chess960 = board_from_line(text, False), board_from_line(text, True)
    except ValueError:
        return False
    return bool(standard.status() & chess.STATUS_BAD_CASTLING_RIGHTS) and chess960.is_valid()


def usable(board: chess.Board) -> Optional[str]:
    """Why a board cannot start a game, or None."""
    if not board.is_valid():
        return "not a valid position"
    if game_outcome(board) is not None:
        return "the game is already over"
    return None


def load_openings(path: Path, needed: int, seed: Optional[int], chess960: bool,
                  warn: Callable[[str], None]) -> list[tuple[int, chess.Board]]:
    """`needed` openings (number in the file, board) in a seeded random order, cycling if the file is short.

    EPD/FEN openings are all read as Chess960 when `chess960` is set, or once a line is met whose
    castling rights need it (a Chess960 book; said through warn); PGN games say so in their Variant tag.
    """
    rng = random.Random(seed)
    if path.suffix.lower() == ".pgn":
        return _pgn_openings(path, needed, rng, warn)
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise ValueError(f"cannot read openings '{path}': {exc.strerror or exc}") from None
    entries = [(number, text.strip()) for number, text in enumerate(lines, 1)
               if text.strip() and not text.strip().startswith("#")]
    rng.shuffle(entries)
    chosen, problems, first960 = _epd_openings(entries, needed, chess960)
    if first960 is not None:
        warn(f"{path}:{first960}: castling rights valid only in Chess960: playing the openings as Chess960")
        chosen, problems, _ = _epd_openings(entries, needed, True)
    for number, problem in problems:
        warn(f"{path}:{number}: skipped opening: {problem}")
    return _cycle(chosen, needed, path)


def _epd_openings(entries: list[tuple[int, str]], needed: int, chess960: bool
                  ) -> tuple[list[tuple[int, chess.Board]], list[tuple[int, str]], Optional[int]]:
    """The first `needed` usable lines as boards, the skipped lines with why, and (reading them as
    standard chess) the number of a line that needs Chess960, at which the reading stops."""
    chosen: list[tuple[int, chess.Board]] = []
    problems: list[tuple[int, str]] = []
    for number, text in entries:
        if len(chosen) >= needed:
            break
        try:
            board = board_from_line(text, chess960)
        except ValueError as exc:
            problems.append((number, str(exc)))
            continue
        problem = usable(board)
        if problem and not chess960 and needs_chess960(text):
            return chosen, problems, number
        if problem:
            problems.append((number, problem))
            continue
        chosen.append((number, board))
    return chosen, problems, None


def _pgn_openings(path: Path, needed: int, rng: random.Random,
                  warn: Callable[[str], None]) -> list[tuple[int, chess.Board]]:
    """Final positions of randomly chosen PGN games."""
    try:
        handle = open(path, encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ValueError(f"cannot read openings '{path}': {exc.strerror or exc}") from None
    chosen: list[tuple[int, chess.Board]] = []
    with handle:
        offsets = []
        while True:
            offset = handle.tell()
            if not chess.pgn.skip_game(handle):
                break
            offsets.append(offset)
        order = list(range(len(offsets)))
        rng.shuffle(order)
        for index in order:
            if len(chosen) >= needed:
                break
            handle.seek(offsets[index])
            game = chess.pgn.read_game(handle)
            if game is None or game.errors:
                warn(f"{path}: game {index + 1}: skipped opening: "
                     f"{game.errors[0] if game is not None and game.errors else 'unreadable'}")
                continue
            board = game.end().board()
            problem = usable(board)
            if problem:
                warn(f"{path}: game {index + 1}: skipped opening: {problem}")
                continue
            chosen.append((index + 1, board))
    return _cycle(chosen, needed, path)


def _cycle(chosen: list[tuple[int, chess.Board]], needed: int, path: Path) -> list[tuple[int, chess.Board]]:
    """Repeat the openings found when the file has fewer than needed."""
    if not chosen:
        raise ValueError(f"no usable openings in '{path}'")
    return [chosen[index % len(chosen)] for index in range(needed)]


def make_tasks(games: int, openings: list[tuple[int, chess.Board]]) -> list[GameTask]:
    """Game tasks: pair p plays opening p twice, engine 1 White first."""
    tasks = []
    for number in range(1, games + 1):
        pair = (number - 1) // 2
        opening, board = openings[pair]
        tasks.append(GameTask(number=number, pair=pair, opening=opening, fen=board.fen(),
                              chess960=board.chess960, engine1_white=number % 2 == 1))
    return tasks
