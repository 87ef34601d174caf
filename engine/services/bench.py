"""Bench: a fixed set of positions searched to a fixed depth; the node count is the signature."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional

import chess

from garfish.engine.search.driver import Searcher
from garfish.engine.search.tt import TranspositionTable
from garfish.engine.types import Limits

if TYPE_CHECKING:
    from garfish.engine.evaluation.nnue import NetworkEvaluator
    from garfish.engine.services.syzygy import Tablebases

BENCH_DEPTH = 6
BENCH_HASH_MB = 16

# Opening, middlegame, endgame and tactical positions. Most are the ones
# Stockfish's `bench` uses (src/benchmark.cpp); the last are WAC and CPW perft positions.
BENCH_FENS = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
    "4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19",
    "rq3rk1/ppp2ppp/1bnpb3/3N2B1/3NP3/7P/PPPQ1PP1/2KR3R w - - 7 14",
    "r1bq1r1k/1pp1n1pp/1p1p4/4p2Q/4Pp2/1BNP4/PPP2PPP/3R1RK1 w - - 2 14",
    "r3r1k1/2p2ppp/p1p1bn2/8/1q2P3/2NPQN2/PPP3PP/R4RK1 b - - 2 15",
    "r1bbk1nr/pp3p1p/2n5/1N4p1/2Np1B2/8/PPP2PPP/2KR1B1R w kq - 0 13",
    "r1bq1rk1/ppp1nppp/4n3/3p3Q/3P4/1BP1B3/PP1N2PP/R4RK1 w - - 1 16",
    "4r1k1/r1q2ppp/ppp2n2/4P3/5Rb1/1N1BQ3/PPP3PP/R5K1 w - - 1 17",
    "2rqkb1r/ppp2p2/2npb1p1/1N1Nn2p/2P1PP2/8/PP2B1PP/R1BQK2R b KQ - 0 11",
    "r1bq1r1k/b1p1npp1/p2p3p/1p6/3PP3/1B2NN2/PP3PPP/R2Q1RK1 w - - 1 16",
    "3r1rk1/p5pp/bpp1pp2/8/q1PP1P2/b3P3/P2NQRPP/1R2B1K1 b - - 6 22",
    "r1q2rk1/2p1bppp/2Pp4/p6b/Q1PNp3/4B3/PP1R1PPP/2K4R w - - 2 18",
    "4k2r/1pb2ppp/1p2p3/1R1p4/3P4/2r1PN2/P4PPP/1R4K1 b - - 3 22",
    "3q2k1/pb3p1p/4pbp1/2r5/PpN2N2/1P2P2P/5PP1/Q2R2K1 b - - 4 26",
    "6k1/6p1/6Pp/ppp5/3pn2P/1P3K2/1PP2P2/3N4 b - - 0 1",
    "3b4/5kp1/1p1p1p1p/pP1PpP1P/P1P1P3/3KN3/8/8 w - - 0 1",
    "2K5/p7/7P/5pR1/8/5k2/r7/8 w - - 0 1",
    "8/6pk/1p6/8/PP3p1p/5P2/4KP1q/3Q4 w - - 0 1",
    "7k/3p2pp/4q3/8/4Q3/5Kp1/P6b/8 w - - 0 1",
    "8/2p5/8/2kPKp1p/2p4P/2P5/3P4/8 w - - 0 1",
    "8/1p3pp1/7p/5P1P/2k3P1/8/2K2P2/8 w - - 0 1",
    "8/pp2r1k1/2p1p3/3pP2p/1P1P1P1P/P5KR/8/8 w - - 0 1",
    "5k2/7R/4P2p/5K2/p1r2P1p/8/8/8 b - - 0 1",
    "6k1/6p1/P6p/r1N5/5p2/7P/1b3PP1/4R1K1 w - - 0 1",
    "8/8/8/8/5kp1/P7/8/1K1N4 w - - 0 1",
    "8/3k4/8/8/8/4B3/4KB2/2B5 w - - 0 1",
    "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1",
    "r1b1kb1r/3q1ppp/pBp1pn2/8/Np3P2/5B2/PPP3PP/R2Q1RK1 w kq - 0 1",
    "r4rk1/1b2qppp/p1n1p3/1p6/1b1PN3/3BRN2/PP3PPP/R2Q2K1 b - - 7 16",
]


@dataclass
class BenchResult:
    """Totals of a bench run."""

    nodes: int
    seconds: float
    tbhits: int = 0

    @property
    def nps(self) -> int:
        """Nodes per second."""
        return int(self.nodes / self.seconds) if self.seconds > 0 else 0


def run_bench(depth: int = BENCH_DEPTH,
              on_position: Optional[Callable[[int, str, int, float], None]] = None,
              multipv: int = 1, tablebase: Optional[Tablebases] = None,
              evaluator: Optional[NetworkEvaluator] = None) -> BenchResult:
    """Search every bench position to `depth` (with `multipv` lines, probing `tablebase` if given,
    evaluating with the network `evaluator` if given) with a fresh searcher; return total nodes and time."""
    tt = TranspositionTable(BENCH_HASH_MB)
    searcher = Searcher(tt, evaluator, tablebase)
    total_nodes = 0
    total_time = 0.0
    total_tbhits = 0
    for i, fen in enumerate(BENCH_FENS):
        tt.clear()  # every position from scratch: the same count whatever ran before
        searcher.new_game()
        start = time.perf_counter()
        result = searcher.search(chess.Board(fen), Limits(depth=depth, multipv=multipv))
        elapsed = time.perf_counter() - start
        total_nodes += result.nodes
        total_time += elapsed
        total_tbhits += searcher.tbhits
        if on_position is not None:
            on_position(i + 1, fen, result.nodes, elapsed)
    return BenchResult(total_nodes, total_time, total_tbhits)
