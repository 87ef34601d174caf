"""Tablebase endings played out at a fast game's speed: are wins mated, draws held?

    python scripts/tb_convert.py [--times 0.05,0.1,0.4] [--positions 17] [--seed 30] [--syzygy DIR]
        [--ranking FILE] [-- COMMAND ...]

Draws --positions random legal 3-4-man positions (seeded; the tables' WDL decides what each is) and
has the engine (COMMAND, default this checkout's launcher, with SyzygyPath set) play both sides of
each through python-chess at `Limit(time=T)` a move, for each T of --times, until a rule in effect
ends the game (garfish.arena.rules). Prints, per time, how many won positions were mated (before
the fifty-move rule, which would have ended the game), how many drawn ones stayed drawn and how many
lost ones were lost, and then the time a root ranking takes (Tablebases.rank_root_moves of --ranking,
default this checkout's engine/services/syzygy.py, run in this process, its probe cache emptied each time)
over every position the games reached: median, 90th percentile and largest, in milliseconds.
--ranking OTHER/engine/syzygy.py measures another checkout's ranking on the same positions.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
import time
from pathlib import Path

import chess
import chess.engine
import chess.syzygy

from garfish.arena.rules import game_outcome

ROOT = Path(__file__).resolve().parent.parent
SYZYGY = ROOT.parent / "shared" / "data" / "syzygy"
TABLES = ("KQvK", "KRvK", "KBNvK", "KPvK", "KQvKR", "KQvKN", "KPPvK", "KRvKR", "KRvKB", "KPvKP", "KBvKP")
MAX_PLIES = 300


def random_position(tables: chess.syzygy.Tablebase, rng: random.Random) -> chess.Board:
    """A random legal position of a random table of TABLES, the game not over."""
    while True:
        name = rng.choice(TABLES)
        board = chess.Board(None)
        pieces = [chess.Piece.from_symbol(symbol if side == 0 else symbol.lower())
                  for side, group in enumerate(name.split("v")) for symbol in group]
        for piece, square in zip(pieces, rng.sample(chess.SQUARES, len(pieces))):
            board.set_piece_at(square, piece)
        board.turn = rng.choice(chess.COLORS)
        if board.is_valid() and game_outcome(board) is None:
            return board


def play(engine: chess.engine.SimpleEngine, board: chess.Board, seconds: float) -> list[chess.Board]:
    """The engine plays both sides from board at `seconds` a move; every position reached."""
    board = board.copy()
    seen = []
    game = object()
    while game_outcome(board) is None and board.ply() < MAX_PLIES:
        seen.append(board.copy())
        board.push(engine.play(board, chess.engine.Limit(time=seconds), game=game).move)
    seen.append(board)
    return seen


def main() -> int:
    """Play the endings at every time and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--times", default="0.05,0.1,0.4")
    parser.add_argument("--positions", type=int, default=17)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--syzygy", default=str(SYZYGY))
    parser.add_argument("--ranking", default=str(ROOT / "engine" / "syzygy.py"), help="the syzygy module to time")
    parser.add_argument("command", nargs="*", default=[str(ROOT / "garfish")])
    args = parser.parse_args()
    tables = chess.syzygy.open_tablebase(args.syzygy)
    rng = random.Random(args.seed)
    starts = [random_position(tables, rng) for _ in range(args.positions)]
    wdls = [tables.probe_wdl(board) for board in starts]
    reached: list[chess.Board] = []
    with chess.engine.SimpleEngine.popen_uci(args.command, timeout=60) as engine:
        engine.configure({"SyzygyPath": args.syzygy})
        for seconds in (float(text) for text in args.times.split(",")):
            mated = held = kept = 0
            for board, wdl in zip(starts, wdls):
                positions = play(engine, board, seconds)
                reached += positions[:-1]
                end = positions[-1]
                outcome = game_outcome(end)
                if wdl == 2:
                    mated += bool(outcome and outcome.winner == board.turn)
                elif wdl == -2:
                    kept += bool(outcome and outcome.winner == (not board.turn))
                else:
                    held += outcome is None or outcome.winner is None
            wins, losses = wdls.count(2), wdls.count(-2)
            print(f"{seconds:g} s a move: wins mated {mated}/{wins}, draws (and cursed results) held "
                  f"{held}/{len(starts) - wins - losses}, lost positions lost {kept}/{losses}", flush=True)
    spec = importlib.util.spec_from_file_location("ranking_syzygy", args.ranking)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    ranking = module.Tablebases(args.syzygy)
    costs = []
    for board in reached:
        getattr(ranking, "_cache", {}).clear()  # a cold ranking: the cost of a position met for the first time
        start = time.perf_counter()
        ranking.rank_root_moves(board, list(board.legal_moves))
        costs.append((time.perf_counter() - start) * 1000)
    print(f"root ranking over {len(costs)} positions: median {statistics.median(costs):.1f} ms, "
          f"90th percentile {statistics.quantiles(costs, n=10)[-1]:.1f} ms, largest {max(costs):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
