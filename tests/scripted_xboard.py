"""A tiny scripted XBoard/CECP engine for testing `garfish match` with XBoard opponents (pure Python).

    scripted_xboard.py [--play first|random] [--seed S] [--name NAME] [--score CP] [--log FILE]
                       [--affinity-file FILE]

It declares the features python-chess needs (ping, setboard, usermove; nps, so that `st`/`nps` node
limits are accepted, and ignored), keeps the position from
`new`, `setboard`, `usermove`, `undo`/`remove`, and answers `go` (and a usermove outside force
mode) with `move M`: the first legal move in python-chess's order, or with --play random one
picked by a seeded hash of the position. With `post` on it sends a thinking line with --score
(centipawns, the mover's view) first. --log FILE appends every line received; --affinity-file
FILE writes the processors it may run on (os.sched_getaffinity) when it starts.
"""

from __future__ import annotations

import sys

# Before anything slow (python-chess's import on a busy machine): ask for time to declare the features,
# as the protocol allows; python-chess otherwise gives an engine 2 s after `protover 2`.
sys.stdout.write("feature done=0\n")
sys.stdout.flush()

import argparse  # noqa: E402
import os  # noqa: E402
import zlib  # noqa: E402
from typing import Optional  # noqa: E402

import chess  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    """Command-line arguments of the scripted XBoard engine."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--play", choices=("first", "random"), default="first")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", default="Scripted XBoard")
    parser.add_argument("--score", type=int, default=0)
    parser.add_argument("--log")
    parser.add_argument("--affinity-file")
    return parser


def choose(board: chess.Board, play: str, seed: int) -> chess.Move:
    """The move this engine plays in a position."""
    moves = list(board.legal_moves)
    if play == "first":
        return moves[0]
    key = zlib.crc32(f"{seed}:{board.fen()}".encode())
    return moves[key % len(moves)]


def main(argv: Optional[list[str]] = None) -> int:
    """Read XBoard commands from stdin until quit."""
    args = build_parser().parse_args(argv)
    if args.affinity_file:
        with open(args.affinity_file, "w", encoding="utf-8") as handle:
            handle.write(",".join(str(cpu) for cpu in sorted(os.sched_getaffinity(0))) + "\n")
    log = open(args.log, "a", encoding="utf-8") if args.log else None
    board = chess.Board()
    force = False
    post = False

    def say(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def move() -> None:
        if board.is_game_over():
            return
        chosen = choose(board, args.play, args.seed)
        if post:
            say(f"1 {args.score} 0 1 {chosen.uci()}")
        board.push(chosen)
        say(f"move {chosen.uci()}")

    for raw in sys.stdin:
        line = raw.strip()
        if log is not None:
            log.write(line + "\n")
            log.flush()
        command, _, rest = line.partition(" ")
        if command == "protover":
            say(f'feature ping=1 setboard=1 usermove=1 nps=1 san=0 sigint=0 sigterm=0 colors=0 myname="{args.name}" done=1')
        elif command == "new":
            board, force = chess.Board(), False
        elif command == "setboard":
            board = chess.Board(rest)
        elif command == "force":
            force = True
        elif command == "go":
            force = False
            move()
        elif command == "usermove":
            board.push_uci(rest.strip())
            if not force:
                move()
        elif command in ("undo", "remove"):
            for _ in range(1 if command == "undo" else 2):
                if board.move_stack:
                    board.pop()
        elif command == "ping":
            say(f"pong {rest}")
        elif command == "post":
            post = True
        elif command == "nopost":
            post = False
        elif command == "quit":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
