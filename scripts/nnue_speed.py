"""Cost of an evaluation: the network kernels, from scratch and incremental, against the hand-written one.

    python scripts/nnue_speed.py [--hidden 64 128 256] [--activation screlu] [--buckets 8] [--rounds 15]

Walks every legal move and every reply of the bench positions (about 30,000 positions), each
evaluated right after its move as push_legal (tests/reference_board.py) does it: the hand-written
evaluate_kernel; network_kernel, both accumulators from scratch; network_update_kernel, the
accumulators of the ply before updated, called as NetworkPushBoard.push_legal calls it (the board's
ply and own accumulators as arguments). Each variant's time is
the process CPU time of its walks, the variants alternating position by position (in an order
that rotates), less the same walk without an evaluation; printed in microseconds per evaluation
(the Python call included) and as a ratio to the hand-written kernel, the median over rounds.
The networks are random (scripts/random_network.py): the cost does not depend on the weights.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from typing import Callable, Optional

from pathlib import Path

import chess

from garfish.engine.evaluation.classic import evaluate_kernel
from garfish.engine.evaluation.nnue import NetworkEvaluator, network_kernel, network_update_kernel
from garfish.engine.services.bench import BENCH_FENS
from random_network import ACTIVATIONS, random_network

# The boards that make and unmake in Python (the search's before it was compiled) live with the tests.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from reference_board import NetworkPushBoard, PushBoard, network_board  # noqa: E402

Evaluate = Callable[..., int]


def classic(board: PushBoard) -> int:
    """The hand-written kernel on the board."""
    occupied_co = board.occupied_co
    return evaluate_kernel(board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
                           occupied_co[0], occupied_co[1], board.turn)


def from_scratch(evaluator: NetworkEvaluator) -> Evaluate:
    """network_kernel on the board."""
    weights, params = evaluator.weights, evaluator.params

    def evaluate(board: PushBoard) -> int:
        occupied_co = board.occupied_co
        return network_kernel(board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
                              occupied_co[0], occupied_co[1], board.turn, weights, params)
    return evaluate


def incremental(board: NetworkPushBoard) -> int:
    """network_update_kernel on the board's own accumulators, called as NetworkPushBoard.push_legal calls it."""
    occupied_co = board.occupied_co
    return network_update_kernel(board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
                                 occupied_co[0], occupied_co[1], board.turn, board.weights, board.params,
                                 board.state, len(board._undo or board.move_stack))


def nothing(board: PushBoard) -> int:
    """No evaluation: the walk's own cost."""
    return 0


def walk(board: PushBoard, tree: list[tuple[chess.Move, list[chess.Move]]], evaluate: Evaluate) -> int:
    """Evaluate the root, every move and every reply; the process CPU time in nanoseconds."""
    start = time.process_time_ns()
    evaluate(board)
    for move, replies in tree:
        board.push(move)
        evaluate(board)
        for reply in replies:
            board.push(reply)
            evaluate(board)
            board.pop()
        board.pop()
    return time.process_time_ns() - start


def main(argv: Optional[list[str]] = None) -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(prog="nnue_speed.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--hidden", type=int, nargs="+", default=[64, 128, 256], help="accumulator sizes H")
    parser.add_argument("--activation", choices=sorted(ACTIVATIONS), default="screlu")
    parser.add_argument("--buckets", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--positions", type=int, default=len(BENCH_FENS), help="bench positions walked")
    args = parser.parse_args(argv)

    fens = BENCH_FENS[:args.positions]
    trees = []
    for fen in fens:
        board = chess.Board(fen)
        tree = []
        for move in board.legal_moves:
            board.push(move)
            tree.append((move, list(board.legal_moves)))
            board.pop()
        trees.append(tree)
    evaluations = sum(1 + len(tree) + sum(len(replies) for _, replies in tree) for tree in trees)

    # Each variant: a label, its evaluation and its boards (a NetworkPushBoard per position for the updates).
    variants: list[tuple[str, Evaluate, list[PushBoard]]] = [
        ("none", nothing, [PushBoard(fen) for fen in fens]),
        ("classic", classic, [PushBoard(fen) for fen in fens]),
    ]
    for hidden in args.hidden:
        evaluator = NetworkEvaluator(random_network(ACTIVATIONS[args.activation], hidden, args.buckets, 1))
        variants.append((f"H={hidden} scratch", from_scratch(evaluator), [PushBoard(fen) for fen in fens]))
        variants.append((f"H={hidden} incremental", incremental,
                         [network_board(evaluator, chess.Board(fen)) for fen in fens]))
    for _, evaluate, boards in variants:  # compile or load the kernels, untimed
        walk(boards[0], trees[0], evaluate)

    per_round: dict[str, list[float]] = defaultdict(list)
    for round_ in range(args.rounds):
        spent: dict[str, int] = defaultdict(int)
        for index, tree in enumerate(trees):
            shift = (index + round_) % len(variants)
            for label, evaluate, boards in variants[shift:] + variants[:shift]:
                spent[label] += walk(boards[index], tree, evaluate)
        for label, nanoseconds in spent.items():
            per_round[label].append((nanoseconds - spent["none"]) / evaluations / 1000)
    print(f"{evaluations} evaluations per round, {args.rounds} rounds, {args.activation}, {args.buckets} buckets; "
          f"{time.strftime('%Y-%m-%d %H:%M')}")
    base = statistics.median(per_round["classic"])
    for label, _, _ in variants[1:]:
        cost = statistics.median(per_round[label])
        ratios = [a / b for a, b in zip(per_round[label], per_round["classic"])]
        print(f"{label:18s} {cost:5.2f} us per evaluation, x{statistics.median(ratios):.2f} the hand-written "
              f"kernel (median of paired rounds; {base:.2f} us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
