"""The searcher: iterative deepening, aspiration windows, PVS alpha-beta and quiescence.

All search state (TT, histories, counters, the stop flag) lives in one Searcher,
so two searches can run side by side. The searcher prints nothing: it reports
each finished iteration through a callback and returns a SearchResult.
"""

from __future__ import annotations

import math
import random
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional, Protocol

import chess
import numpy as np

from garfish.engine.bits import entry_point
from garfish.engine.board import SearchBoard
from garfish.engine.captures import CODE_MASK, attacked_pieces_kernel
from garfish.engine.checks import check_masks_kernel, gives_check_kernel, threats_entry
from garfish.engine.flags import ILLEGAL_FLAG, IN_CHECK_FLAG, PROMOTION_FLAG, packed_flags, packed_score
from garfish.engine.frontier import (
    BUDGET, CHECKING_MOVE, CUT, DONE, ENTRY_SCORE, ILLEGAL_MOVE, NEED_KILLERS, NEED_MOVE, NEED_NODE, NEED_TT_TEST,
    NEW_NODE, NO_PENDING, PENDING_ILLEGAL, QUIET_BIT, RFP_CUT, STATUS_BITS, STATUS_MASK, TT_CUT, frontier_kernel,
    frontier_rows, made_frontier_kernel,
)
from garfish.engine.history import History, history_bonus
from garfish.engine.movepick import BACK_RANK, PROMOTION_RANK, castling_codes, pick_moves, usable_killer
from garfish.engine.moves import MOVE_TABLE, decode, encode
from garfish.engine.qsearch import QuiescenceWork, leaf_entry, quiescence_entry
from garfish.engine.skill import Skill
from garfish.engine.timeman import soft_limit, time_budget
from garfish.engine.tt import TranspositionTable, entry_code, unpack
from garfish.engine.types import (
    DRAW, EXACT, INF, LOWER, MATE, MATE_BOUND, MAX_PLY, PIECE_VALUE, TB_WIN, TB_WIN_BOUND, UPPER, Limits, mate_in,
    mated_in, value_from_tt, value_to_tt,
)
from garfish.engine.zobrist import zobrist, zobrist_kernel

# The hot kernels' compiled entries: no dispatcher between the search and them (engine.bits.entry_point).
_zobrist = entry_point(zobrist_kernel)
_check_masks = entry_point(check_masks_kernel)
_gives_check = entry_point(gives_check_kernel)
_frontier_loop = entry_point(frontier_kernel)
_made_loop = entry_point(made_frontier_kernel)
_attacked_pieces = entry_point(attacked_pieces_kernel)

if TYPE_CHECKING:
    from garfish.engine.nnue import NetworkEvaluator
    from garfish.engine.syzygy import Tablebases

POLL_INTERVAL = 256        # nodes between checks of the clock and the stop flag ...
FAST_POLL_INTERVAL = 32    # ... or this many when the time budget is tiny
FAST_POLL_BUDGET = 0.25    # seconds: a hard limit below this is a tiny budget
ASPIRATION_DEPTH = 4       # first depth searched with an aspiration window
ASPIRATION_DELTA = 25      # initial half-width of the window, centipawns
RFP_DEPTH = 6              # reverse futility pruning up to this depth ...
RFP_MARGIN = 110           # ... when eval - margin * depth - (our best piece en prise) still beats beta:
RFP_MINOR_RISK = 300       # a queen or rook en prise counts its PIECE_VALUE, a knight or bishop this round figure
NMP_DEPTH = 3              # null-move pruning from this depth
FUTILITY_DEPTH = 5         # futility pruning of quiet moves up to this depth ...
FUTILITY_MARGIN = 110      # ... when eval + margin * depth cannot reach alpha
LMP_BASE = 3               # late move pruning (not in PV nodes): quiets after LMP_BASE + depth^2 moves
LMR_DEPTH = 3              # late move reductions from this depth ...
LMR_MOVES = 3              # ... after this many moves
QS_CHECKS = True           # quiet checks at the first quiescence ply (delta pruning's margin: engine.qsearch)
NO_BUDGET = 1 << 62        # the quiescence kernel's node budget without a node limit
NO_SCORE = INF + 1         # a move not searched yet
ILLEGAL_LEAF = INF + 2     # _leaf: the move leaves our king attacked
CHECKING_LEAF = INF + 3    # _leaf: the move gives check (the main search extends it)
SINGLE_MOVE_DEPTH = 4      # with one legal move, a timed search stops at this depth
MATE_EXTRA_DEPTH = 4       # plies searched past a found mate before stopping
TB_ROOT_TIME_SHARE = 0.9   # ranking the root moves by DTZ probes no more moves past this share of the hard limit:
                           # the ranking decides a tablebase root's move, the search after it only reports
TB_DEPTH_BONUS = 6         # a tablebase score goes to the TT this much deeper than the node (Stockfish's)
TB_CP = 20000              # a tablebase win shows as TB_CP - plies to it, in centipawns (as Stockfish shows it)
FRONTIER_BONUS = history_bonus(1)  # the history bonus of a cut-off at a frontier node (engine.frontier)
REPEAT_ROW = 128           # the keys a depth-2 node's children may repeat, at most (else they go the Python way)

# LMR table: reduction for (depth, move number), the usual log * log shape.
LMR_TABLE = tuple(tuple(int(0.75 + math.log(d) * math.log(m) / 2.25) if d and m else 0 for m in range(64))
                  for d in range(64))

NULL_MOVE = chess.Move.null()
BB_SQUARES = chess.BB_SQUARES


class StopFlag(Protocol):
    """A search's stop flag: threading.Event, or a helper's flag in shared memory (engine.smp)."""

    def is_set(self) -> bool:
        """Whether the search must stop."""

    def set(self) -> None:
        """Ask the search to stop."""


class SearchAborted(Exception):
    """Raised inside the tree when the search must stop (time, nodes, or stop)."""


@dataclass
class SearchInfo:
    """What one finished (or bounded) iteration found."""

    depth: int
    seldepth: int
    score: int
    bound: str  # "exact", "lower" (fail high) or "upper" (fail low)
    nodes: int
    time: float
    hashfull: int
    pv: list[chess.Move]
    multipv: int = 1  # the line's rank among the best root moves (1: the best; the MultiPV option)
    tbhits: int = 0  # positions found in the tablebases

    @property
    def cp(self) -> int:
        """The score in centipawns for display: a tablebase win (loss) as TB_CP minus (plus) the
        plies to the position found in the tables, else the score itself."""
        if TB_WIN_BOUND <= abs(self.score) < MATE_BOUND:
            return TB_CP - (TB_WIN - self.score) if self.score > 0 else -TB_CP + (TB_WIN + self.score)
        return self.score

    @property
    def nps(self) -> int:
        """Nodes per second so far."""
        return int(self.nodes / self.time) if self.time > 0 else 0

    @property
    def mate(self) -> Optional[int]:
        """Moves to mate (negative when being mated), or None for a centipawn score."""
        if abs(self.score) < MATE_BOUND:
            return None
        if self.score > 0:
            return (MATE - self.score + 1) // 2
        return -((MATE + self.score) // 2)


@dataclass
class PVLine:
    """One root move's line: its exact score at the depth searched, and its principal variation."""

    depth: int
    score: int
    pv: list[chess.Move]
    bound: str = "exact"  # "upper": a line not finished at `depth`, known to score at most `score` there


@dataclass
class SearchResult:
    """The outcome of a search."""

    move: Optional[chess.Move]
    ponder: Optional[chess.Move]
    score: int
    depth: int
    seldepth: int
    nodes: int
    time: float
    pv: list[chess.Move] = field(default_factory=list)
    lines: list[PVLine] = field(default_factory=list)
    """The best root moves' lines, best first (Limits.multipv of them): those of the last
    completed depth, and of the depth stopped part-way for the lines it finished."""


def game_keys(board: chess.Board) -> list[int]:
    """Zobrist keys of the positions before the current one in the board's move stack."""
    keys = []
    replay = board.root()
    for move in board.move_stack:
        keys.append(zobrist(replay))
        replay.push(move)
    return keys


class Searcher:
    """A search worker: searches a tree with the table, evaluator and tablebases it is handed, and
    owns one search's state (histories, counters, the stop flag of its search). It builds and
    manages none of what it is handed: engine.engine.Engine does (and helper processes, engine.smp,
    run searchers of their own on the same table)."""

    def __init__(self, tt: TranspositionTable, evaluator: Optional[NetworkEvaluator] = None,
                 tablebase: Optional[Tablebases] = None, seed: Optional[int] = None,
                 skip: Optional[Callable[[int], bool]] = None,
                 publish_nodes: Optional[Callable[[int], None]] = None) -> None:
        """tt: the table to search with; evaluator: the network to evaluate with (engine.nnue), None
        for the hand-written evaluation (engine.evaluate); tablebase: Syzygy tables to probe (None:
        none); seed: the random choices of a strength-limited search (engine.skill), the same for the
        same seed (None: seeded by the system); skip(depth): whether iterative deepening skips a depth
        (a helper's schedule, engine.smp; None: none is skipped); publish_nodes(nodes): called with
        the node count at every poll (a helper's report to the main search)."""
        self.tt = tt
        self.evaluator = evaluator
        self.tablebase = tablebase
        self.rng = random.Random(seed)
        self.skip = skip
        self.publish_nodes = publish_nodes
        self.history = History()
        self._work = QuiescenceWork()  # the quiescence kernels' work arrays (engine.qsearch) ...
        self._work_arrays = (self._work.state, self._work.frames, self._work.lists)  # ... as they take them
        self._frontier_rows = frontier_rows()  # the frontier kernels' work rows, a ply each (engine.frontier)
        # The frontier nodes searched by kernels (steps 2b and 10c; False: by _negamax's Python, the
        # same tree: tests/test_frontier.py compares the two).
        self.compiled_frontier = True
        # The keys a depth-2 node's children may repeat, a row a ply (_repeat_keys).
        self._repeat_rows = np.zeros((MAX_PLY + 2, REPEAT_ROW), dtype=np.uint64)
        # What the quiescence kernels evaluate with: whether a network, its weights, parameters and the
        # search board's accumulators (stand-ins of the right types for the hand-written evaluation).
        self._evaluation: tuple = (False, self._work.no_weights, self._work.no_params, self._work.no_accumulators)
        self._own_stop = threading.Event()  # the stop flag of searches whose caller passes none
        self.stop_event: StopFlag = self._own_stop  # the running search's stop flag
        self.nodes = 0
        self.seldepth = 0
        self.keys: list[int] = []
        self.barrier = 0
        self.pv_table: list[list[chess.Move]] = [[] for _ in range(MAX_PLY + 2)]
        self.pondering = False
        self._start = 0.0
        self._optimum: Optional[float] = None
        self._maximum: Optional[float] = None
        self._stop_on_ponderhit = False  # a pondering search that has used its soft limit
        self._last_score: Optional[int] = None  # the last clock search's score (the time manager's falling eval)
        self._next_poll = POLL_INTERVAL
        self._poll_interval = POLL_INTERVAL
        self._node_limit = 0
        self._completed_depth = 0
        self._lines_first = False  # the clock waits for depth 1's lines (MultiPV)
        self._root_best: Optional[chess.Move] = None
        self._root_moves: Optional[set[chess.Move]] = None
        self.tbhits = 0
        self._tb_pieces = 0  # this search probes positions of at most this many pieces in the tree (0: none)
        self._tb_depth = 0  # ... with exactly that many only from this depth
        self._tb_root_score: Optional[int] = None  # the tables' score of the root, when they ranked its moves

    # ----------------------------------------------------------------- control
    def new_game(self) -> None:
        """Forget what this worker learned: its histories (the table is its owner's to clear)."""
        self.history.clear()
        self._last_score = None

    def stop(self) -> None:
        """Ask the running search to stop as soon as possible (thread-safe): sets its stop flag."""
        self.stop_event.set()

    def ponderhit(self) -> None:
        """The opponent played the pondered move: the search now runs on the clock.

        As in Stockfish, the time spent pondering counts: the budget runs from `go ponder`, whose
        clock was already the engine's own. A search that pondered past its hard limit stops at
        the next poll, and one that ended an iteration past its soft limit while pondering (it
        would have stopped there) stops at once; either plays its best move so far. A move after
        a ponderhit so never takes longer than one without pondering, and usually far less.
        """
        self.pondering = False
        if self._stop_on_ponderhit:
            self._maximum = 0.0  # its time is up: the next poll aborts

    # ------------------------------------------------------- iterative deepening
    def search(
        self,
        board: chess.Board,
        limits: Optional[Limits] = None,
        on_info: Optional[Callable[[SearchInfo], None]] = None,
        stop: Optional[StopFlag] = None,
    ) -> SearchResult:
        """Search the position within the limits and return the best move found.

        stop: the caller's stop flag (a threading.Event, or anything with is_set()); setting it
        (from any thread) ends the search. The search never clears it, so a stop set before the
        search has started is not lost. Without it the search uses the searcher's own flag,
        cleared here; stop() sets either.
        """
        limits = limits or Limits()
        self._start = time.perf_counter()
        if stop is None:
            stop = self._own_stop
            stop.clear()
        self.stop_event = stop
        self.pondering = limits.ponder
        self._stop_on_ponderhit = False
        self.nodes = 0
        self.seldepth = 0
        self._completed_depth = 0
        self._node_limit = limits.nodes if limits.nodes is not None else 0
        self._next_poll = min(POLL_INTERVAL, self._node_limit) if self._node_limit else POLL_INTERVAL
        self.tt.new_search()
        self.history.clear_killers()
        self.keys = game_keys(board)
        self.barrier = 0
        # The root's board evaluates every position the search makes (push_legal, evaluate_packed).
        root: SearchBoard
        work = self._work
        if self.evaluator is None:
            root = SearchBoard.from_board(board)
            self._evaluation = (False, work.no_weights, work.no_params, work.no_accumulators)
        else:
            root = network = self.evaluator.search_board(board)
            self._evaluation = (True, network.weights, network.params, network.state)

        legal = list(root.legal_moves)
        if limits.searchmoves:
            wanted = [m for m in legal if m in limits.searchmoves]
            legal = wanted or legal
        legal = self._tablebase_root(board, legal, limits)
        self._root_moves = set(legal) if len(legal) != root.legal_moves.count() else None
        if not legal:
            score = mated_in(0) if root.is_check() else DRAW
            return SearchResult(None, None, score, 0, 0, 0, 0.0, [])

        self._optimum, self._maximum = time_budget(limits, root.turn)
        self._poll_interval = POLL_INTERVAL
        if self._maximum is not None and self._maximum < FAST_POLL_BUDGET:
            self._poll_interval = FAST_POLL_INTERVAL
            self._next_poll = min(self._next_poll, FAST_POLL_INTERVAL)  # from the first node on
        max_depth = min(limits.depth, MAX_PLY - 1) if limits.depth else MAX_PLY - 1
        timed = self._maximum is not None
        # With a fixed movetime the whole budget is ours: only a clock asks to save time.
        clock = timed and limits.movetime is None
        best_changes = 0.0  # recent changes of the best move between iterations (halved every iteration)
        # Until depth 1 completes, the fallback is the move the picker would try first.
        root_key = zobrist(root)
        tt_code = entry_code(self.tt.probe(root_key))
        tt_move = decode(tt_code) if tt_code else None
        best_move = next((m for m in pick_moves(root, tt_move, (None, None), self.history.table)
                          if m in legal), legal[0])
        best_score = 0
        pv: list[chess.Move] = [best_move]
        depth_done = 0
        skill = Skill(limits.elo) if limits.elo is not None else None
        skill_nodes = skill.nodes if skill is not None else None  # the skill's node budget (None: none)
        # MultiPV: line i is the best of the root moves not in lines 1..i-1 (capped by the root moves).
        multipv = min(max(limits.multipv, skill.lines if skill is not None else 1), len(legal))
        # Several lines: the clock stops the search only once depth 1 has scored every one of them
        # (a few hundred nodes), so that a GUI asking for N lines always gets N.
        self._lines_first = multipv > 1
        root_moves = self._root_moves  # searchmoves, or None for every legal move
        root_entry = 0  # the root's TT entry after line 1's search
        lines: list[PVLine] = []  # the last completed depth's lines, best first

        for depth in range(1, max_depth + 1):
            if self.skip is not None and self.skip(depth):
                continue
            self._root_best = None
            done: list[PVLine] = []  # this depth's lines so far, best first
            try:
                for index in range(multipv):
                    if index:
                        searched = {line.pv[0] for line in done}
                        self._root_moves = {move for move in legal if move not in searched}
                    # Each line's aspiration window is centred on the last depth's score of its rank.
                    prev = lines[index].score if index < len(lines) else 0
                    value = self._aspiration(root, depth, prev, on_info, index + 1)
                    if index == 0:
                        root_entry = self.tt.probe(root_key)
                    done.append(PVLine(depth, value, list(self.pv_table[0]) or [self._root_best or best_move]))
                    done.sort(key=lambda line: -line.score)  # stable: an equal score keeps its rank
            except SearchAborted:
                if done:
                    # Line 1 of this depth is complete: report it and the others done at this depth,
                    # then the last depth's lines for the ranks not reached (Stockfish's rule).
                    best_move, best_score, pv = done[0].pv[0], done[0].score, done[0].pv
                else:
                    # Keep the last completed iteration's move, unless this iteration
                    # already finished a different root move with a better score.
                    if self._root_best is not None and self._root_best != best_move:
                        best_move = self._root_best
                        pv = [best_move]
                    if not depth_done:
                        # Stopped inside depth 1 (a tiny node limit or clock): the static evaluation
                        # stands in for a score, so that a client still gets one with the move.
                        best_score = packed_score(root.evaluate_packed())
                    done = [PVLine(depth_done, best_score, pv)]
                lines = self._complete_lines(done, lines, multipv)
                if on_info is not None and lines:
                    for rank, line in enumerate(lines, 1):  # final totals
                        on_info(self._info(line.depth, line.score, line.bound, line.pv, rank))
                break
            finally:
                self._root_moves = root_moves
            if multipv > 1 and root_entry:
                # The root's TT entry now holds the last line's move: give line 1's back to the next depth.
                self.tt.store(root_key, *unpack(root_entry))
            lines = done
            best_changes = best_changes / 2 + (depth_done > 0 and done[0].pv[0] != best_move)
            depth_done = depth
            self._completed_depth = depth
            pv = lines[0].pv
            best_move = pv[0]
            best_score = lines[0].score
            if on_info is not None:
                for rank, line in enumerate(lines, 1):
                    on_info(self._info(depth, line.score, "exact", line.pv, rank))
            # Stop conditions between iterations.
            if limits.mate and best_score >= mate_in(2 * limits.mate - 1):
                break
            # A proven mate (either way) will not change with more depth.
            if abs(best_score) >= MATE_BOUND and depth >= 2 * (MATE - abs(best_score)) + MATE_EXTRA_DEPTH:
                break
            if self.stop_event.is_set():
                break
            if timed:
                elapsed = time.perf_counter() - self._start
                soft = self._optimum
                if clock and soft is not None:
                    drop = 0 if self._last_score is None else self._last_score - best_score
                    soft = soft_limit(soft, best_changes, drop)
                enough = ((soft is not None and elapsed > soft)
                          or (len(legal) == 1 and depth >= SINGLE_MOVE_DEPTH))
                if self.pondering:
                    # Pondering goes on; a ponderhit will stop it at once (Stockfish's stopOnPonderhit).
                    self._stop_on_ponderhit = enough
                elif enough:
                    break
            if skill_nodes is not None and depth == 1:
                # The skill's node budget binds from depth 2 on: depth 1 always completes (no mate in
                # one is missed for want of nodes).
                self._node_limit = min(self._node_limit or skill_nodes, skill_nodes)
                self._next_poll = min(self._next_poll, self._node_limit)
            if self._node_limit and self.nodes >= self._node_limit:
                break

        if clock and depth_done:
            self._last_score = best_score
        if skill is not None and lines:
            chosen = lines[skill.choose([line.score for line in lines], self.rng)]
            best_move, best_score, pv = chosen.pv[0], chosen.score, chosen.pv
        elapsed = time.perf_counter() - self._start
        ponder = pv[1] if len(pv) > 1 and pv[0] == best_move else None
        return SearchResult(best_move, ponder, best_score, depth_done, self.seldepth, self.nodes, elapsed,
                            pv if pv[0] == best_move else [best_move], lines)

    @staticmethod
    def _complete_lines(done: list[PVLine], last: list[PVLine], multipv: int) -> list[PVLine]:
        """The lines a stopped search reports, a complete set sorted best first: those finished at the
        stopped depth, then the last depth's lines for the ranks not reached (Stockfish's rule). Such
        a line scoring above the last finished line is shown at the stopped depth with that line's
        score as an upper bound: the finished line was the best of every move left, this one included."""
        reported = {line.pv[0] for line in done}
        lines = list(done)
        for line in last:
            if line.pv[0] in reported:
                continue
            if done and done[-1].depth > line.depth and line.score > done[-1].score:
                line = PVLine(done[-1].depth, done[-1].score, line.pv, "upper")
            lines.append(line)
        return lines[:multipv]

    def _aspiration(self, root: SearchBoard, depth: int, prev: int,
                    on_info: Optional[Callable[[SearchInfo], None]], multipv: int = 1) -> int:
        """Search the root (the moves of line `multipv`) with a window around the previous score,
        widening on failure."""
        packed = root.evaluate_packed()
        if depth < ASPIRATION_DEPTH or abs(prev) >= MATE_BOUND:
            return self._negamax(root, depth, -INF, INF, 0, True, False, packed)
        delta = ASPIRATION_DELTA
        alpha, beta = max(prev - delta, -INF), min(prev + delta, INF)
        while True:
            score = self._negamax(root, depth, alpha, beta, 0, True, False, packed)
            if score <= alpha:
                beta = (alpha + beta) // 2
                alpha = max(score - delta, -INF)
                bound = "upper"
            elif score >= beta:
                beta = min(score + delta, INF)
                bound = "lower"
            else:
                return score
            if on_info is not None and time.perf_counter() - self._start > 1.0:
                on_info(self._info(depth, score, bound, list(self.pv_table[0]), multipv))
            delta += delta // 2 + 5
            if delta > 1000:
                alpha, beta = -INF, INF

    def _info(self, depth: int, score: int, bound: str, pv: list[chess.Move], multipv: int = 1) -> SearchInfo:
        """A progress report for the callback."""
        if self._tb_root_score is not None and abs(score) < TB_WIN_BOUND:
            score = self._tb_root_score  # the root is in the tables: their verdict, unless the search found mate
        return SearchInfo(depth, self.seldepth, score, bound, self.nodes, time.perf_counter() - self._start,
                          self.tt.hashfull(), pv, multipv, self.tbhits)

    def _tablebase_root(self, board: chess.Board, moves: list[chess.Move], limits: Limits) -> list[chess.Move]:
        """Set up this search's tablebase probing and return the root moves to search: with the
        root in the tables, the best-ranked moves only (engine.syzygy.Tablebases.rank_root_moves,
        the TT's move probed first; past TB_ROOT_TIME_SHARE of the hard time limit it probes no more).
        As in Stockfish, the tree is then probed only when no DTZ ranked the root and it is won."""
        self.tbhits = 0
        self._tb_pieces = 0
        self._tb_root_score = None
        tablebase = self.tablebase
        if tablebase is None or not tablebase.cardinality:
            return moves
        self._tb_pieces = tablebase.cardinality
        self._tb_depth = tablebase.depth
        if board.occupied.bit_count() > self._tb_pieces or board.clean_castling_rights():
            return moves
        maximum = None if limits.ponder else time_budget(limits, board.turn)[1]
        deadline = None if maximum is None else self._start + maximum * TB_ROOT_TIME_SHARE
        code = entry_code(self.tt.probe(zobrist(board)))
        first = decode(code) if code else None
        ranking = tablebase.rank_root_moves(board, moves, deadline, first)
        if ranking is None:
            self._tb_pieces = tablebase.cardinality  # 0 if a table failed
            return moves
        self.tbhits = ranking.probes
        self._tb_root_score = ranking.score
        if ranking.by_dtz or ranking.score <= DRAW:
            self._tb_pieces = 0
        return ranking.moves

    def _poll(self) -> None:
        """Every POLL_INTERVAL nodes: publish the node count (publish_nodes), then abort on stop, node
        limit or hard time limit."""
        nodes = self.nodes
        if self.publish_nodes is not None:
            self.publish_nodes(nodes)
        self._next_poll = nodes + self._poll_interval
        if self._node_limit:
            if nodes >= self._node_limit:
                raise SearchAborted
            self._next_poll = min(self._next_poll, self._node_limit)
        if self.stop_event.is_set():
            raise SearchAborted
        if (self._maximum is not None and not self.pondering and (self._completed_depth or not self._lines_first)
                and time.perf_counter() - self._start >= self._maximum):
            raise SearchAborted

    # ------------------------------------------------------------------ search
    def _negamax(self, board: SearchBoard, depth: int, alpha: int, beta: int, ply: int,
                 pv_node: bool, null_ok: bool, packed: int) -> int:
        """Fail-soft principal variation search; returns the score from the side to move's view.

        packed: this position's evaluation kernel result (score, capture hints, check and legality
        flags), which the caller computed right after its move (board.push_legal) to test its legality.
        """
        # The branches that run at some nodes only (steps 3, 3b, 5, 6 and 9's check test) are methods;
        # moving them out cost nothing measurable (whole bench CPU, 15 alternating pairs: median
        # ratio 0.98 and 1.01). The rest stays inline: it runs at every node, or for every move,
        # where each extra Python call costs ~35 ns (a 6-argument method returning a tuple,
        # CPython 3.11, timeit) and would have to pass in and hand back the loop's shared state
        # (alpha, best_score, searched, quiets_tried, check_masks).
        # Step 1. At the horizon, resolve captures with the quiescence search.
        if depth <= 0:
            return self._qsearch(board, alpha, beta, ply, packed, QS_CHECKS)
        self.nodes += 1
        if self.nodes >= self._next_poll:
            self._poll()
        if pv_node:
            self.pv_table[ply] = []
            if ply > self.seldepth:
                self.seldepth = ply
            tb_floor, tb_cap = -INF, INF  # the tablebases' bounds on this node's score (step 3b)
        root = ply == 0
        in_check = packed & IN_CHECK_FLAG != 0
        occupied_co = board.occupied_co
        ep = board.ep_square
        key = int(_zobrist(board.pawns, board.knights, board.bishops, board.rooks, board.queens,
                           board.kings, occupied_co[0], occupied_co[1], board.turn,
                           board.castling_rights, -1 if ep is None else ep))
        keys = self.keys

        # Step 2. Draws (repetition, fifty moves, bare material) and mate-distance pruning.
        if not root:
            halfmove = board.halfmove_clock
            if halfmove >= 4:
                n = len(keys)
                lowest = max(n - halfmove, self.barrier)
                i = n - 4
                while i >= lowest:
                    if keys[i] == key:
                        return DRAW
                    i -= 2
                if halfmove >= 100 and (not in_check or any(board.generate_legal_moves())):
                    return DRAW
            if board.occupied.bit_count() <= 4 and board.is_insufficient_material():
                return DRAW
            if ply >= MAX_PLY - 1:
                return packed_score(packed)
            if alpha < ply - MATE:  # mated_in(ply): no line here can be worse
                alpha = ply - MATE
            if beta > MATE - ply - 1:  # mate_in(ply + 1): nor better
                beta = MATE - ply - 1
            if alpha >= beta:
                return alpha

        # Step 2b. A frontier node (depth 1, not a PV node) is searched by a kernel from here on
        # (engine.frontier: the same steps, moves and tree), unless the tablebases may score it.
        if (depth == 1 and not pv_node and not root and self.compiled_frontier and NMP_DEPTH > 1
                and not (self._tb_pieces and board.halfmove_clock == 0
                         and board.occupied.bit_count() <= self._tb_pieces)):
            return self._frontier(board, key, ply, alpha, beta, packed)

        # Step 3. Transposition table: a cut-off outside PV nodes, else a move to try first.
        tt_move, tt_score = self._probe_tt(key, depth, alpha, beta, ply, pv_node)
        if tt_score is not None:
            return tt_score

        # Step 3b. Tablebases (Stockfish's step 5): right after a capture or pawn move, with few enough
        # pieces, the WDL tables score the node; the score is returned when its bound cuts off, and
        # bounds the search of a PV node otherwise.
        if (self._tb_pieces and board.halfmove_clock == 0 and not root
                and board.occupied.bit_count() <= self._tb_pieces):
            probed = self._probe_tablebase(board, depth, ply)
            if probed is not None:
                value, bound = probed
                if bound == EXACT or (value >= beta if bound == LOWER else value <= alpha):
                    self.tt.store(key, 0, value_to_tt(value, ply), min(MAX_PLY - 1, depth + TB_DEPTH_BONUS), bound)
                    return value
                if pv_node:
                    if bound == LOWER:
                        tb_floor = value
                        alpha = max(alpha, value)
                    else:
                        tb_cap = value

        # Step 4. Static evaluation, for the pruning decisions below.
        static_eval = -INF if in_check else packed_score(packed)

        if not pv_node and not in_check:
            # Step 5. Reverse futility pruning: far above beta at low depth, even after losing
            # our best piece en prise, assume a cut.
            if depth <= RFP_DEPTH and beta > -MATE_BOUND:
                surplus = static_eval - RFP_MARGIN * depth - beta
                if surplus >= 0 and surplus >= self._value_at_risk(board):
                    return static_eval
            # Step 6. Null move pruning: give a free move; if still >= beta, cut. Not with pawns
            # and at most one minor piece, where zugzwang is common (a lone bishop whose every move
            # lets a mate in: the passing move would hide it).
            if null_ok and depth >= NMP_DEPTH and static_eval >= beta:
                pieces = occupied_co[board.turn] & ~(board.pawns | board.kings)
                if pieces & (pieces - 1) or pieces & (board.rooks | board.queens):
                    score = self._null_move_search(board, depth, beta, ply, key, static_eval)
                    if score >= beta:
                        return beta if score >= MATE_BOUND else score

        # Step 7. Internal iterative reduction: without a TT move, search a ply less.
        if tt_move is None and depth >= 4:
            depth -= 1

        # Step 8. The move loop. The capture hints first (after the cut-offs above, which need none):
        # only enemy pieces of the kinds the evaluation says are attacked can be captured (and the
        # en passant square).
        capture_targets = chess.BB_ALL
        flags = packed_flags(packed)
        if not in_check and not flags & PROMOTION_FLAG:
            capture_targets = _attacked_pieces(flags, -INF, board.pawns, board.knights, board.bishops, board.rooks,
                                               board.queens) & occupied_co[not board.turn]
            if ep is not None:
                capture_targets |= chess.BB_SQUARES[ep]
        us = board.turn
        history = self.history
        killers = history.killers[ply]
        alpha_orig = alpha
        best_score = -INF
        best_move: Optional[chess.Move] = None
        searched = 0  # legal moves searched (pruned and illegal ones are not counted)
        quiets_tried: list[chess.Move] = []
        root_moves = self._root_moves if root else None
        prune_ok = not root and not in_check
        lmp_limit = LMP_BASE + depth * depth
        futile = prune_ok and depth <= FUTILITY_DEPTH and static_eval + FUTILITY_MARGIN * depth <= alpha
        check_masks = None
        if futile:
            # Every quiet move but a check will be pruned: generate only possible checks.
            check_masks = _check_masks(board.pawns, board.knights, board.bishops, board.rooks, board.queens,
                                       board.kings, occupied_co[0], occupied_co[1], us)
        keys.append(key)
        try:
            moves = pick_moves(board, tt_move, killers, history.table, capture_targets, check_masks, in_check)
            them_bb = occupied_co[not us]
            frontier = depth == 1  # a child is a quiescence node, unless its move extends
            # A child outside the PV is a frontier node, unless its move extends (step 10c), where the
            # steps that kernel leaves out cannot be met (no null move nor reduction at depth 1 or 2).
            made = (depth == 2 and self.compiled_frontier and not board.chess960 and NMP_DEPTH > 1
                    and LMR_DEPTH > 2)
            repeats = self._repeat_rows[ply]
            repeat_count = -1  # the keys the children may repeat: made at the first need
            parent: Optional[tuple] = None  # the node for leaf_kernel (step 10a), made at its first use
            slot = 0
            for move in moves:
                if root_moves is not None and move not in root_moves:
                    continue
                # Quiet: not a promotion, nothing on the target, and not a pawn onto the en passant square.
                to_square = move.to_square
                is_quiet = not move.promotion and not BB_SQUARES[to_square] & them_bb and not (
                    to_square == ep and board.pawns & BB_SQUARES[move.from_square])
                # Step 9. Shallow-depth pruning of quiet moves (not checks) once a move has been searched.
                checking = False  # known to give check (by step 9's test): no leaf search to find it out
                if (prune_ok and is_quiet and best_score > -MATE_BOUND
                        and (futile or (depth <= 3 and not pv_node and searched >= lmp_limit))):
                    if check_masks is None:  # late move pruning has begun: most quiets will go
                        check_masks = _check_masks(board.pawns, board.knights, board.bishops, board.rooks,
                                                   board.queens, board.kings, occupied_co[0], occupied_co[1], us)
                    if not self._quiet_gives_check(board, move, check_masks):
                        continue
                    checking = True
                to_bb = BB_SQUARES[to_square]
                score = NO_SCORE
                if frontier and not checking and not ((board.pawns | board.kings) & BB_SQUARES[move.from_square] and (
                        to_bb & PROMOTION_RANK[us] or to_bb & occupied_co[us] or abs(to_square - move.from_square) == 2)):
                    # Step 10a. At the frontier a child is a quiescence node (unless the move checks or
                    # a pawn steps onto its seventh rank: they extend): one kernel call makes, tests and
                    # searches it, the board left as it is. Not castling, which the kernel cannot make
                    # (a king's move by two squares, or onto its own rook in Chess960).
                    code = encode(move)
                    if parent is None:  # the node as the kernels take it, once for all its moves
                        parent = (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
                                  occupied_co[0], occupied_co[1], us, -1 if ep is None else ep)
                        slot = board.slot()
                    value = self._leaf(parent, slot, code, -beta if searched == 0 else -alpha - 1, -alpha, ply + 1)
                    if value == ILLEGAL_LEAF:
                        continue
                    if value != CHECKING_LEAF:
                        if pv_node:
                            self.pv_table[ply + 1] = []
                        score = -value
                        if searched and pv_node and alpha < score < beta:
                            score = -self._leaf(parent, slot, code, -beta, -alpha, ply + 1)
                elif made and not checking and (searched or not pv_node) and not (
                        (board.pawns | board.kings) & BB_SQUARES[move.from_square] and (
                            to_bb & PROMOTION_RANK[us] or to_bb & occupied_co[us]
                            or abs(to_square - move.from_square) == 2)):
                    # Step 10c. At depth 2 a child outside the PV is a frontier node (unless the move
                    # checks or a pawn steps onto its seventh rank): one kernel call makes and searches
                    # it, the board left as it is (_made_frontier). Not castling, as in step 10a.
                    if repeat_count < 0:
                        repeats, repeat_count = self._repeat_keys(board, ply)
                        made = repeat_count >= 0
                    if made:
                        if pv_node:
                            self.pv_table[ply + 1] = []
                        value = self._made_frontier(board, move, -beta if searched == 0 else -alpha - 1, -alpha,
                                                    ply + 1, repeats, repeat_count)
                        if value == ILLEGAL_LEAF:
                            continue
                        if value != CHECKING_LEAF:
                            score = -value
                            if pv_node and alpha < score < beta:  # a PV node's re-search: the Python way
                                made_child = board.push_legal(move)
                                assert made_child is not None  # the kernel made the move: it is legal
                                score = -self._negamax(board, depth - 1, -beta, -alpha, ply + 1, True, True,
                                                       made_child)
                                board.pop()
                if score == NO_SCORE:
                    child = board.push_legal(move)
                    if child is None:  # pseudo-legal, and it leaves our king attacked
                        continue
                    gives_check = child & IN_CHECK_FLAG != 0
                    if pv_node:
                        self.pv_table[ply + 1] = []
                    # Extensions: a check, and a pawn stepping onto its seventh rank (it stands on to_square now).
                    extend = gives_check or (to_bb & PROMOTION_RANK[us] and board.pawns & to_bb)
                    new_depth = depth - 1 + (1 if extend else 0)
                    if searched == 0:
                        score = -self._negamax(board, new_depth, -beta, -alpha, ply + 1, pv_node, True, child)
                    else:
                        # Step 10. Late move reductions, then a null-window search, re-searched on success.
                        reduction = 0
                        if (depth >= LMR_DEPTH and searched >= LMR_MOVES and is_quiet and not in_check
                                and not gives_check):
                            reduction = LMR_TABLE[min(depth, 63)][min(searched, 63)]
                            if pv_node:
                                reduction -= 1
                            if move == killers[0] or move == killers[1]:
                                reduction -= 1
                            reduction = max(0, min(reduction, new_depth - 1))
                        score = -self._negamax(board, new_depth - reduction, -alpha - 1, -alpha, ply + 1, False,
                                               True, child)
                        if score > alpha and reduction:
                            score = -self._negamax(board, new_depth, -alpha - 1, -alpha, ply + 1, False, True,
                                                   child)
                        if pv_node and alpha < score < beta:
                            score = -self._negamax(board, new_depth, -beta, -alpha, ply + 1, True, True, child)
                    board.pop()
                searched += 1

                if score > best_score:
                    best_score = score
                    if score > alpha:
                        best_move = move
                        if pv_node:
                            self.pv_table[ply] = [move] + self.pv_table[ply + 1]
                        if root:
                            self._root_best = move
                        if score >= beta:
                            if is_quiet:
                                history.update(us, move, quiets_tried, depth, ply)
                            break
                        alpha = score
                if is_quiet:
                    quiets_tried.append(move)
        finally:
            keys.pop()

        # Step 11. No legal move: mate or stalemate. (A futile node saw only some quiet
        # moves: if it saw none at all, ask whether any legal move exists.)
        if searched == 0:
            if futile and any(board.generate_legal_moves()):
                return static_eval
            return mated_in(ply) if in_check else DRAW
        if pv_node:
            best_score = min(max(best_score, tb_floor), tb_cap)

        # Step 12. Remember the result.
        if best_score >= beta:
            bound = LOWER
        elif best_move is not None and best_score > alpha_orig:
            bound = EXACT
        else:
            bound = UPPER
        self.tt.store(key, encode(best_move) if best_move is not None else 0, value_to_tt(best_score, ply), depth,
                      bound)
        return best_score

    def _probe_tt(self, key: int, depth: int, alpha: int, beta: int, ply: int,
                  pv_node: bool) -> tuple[Optional[chess.Move], Optional[int]]:
        """Step 3 of _negamax: the TT move for this node (None without one), and the TT score
        when the entry is deep enough and its bound cuts off outside a PV node (else None)."""
        entry = self.tt.probe(key)
        if not entry:
            return None, None
        code, tt_score, tt_depth, tt_bound = unpack(entry)
        tt_move = decode(code) if code else None
        if not pv_node and tt_depth >= depth:
            tt_score = value_from_tt(tt_score, ply)
            if (tt_bound == EXACT or (tt_bound == LOWER and tt_score >= beta)
                    or (tt_bound == UPPER and tt_score <= alpha)):
                return tt_move, tt_score
        return tt_move, None

    def _probe_tablebase(self, board: SearchBoard, depth: int, ply: int) -> Optional[tuple[int, int]]:
        """Step 3b of _negamax: the WDL tables' score of the node and its bound (a win TB_WIN - ply,
        a lower bound; a loss, an upper bound; a draw 0, exact, or +-2 for a win or loss the
        fifty-move rule turns into a draw); None when the node is not probed (castling rights;
        at the probe limit, below SyzygyProbeDepth) or not in the tables."""
        tablebase = self.tablebase
        assert tablebase is not None  # _tb_pieces is 0 without tables
        if board.castling_rights or (board.occupied.bit_count() == self._tb_pieces and depth < self._tb_depth):
            return None
        wdl = tablebase.probe_wdl(board)
        if wdl is None:
            return None
        self.tbhits += 1
        draw = 1 if tablebase.rule50 else 0  # with the rule, 1 and -1 are draws
        if wdl > draw:
            return TB_WIN - ply, LOWER
        if wdl < -draw:
            return ply - TB_WIN, UPPER
        return DRAW + 2 * wdl * draw, EXACT

    @staticmethod
    def _value_at_risk(board: chess.Board) -> int:
        """Step 5 of _negamax: what the side to move stands to lose at once, its most valuable
        piece en prise (threats_kernel): a queen or rook by PIECE_VALUE, a minor RFP_MINOR_RISK; 0 if none."""
        black, white = board.occupied_co
        threatened = threats_entry(board.pawns, board.knights, board.bishops, board.rooks, board.queens,
                                   board.kings, black, white, board.turn)
        if not threatened:
            return 0
        if threatened & board.queens:
            return PIECE_VALUE[chess.QUEEN]
        return PIECE_VALUE[chess.ROOK] if threatened & board.rooks else RFP_MINOR_RISK

    def _null_move_search(self, board: SearchBoard, depth: int, beta: int, ply: int, key: int,
                          static_eval: int) -> int:
        """Step 6 of _negamax: the score of a reduced null-window search after passing the move,
        from the side to move's view (the opponent moves twice; repetitions never reach back past it)."""
        reduction = 3 + depth // 4 + min((static_eval - beta) // 200, 3)
        keys = self.keys
        keys.append(key)
        barrier = self.barrier
        self.barrier = len(keys)
        board.push(NULL_MOVE)
        try:
            return -self._negamax(board, depth - 1 - reduction, -beta, -beta + 1, ply + 1, False, False,
                                  board.evaluate_packed())
        finally:
            board.pop()
            keys.pop()
            self.barrier = barrier

    @staticmethod
    def _quiet_gives_check(board: chess.Board, move: chess.Move, check_masks: tuple[int, int, int]) -> bool:
        """Step 9 of _negamax: does this quiet move give check? check_masks is check_masks_kernel's
        (check_to, discoverers, reachers) for the board: only a move of a discoverer, or of a reacher
        onto a checking square, may check, and only those are tested by gives_check_kernel."""
        check_to, discoverers, reachers = check_masks
        from_square = move.from_square
        to_square = move.to_square
        from_bb = BB_SQUARES[from_square]
        if not from_bb & discoverers and not (BB_SQUARES[to_square] & check_to and from_bb & reachers):
            return False
        piece = board.piece_type_at(from_square)
        if piece == chess.KING:
            return False
        black, white = board.occupied_co
        return _gives_check(board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
                            black, white, board.turn, from_square, to_square, piece, 0)

    def _qsearch(self, board: SearchBoard, alpha: int, beta: int, ply: int, packed: int,
                 checks: bool = False) -> int:
        """Quiescence search of the node, by one kernel call (engine.qsearch): captures and promotions
        (every evasion in check), with stand pat; checks: quiet checks too (the first quiescence
        ply), so that a mate threat just beyond the horizon is seen. Its nodes count as the
        search's, and the search polls after it (a node limit is met exactly: the kernel stops at it)."""
        occupied_co = board.occupied_co
        ep = board.ep_square
        score, nodes, deepest = quiescence_entry(
            board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings, occupied_co[0],
            occupied_co[1], board.turn, -1 if ep is None else ep, packed, alpha, beta, ply, checks, *self._evaluation,
            board.slot(), self._node_limit - self.nodes if self._node_limit else NO_BUDGET, *self._work_arrays)
        self.nodes += nodes
        if deepest > self.seldepth:
            self.seldepth = deepest
        if self.nodes >= self._next_poll:
            self._poll()
        return score

    def _frontier(self, board: SearchBoard, key: int, ply: int, alpha: int, beta: int, packed: int,
                  answer: Optional[tuple] = None) -> int:
        """_negamax's steps 3 to 12 at a frontier node (depth 1, not a PV node, not in check; its draws
        and mate distance done), by frontier_kernel: the TT probe, reverse futility pruning, the
        capture targets and the picker's stages (engine.movepick.pick_moves), the moves whose children
        are quiescence nodes searched and the others handed back (_frontier_child), and the killers,
        the castling moves and a TT move that may castle asked of python-chess when it reaches them;
        then the node's result stored. The same steps, moves, order, pruning and scores as
        _negamax. answer: the kernel's last result when it has begun the node (_made_frontier, its
        nodes counted), else None. Returns the node's score."""
        node, masks = self._frontier_rows[ply]
        black, white = board.occupied_co
        ep = board.ep_square
        us = board.turn
        parent = (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings, black, white, us,
                  -1 if ep is None else ep)
        in_check = packed & IN_CHECK_FLAG != 0  # then every evasion is searched: no pruning
        static_eval = -INF if in_check else packed_score(packed)
        futile = not in_check and FUTILITY_DEPTH >= 1 and static_eval + FUTILITY_MARGIN <= alpha
        tt = self.tt
        tt_move: Optional[chess.Move] = None
        tt_verdict = -1
        have_killers = False
        killer1_code, killer2_code = self.history.killer_codes[ply]  # untested (the kernel tests them)
        castle_a = castle_b = -1
        pending = NEW_NODE
        slot = board.slot()
        keys = self.keys
        keys.append(key)
        try:
            while True:
                if answer is None:
                    answer = _frontier_loop(
                        *parent, board.castling_rights, in_check, key, packed, tt.keys, tt.data, futile, alpha, beta,
                        tt_verdict, have_killers, killer1_code, killer2_code, castle_a, castle_b, pending, ply,
                        QS_CHECKS, RFP_DEPTH >= 1 and not in_check, RFP_MARGIN, RFP_MINOR_RISK,
                        LMP_BASE + 1, *self._evaluation, slot,
                        self._node_limit - self.nodes if self._node_limit else NO_BUDGET, *self._work_arrays, node,
                        masks, self.history.table, FRONTIER_BONUS)
                    self._count(answer[1], answer[2])
                result, _, _, best_score, best_code, searched, now = answer[:7]
                answer = None
                status = result & STATUS_MASK
                if status == NEED_MOVE:
                    pending = self._frontier_child(board, MOVE_TABLE[result >> STATUS_BITS], now, beta, searched, ply)
                elif status == CUT or status == DONE:
                    break
                elif status == TT_CUT or status == RFP_CUT:
                    return best_score
                elif status == NEED_TT_TEST:  # a TT move that may castle: python-chess's rules
                    move = MOVE_TABLE[result >> STATUS_BITS]
                    tt_verdict = 1 if board.is_pseudo_legal(move) else 0
                    pending = NO_PENDING
                elif status == NEED_KILLERS:
                    # Stage.KILLERS: quiet, pseudo-legal, and neither the TT move nor each other.
                    tt_code = (result >> STATUS_BITS) - 1
                    tt_move = MOVE_TABLE[tt_code] if tt_code >= 0 else None
                    killer1, killer2 = self.history.killers[ply]
                    killer1_code = killer2_code = -1
                    if killer1 is not None and usable_killer(board, killer1, tt_move):
                        killer1_code = encode(killer1)
                    else:
                        killer1 = None
                    if killer2 is not None and killer2 != killer1 and usable_killer(board, killer2, tt_move):
                        killer2_code = encode(killer2)
                    # Stage.QUIETS' castling moves, python-chess's to list.
                    if not futile and board.castling_rights & BACK_RANK[us]:
                        castle_a, castle_b = castling_codes(board)
                    have_killers = True
                    pending = NO_PENDING
                else:  # BUDGET: the node limit, at which _poll has ended the search
                    raise SearchAborted
        finally:
            keys.pop()
        return self._frontier_end(board, None, key, ply, alpha, beta, static_eval, futile, result, best_score,
                                  best_code, searched, in_check)

    def _frontier_end(self, board: SearchBoard, move: Optional[chess.Move], key: int, ply: int, alpha: int, beta: int,
                      static_eval: int, futile: bool, result: int, best_score: int, best_code: int,
                      searched: int, in_check: bool = False) -> int:
        """The end of a frontier node whose moves are searched (frontier_kernel's DONE or CUT in
        result): the killers, step 11 and step 12 of _negamax. move: the move that makes the node
        from the board, when the board is its parent's (_made_frontier)."""
        if result & STATUS_MASK == CUT and result & QUIET_BIT:  # the killers (frontier_kernel did the history)
            best = MOVE_TABLE[(result >> STATUS_BITS) & CODE_MASK]
            assert best is not None  # the code of a move the kernel searched
            self.history.record_killer(best, ply)
        # Step 11. No legal move: mate or stalemate. (A futile node saw only some quiet moves: if it
        # saw none at all, ask whether any legal move exists.)
        if searched == 0:
            if in_check:
                return mated_in(ply)
            if futile:
                if move is not None:
                    board.push(move)
                legal = any(board.generate_legal_moves())
                if move is not None:
                    board.pop()
                if legal:
                    return static_eval
            return DRAW
        # Step 12. Remember the result.
        if best_score >= beta:
            bound = LOWER
        elif best_code >= 0 and best_score > alpha:
            bound = EXACT
        else:
            bound = UPPER
        self.tt.store(key, best_code if best_code >= 0 else 0, value_to_tt(best_score, ply), 1, bound)
        return best_score

    def _made_frontier(self, board: SearchBoard, move: chess.Move, alpha: int, beta: int, ply: int,
                       repeats: np.ndarray, repeat_count: int) -> int:
        """Step 10c of _negamax at depth 2: the child of `move` (not castling, not a pawn onto its
        seventh rank), a frontier node outside the PV (window alpha, beta; ply its ply), made and
        searched by made_frontier_kernel without the search's board, as push_legal and _negamax
        would (its entry: node count, draws, mate distance, then _frontier's steps); the board made
        only for what the kernel hands back. Its score (the child's view), ILLEGAL_LEAF, or
        CHECKING_LEAF when the search must make the move itself (a check, which extends, or a child
        that the kernel leaves to _negamax). repeats[:repeat_count]: the keys the child repeats if
        its move is neither a capture nor a pawn's (_repeat_keys)."""
        if alpha < ply - MATE:  # mate-distance pruning's window (_negamax's step 2)
            alpha = ply - MATE
        if beta > MATE - ply - 1:
            beta = MATE - ply - 1
        node, masks = self._frontier_rows[ply]
        black, white = board.occupied_co
        ep = board.ep_square
        killer1, killer2 = self.history.killer_codes[ply]
        answer = _made_loop(
            board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings, black, white,
            board.turn, -1 if ep is None else ep, board.castling_rights, board.halfmove_clock, encode(move), repeats,
            repeat_count, self._tb_pieces, self.tt.keys, self.tt.data, FUTILITY_DEPTH >= 1, FUTILITY_MARGIN, alpha,
            beta, ply, QS_CHECKS, RFP_DEPTH >= 1, RFP_MARGIN, RFP_MINOR_RISK, LMP_BASE + 1, killer1, killer2,
            *self._evaluation, board.slot(), self._node_limit - self.nodes if self._node_limit else NO_BUDGET,
            *self._work_arrays, node, masks, self.history.table, FRONTIER_BONUS)
        status = answer[0] & STATUS_MASK
        if status == ILLEGAL_MOVE:
            return ILLEGAL_LEAF
        if status == CHECKING_MOVE or status == NEED_NODE:
            return CHECKING_LEAF
        self._count(answer[1], answer[2])
        if status == ENTRY_SCORE or status == TT_CUT or status == RFP_CUT:
            return answer[3]
        if status == BUDGET:  # the node limit, at which _poll has ended the search
            raise SearchAborted
        key = answer[7] << 32 | answer[8]
        packed = answer[9]
        if status == CUT or status == DONE:
            static_eval = packed_score(packed)
            futile = FUTILITY_DEPTH >= 1 and static_eval + FUTILITY_MARGIN <= alpha
            return self._frontier_end(board, move, key, ply, alpha, beta, static_eval, futile, answer[0], answer[3],
                                      answer[4], answer[5])
        # The kernel needs the board at the child (a move to search, the killers, a TT move's test).
        board.push(move)
        score = self._frontier(board, key, ply, alpha, beta, packed, answer)
        board.pop()
        return score

    def _repeat_keys(self, board: SearchBoard, ply: int) -> tuple[np.ndarray, int]:
        """For the depth-2 node on the board at `ply` (its key the last of self.keys): the keys its
        children repeat (_negamax's step 2) when their move is neither a capture nor a pawn's, in the
        ply's row: (the row, how many; -1 when they are more than a row holds)."""
        keys = self.keys
        n = len(keys)
        lowest = max(n - (board.halfmove_clock + 1), self.barrier)
        row = self._repeat_rows[ply]
        count = 0
        if board.halfmove_clock + 1 >= 4:
            if (n - 4 - lowest) // 2 + 1 > len(row):
                return row, -1
            for i in range(n - 4, lowest - 1, -2):
                row[count] = keys[i]
                count += 1
        return row, count

    def _count(self, nodes: int, deepest: int) -> None:
        """Add a kernel's nodes to the search's, and poll as a node would."""
        if nodes:
            self.nodes += nodes
            if deepest > self.seldepth:
                self.seldepth = deepest
            if self.nodes >= self._next_poll:
                self._poll()

    def _frontier_child(self, board: SearchBoard, move: chess.Move, alpha: int, beta: int, searched: int,
                        ply: int) -> int:
        """A move of a frontier node that frontier_kernel hands back (a check, a pawn onto its seventh
        rank, castling), made on the search's board and searched as _negamax's loop does at depth 1
        (alpha: the node's now): its score (the node's view), or PENDING_ILLEGAL when it leaves our
        king attacked."""
        us = board.turn
        child = board.push_legal(move)
        if child is None:
            return PENDING_ILLEGAL
        to_bb = BB_SQUARES[move.to_square]
        # Extensions: a check, and a pawn stepping onto its seventh rank (it stands on to_square now).
        new_depth = 1 if child & IN_CHECK_FLAG or (to_bb & PROMOTION_RANK[us] and board.pawns & to_bb) else 0
        if searched == 0:
            score = -self._negamax(board, new_depth, -beta, -alpha, ply + 1, False, True, child)
        else:
            score = -self._negamax(board, new_depth, -alpha - 1, -alpha, ply + 1, False, True, child)
        board.pop()
        return score

    def _leaf(self, parent: tuple, slot: int, code: int, alpha: int, beta: int, ply: int) -> int:
        """Step 10a of _negamax: the quiescence score (the child's view) of the child the move `code`
        makes from `parent` (the node's bitboards, side to move and en passant square, as the kernels
        take them; slot: its accumulators' slot), searched by one kernel call (engine.qsearch.leaf_kernel)
        with the first quiescence ply's quiet checks, the board left as it is; ILLEGAL_LEAF when the
        move leaves our king attacked, CHECKING_LEAF (nothing searched) when it gives check. Polls as
        _qsearch does."""
        score, nodes, deepest, packed = leaf_entry(
            *parent, code, alpha, beta, ply, QS_CHECKS, *self._evaluation, slot,
            self._node_limit - self.nodes if self._node_limit else NO_BUDGET, *self._work_arrays)
        if packed & ILLEGAL_FLAG:
            return ILLEGAL_LEAF
        if packed & IN_CHECK_FLAG:
            return CHECKING_LEAF
        self.nodes += nodes
        if deepest > self.seldepth:
            self.seldepth = deepest
        if self.nodes >= self._next_poll:
            self._poll()
        return score
