"""Do two UCI engines search the same tree? Node counts, scores and principal variations compared.

    python scripts/same_tree.py --engine A_CMD --engine B_CMD [--depth 7] [--games 40] [--nodes 5000]
                                [--option NAME=VALUE ...]

Each engine gets `ucinewgame` and the same `position` before every search, so that its table and
histories start empty: the bench positions and positions from real games (every fourth position of
the first `--games` games of 8moves_v3.pgn, given with the moves that led to them, so that
repetitions reach back into the game), Chess960 starting positions (python-chess sets UCI_Chess960) and positions
of few pieces, searched to `--depth` and with `go nodes --nodes`. It prints every position where the
two differ (the last info line's depth, nodes, score and PV, and the move) and the totals; its exit
status is 1 when any differ. A change that must not change the search (a port, a refactoring) shows
0 differences; the command that says so is in docs/figures.md.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Iterator, Optional

import chess
import chess.engine
import chess.pgn

from garfish.arena.data import data_dir
from garfish.engine.services.bench import BENCH_FENS

FEW_PIECES = (
    "8/8/8/4k3/8/8/2P5/4K3 w - - 0 1", "8/8/3k4/8/3K4/8/8/3R4 w - - 0 1", "8/5k2/8/8/8/2B5/8/1N2K3 w - - 0 1",
    "8/8/1p6/8/1P1k4/8/8/3K4 b - - 0 1", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", "8/8/8/8/8/5k2/6p1/6K1 w - - 0 1",
    "8/2k5/8/8/3Q4/8/8/3K4 w - - 0 1", "6k1/5p2/6p1/8/8/6P1/5P2/6K1 w - - 0 1",
)


def game_positions(path: Path, games: int) -> Iterator[tuple[chess.Board, str]]:
    """Every fourth position of the first `games` games, each with its moves from the start."""
    with open(path, encoding="utf-8") as handle:
        for number in range(games):
            game = chess.pgn.read_game(handle)
            if game is None:
                return
            board = game.board()
            for ply, move in enumerate(game.mainline_moves()):
                board.push(move)
                if ply % 4 == 3 and not board.is_game_over():
                    yield board.copy(), f"game {number + 1} ply {ply + 1}"


def chess960_positions(count: int) -> Iterator[tuple[chess.Board, str]]:
    """Chess960 starting positions, spread over the 960."""
    for index in range(0, 960, max(1, 960 // count)):
        yield chess.Board.from_chess960_pos(index), f"chess960 {index}"


def search(engine: chess.engine.SimpleEngine, board: chess.Board, limit: chess.engine.Limit) -> tuple:
    """(depth, nodes, score, pv, move) of a search from an empty table (a new game each time)."""
    result = engine.play(board, limit, info=chess.engine.INFO_ALL, game=object())
    info = result.info
    score = info.get("score")
    pv = tuple(move.uci() for move in info.get("pv", []))
    return (info.get("depth"), info.get("nodes"), None if score is None else str(score.relative), pv,
            None if result.move is None else result.move.uci())


def main(argv: Optional[list[str]] = None) -> int:
    """Search every position with both engines and compare."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine", action="append", required=True, help="an engine's command line (twice)")
    parser.add_argument("--depth", type=int, default=7)
    parser.add_argument("--nodes", type=int, default=5000, help="the node limit of the second search of each")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--chess960", type=int, default=24, help="Chess960 starting positions")
    parser.add_argument("--option", action="append", default=[], help="NAME=VALUE for both engines")
    args = parser.parse_args(argv)
    if len(args.engine) != 2:
        parser.error("give --engine twice")
    options = dict(option.split("=", 1) for option in args.option)
    engines = [chess.engine.SimpleEngine.popen_uci(shlex.split(command), timeout=600) for command in args.engine]
    try:
        for engine in engines:
            engine.configure({name: value for name, value in options.items()})
        data = data_dir()
        positions: list[tuple[chess.Board, str]] = [(chess.Board(fen), f"bench {i + 1}")
                                                    for i, fen in enumerate(BENCH_FENS)]
        positions += [(chess.Board(fen), f"few pieces {i + 1}") for i, fen in enumerate(FEW_PIECES)]
        if data is not None:
            positions += list(game_positions(data / "books" / "8moves_v3.pgn", args.games))
        positions += list(chess960_positions(args.chess960))
        differ = searched = 0
        for board, name in positions:
            for limit in (chess.engine.Limit(depth=args.depth), chess.engine.Limit(nodes=args.nodes)):
                a, b = (search(engine, board, limit) for engine in engines)
                searched += 1
                if a != b:
                    differ += 1
                    print(f"{name} ({limit}): {board.fen()} moves {' '.join(m.uci() for m in board.move_stack[-8:])}")
                    print(f"  A {a}\n  B {b}", flush=True)
        print(f"{searched} searches of {len(positions)} positions: {differ} differ")
        return 1 if differ else 0
    finally:
        for engine in engines:
            engine.quit()


if __name__ == "__main__":
    sys.exit(main())
