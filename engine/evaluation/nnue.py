"""The network's evaluation for Python callers: a NetworkEvaluator holds a network's weights as the
kernels of engine/evaluation/accumulators.py take them (the Searcher that owns one searches with
the network instead of the hand-written evaluation, engine/evaluation/classic.py), and a
NetworkBoard is a SearchBoard that evaluates with it. The kernels, their layouts and their
measured costs are accumulators.py's; their names are importable from here as well.
"""

from __future__ import annotations

import chess
import numpy as np

from garfish.engine.board.bits import entry_point
from garfish.engine.board.flags import packed_score
from garfish.engine.board.searchboard import SearchBoard
from garfish.engine.evaluation.accumulators import (  # noqa: F401 (the kernels' names, importable from here too)
    SCORE_LIMIT, STATE_PLIES, narrow_fits, network_kernel, network_update_kernel,
)
from garfish.engine.evaluation.network import CLASSIC_BASE, KING_BUCKET_MAPS, NO_KING_BUCKETS, SCRELU, Network
from garfish.engine.types import bitboards

# The compiled entry: no dispatcher between evaluate_packed and the kernel (engine.board.bits.entry_point;
# timeit, CPython 3.11: ~1.35 us a call against ~1.87 us through the dispatcher, its arrays' types matched).
_network_update = entry_point(network_update_kernel)


class NetworkEvaluator:
    """A network ready for the kernels; give it to Searcher(evaluator=...) to search with it."""

    def __init__(self, network: Network, name: str = "") -> None:
        """name: how to call the network in messages (its file name, say)."""
        self.network = network
        self.name = name or network.description or "network"
        hidden, buckets = network.hidden, network.buckets
        self.weights = np.ascontiguousarray(np.concatenate([
            network.w1.astype(np.int16), network.b1.astype(np.int16).reshape(1, hidden),
            np.zeros((1, hidden), dtype=np.int16), network.w2.astype(np.int16).reshape(2 * buckets, hidden)]))
        self.params = np.array([network.activation, network.qa, network.qb, network.scale, network.base,
                                network.w1.shape[0], int(narrow_fits(self.weights, network.w1.shape[0])),
                                *KING_BUCKET_MAPS[network.layout].tolist(),
                                *network.b2.tolist()], dtype=np.int64)

    def describe(self) -> str:
        """One line about the network: name, sizes and activation."""
        activation = "SCReLU" if self.network.activation == SCRELU else "CReLU"
        base = ", added to the hand-written evaluation" if self.network.base == CLASSIC_BASE else ""
        inputs = "768" if self.network.layout == NO_KING_BUCKETS else f"{self.network.w1.shape[0]} (king buckets)"
        return (f"{self.name} ({inputs}x2 -> {self.network.hidden}x2 {activation} -> 1, "
                f"{self.network.buckets} output bucket{'s' if self.network.buckets > 1 else ''}{base})")

    def evaluate_packed(self, board: chess.Board) -> int:
        """network_kernel's packed result for the board (score << FLAG_BITS | flags)."""
        return int(network_kernel(*bitboards(board), self.weights, self.params))

    def evaluate(self, board: chess.Board) -> int:
        """The network's evaluation of the board in centipawns, from the side to move's view."""
        return packed_score(self.evaluate_packed(board))

    def search_board(self, board: chess.Board) -> "NetworkBoard":
        """The board's position as a NetworkBoard on this network, with fresh accumulators."""
        return NetworkBoard.from_board(board).use_network(self)


class NetworkBoard(SearchBoard):
    """A SearchBoard that evaluates with a network, into accumulators of its own (a pair a ply: the
    search's root fills slot 0, and the compiled search the slots below it)."""

    weights: np.ndarray
    params: np.ndarray
    state: np.ndarray

    def use_network(self, evaluator: NetworkEvaluator) -> "NetworkBoard":
        """Evaluate with this network from now on, with accumulators of the board's own."""
        self.weights, self.params = evaluator.weights, evaluator.params
        # network_update_kernel's state; all zero, no slot holds a position with kings yet.
        self.state = np.zeros((STATE_PLIES, 2 * evaluator.network.hidden + 16), dtype=np.int32)
        return self

    def evaluate_packed(self) -> int:
        """The network's packed result for the position, its ply's accumulators (slot()) updated from the
        ply before's."""
        occupied_co = self.occupied_co
        return _network_update(self.pawns, self.knights, self.bishops, self.rooks, self.queens, self.kings,
                               occupied_co[0], occupied_co[1], self.turn, self.weights, self.params, self.state,
                               self.slot())
