"""What engines score positions at, depth by depth: how a draw the network calls a win was found (issue 77).

    python scripts/score_positions.py --engine CMD [--engine CMD ...] [--depth 6 --depth 10 ...]
        [--time SECONDS] FEN [FEN ...]

Each engine analyses each position from a new game (`ucinewgame`, python-chess's `analyse`), once a depth
(each search to its depth, the table kept between them), and with --time once more for that long;
prints the score from White's side in pawns, the depth reached and the principal variation's first moves.
Issue 77's endgames, for example:

    python scripts/score_positions.py --engine ./garfish --engine /usr/games/stockfish --depth 6 --depth 10 \\
        --depth 14 --time 8 "8/6k1/6P1/4r2P/8/8/R6K/8 w - - 1 62" "8/3b1k2/5p2/p2p1P2/P2P1P2/PB6/4K3/8 w - - 27 65"
"""

from __future__ import annotations

import argparse
import shlex

import chess
import chess.engine

PV_MOVES = 6  # moves of the principal variation printed


def describe(board: chess.Board, info: chess.engine.InfoDict) -> str:
    """Score (White's side, pawns or mate), depth and the PV's first moves in SAN."""
    score = info.get("score")
    text = "?"
    if score is not None:
        white = score.white()
        mate = white.mate()
        text = f"mate {mate}" if mate is not None else f"{(white.score() or 0) / 100:+.2f}"
    pv = board.variation_san(info.get("pv", [])[:PV_MOVES]) if info.get("pv") else ""
    return f"{text} (depth {info.get('depth', '?')}, {info.get('nodes', '?')} nodes) {pv}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", action="append", required=True, help="an engine's command line (repeat)")
    parser.add_argument("--depth", action="append", type=int, default=[], help="a depth to search to (repeat)")
    parser.add_argument("--time", type=float, help="also search this many seconds")
    parser.add_argument("fens", nargs="+", metavar="FEN")
    args = parser.parse_args()
    if not args.depth and args.time is None:
        parser.error("give --depth or --time")
    for command in args.engine:
        with chess.engine.SimpleEngine.popen_uci(shlex.split(command)) as engine:
            name = engine.id.get("name", command)
            for fen in args.fens:
                board = chess.Board(fen)
                limits = [chess.engine.Limit(depth=depth) for depth in args.depth]
                if args.time is not None:
                    limits.append(chess.engine.Limit(time=args.time))
                for limit in limits:
                    info = engine.analyse(board, limit, game=fen)  # ucinewgame when the position changes
                    print(f"{name} | {fen} | {limit}: {describe(board, info)}", flush=True)


if __name__ == "__main__":
    main()
