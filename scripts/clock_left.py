"""The clock each player had left at the end of its games, from the PGN `garfish match` writes.

    python scripts/clock_left.py GAMES.pgn [MORE.pgn ...]

For a game with a clock time control (the TimeControl tag, `BASE+INC` in seconds) each player's
clock is replayed move by move from the times in the move comments (`{ +0.25/9 0.395s }`) as
`garfish match` keeps it (TimeControl.clock_after). Forfeited games (lost on time, by an illegal
move or a crash) are left out, as the match report leaves them out. Prints, per player, the games, the median and
the least clock left at the end, and the mean time per move. A match's JSON report gives the same
figure; this script gives it for a match stopped before its end, which writes none.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Optional

import chess
import chess.pgn

from garfish.arena.game import PGN_TERMINATION, TimeControl
from garfish.arena.match import parse_tc

TIME = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)s\b")


def clocks_left(game: chess.pgn.Game) -> Optional[dict[str, tuple[float, int, float]]]:
    """{player: (clock left, moves, time used)} at the game's end, or None for a game without a
    clock time control, with a move whose time is missing, or forfeited."""
    if game.headers.get("Termination") in PGN_TERMINATION.values():
        return None
    try:
        base, increment = parse_tc(game.headers.get("TimeControl", ""))
    except ValueError:
        return None
    tc = TimeControl("clock", base=base, increment=increment)
    names = {chess.WHITE: game.headers.get("White", "?"), chess.BLACK: game.headers.get("Black", "?")}
    clock = {chess.WHITE: base, chess.BLACK: base}
    moves = {chess.WHITE: 0, chess.BLACK: 0}
    used = {chess.WHITE: 0.0, chess.BLACK: 0.0}
    board = game.board()
    for node in game.mainline():
        mover = board.turn
        found = TIME.search(node.comment)
        if not found:
            return None
        elapsed = float(found.group(1))
        clock[mover] = tc.clock_after(clock[mover], elapsed)
        moves[mover] += 1
        used[mover] += elapsed
        board.push(node.move)
    return {names[color]: (clock[color], moves[color], used[color]) for color in chess.COLORS}


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pgn", nargs="+", type=Path)
    args = parser.parse_args(argv)
    left: dict[str, list[float]] = defaultdict(list)
    per_move: dict[str, list[float]] = defaultdict(list)
    skipped = 0
    for path in args.pgn:
        try:
            handle = open(path, encoding="utf-8")
        except OSError as error:
            print(f"cannot read {path}: {error.strerror or error}", file=sys.stderr)
            return 1
        with handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                result = clocks_left(game)
                if result is None:
                    skipped += 1
                    continue
                for name, (clock, moves, used) in result.items():
                    left[name].append(clock)
                    per_move[name].append(used / max(1, moves))
    if not left:
        print("no game with a clock time control and move times", file=sys.stderr)
        return 1
    for name in sorted(left):
        values = left[name]
        print(f"{name}: clock left at the end median {statistics.median(values):.2f} s, least {min(values):.2f} s, "
              f"{statistics.mean(per_move[name]):.3f} s a move on average, over {len(values)} games")
    if skipped:
        print(f"({skipped} games left out: no clock time control, a move without its time, or forfeited)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
