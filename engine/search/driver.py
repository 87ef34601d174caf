"""The searcher: iterative deepening, aspiration windows, PVS alpha-beta and quiescence.

All search state (TT, histories, counters, the stop flag) lives in one Searcher,
so two searches can run side by side. The searcher prints nothing: it reports
each finished iteration through a callback and returns a SearchResult.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional, Protocol

import chess

from garfish.engine.board.flags import packed_score
from garfish.engine.board.moves import decode, encode
from garfish.engine.board.searchboard import SearchBoard
from garfish.engine.board.zobrist import zobrist
from garfish.engine.search.callbacks import hosting
from garfish.engine.search.history import History
from garfish.engine.search.timeman import soft_limit, time_budget
from garfish.engine.search.tree import (
    C_ABORTED, C_NODE_LIMIT, C_NODES, C_ROOT_BEST, C_ROOT_MOVES, C_SELDEPTH, C_STOP, C_TB_DEPTH, C_TB_PIECES,
    C_TB_RULE50, C_TBHITS, C_NEXT_POLL, TreeWork, search_kernel,
)
from garfish.engine.search.tt import TranspositionTable, entry_code, unpack
from garfish.engine.search.skill import Skill
from garfish.engine.types import (
    DRAW, INF, MATE, MATE_BOUND, MAX_PLY, TB_CP, TB_WIN, TB_WIN_BOUND, Limits, SearchInfo, mate_in, mated_in,
)

if TYPE_CHECKING:
    from garfish.engine.evaluation.nnue import NetworkEvaluator
    from garfish.engine.services.syzygy import Tablebases

POLL_INTERVAL = 256        # nodes between the compiled search's polls of the clock and the stop flag ...
FAST_POLL_INTERVAL = 32    # ... or this many when the time budget is tiny
FAST_POLL_BUDGET = 0.25    # seconds: a hard limit below this is a tiny budget
ASPIRATION_DEPTH = 4       # first depth searched with an aspiration window
ASPIRATION_DELTA = 25      # initial half-width of the window, centipawns
SINGLE_MOVE_DEPTH = 4      # with one legal move, a timed search stops at this depth
MATE_EXTRA_DEPTH = 4       # plies searched past a found mate before stopping
TB_ROOT_TIME_SHARE = 0.9   # ranking the root moves by DTZ probes no more moves past this share of the hard limit:
                           # the ranking decides a tablebase root's move, the search after it only reports


class StopFlag(Protocol):
    """A search's stop flag: threading.Event, or a helper's flag in shared memory (engine.services.smp)."""

    def is_set(self) -> bool:
        """Whether the search must stop."""

    def set(self) -> None:
        """Ask the search to stop."""


class SearchAborted(Exception):
    """Raised inside the tree when the search must stop (time, nodes, or stop)."""


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
    manages none of what it is handed: engine.engine.Engine does (and helper processes, engine.services.smp,
    run searchers of their own on the same table)."""

    def __init__(self, tt: TranspositionTable, evaluator: Optional[NetworkEvaluator] = None,
                 tablebase: Optional[Tablebases] = None, seed: Optional[int] = None,
                 skip: Optional[Callable[[int], bool]] = None,
                 publish_nodes: Optional[Callable[[int], None]] = None) -> None:
        """tt: the table to search with; evaluator: the network to evaluate with (engine.evaluation.nnue), None
        for the hand-written evaluation (engine.evaluation.classic); tablebase: Syzygy tables to probe (None:
        none); seed: the random choices of a strength-limited search (engine.search.skill), the same for the
        same seed (None: seeded by the system); skip(depth): whether iterative deepening skips a depth
        (a helper's schedule, engine.services.smp; None: none is skipped); publish_nodes(nodes): called with
        the node count at every poll (a helper's report to the main search)."""
        self.tt = tt
        self.evaluator = evaluator
        self.tablebase = tablebase
        self.rng = random.Random(seed)
        self.skip = skip
        self.publish_nodes = publish_nodes
        self.history = History()
        self._tree = TreeWork(self.history)  # the compiled search's arrays (engine.search.tree)
        self._kernel = search_kernel
        self._own_stop = threading.Event()  # the stop flag of searches whose caller passes none
        self.stop_event: StopFlag = self._own_stop  # the running search's stop flag
        self.pondering = False
        self._start = 0.0
        self._optimum: Optional[float] = None
        self._maximum: Optional[float] = None
        self._stop_on_ponderhit = False  # a pondering search that has used its soft limit
        self._last_score: Optional[int] = None  # the last clock search's score (the time manager's falling eval)
        self._node_limit = 0
        self._poll_interval = POLL_INTERVAL
        self._completed_depth = 0
        self._lines_first = False  # the clock waits for depth 1's lines (MultiPV)
        self._root_moves: Optional[set[chess.Move]] = None
        self._tb_root_score: Optional[int] = None  # the tables' score of the root, when they ranked its moves

    # ----------------------------------------------------------------- control
    def new_game(self) -> None:
        """Forget what this worker learned: its histories (the table is its owner's to clear)."""
        self.history.clear()
        self._last_score = None

    def stop(self) -> None:
        """Ask the running search to stop as soon as possible (thread-safe): sets its stop flag, and
        tells the compiled search, which stops at its next node."""
        self.stop_event.set()
        self._tree.ctl[C_STOP] = 1

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
            self._maximum = 0.0  # its time is up
            self._tree.ctl[C_STOP] = 1  # the compiled search stops at its next node (the next poll could be
            # a poll's worth of nodes and a quiescence search away)

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
        self._completed_depth = 0
        self._node_limit = limits.nodes if limits.nodes is not None else 0
        self.tt.new_search()
        self.history.clear_killers()
        # The root's board, and the compiled search's state set up from it (its evaluation: the
        # network's accumulators, or the hand-written kernel).
        root: SearchBoard
        if self.evaluator is None:
            root = SearchBoard.from_board(board)
        else:
            root = self.evaluator.search_board(board)
        self._tree.begin(self.tt, root, game_keys(board), self.evaluator is not None)

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
        ctl = self._tree.ctl
        ctl[C_NEXT_POLL] = self._poll_interval
        max_depth = min(limits.depth, MAX_PLY - 1) if limits.depth else MAX_PLY - 1
        timed = self._maximum is not None
        # With a fixed movetime the whole budget is ours: only a clock asks to save time.
        clock = timed and limits.movetime is None
        best_changes = 0.0  # recent changes of the best move between iterations (halved every iteration)
        # Until depth 1 completes, the fallback is the move the picker would try first.
        root_key = zobrist(root)
        tt_code = entry_code(self.tt.probe(root_key))
        best_move = next((move for move in self._tree.picker_order(tt_code) if move in legal), legal[0])
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

        # The compiled search polls this searcher (the clock, the stop flag) and probes its tables
        # (engine.search.callbacks).
        with hosting(self):
            for depth in range(1, max_depth + 1):
                if self.skip is not None and self.skip(depth):
                    continue
                self._tree.ctl[C_ROOT_BEST] = -1
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
                        done.append(PVLine(depth, value, self._pv() or [self._root_best_move() or best_move]))
                        done.sort(key=lambda line: -line.score)  # stable: an equal score keeps its rank
                except SearchAborted:
                    if done:
                        # Line 1 of this depth is complete: report it and the others done at this depth,
                        # then the last depth's lines for the ranks not reached (Stockfish's rule).
                        best_move, best_score, pv = done[0].pv[0], done[0].score, done[0].pv
                    else:
                        # Keep the last completed iteration's move, unless this iteration
                        # already finished a different root move with a better score.
                        root_best = self._root_best_move()
                        if root_best is not None and root_best != best_move:
                            best_move = root_best
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
        self._tree.set_root()
        if depth < ASPIRATION_DEPTH or abs(prev) >= MATE_BOUND:
            return self._root_search(root, depth, -INF, INF)
        delta = ASPIRATION_DELTA
        alpha, beta = max(prev - delta, -INF), min(prev + delta, INF)
        while True:
            score = self._root_search(root, depth, alpha, beta)
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
                on_info(self._info(depth, score, bound, self._pv(), multipv))
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
        root in the tables, the best-ranked moves only (engine.services.syzygy.Tablebases.rank_root_moves,
        the TT's move probed first; past TB_ROOT_TIME_SHARE of the hard time limit it probes no more).
        As in Stockfish, the tree is then probed only when no DTZ ranked the root and it is won."""
        ctl = self._tree.ctl
        ctl[C_TBHITS] = 0
        ctl[C_TB_PIECES] = 0  # the tree probes positions of at most this many pieces (0: none) ...
        self._tb_root_score = None
        tablebase = self.tablebase
        if tablebase is None or not tablebase.cardinality:
            return moves
        ctl[C_TB_PIECES] = tablebase.cardinality
        ctl[C_TB_DEPTH] = tablebase.depth  # ... with exactly that many only from this depth
        ctl[C_TB_RULE50] = 1 if tablebase.rule50 else 0
        if board.occupied.bit_count() > tablebase.cardinality or board.clean_castling_rights():
            return moves
        maximum = None if limits.ponder else time_budget(limits, board.turn)[1]
        deadline = None if maximum is None else self._start + maximum * TB_ROOT_TIME_SHARE
        code = entry_code(self.tt.probe(zobrist(board)))
        first = decode(code) if code else None
        ranking = tablebase.rank_root_moves(board, moves, deadline, first)
        if ranking is None:
            ctl[C_TB_PIECES] = tablebase.cardinality  # 0 if a table failed
            return moves
        ctl[C_TBHITS] = ranking.probes
        self._tb_root_score = ranking.score
        if ranking.by_dtz or ranking.score <= DRAW:
            ctl[C_TB_PIECES] = 0
        return ranking.moves

    def _root_search(self, root: SearchBoard, depth: int, alpha: int, beta: int) -> int:
        """One search of the root to `depth` within (alpha, beta) by the compiled search
        (engine.search.tree.search_kernel), the GIL released while it runs; raises SearchAborted when it
        stopped (the node limit, or the watcher's stop: a stop, the clock)."""
        work = self._tree
        ctl = work.ctl
        root_moves = self._root_moves
        if root_moves is None:
            ctl[C_ROOT_MOVES] = -1
        else:
            codes = [encode(move) for move in root_moves]
            work.root_moves[:len(codes)] = codes
            ctl[C_ROOT_MOVES] = len(codes)
        ctl[C_NODE_LIMIT] = self._node_limit
        ctl[C_ABORTED] = 0
        score = int(self._kernel(work.arrays, depth, alpha, beta))
        if ctl[C_ABORTED]:
            raise SearchAborted
        return score

    def _pv(self) -> list[chess.Move]:
        """The root's principal variation of the last search (its moves)."""
        work = self._tree
        return [decode(int(code)) for code in work.pv[0, :work.pv_len[0]]]

    def _root_best_move(self) -> Optional[chess.Move]:
        """The best root move so far in this iteration (None: none has raised alpha yet)."""
        code = int(self._tree.ctl[C_ROOT_BEST])
        return decode(code) if code >= 0 else None

    @property
    def nodes(self) -> int:
        """The nodes searched so far by the current (or last) search."""
        return int(self._tree.ctl[C_NODES])

    @property
    def seldepth(self) -> int:
        """The deepest ply the current (or last) search reached."""
        return int(self._tree.ctl[C_SELDEPTH])

    @property
    def tbhits(self) -> int:
        """Positions the current (or last) search found in the tablebases."""
        return int(self._tree.ctl[C_TBHITS])

    def poll(self, nodes: int) -> bool:
        """The compiled search's poll, every POLL_INTERVAL nodes (engine.search.callbacks): publish
        the node count (publish_nodes); whether the search must stop (its stop flag, or the hard time
        limit: not while pondering, nor before depth 1 has scored every line of a MultiPV search)."""
        if self.publish_nodes is not None:
            self.publish_nodes(nodes)
        self._tree.ctl[C_NEXT_POLL] = nodes + self._poll_interval
        if self.stop_event.is_set():
            return True
        return (self._maximum is not None and not self.pondering
                and bool(self._completed_depth or not self._lines_first)
                and time.perf_counter() - self._start >= self._maximum)
