"""The cost of python-chess's engine client per move, against a raw pipe, with `go nodes N`.

    python scripts/uci_overhead.py [--engine /usr/games/stockfish] [--nodes 5000] [--positions 300] [--rounds 2]

Both ask the same engine (one thread, 16 MB hash) for a move in the same positions (random games
from the start, seeded); the raw pipe writes `position fen ...` and `go nodes N` and reads up to
`bestmove`, the client calls `SimpleEngine.play` as `garfish datagen` and `garfish match` do. The
rounds alternate the two; milliseconds a move are printed for each. The difference is what the
client costs a move (docs/data.md: what bounds the generation of training data).
"""

from __future__ import annotations

import argparse
import random
import shlex
import subprocess
import time
from typing import Callable

import chess
import chess.engine


def positions(count: int, seed: int) -> list[chess.Board]:
    """Positions from random games (at most 80 plies each), the same for the same seed."""
    rng = random.Random(seed)
    boards: list[chess.Board] = []
    board = chess.Board()
    while len(boards) < count:
        if board.is_game_over() or board.ply() > 80:
            board = chess.Board()
        board.push(rng.choice(list(board.legal_moves)))
        boards.append(board.copy())
    return boards


def with_client(engine: list[str], boards: list[chess.Board], nodes: int) -> float:
    """Seconds for a move in each position through python-chess's SimpleEngine."""
    client = chess.engine.SimpleEngine.popen_uci(engine)
    try:
        client.configure({"Hash": 16})
        start = time.perf_counter()
        for board in boards:
            client.play(board, chess.engine.Limit(nodes=nodes), info=chess.engine.INFO_SCORE)
        return time.perf_counter() - start
    finally:
        client.quit()


def with_pipe(engine: list[str], boards: list[chess.Board], nodes: int) -> float:
    """Seconds for a move in each position through a raw pipe."""
    process = subprocess.Popen(engine, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    assert process.stdin is not None and process.stdout is not None

    def send(text: str) -> None:
        """Write lines to the engine."""
        process.stdin.write(text)
        process.stdin.flush()

    def read_until(prefix: str) -> None:
        """Read lines up to one starting with prefix."""
        for line in process.stdout:
            if line.startswith(prefix):
                return
        raise RuntimeError(f"the engine closed its output before '{prefix}'")

    try:
        send("uci\nsetoption name Hash value 16\nisready\n")
        read_until("readyok")
        start = time.perf_counter()
        for board in boards:
            send(f"position fen {board.fen()}\ngo nodes {nodes}\n")
            read_until("bestmove")
        return time.perf_counter() - start
    finally:
        send("quit\n")
        process.wait()


def main() -> None:
    """Time both ways in alternation and print milliseconds a move."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", default="/usr/games/stockfish", help="the engine's command line (shell-quoted)")
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    boards = positions(args.positions, args.seed)
    ways: list[tuple[str, Callable[[list[str], list[chess.Board], int], float]]] = [
        ("python-chess SimpleEngine", with_client), ("raw pipe", with_pipe)]
    for _ in range(args.rounds):
        for name, way in ways:
            seconds = way(shlex.split(args.engine), boards, args.nodes)
            print(f"{name}: {seconds / len(boards) * 1000:.2f} ms a move")


if __name__ == "__main__":
    main()
