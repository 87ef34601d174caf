"""The games an engine did not win after scoring itself well ahead, from the PGN `garfish match` writes.

    python scripts/missed_wins.py GAMES.pgn [MORE.pgn ...] --engine NAME [--above 2.0] [--syzygy DIR]

For each game NAME played and did not win, the highest score NAME gave in its move comments
(`{ +2.35/14 0.395s }`, pawns from its own side; a mate score counts as above any bound); a game
counts when that score reached --above. Prints each such game (its number in the files, opponent,
result and how it ended, the highest score and the position after the move that gave it) and a
count by ending. With --syzygy, each position with at most as many men as the tables hold is
probed (python-chess's `probe_wdl`, from NAME's side): a 0 there means the position NAME scored
as a win was already a draw, so the evaluation, not the conversion, missed it.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Iterator, Optional

import chess
import chess.pgn
import chess.syzygy

SCORE = re.compile(r"^\s*([+-]?)(M?)(\d+(?:\.\d+)?)/")
MATE = 1000.0  # a mate score, in pawns: above any bound given


def comment_score(comment: str) -> Optional[float]:
    """The score a move comment gives, in pawns from the mover's side (mates as +-MATE); None without one."""
    found = SCORE.match(comment)
    if found is None:
        return None
    sign = -1.0 if found.group(1) == "-" else 1.0
    return sign * (MATE if found.group(2) else float(found.group(3)))


def highest(game: chess.pgn.Game, color: chess.Color) -> Optional[tuple[float, chess.Board]]:
    """The highest score `color` gave in the game and the position after the move that gave it."""
    best: Optional[tuple[float, chess.Board]] = None
    board = game.board()
    for node in game.mainline():
        mover = board.turn
        board.push(node.move)
        score = comment_score(node.comment) if mover == color else None
        if score is not None and (best is None or score > best[0]):
            best = (score, board.copy(stack=False))
    return best


def games_of(paths: list[Path]) -> Iterator[tuple[int, chess.pgn.Game]]:
    """Every game of the files, numbered from 1 across them (raises OSError for a file that cannot be read)."""
    number = 0
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                number += 1
                yield number, game


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pgn", nargs="+", type=Path)
    parser.add_argument("--engine", required=True, help="the player's name as the PGN gives it")
    parser.add_argument("--above", type=float, default=2.0, help="the score, in pawns, that counts a game (2.0)")
    parser.add_argument("--syzygy", type=Path, default=None, help="a folder of Syzygy tables to probe the positions")
    args = parser.parse_args(argv)
    tables = None
    if args.syzygy is not None:
        tables = chess.syzygy.Tablebase()
        if tables.add_directory(str(args.syzygy)) == 0:
            print(f"no Syzygy tables in {args.syzygy}", file=sys.stderr)
            return 1
    played = not_won = 0
    endings: Counter[str] = Counter()
    draws_in_tables = 0
    try:
        for number, game in games_of(args.pgn):
            headers = game.headers
            if args.engine not in (headers.get("White"), headers.get("Black")):
                continue
            played += 1
            color = chess.WHITE if headers.get("White") == args.engine else chess.BLACK
            result = headers.get("Result", "*")
            if result == ("1-0" if color == chess.WHITE else "0-1"):
                continue
            not_won += 1
            best = highest(game, color)
            if best is None or best[0] < args.above:
                continue
            score, board = best
            opponent = headers.get("Black" if color == chess.WHITE else "White", "?")
            reason = headers.get("ResultReason", headers.get("Termination", "?"))
            endings[f"{result} {reason}"] += 1
            shown = "mate" if score >= MATE else f"{score:+.2f}"
            line = f"game {number}: against {opponent}, {result} ({reason}); highest {shown}: {board.fen()}"
            if tables is not None:
                wdl = tables.get_wdl(board)  # None where no table holds it
                if wdl is not None:
                    wdl = wdl if board.turn == color else -wdl
                    draws_in_tables += wdl == 0
                    line += f"; tables: WDL {wdl:+d} for {args.engine}"
            print(line)
    except OSError as error:
        print(f"cannot read {error.filename}: {error.strerror or error}", file=sys.stderr)
        return 1
    if played == 0:
        print(f"no game of {args.engine!r} in the files", file=sys.stderr)
        return 1
    counted = sum(endings.values())
    print(f"{args.engine}: {played} games, {not_won} not won, {counted} of them after a score of "
          f"{args.above:+.2f} or more")
    for ending, count in endings.most_common():
        print(f"  {count} {ending}")
    if tables is not None:
        print(f"  {draws_in_tables} of them a draw in the tables at the highest score")
    return 0


if __name__ == "__main__":
    sys.exit(main())
