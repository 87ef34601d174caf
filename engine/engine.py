"""Engine: the one object that owns a chess engine, in the role of Stockfish's src/engine.h.

It owns the transposition table, the evaluation (an EvalFile's network or the hand-written
one), the Syzygy tablebases, the opening book, the Lazy SMP helper processes and the search
thread with its stop and release flags; it offers `go`, `stop`, `ponderhit`, `new_game` and one
setter per engine setting. The search itself is a worker (engine.search.Searcher) handed the
table, the evaluator and the tablebases; the front ends (uci/, the Python API) only talk to this
object. It prints nothing: what it has to say (a book move, a helper that died, a search that
failed) goes to the `on_message` callback as a line of text, errors beginning with "error: ".

Building the engine imports NumPy and Numba and may compile the kernels (engine.services.warmup), which
can take a while on a first start: `Engine(load=False)` returns at once, without importing any
of it, and `start_loading()` builds it on a background thread, so that a UCI front end answers
`uciok` before it is done; every method that needs the engine waits for it (`wait_ready`).
"""

from __future__ import annotations

import threading
import time
import traceback
from typing import TYPE_CHECKING, Callable, Optional

import chess

from garfish.engine.evaluation import evalfile
from garfish.engine.evaluation.evalfile import CLASSIC

if TYPE_CHECKING:  # imported when the engine is built (load), so that `Engine(load=False)` is cheap
    from garfish.engine.services.book import Book
    from garfish.engine.evaluation.nnue import NetworkEvaluator
    from garfish.engine.search.driver import SearchInfo, SearchResult, Searcher
    from garfish.engine.services.smp import HelperPool
    from garfish.engine.services.syzygy import Tablebases
    from garfish.engine.search.tt import TranspositionTable
    from garfish.engine.types import Limits

MIN_HASH_MB = 1  # the table an engine falls back to when the Hash asked for cannot be had
DEFAULT_HASH_MB = 16
MAX_THREADS = 512
QUICK_SECONDS = 1.0  # the quick search's time for a move without a clock, while the kernels compile
LOAD_SHARE = 0.25  # the share of its clock a game's `go` waits for a warm start's kernels to load, at most
# Piece values in pawns for fallback_move.
FALLBACK_VALUE = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}

InfoCallback = Callable[["SearchInfo"], None]
BestMoveCallback = Callable[[Optional[chess.Move], Optional[chess.Move]], None]


class EngineError(ValueError):
    """A setting that could not be carried out (the engine keeps its previous working state), or an
    engine that could not be built."""


def fallback_move(board: chess.Board) -> Optional[chess.Move]:
    """A legal move chosen without a search, for when there is no search to ask: a mate in one,
    else the most material won counting a piece landing on an attacked square as lost; None
    when there is no legal move."""
    best, best_gain = None, 0
    for move in board.legal_moves:
        moved = board.piece_type_at(move.from_square)
        assert moved is not None
        gain = FALLBACK_VALUE[board.piece_type_at(move.to_square) or chess.PAWN] if board.is_capture(move) else 0
        if move.promotion:
            gain += FALLBACK_VALUE[move.promotion] - 1
            moved = move.promotion
        board.push(move)
        if board.is_checkmate():
            board.pop()
            return move
        if board.is_attacked_by(board.turn, move.to_square):
            gain -= FALLBACK_VALUE[moved]
        board.pop()
        if best is None or gain > best_gain:
            best, best_gain = move, gain
    return best


class Engine:
    """A chess engine: table, evaluation, tablebases, book, helper processes and the search thread."""

    def __init__(self, hash_mb: int = DEFAULT_HASH_MB, eval_file: Optional[str] = None, threads: int = 1,
                 seed: Optional[int] = None, on_message: Optional[Callable[[str], None]] = None,
                 load: bool = True, on_progress: Optional[Callable[[str], None]] = None) -> None:
        """hash_mb: the table's size; eval_file: the EvalFile (a .gfnn file from the working folder or
        engine/nets/, or <classic>; None: evalfile.DEFAULT_EVAL_FILE, the UCI engine's default); threads: search processes (Threads); seed: the random choices of
        a strength-limited search, the same for the same seed (None: seeded by the system);
        on_message: where the engine's messages go (none: dropped); on_progress: where it says how its
        building goes on a first start, which compiles the kernels (a UCI engine's stderr).

        load=True builds the engine now and raises EngineError when the table or the network
        cannot be had. load=False builds nothing (call start_loading); the engine then falls back as
        a UCI engine must: the smallest table when the memory for hash_mb is missing, the
        hand-written evaluation when eval_file cannot be used, each said through on_message. And it
        answers while a first start compiles the kernels (engine.services.warmup, in child processes):
        wait_answerable returns at once, a `go` gets a move from a quick search (engine.services.quick) within
        its time, and the settings made meanwhile are kept and carried out once it is built."""
        self.hash_mb = hash_mb
        self.eval_file = eval_file if eval_file is not None else evalfile.DEFAULT_EVAL_FILE
        self.seed = seed
        self.on_message = on_message
        self.tt: Optional[TranspositionTable] = None
        self.searcher: Optional[Searcher] = None
        self.helpers: Optional[HelperPool] = None
        self.tablebase: Optional[Tablebases] = None
        self.book: Optional[Book] = None
        self.book_best_move = False  # BookBestMove: the book's highest-weight move, not a random one by weight
        self.syzygy_probe_limit = 7
        self.syzygy_probe_depth = 1
        self.syzygy_rule50 = True
        self.load_error: Optional[str] = None  # why the engine could not be built
        self.on_progress = on_progress
        self.compiling = False  # a first start compiles the kernels: moves meanwhile from the quick search
        self._keeping = False  # settings made now are kept for the build to carry out (before it reads them)
        self._threads_wanted = 1  # Threads and SyzygyPath set while compiling, carried out once built
        self._syzygy_wanted = ""
        self._lock = threading.Lock()  # between the settings kept while compiling and the building
        self._pending: list[str] = []  # how it was built otherwise than asked, said by the next wait_ready
        self._loaded = threading.Event()
        self._answerable = threading.Event()  # built, or compiling (moves from the quick search meanwhile)
        self.search_thread: Optional[threading.Thread] = None  # the search thread of go()
        self._limits: Optional[Limits] = None  # the limits handed to it
        self.stop_flag = threading.Event()  # the running search's stop flag: set here, never by the search
        self.release = threading.Event()  # lets an infinite or pondering search report its best move
        self._closed = threading.Event()  # close() was called: start_loading's thread may end
        if load:
            self._load(lenient=False)
            if self.load_error is not None:
                raise EngineError(self.load_error)
            if threads != 1:
                self.set_threads(threads)

    # ------------------------------------------------------------------ building
    def start_loading(self) -> None:
        """Build the engine on a background thread (see the module's description). The engine is
        answerable at once: settings made while it builds are kept for the build, a `go` waits for it
        (the search's clock charged with the wait) or, on a first start that compiles the kernels, gets
        a move from the quick search."""
        self._keeping = True
        self._answerable.set()
        threading.Thread(target=self._load_and_stay, name="garfish-load", daemon=True).start()

    def _load_and_stay(self) -> None:
        """start_loading's thread: build, then stay until close(). Helper processes the build starts
        (a Threads setting kept for it) are its children, and Linux kills a helper when the thread
        that started it ends (PR_SET_PDEATHSIG, engine.services.smp.die_with_parent)."""
        self._load(True)
        self._closed.wait()

    def _load(self, lenient: bool) -> None:
        """Import and build the engine (the Numba kernels load, or compile: engine.services.warmup). lenient:
        answer while a first start compiles in child processes, and fall back to the smallest table
        and to the hand-written evaluation (said at the next wait_ready) instead of failing."""
        try:
            from garfish.engine.services import warmup

            cold = lenient and not warmup.kernels_cached()
            if cold:
                self.compiling = True
                self._progress("garfish: first start: compiling the engine's kernels in the background (a minute "
                               "or two, once); until they are ready, moves come from a quick search")
                warmup.compile_kernels()
                self.compiling = False  # the rest loads from the cache: a second or two, worth waiting for
            warmup.load_kernels()
            from garfish.engine.evaluation.evalfile import load_evaluator
            from garfish.engine.evaluation.network import NetworkError
            from garfish.engine.search.driver import Searcher
            from garfish.engine.search.tt import TranspositionTable

            with self._lock:  # the settings kept while building are final from here
                self._keeping = False
                try:
                    self.tt = TranspositionTable(self.hash_mb)
                except MemoryError as exc:
                    if not lenient:
                        raise EngineError(f"no memory for a {self.hash_mb} MB hash table ({exc})") from None
                    self.tt = self._fallback_table(self.hash_mb, exc)
                evaluator = None
                try:
                    evaluator = load_evaluator(self.eval_file)
                except NetworkError as exc:
                    if not lenient:
                        raise EngineError(f"EvalFile {self.eval_file}: {exc}") from None
                    self._pending.append(f"error: EvalFile {self.eval_file}: {exc}; using {CLASSIC}, "
                                         "the hand-written evaluation")
                    self.eval_file = CLASSIC
                self.searcher = Searcher(self.tt, evaluator, seed=self.seed)
                threads, path = self._threads_wanted, self._syzygy_wanted
            try:
                if threads != 1:
                    self._start_threads(threads)
                if path:
                    self._open_tables(path)
            except EngineError as exc:
                self._pending.append(f"error: {exc}")
            if cold:
                self._progress("garfish: the engine's kernels are compiled: searching from now on")
        except EngineError as exc:
            self.load_error = str(exc)
        except Exception:  # said by every wait_ready, never swallowed
            self.load_error = traceback.format_exc().strip().splitlines()[-1]
        finally:
            self.compiling = self._keeping = False
            self._loaded.set()
            self._answerable.set()

    def _fallback_table(self, megabytes: int, exc: MemoryError) -> TranspositionTable:
        """The table a lenient build makes when `megabytes` cannot be had (said at the next wait_ready):
        the default size when a larger Hash was set while the engine built (as a resize that fails
        keeps the table), else the smallest."""
        from garfish.engine.search.tt import TranspositionTable

        if megabytes > DEFAULT_HASH_MB:
            try:
                table = TranspositionTable(DEFAULT_HASH_MB)
                self._pending.append(f"error: could not resize the hash table to {megabytes} MB ({exc}); "
                                     f"keeping the {DEFAULT_HASH_MB} MB table")
                self.hash_mb = DEFAULT_HASH_MB
                return table
            except MemoryError:
                pass
        self._pending.append(f"error: no memory for a {megabytes} MB hash table ({exc}); using {MIN_HASH_MB} MB")
        self.hash_mb = MIN_HASH_MB
        return TranspositionTable(MIN_HASH_MB)

    @property
    def building(self) -> bool:
        """start_loading's build is under way (`isready` is answered at once meanwhile)."""
        return self._answerable.is_set() and not self._loaded.is_set()

    def _progress(self, text: str) -> None:
        """Hand a line about the building to on_progress."""
        if self.on_progress is not None:
            self.on_progress(text)

    def _settle(self, **values: object) -> Optional[Searcher]:
        """The main searcher, to carry a setting out on now; None when there is none: an engine still
        building before it reads its settings (the values, attribute: value, are then kept for the
        build) or one that could not be built (wait_ready said why). Waits only for the engine to be
        answerable, never for a compile."""
        self._answerable.wait()
        if self._kept(**values):
            return None
        return self._built()

    def _kept(self, **values: object) -> bool:
        """While the engine builds (until it reads its settings), record settings (attribute: value)
        for the build to carry out; whether they were (else the caller carries them out now)."""
        with self._lock:
            if not self._keeping or self._loaded.is_set():
                return False
            for name, value in values.items():
                setattr(self, name, value)
            return True

    def wait_answerable(self) -> bool:
        """Block until the engine can answer a `go`: built (True, having said what wait_ready says),
        or building (False at once: a `go` then waits for the build, or gets a move from the quick
        search on a first start that compiles the kernels)."""
        self._answerable.wait()
        if self.building:
            return False
        return self.wait_ready()

    def wait_ready(self) -> bool:
        """Block until the engine is built; whether it was (after saying, once, how it was built
        otherwise than asked, and on every call why it could not be)."""
        self._loaded.wait()
        while self._pending:
            self._say(self._pending.pop(0))
        if self.load_error is not None:
            self._say("error: the engine failed to load: " + self.load_error)
            return False
        return True

    def _built(self) -> Optional[Searcher]:
        """The main searcher, once the engine is built; None if it could not be (wait_ready said why:
        a setting then does nothing)."""
        return self.searcher if self.wait_ready() else None

    def _say(self, text: str) -> None:
        """Hand a message to on_message."""
        if self.on_message is not None:
            self.on_message(text)

    # ------------------------------------------------------------------ searching
    @property
    def evaluator(self) -> Optional[NetworkEvaluator]:
        """The network searches evaluate with (None: the hand-written evaluation)."""
        return self.searcher.evaluator if self.searcher is not None else None

    @property
    def threads(self) -> int:
        """Search processes: the main search and its helpers."""
        return 1 + (self.helpers.count if self.helpers is not None else 0)

    def search(self, board: chess.Board, limits: Optional[Limits] = None, on_info: Optional[InfoCallback] = None,
               stop: Optional[threading.Event] = None) -> SearchResult:
        """Search the position within the limits and return the result (blocking).

        stop: the caller's stop flag; setting it (from any thread) ends the search, which never
        clears it. Without one, stop() ends it. With helpers (Threads > 1) they search the same root
        until this search ends and their nodes count in the reports; a strength-limited search
        (limits.elo) searches alone, its node budget being the point."""
        from garfish.engine.types import Limits

        searcher = self._built()
        if searcher is None:
            raise EngineError(f"the engine failed to load: {self.load_error}")
        limits = limits or Limits()
        if stop is None:
            stop = self.stop_flag = threading.Event()
        helpers = self.helpers
        if helpers is None or limits.elo is not None:
            return searcher.search(board, limits, on_info=on_info, stop=stop)

        def report(info: SearchInfo) -> None:
            info.nodes += helpers.nodes()
            if on_info is not None:
                on_info(info)

        helpers.start(board, limits.searchmoves)
        try:
            result = searcher.search(board, limits, on_info=report, stop=stop)
        finally:
            helpers.stop()
        result.nodes += helpers.nodes()
        return result

    def go(self, board: chess.Board, limits: Limits, on_info: Optional[InfoCallback] = None,
           on_bestmove: Optional[BestMoveCallback] = None, use_book: bool = False) -> None:
        """Search a copy of the board on the search thread and return at once; on_bestmove then gets
        exactly one legal move (and a legal ponder move or None), or None for both only when the
        position has no legal move. An infinite or pondering search reports it only after stop() or
        ponderhit(), as UCI requires. use_book: play from the book (set_book_file) while in it.
        A running search is stopped first."""
        self.wait()
        self.stop_flag = threading.Event()  # a fresh flag, made before the thread starts: no stop is lost
        self.release.clear()
        self._limits = limits
        self.search_thread = threading.Thread(target=self._run, name="garfish-search", daemon=True,
                                        args=(board.copy(), limits, on_info, on_bestmove, use_book, self.stop_flag))
        self.search_thread.start()

    def _run(self, board: chess.Board, limits: Limits, on_info: Optional[InfoCallback],
             on_bestmove: Optional[BestMoveCallback], use_book: bool, stop: threading.Event) -> None:
        """The search thread: play from the book or search, then report exactly one move."""
        asked = time.perf_counter()
        move, ponder = self._book_move(board, limits) if use_book and self.book is not None else (None, None)
        self._answerable.wait()
        if move is None and not self.compiling and not self._loaded.is_set():
            # A warm start loading its kernels (a second, several on a busy machine): worth waiting for,
            # but a game's clock (no movetime) runs since the GUI's readyok: at most LOAD_SHARE of it.
            clock = limits.wtime if board.turn == chess.WHITE else limits.btime
            timed = limits.movetime is None and not (limits.infinite or limits.ponder)
            share = LOAD_SHARE * clock - (time.perf_counter() - asked) if timed and clock is not None else None
            self._loaded.wait(share)
        if move is None and not self._loaded.is_set():
            # Still compiling (a first start), or loading past a quarter of the game's clock.
            move = self._quick_move(board, limits, on_info)
        elif move is None and self.wait_ready():  # a failed load said so
            try:
                # A warm start's `go` may have waited for the kernels to load: that time is off the clock.
                result = self.search(board, limits.less(time.perf_counter() - asked), on_info, stop)
                move, ponder = result.move, result.ponder
            except Exception:
                for text in traceback.format_exc().strip().splitlines():
                    self._say("error: search failed: " + text)
        if limits.infinite or limits.ponder:
            self.release.wait()  # UCI: no best move before stop (or ponderhit)
        move, ponder = self._playable(board, move, ponder)
        if on_bestmove is not None:
            on_bestmove(move, ponder)

    def _quick_move(self, board: chess.Board, limits: Limits, on_info: Optional[InfoCallback]) -> Optional[chess.Move]:
        """A move from the quick search (engine.services.quick) within the move's time, while the kernels
        compile or load; each finished depth reported as a search's line (its score, a mate as one
        within that depth; its move the PV; no nodes counted)."""
        from garfish.engine.search.timeman import time_budget
        from garfish.engine.services.quick import MATE_SCORE, quick_move
        from garfish.engine.types import MATE, SearchInfo

        state = "compiling (first start)" if self.compiling else "loading"
        self._say(f"the engine's kernels are still {state}: a move from a quick search")
        optimum = None if limits.infinite or limits.ponder else time_budget(limits, board.turn)[0]
        start = time.perf_counter()

        def report(depth: int, score: int, move: chess.Move) -> None:
            if abs(score) >= MATE_SCORE:
                score = MATE - depth if score > 0 else -(MATE - depth)
            if on_info is not None:
                on_info(SearchInfo(depth, depth, score, "exact", 0, time.perf_counter() - start, 0, [move]))
        return quick_move(board, optimum if optimum is not None else QUICK_SECONDS, on_depth=report)

    def _playable(self, board: chess.Board, move: Optional[chess.Move],
                  ponder: Optional[chess.Move]) -> tuple[Optional[chess.Move], Optional[chess.Move]]:
        """The move and ponder move if legal; else, having said so, a legal move chosen without the
        search (fallback_move) and no ponder move; (None, None) only when there is no legal move."""
        if move is not None and not board.is_legal(move):
            self._say("error: the search returned an illegal move; playing a legal one instead")
            move = None
        if move is None:
            return fallback_move(board), None
        if ponder is not None:
            board.push(move)
            if not board.is_legal(ponder):
                ponder = None
            board.pop()
        return move, ponder

    def _book_move(self, board: chess.Board,
                   limits: Limits) -> tuple[Optional[chess.Move], Optional[chess.Move]]:
        """The book's move (within searchmoves) and its most played reply as the ponder move, having
        said so; (None, None) out of book, or, said as an error, when the book cannot be read."""
        book = self.book
        assert book is not None
        try:
            chosen = book.choose(board, self.book_best_move, limits.searchmoves or None)
            if chosen is None:
                return None, None
            board.push(chosen.move)
            try:
                reply = book.choose(board, best_only=True)
            finally:
                board.pop()
        except Exception as exc:  # a file that fails on read: search instead
            self._say(f"error: could not read the book '{book.path}' ({type(exc).__name__}: {exc}); searching")
            return None, None
        self._say(f"book move {board.uci(chosen.move, chess960=board.chess960)} "
                  f"(weight {chosen.weight} of {chosen.total}, {book.name})")
        return chosen.move, reply.move if reply is not None else None

    @property
    def searching(self) -> bool:
        """True while go()'s search thread is alive."""
        return self.search_thread is not None and self.search_thread.is_alive()

    def stop(self) -> None:
        """End the running search as soon as possible (thread-safe); an infinite or pondering one
        then reports its move."""
        self.stop_flag.set()
        self.release.set()

    def wait(self) -> None:
        """Stop go()'s search, if any, and wait until it has reported its move."""
        if self.search_thread is not None:
            self.stop()
            self.search_thread.join()
            self.search_thread = None

    def wait_done(self, timeout: Optional[float] = None) -> bool:
        """Wait, without stopping it, until go()'s search has reported its move (at most timeout
        seconds; None: however long it takes); whether it has (or none was running)."""
        thread = self.search_thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def ponderhit(self) -> None:
        """The opponent played the pondered move: the search goes on under the clock (see
        Searcher.ponderhit), and reports its move when done."""
        if self.searching and self._limits is not None:
            # The limits first: a search thread that has not started yet reads them, one that
            # has started hears it from the searcher.
            self._limits.ponder = False
            if self.searcher is not None:
                self.searcher.ponderhit()
            self.release.set()

    # ------------------------------------------------------------------ settings
    def new_game(self) -> None:
        """Forget everything learned: the table and every searcher's histories."""
        self.wait()
        if self._settle() is None:  # compiling: nothing learned yet
            return
        assert self.tt is not None and self.searcher is not None
        if self.helpers is not None:
            self.helpers.clear()
        self.tt.clear()
        self.searcher.new_game()

    def clear_hash(self) -> None:
        """Empty the transposition table."""
        if self._settle() is not None:
            assert self.tt is not None
            self.tt.clear()

    def set_hash(self, megabytes: int) -> None:
        """Resize (and so clear) the transposition table; without the memory, keep the old one
        (EngineError says so)."""
        if self._settle(hash_mb=megabytes) is None:
            return
        assert self.tt is not None
        try:
            self.tt.resize(megabytes)
        except MemoryError as exc:
            raise EngineError(f"could not resize the hash table to {megabytes} MB ({exc}); "
                              f"keeping the {self.tt.megabytes} MB table") from None
        self.hash_mb = megabytes
        if self.helpers is not None:
            self.helpers.use_table(self.tt)  # helpers still on the old block keep its pages until they switch

    def set_threads(self, threads: int) -> None:
        """Search with this many processes: threads - 1 helpers (engine.services.smp) on a table in shared
        memory, or none and a private table for 1; the table is cleared. Without the memory or the
        processes, EngineError, and the engine searches as before."""
        if self._settle(_threads_wanted=threads) is None:
            return
        self._start_threads(threads)

    def _start_threads(self, threads: int) -> None:
        """set_threads's work on a built engine."""
        from garfish.engine.services.smp import HelperPool
        from garfish.engine.search.tt import TranspositionTable

        searcher = self.searcher
        assert searcher is not None
        if threads == self.threads:
            return
        before, old_pool, old_tt = self.threads, self.helpers, self.tt
        assert old_tt is not None
        try:
            tt = TranspositionTable(old_tt.megabytes, shared=threads > 1)
            try:
                pool = HelperPool(threads - 1, tt, self.evaluator.network if self.evaluator is not None else None,
                                  lambda text: self._say("error: " + text)) if threads > 1 else None
            except BaseException:
                tt.close()
                raise
        except (MemoryError, OSError) as exc:
            raise EngineError(f"could not start {threads} search processes ({exc}); keeping {before}") from None
        self.tt, self.helpers, searcher.tt = tt, pool, tt
        if old_pool is not None:
            old_pool.close()
        old_tt.close()
        searcher.history.clear()

    def set_eval_file(self, value: str) -> str:
        """Evaluate with the network of the file (a relative path from the working folder, else
        engine/nets/), or with the hand-written evaluation for <classic>, and forget what the table
        and histories learned with the other one; a file that cannot be used keeps the evaluation
        in use (EngineError says why). The same value again loads nothing (as in Stockfish).
        Returns the evaluation in use, in words."""
        from garfish.engine.evaluation.evalfile import load_evaluator
        from garfish.engine.evaluation.network import NetworkError

        searcher = self._settle(eval_file=value)
        if searcher is None or value == self.eval_file:
            return self.evaluation
        try:
            evaluator = load_evaluator(value)
        except NetworkError as exc:
            raise EngineError(f"EvalFile {value}: {exc}; keeping {self.evaluation}") from None
        searcher.evaluator = evaluator
        self.eval_file = value
        if self.helpers is not None:
            self.helpers.use_network(evaluator.network if evaluator is not None else None)
        self.new_game()
        return self.evaluation

    @property
    def evaluation(self) -> str:
        """The evaluation searches use, in words."""
        evaluator = self.evaluator
        if evaluator is None:
            return f"the hand-written evaluation ({CLASSIC})"
        return f"the network {evaluator.describe()}"

    def evaluate(self, board: chess.Board) -> int:
        """The static evaluation of the board, in centipawns from the side to move's view."""
        if self._built() is None:
            raise EngineError(f"the engine failed to load: {self.load_error}")
        evaluator = self.evaluator
        if evaluator is not None:
            return evaluator.evaluate(board)
        from garfish.engine.evaluation.classic import evaluate

        return evaluate(board)

    def set_syzygy_path(self, path: str) -> Optional[Tablebases]:
        """Probe the Syzygy tables of these folders (separated by os.pathsep; "" for none); folders
        that cannot serve keep the previous tables (EngineError says why). Returns the tables."""
        if self._settle(_syzygy_wanted=path) is None:
            return None
        return self._open_tables(path)

    def _open_tables(self, path: str) -> Optional[Tablebases]:
        """set_syzygy_path's work on a built engine."""
        from garfish.engine.services.syzygy import TablebaseError, Tablebases

        searcher = self.searcher
        assert searcher is not None
        old = self.tablebase
        tablebase = None
        if path:
            try:
                tablebase = Tablebases(path, self.syzygy_probe_limit, self.syzygy_probe_depth, self.syzygy_rule50,
                                       lambda text: self._say("error: " + text))
            except TablebaseError as exc:
                keeping = f"keeping the tablebases of '{old.path}'" if old is not None else "no tablebases are used"
                raise EngineError(f"could not use SyzygyPath '{path}': {exc}; {keeping}") from None
        self.tablebase = searcher.tablebase = tablebase
        if old is not None:
            old.close()
        return tablebase

    def set_syzygy_probe_limit(self, pieces: int) -> None:
        """SyzygyProbeLimit: the most pieces of a position probed in the search."""
        self.syzygy_probe_limit = pieces
        if self.tablebase is not None:
            self.tablebase.probe_limit = pieces

    def set_syzygy_probe_depth(self, depth: int) -> None:
        """SyzygyProbeDepth: the least depth at which positions at the probe limit are probed."""
        self.syzygy_probe_depth = depth
        if self.tablebase is not None:
            self.tablebase.probe_depth = depth

    def set_syzygy_rule50(self, on: bool) -> None:
        """Syzygy50MoveRule: a tablebase win the fifty-move rule turns into a draw is a draw."""
        self.syzygy_rule50 = on
        if self.tablebase is not None:
            self.tablebase.rule50 = on

    def set_book_file(self, path: str) -> Optional[Book]:
        """Play from this Polyglot book (go(..., use_book=True)); "" for none. A file that cannot
        serve as one keeps the previous book (EngineError says why). Returns the book."""
        if not path:
            if self.book is not None:
                self.book.close()
            self.book = None
            return None
        from garfish.engine.services.book import Book, BookError

        try:
            book = Book(path)
        except (OSError, BookError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            keeping = f"keeping the book '{self.book.path}'" if self.book is not None else "no book is used"
            raise EngineError(f"could not use the book '{path}': {why}; {keeping}") from None
        if self.book is not None:
            self.book.close()
        self.book = book
        return book

    def close(self) -> None:
        """Stop any search, end the helper processes and give back the shared table; the engine then
        searches alone on a private table."""
        self.wait()
        try:
            if not self._loaded.is_set() or self.helpers is None:
                return
            from garfish.engine.search.tt import TranspositionTable

            assert self.tt is not None and self.searcher is not None
            self.helpers.close()
            self.helpers = None
            megabytes = self.tt.megabytes
            self.tt.close()
            self.tt = self.searcher.tt = TranspositionTable(megabytes)
        finally:
            self._closed.set()  # the helpers are gone: start_loading's thread may end
