"""Lazy SMP over processes: helper searches that share the main search's transposition table.

Python threads share one interpreter lock, so Threads = N runs N - 1 helper *processes*
(multiprocessing, "spawn": no fork of a process that has threads). Every helper searches the
main search's root at the same time, with no time limit, until the main search stops it; all of
them read and write one TranspositionTable in shared memory, without locks (engine.search.tt: an entry
torn by two writers fails its key check and is ignored). The helpers' results reach the main
search only through that table; the main search alone decides the move and reports.

Diversity (what keeps the helpers from searching the same tree in step): helper i skips some
iterations of its iterative deepening, by Stockfish 9's SkipSize/SkipPhase tables (src/search.cpp,
2018): helper i skips depth d when ((d + ply + SKIP_PHASE[j]) // SKIP_SIZE[j]) is odd, j = i mod 20.
So helpers search ahead of the main search at different depths and fill the table for it.

Control goes through one shared int64 array (no locks: each word has one writer): the search
generation the main search started, the generation it stopped, and each helper's node count
(written by that helper at every poll). Commands go down a pipe per helper; a helper answers each
search with ("done", generation) once it has stopped, and reports an error as ("error", text).

Lifetime: the pool starts its helpers at once (Process.start returns before a helper has
imported anything, so nothing waits for them) and a helper that is not ready yet simply joins the
search late. A helper that died is found at the next search's start, reported through the pool's
`warn` callback and started again. Helpers never outlive the engine: on Linux the kernel kills a
helper whose parent died (PR_SET_PDEATHSIG), and everywhere a helper checks its parent every
PARENT_CHECK seconds, idle or searching; close() stops and joins them (killing stragglers).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Callable, Optional

import chess

from garfish.engine.evaluation.network import Network
from garfish.engine.search.driver import Searcher
from garfish.engine.search.tt import TranspositionTable
from garfish.engine.types import Limits

# Stockfish 9's helper-thread depth skipping (src/search.cpp, SkipSize and SkipPhase).
SKIP_SIZE = (1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4)
SKIP_PHASE = (0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7)
GENERATION, STOPPED, NODES = 0, 1, 2  # the control array: started and stopped generations, then node counts
PARENT_CHECK = 0.5   # seconds between a helper's checks that its parent is alive
STOP_WAIT = 2.0      # seconds a helper may take to answer a stop before it is restarted
JOIN_WAIT = 1.0      # seconds close() waits for a helper to quit before killing it
PR_SET_PDEATHSIG = 1  # prctl option (linux/prctl.h)


@dataclass
class Helper:
    """A helper process and the main side of its pipe."""

    process: Any  # multiprocessing's SpawnProcess
    conn: Connection
    ready: bool = False  # it said it is ready (see _take)


class HelperPool:
    """count helper search processes on the shared table `tt` (a TranspositionTable(shared=True))."""

    def __init__(self, count: int, tt: TranspositionTable, network: Optional[Network],
                 warn: Callable[[str], None]) -> None:
        """network: the evaluation network of the main search (None: the hand-written evaluation);
        warn: where the pool reports a helper's death or error (a line of text)."""
        if tt.block is None:
            raise ValueError("the helpers need a table in shared memory")
        self.context = multiprocessing.get_context("spawn")
        self.control = self.context.RawArray("q", NODES + count)  # zeros
        self.tt = tt
        self.network = network
        self.warn = warn
        self.searching: set[int] = set()  # helpers that owe a ("done", generation) answer
        self.helpers = [self._spawn(index) for index in range(count)]

    @property
    def count(self) -> int:
        return len(self.helpers)

    def _spawn(self, index: int) -> Helper:
        """Start helper `index` (a new process on the same table, network and control array)."""
        main_end, helper_end = self.context.Pipe()
        assert self.tt.block is not None
        process = self.context.Process(
            target=helper_main, name=f"garfish-helper-{index + 1}", daemon=True,
            args=(index, helper_end, self.control, self.tt.block.name, self.tt.megabytes, self.network,
                  os.getpid()))
        process.start()
        helper_end.close()
        return Helper(process, main_end)

    def _send(self, index: int, message: tuple) -> None:
        """Send a command to a helper; one whose pipe is broken is restarted (and told nothing:
        it starts from the pool's current table and network)."""
        try:
            self.helpers[index].conn.send(message)
        except (BrokenPipeError, ConnectionError, OSError):
            self._restart(index, "its pipe is closed")

    def _restart(self, index: int, why: str) -> None:
        """Report a helper that failed, make sure it is gone, and start a new one."""
        helper = self.helpers[index]
        if helper.process.is_alive():
            helper.process.kill()
        helper.process.join(JOIN_WAIT)
        helper.conn.close()
        self.warn(f"search helper {index + 1} failed ({why}; exit code {helper.process.exitcode}); "
                  "starting it again")
        self.searching.discard(index)
        self.helpers[index] = self._spawn(index)

    def _take(self, index: int, message: tuple) -> None:
        """Act on a message from helper `index`: it is ready, it finished the current search, or
        an error to report."""
        if message[0] == "ready":
            self.helpers[index].ready = True
        elif message[0] == "done" and message[1] == self.control[GENERATION]:
            self.searching.discard(index)
        elif message[0] == "error":
            self.warn(f"search helper {index + 1}: {message[1]}")

    def settle(self) -> None:
        """Wait until every helper has answered the last search's stop (restarting any that died
        or took longer than STOP_WAIT), reporting the errors they sent."""
        deadline = time.monotonic() + STOP_WAIT
        for index in sorted(self.searching):
            helper = self.helpers[index]
            while index in self.searching:
                try:
                    ready = helper.conn.poll(max(0.0, deadline - time.monotonic()))
                    message = helper.conn.recv() if ready else None
                except (EOFError, OSError):
                    self._restart(index, "it died")
                    break
                if message is None:
                    self._restart(index, "it did not stop" if helper.process.is_alive() else "it died")
                else:
                    self._take(index, message)
        for index, helper in enumerate(self.helpers):
            if not helper.process.is_alive():
                self._restart(index, "it died")

    def wait_ready(self, timeout: float) -> bool:
        """Wait up to timeout seconds until every helper has started (imported the engine and
        attached the table); whether they all have. The searches never wait for this: a helper
        not ready yet joins a search late."""
        deadline = time.monotonic() + timeout
        for index, helper in enumerate(self.helpers):
            while not helper.ready:
                remaining = deadline - time.monotonic()
                try:
                    if remaining <= 0 or not helper.conn.poll(remaining):
                        return False
                    self._take(index, helper.conn.recv())
                except (EOFError, OSError):
                    return False
        return True

    def start(self, board: chess.Board, searchmoves: list[chess.Move]) -> None:
        """Set every helper searching the board (within searchmoves, if any) until stop()."""
        self.settle()
        generation = self.control[GENERATION] + 1
        for index in range(self.count):
            self.control[NODES + index] = 0
        self.control[GENERATION] = generation
        for index in range(self.count):
            self._send(index, ("search", generation, board, list(searchmoves), self.tt.age))
            self.searching.add(index)

    def stop(self) -> None:
        """Tell the helpers to stop the current search (at once; settle() waits for them)."""
        self.control[STOPPED] = self.control[GENERATION]

    def nodes(self) -> int:
        """The nodes the helpers have searched in the current (or last) search."""
        return sum(self.control[NODES:NODES + self.count])

    def clear(self) -> None:
        """A new game: the helpers forget their histories (the shared table is cleared by its owner)."""
        self.settle()
        for index in range(self.count):
            self._send(index, ("clear",))

    def use_table(self, tt: TranspositionTable) -> None:
        """The main search's table changed (a new shared block): the helpers attach to it."""
        if tt.block is None:
            raise ValueError("the helpers need a table in shared memory")
        self.settle()
        self.tt = tt
        for index in range(self.count):
            self._send(index, ("table", tt.block.name, tt.megabytes))

    def use_network(self, network: Optional[Network]) -> None:
        """Evaluate with this network from the next search on (None: the hand-written evaluation)."""
        self.settle()
        self.network = network
        for index in range(self.count):
            self._send(index, ("network", network))

    def close(self) -> None:
        """Stop and end every helper; those that do not quit within JOIN_WAIT are killed."""
        self.stop()
        for helper in self.helpers:
            try:
                helper.conn.send(("quit",))
            except (BrokenPipeError, ConnectionError, OSError):
                pass  # already gone: joined below
        for helper in self.helpers:
            helper.process.join(JOIN_WAIT)
            if helper.process.is_alive():
                helper.process.kill()
                helper.process.join(JOIN_WAIT)
            helper.conn.close()
        self.helpers = []
        self.searching.clear()


# ------------------------------------------------------------------------------ helper side

class SharedStop:
    """A helper's stop flag (the search calls is_set() at every poll): set when the main search
    stopped this generation, or when the parent process is gone."""

    def __init__(self, control: Any, generation: int, parent: int) -> None:
        self.control, self.generation, self.parent = control, generation, parent
        self.next_parent_check = time.monotonic() + PARENT_CHECK
        self.stopped = False  # set(): this helper stops on its own

    def is_set(self) -> bool:
        """Whether the helper's search must stop."""
        if self.stopped or self.control[STOPPED] >= self.generation:
            return True
        now = time.monotonic()
        if now >= self.next_parent_check:
            self.next_parent_check = now + PARENT_CHECK
            if os.getppid() != self.parent:
                return True
        return False

    def set(self) -> None:
        """Stop this helper's search (the main search stops every helper through the control array)."""
        self.stopped = True


def skips(index: int, depth: int, game_ply: int) -> bool:
    """Stockfish 9's rule: whether helper `index` skips this iteration of a search from a position
    game_ply plies into its game (the module's description); depth 1 is never skipped."""
    size = SKIP_SIZE[index % len(SKIP_SIZE)]
    phase = SKIP_PHASE[index % len(SKIP_PHASE)]
    return depth > 1 and ((depth + game_ply + phase) // size) % 2 == 1


class HelperWork:
    """What one helper process searches with: its searcher on the shared table, and the game ply
    of the search it helps (its skip schedule depends on it)."""

    def __init__(self, index: int, control: Any, tt: TranspositionTable) -> None:
        self.index = index
        self.control = control
        self.game_ply = 0
        self.searcher = Searcher(tt, skip=self.skip, publish_nodes=self.publish)

    def skip(self, depth: int) -> bool:
        """The searcher's iteration schedule (skips)."""
        return skips(self.index, depth, self.game_ply)

    def publish(self, nodes: int) -> None:
        """Tell the main search how many nodes this helper has searched."""
        self.control[NODES + self.index] = nodes

    def help(self, board: chess.Board, generation: int, searchmoves: list[chess.Move], parent: int) -> None:
        """Search the board until the main search stops this generation."""
        self.game_ply = board.ply()
        try:
            self.searcher.search(board, Limits(infinite=True, searchmoves=searchmoves),
                                 stop=SharedStop(self.control, generation, parent))
        finally:
            self.publish(self.searcher.nodes)


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (elsewhere the parent checks do it)."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass  # no prctl: the helper's own parent checks remain


def helper_main(index: int, conn: Connection, control: Any, table: str, megabytes: int,
                network: Optional[Network], parent: int) -> None:
    """A helper process: attach to the shared table, then serve the main search's commands."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C in the terminal is the parent's to handle
    if os.getppid() != parent:
        return
    from garfish.engine.evaluation.nnue import NetworkEvaluator

    try:
        tt = TranspositionTable.attach(table, megabytes)
    except FileNotFoundError:
        # The table was resized while this helper was starting: the pool's ("table", ...) message
        # with the new one is on its way. Until it comes, a private table stands in.
        tt = TranspositionTable(1)
    work = HelperWork(index, control, tt)
    searcher = work.searcher
    if network is not None:
        searcher.evaluator = NetworkEvaluator(network)
    conn.send(("ready",))
    while True:
        try:
            if not conn.poll(PARENT_CHECK):
                if os.getppid() != parent:
                    return
                continue
            message = conn.recv()
        except (EOFError, OSError):
            return  # the parent closed the pipe (or died)
        kind = message[0]
        try:
            if kind == "search":
                _, generation, board, searchmoves, age = message
                searcher.tt.age = age  # the main search's generation of entries (its new_search() follows)
                try:
                    work.help(board, generation, searchmoves, parent)
                finally:
                    conn.send(("done", generation))
            elif kind == "clear":
                searcher.history.clear()
            elif kind == "table":
                try:
                    new = TranspositionTable.attach(message[1], message[2])
                except FileNotFoundError:
                    continue  # resized again since: the message with the newer table follows
                old, searcher.tt = searcher.tt, new
                old.close()
            elif kind == "network":
                # The table is the main process's to clear (Engine.set_eval_file), the histories this helper's.
                searcher.evaluator = NetworkEvaluator(message[1]) if message[1] is not None else None
                searcher.history.clear()
            elif kind == "quit":
                return
        except (BrokenPipeError, ConnectionError):
            return
        except Exception:  # reported to the main process, which goes on without this search
            lines = traceback.format_exc().strip().splitlines()
            try:
                conn.send(("error", lines[-1]))
            except (BrokenPipeError, ConnectionError, OSError):
                return
