"""The UCI conversation: read commands, keep the position, run searches on a worker thread.

The main thread owns stdin and answers at once (`isready` included) while a
worker thread searches. The engine (Numba kernels) loads on a background
thread at start-up so that `uciok` never waits for it; `isready` and `go` do.
Every reply goes through send(), which flushes, from either thread.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from typing import TYPE_CHECKING, Any, Callable, Optional, TextIO, Union

import chess
import chess.polyglot

from garfish.uci import __version__
from garfish.uci.options import Button, Check, Option, OptionError, Spin, String, find_option

if TYPE_CHECKING:  # at run time the engine loads on a background thread, after `uciok`
    from garfish.engine.book import Book
    from garfish.engine.search import SearchInfo, Searcher
    from garfish.engine.types import Limits

ENGINE_NAME = f"Garfish {__version__}"
ENGINE_AUTHOR = "the Garfish developers"

def milliseconds(value: int) -> float:
    """A time the GUI sent in milliseconds, in seconds (a negative time counts as none left)."""
    return max(0, value) / 1000.0


def at_least_one(value: int) -> int:
    """A depth, node or mate limit: 0 or less means the smallest search, not none."""
    return max(1, value)


# The numeric `go` parameters but perft, each with how its number becomes the Limits field of the same name.
GO_NUMBER_TO_LIMIT: dict[str, Callable[[int], Union[int, float, None]]] = {
    "wtime": milliseconds,
    "btime": milliseconds,
    "winc": milliseconds,
    "binc": milliseconds,
    "movetime": milliseconds,
    "movestogo": lambda value: value if value > 0 else None,  # 0 or less: no moves-to-go, sudden death
    "depth": at_least_one,
    "nodes": at_least_one,
    "mate": at_least_one,
}
GO_INT_PARAMS = (*GO_NUMBER_TO_LIMIT, "perft")
GO_FLAGS = ("infinite", "ponder")
GO_KEYWORDS = GO_INT_PARAMS + GO_FLAGS + ("searchmoves",)

# Positions python-chess can represent but no search should be asked to play from.
FATAL_STATUS = (
    chess.STATUS_EMPTY | chess.STATUS_NO_WHITE_KING | chess.STATUS_NO_BLACK_KING | chess.STATUS_TOO_MANY_KINGS
    | chess.STATUS_PAWNS_ON_BACKRANK | chess.STATUS_OPPOSITE_CHECK
)
STATUS_TEXT = {
    chess.STATUS_EMPTY: "the board is empty",
    chess.STATUS_NO_WHITE_KING: "white has no king",
    chess.STATUS_NO_BLACK_KING: "black has no king",
    chess.STATUS_TOO_MANY_KINGS: "too many kings",
    chess.STATUS_PAWNS_ON_BACKRANK: "pawns on the first or last rank",
    chess.STATUS_OPPOSITE_CHECK: "the side not to move is in check",
}


class UciError(ValueError):
    """Bad input from the GUI: reported as `info string`, never fatal."""


def parse_position(args: list[str], chess960: bool) -> chess.Board:
    """Build the board a `position` command describes, or raise UciError; never half-applied."""
    if not args:
        raise UciError("position needs 'startpos' or 'fen <FEN>'")
    if "moves" in args:
        split = args.index("moves")
        spec, moves = args[:split], args[split + 1:]
    else:
        spec, moves = args, []
    if not spec:
        raise UciError("position needs 'startpos' or 'fen <FEN>' before 'moves'")
    if spec[0] == "startpos":
        if len(spec) > 1:
            raise UciError(f"unexpected '{' '.join(spec[1:])}' after startpos")
        board = chess.Board(chess960=chess960)
    elif spec[0] == "fen":
        fen = " ".join(spec[1:])
        if not fen:
            raise UciError("position fen needs a FEN")
        try:
            board = chess.Board(fen, chess960=chess960)
        except ValueError as exc:
            raise UciError(f"invalid FEN '{fen}': {exc}") from None
        status = board.status()
        if status & FATAL_STATUS:
            reasons = [text for flag, text in STATUS_TEXT.items() if status & flag]
            raise UciError(f"invalid position '{fen}': {', '.join(reasons)}")
        if status & chess.STATUS_INVALID_EP_SQUARE:
            board.ep_square = None
        if status & chess.STATUS_BAD_CASTLING_RIGHTS:
            board.castling_rights = board.clean_castling_rights()
    else:
        raise UciError(f"position needs 'startpos' or 'fen', not '{spec[0]}'")
    for text in moves:
        try:
            move = board.parse_uci(text)
        except ValueError:
            raise UciError(f"illegal move '{text}' in position command (position unchanged)") from None
        if not move:
            raise UciError("null move '0000' in position command (position unchanged)")
        board.push(move)
    return board


def parse_go(args: list[str], board: chess.Board, warn: Callable[[str], None]) -> tuple[Limits, Optional[int]]:
    """Read `go` parameters into Limits (times in seconds) and the depth of `go perft N` (None
    without perft); report malformed parameters through warn and skip them."""
    from garfish.engine.types import Limits  # not at import: `uciok` comes before any engine module loads

    limits = Limits()
    perft: Optional[int] = None
    i = 0
    while i < len(args):
        token = args[i]
        if token in GO_FLAGS:
            setattr(limits, token, True)
            i += 1
        elif token in GO_INT_PARAMS:
            if i + 1 >= len(args):
                warn(f"go {token} needs a number")
                i += 1
                continue
            number = parse_number(args[i + 1])
            if number is None:
                warn(f"go {token} needs a finite number, not '{args[i + 1]}'")
            elif token == "perft":
                perft = number
            else:
                setattr(limits, token, GO_NUMBER_TO_LIMIT[token](number))
            i += 2
        elif token == "searchmoves":
            i += 1
            limits.searchmoves = []
            while i < len(args) and args[i] not in GO_KEYWORDS:
                try:
                    limits.searchmoves.append(board.parse_uci(args[i]))
                except ValueError:
                    warn(f"searchmoves: '{args[i]}' is not a legal move here")
                i += 1
        else:
            warn(f"unknown go parameter '{token}'")
            i += 1
    if (limits.wtime is None) != (limits.btime is None):
        # A clock for one side only: the other side's missing clock counts as empty.
        limits.wtime, limits.btime = limits.wtime or 0.0, limits.btime or 0.0
    if not any((limits.movetime is not None, limits.wtime is not None, limits.depth, limits.nodes, limits.mate,
                limits.ponder)):
        limits.infinite = True  # a bare `go` searches until `stop`
    return limits, perft


def book_applies(limits: Limits) -> bool:
    """Whether a `go` may be answered from the book: a game move, on the clock or with a movetime
    (pondering included: the book move waits for ponderhit); analysis (infinite, depth, nodes,
    mate) always searches."""
    timed = limits.wtime is not None or limits.movetime is not None
    return timed and not (limits.infinite or limits.depth or limits.nodes or limits.mate)


def parse_number(text: str) -> Optional[int]:
    """An integer as a GUI may send it ("1500", "1.5e3", "-0"), or None when it is not a finite number."""
    try:
        return int(text)
    except ValueError:
        try:
            return int(float(text))
        except (ValueError, OverflowError):
            return None


# Piece values in pawns for fallback_move.
FALLBACK_VALUE = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}


def fallback_move(board: chess.Board) -> Optional[chess.Move]:
    """A legal move chosen without the engine, for when there is no search to ask: a mate in one,
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


class UciEngine:
    """State and command handlers of one UCI session."""

    def __init__(self, out: TextIO = sys.stdout) -> None:
        from garfish.engine.evalfile import DEFAULT_EVAL_FILE  # no Numba: the EvalFile default
        from garfish.engine.skill import ELO_MAX, ELO_MIN  # no Numba: the strength range, for UCI_Elo

        self.out = out
        self.out_lock = threading.Lock()
        self.board = chess.Board()
        self.debug = False
        # The options, declared once: the `uci` listing, setoption's checks and each one's effect.
        self.hash = Spin("Hash", 16, "transposition table size in MB", self.set_hash, min=1, max=32768)
        self.move_overhead = Spin("Move Overhead", 30, "milliseconds kept back per move for GUI and network lag",
                                  min=0, max=5000)
        self.uci_chess960 = Check("UCI_Chess960", False, "Chess960 castling notation (king takes rook)",
                                  self.set_chess960)
        self.own_book = Check("OwnBook", False, "play moves from the BookFile while the position is in it")
        self.book_file = String("BookFile", help="Polyglot opening book (.bin)", on_change=self.set_book_file)
        self.book_best_move = Check("BookBestMove", False,
                                    "play the book's highest-weight move, not a random one by weight")
        self.show_wdl = Check("UCI_ShowWDL", False, "add win/draw/loss chances (per mille) to info lines")
        self.analyse_mode = Check("UCI_AnalyseMode", False, "the GUI analyses: search every position, never the book")
        self.multipv = Spin("MultiPV", 1, "report this many best moves, each with its own score and PV",
                            min=1, max=256)
        self.limit_strength = Check("UCI_LimitStrength", False, "play at about the strength UCI_Elo")
        self.uci_elo = Spin("UCI_Elo", ELO_MAX, "the strength played at with UCI_LimitStrength",
                            min=ELO_MIN, max=ELO_MAX)
        self.syzygy_path = String("SyzygyPath", help=f"Syzygy tablebase folders, separated by '{os.pathsep}'",
                                  on_change=self.set_syzygy_path)
        self.syzygy_probe_depth = Spin("SyzygyProbeDepth", 1, "least depth to probe positions at the probe limit",
                                       lambda depth: self.set_tablebase_setting("probe_depth", depth), min=1, max=100)
        self.syzygy_50_move_rule = Check("Syzygy50MoveRule", True,
                                         "a tablebase win the fifty-move rule turns into a draw is a draw",
                                         lambda on: self.set_tablebase_setting("rule50", on))
        self.syzygy_probe_limit = Spin("SyzygyProbeLimit", 7, "most pieces of a position probed in the tablebases",
                                       lambda limit: self.set_tablebase_setting("probe_limit", limit), min=0, max=7)
        self.eval_file = String("EvalFile", DEFAULT_EVAL_FILE,
                                "the evaluation: a network file (.gfnn), or <classic> for the hand-written one",
                                self.set_eval_file)
        self.options: list[Option[Any]] = [
            self.hash,
            Button("Clear Hash", help="empty the transposition table", on_change=self.clear_hash),
            Spin("Threads", 1, "search processes: the main search and Threads - 1 Lazy SMP helpers", self.set_threads,
                 min=1, max=512),
            self.move_overhead,
            Check("Ponder", False, "the GUI may send go ponder"),
            self.uci_chess960,
            self.own_book,
            self.book_file,
            self.book_best_move,
            self.show_wdl,
            self.analyse_mode,
            self.multipv,
            self.limit_strength,
            self.uci_elo,
            self.syzygy_path,
            self.syzygy_probe_depth,
            self.syzygy_50_move_rule,
            self.syzygy_probe_limit,
            self.eval_file,
        ]
        self.book: Optional[Book] = None  # the BookFile's book, opened when the option is set
        self.searcher: Optional[Searcher] = None
        self.load_error: Optional[str] = None  # why the engine could not be built, reported on each use
        self.load_warnings: list[str] = []  # how it was built otherwise than asked, reported once
        self.loaded = threading.Event()
        self.search_thread: Optional[threading.Thread] = None
        self.search_limits: Optional[Limits] = None  # the limits handed to the search thread
        self.stop_flag = threading.Event()  # the running search's stop flag: set here, never by the search
        self.release = threading.Event()  # lets an infinite/ponder search print its bestmove
        self.commands: dict[str, Callable[[list[str]], Optional[bool]]] = {
            "uci": self.cmd_uci,
            "debug": self.cmd_debug,
            "isready": self.cmd_isready,
            "setoption": self.cmd_setoption,
            "ucinewgame": self.cmd_ucinewgame,
            "position": self.cmd_position,
            "go": self.cmd_go,
            "stop": self.cmd_stop,
            "ponderhit": self.cmd_ponderhit,
            "quit": self.cmd_quit,
            "d": self.cmd_display,
            "eval": self.cmd_eval,
            "bench": self.cmd_bench,
        }
        threading.Thread(target=self._load, name="garfish-load", daemon=True).start()

    # ---------------------------------------------------------------- plumbing
    def send(self, line: str) -> None:
        """Write one line to the GUI and flush (thread-safe)."""
        with self.out_lock:
            try:
                self.out.write(line + "\n")
                self.out.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass  # the GUI has gone; the read loop will see EOF and quit

    def info(self, text: str) -> None:
        """Send an `info string` line."""
        self.send("info string " + " ".join(text.split("\n")))

    def _load(self) -> None:
        """Import and build the engine (Numba kernels load or compile here); without the memory
        for the Hash asked, build it with the smallest table instead, and with the hand-written
        evaluation when the default EvalFile cannot be used."""
        try:
            from garfish.engine.warmup import load_kernels

            load_kernels()  # a first start compiles in two processes (engine.warmup)
            from garfish.engine.evalfile import CLASSIC, load_evaluator
            from garfish.engine.network import NetworkError
            from garfish.engine.search import Searcher

            try:
                self.searcher = Searcher(self.hash.value)
            except MemoryError as exc:
                self.searcher = Searcher(self.hash.min)
                self.load_warnings.append(f"error: no memory for a {self.hash.value} MB hash table ({exc}); "
                                          f"using {self.hash.min} MB")
                self.hash.value = self.hash.min
            try:
                evaluator = load_evaluator(self.eval_file.default)
                if evaluator is not None:
                    self.searcher.set_evaluator(evaluator)
            except NetworkError as exc:
                self.load_warnings.append(f"error: EvalFile {self.eval_file.default}: {exc}; using {CLASSIC}, "
                                          "the hand-written evaluation")
                self.eval_file.value = CLASSIC
        except Exception:  # reported on isready/go, never swallowed
            self.load_error = traceback.format_exc()
        finally:
            self.loaded.set()

    def wait_loaded(self) -> Optional[Searcher]:
        """Block until the engine is built; the searcher, or None (after reporting why) if it failed."""
        self.loaded.wait()
        while self.load_warnings:
            self.info(self.load_warnings.pop(0))
        if self.load_error is not None:
            self.info("error: the engine failed to load: " + self.load_error.strip().splitlines()[-1])
        return self.searcher

    @property
    def chess960(self) -> bool:
        """Whether moves are written in Chess960 notation (king takes rook)."""
        return self.uci_chess960.value

    def searching(self) -> bool:
        """True while a search thread is alive."""
        return self.search_thread is not None and self.search_thread.is_alive()

    def finish_search(self) -> None:
        """Stop a running search and wait until it has printed its bestmove."""
        if self.search_thread is not None:
            self.stop_flag.set()
            self.release.set()
            self.search_thread.join()
            self.search_thread = None

    def handle(self, line: str) -> bool:
        """Execute one input line; False when the session should end."""
        tokens = line.split()
        if not tokens:
            return True
        name, args = tokens[0], tokens[1:]
        handler = self.commands.get(name)
        if handler is None:
            self.info(f"unknown command '{line.strip()[:200]}'")
            return True
        try:
            return handler(args) is not False
        except UciError as exc:
            self.info(f"error: {exc}")
        except Exception as exc:  # a bug: report it and keep the session alive
            self.info(f"error: {name}: {type(exc).__name__}: {exc}")
            if self.debug:
                for text in traceback.format_exc().splitlines():
                    self.info(text)
        return True

    def run(self, stream: TextIO) -> None:
        """Read and execute commands until `quit` or end of input."""
        while True:
            try:
                line = stream.readline()
            except (UnicodeDecodeError, ValueError) as exc:
                self.info(f"error: unreadable input: {exc}")
                continue
            if not line:
                self.cmd_quit([])
                return
            if not self.handle(line):
                return

    # ---------------------------------------------------------------- commands
    def cmd_uci(self, args: list[str]) -> None:
        """Identify the engine and list its options."""
        self.send(f"id name {ENGINE_NAME}")
        self.send(f"id author {ENGINE_AUTHOR}")
        for option in self.options:
            self.send(option.declaration())
        self.send("uciok")

    def cmd_debug(self, args: list[str]) -> None:
        """debug on|off: extra info strings (tracebacks of internal errors)."""
        if args and args[0] in ("on", "off"):
            self.debug = args[0] == "on"
        else:
            raise UciError("debug takes 'on' or 'off'")

    def cmd_isready(self, args: list[str]) -> None:
        """Answer readyok once the engine can search (at once while searching)."""
        if not self.searching():
            self.wait_loaded()
        self.send("readyok")

    def cmd_setoption(self, args: list[str]) -> None:
        """setoption name <name> [value <value>]."""
        if not args or args[0] != "name":
            raise UciError("setoption needs 'name <option> [value <value>]'")
        if "value" in args:
            split = args.index("value")
            name, value = " ".join(args[1:split]), " ".join(args[split + 1:])
        else:
            name, value = " ".join(args[1:]), None
        try:
            option = find_option(self.options, name)
            parsed = option.parse(value)
            self.finish_search()
            option.set(parsed)
        except OptionError as exc:
            raise UciError(str(exc)) from None

    # ----------------------------------------------------------------- option handlers
    def set_hash(self, megabytes: int) -> None:
        """Hash: resize (and so clear) the transposition table; without the memory, keep the old one."""
        searcher = self.wait_loaded()
        if searcher is not None:
            try:
                searcher.resize_hash(megabytes)
            except MemoryError as exc:
                raise OptionError(f"could not resize the hash table to {megabytes} MB ({exc}); "
                                  f"keeping the {searcher.tt.megabytes} MB table") from None

    def clear_hash(self, _: None) -> None:
        """Clear Hash: empty the transposition table."""
        searcher = self.wait_loaded()
        if searcher is not None:
            searcher.tt.clear()

    def set_threads(self, threads: int) -> None:
        """Threads: search with threads - 1 helper processes on a shared table (engine.smp); the
        table is cleared. Without the memory or processes, keep searching as before."""
        searcher = self.wait_loaded()
        if searcher is None:
            return
        before = 1 + (searcher.helpers.count if searcher.helpers is not None else 0)
        try:
            searcher.set_threads(threads, lambda text: self.info("error: " + text))
        except (MemoryError, OSError) as exc:
            raise OptionError(f"could not start {threads} search processes ({exc}); keeping {before}") from None

    def set_chess960(self, on: bool) -> None:
        """UCI_Chess960: the current board and the next ones use Chess960 castling."""
        self.board.chess960 = on

    def set_book_file(self, path: str) -> None:
        """BookFile: open and check the book; a file that cannot serve as one keeps the previous book."""
        if not path:
            if self.book is not None:
                self.book.close()
            self.book = None
            return
        from garfish.engine.book import Book, BookError

        try:
            book = Book(path)
        except (OSError, BookError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            keeping = f"keeping the book '{self.book.path}'" if self.book is not None else "no book is used"
            raise OptionError(f"could not use the book '{path}': {why}; {keeping}") from None
        if self.book is not None:
            self.book.close()
        self.book = book
        self.info(f"book '{path}': {book.size} entries")

    def set_syzygy_path(self, path: str) -> None:
        """SyzygyPath: open the tables of the folders; folders that cannot serve keep the previous tables."""
        searcher = self.wait_loaded()
        if searcher is None:
            return
        old = searcher.tablebase
        if not path:
            searcher.tablebase = None
        else:
            from garfish.engine.syzygy import TablebaseError, Tablebases

            try:
                tablebase = Tablebases(path, self.syzygy_probe_limit.value, self.syzygy_probe_depth.value,
                                       self.syzygy_50_move_rule.value, lambda text: self.info("error: " + text))
            except TablebaseError as exc:
                keeping = f"keeping the tablebases of '{old.path}'" if old is not None else "no tablebases are used"
                raise OptionError(f"could not use SyzygyPath '{path}': {exc}; {keeping}") from None
            searcher.tablebase = tablebase
            self.info(f"Found {tablebase.wdl_count} WDL and {tablebase.dtz_count} DTZ tablebase files "
                      f"(up to {tablebase.max_pieces}-man)")
        if old is not None:
            old.close()

    def set_eval_file(self, value: str) -> None:
        """EvalFile: evaluate with the network of the file (a relative path from the working folder,
        else engine/nets/), or with the hand-written evaluation for <classic>; a file that cannot be
        used keeps the evaluation in use. The same value again loads nothing (as in Stockfish)."""
        searcher = self.wait_loaded()
        if searcher is None or value == self.eval_file.value:
            return
        from garfish.engine.evalfile import load_evaluator
        from garfish.engine.network import NetworkError

        try:
            evaluator = load_evaluator(value)
        except NetworkError as exc:
            raise OptionError(f"EvalFile {value}: {exc}; keeping {self.evaluation(searcher)}") from None
        searcher.set_evaluator(evaluator)
        self.info(f"EvalFile {value}: {self.evaluation(searcher)}")

    @staticmethod
    def evaluation(searcher: Searcher) -> str:
        """The evaluation the searcher uses, in words."""
        if searcher.evaluator is None:
            return "the hand-written evaluation (<classic>)"
        return f"the network {searcher.evaluator.describe()}"

    def set_tablebase_setting(self, name: str, value: Union[int, bool]) -> None:
        """SyzygyProbeDepth, Syzygy50MoveRule, SyzygyProbeLimit: the open tables' setting of that name
        (tables opened later take the option's value)."""
        if self.searcher is not None and self.searcher.tablebase is not None:
            setattr(self.searcher.tablebase, name, value)

    def cmd_ucinewgame(self, args: list[str]) -> None:
        """A new game: clear the TT and histories."""
        self.finish_search()
        self.board = chess.Board(chess960=self.chess960)
        searcher = self.wait_loaded()
        if searcher is not None:
            searcher.new_game()

    def cmd_position(self, args: list[str]) -> None:
        """position startpos|fen <FEN> [moves ...]: all or nothing."""
        board = parse_position(args, self.chess960)
        self.finish_search()
        self.board = board

    def cmd_go(self, args: list[str]) -> None:
        """Start a search on the worker thread (or run `go perft N`)."""
        self.finish_search()
        limits, perft = parse_go(args, self.board, lambda text: self.info(f"error: {text}"))
        if perft is not None:
            self.run_perft(perft)
            return
        searcher = self.wait_loaded()  # None (reported): the worker then plays a move chosen without it
        limits.move_overhead = self.move_overhead.value / 1000.0
        limits.multipv = self.multipv.value
        limits.elo = self.uci_elo.value if self.limit_strength.value else None
        # A fresh flag per search, made before its thread starts: a stop that follows at once is never lost.
        self.stop_flag = threading.Event()
        self.release.clear()
        board = self.board.copy()
        self.search_limits = limits
        book = self.book if self.own_book.value and not self.analyse_mode.value and book_applies(limits) else None
        self.search_thread = threading.Thread(target=self._search,
                                              args=(searcher, book, board, limits, self.stop_flag),
                                              name="garfish-search", daemon=True)
        self.search_thread.start()

    def _search(self, searcher: Optional[Searcher], book: Optional[Book], board: chess.Board, limits: Limits,
                stop: threading.Event) -> None:
        """Worker thread: play from the book or search, report, and print exactly one bestmove."""
        move, ponder = self.book_move(book, board, limits) if book is not None else (None, None)
        if move is None and searcher is not None:
            try:
                result = searcher.search(board, limits, on_info=lambda info: self.send(self.info_line(board, info)),
                                         stop=stop)
                move, ponder = result.move, result.ponder
            except Exception:
                for text in traceback.format_exc().strip().splitlines():
                    self.info("error: search failed: " + text)
        if limits.infinite or limits.ponder:
            self.release.wait()  # UCI: no bestmove before stop (or ponderhit)
        self.send(self.bestmove_line(board, move, ponder))

    def book_move(self, book: Book, board: chess.Board,
                  limits: Limits) -> tuple[Optional[chess.Move], Optional[chess.Move]]:
        """The book's move (within searchmoves) and its most played reply as the ponder move, having
        said so; (None, None) out of book, or, said as an error, when the book cannot be read."""
        try:
            chosen = book.choose(board, self.book_best_move.value, limits.searchmoves or None)
            if chosen is None:
                return None, None
            board.push(chosen.move)
            try:
                reply = book.choose(board, best_only=True)
            finally:
                board.pop()
        except Exception as exc:  # a file that fails on read: search instead
            self.info(f"error: could not read the book '{book.path}' ({type(exc).__name__}: {exc}); searching")
            return None, None
        self.info(f"book move {board.uci(chosen.move, chess960=self.chess960)} "
                  f"(weight {chosen.weight} of {chosen.total}, {book.name})")
        return chosen.move, reply.move if reply is not None else None

    def bestmove_line(self, board: chess.Board, move: Optional[chess.Move], ponder: Optional[chess.Move]) -> str:
        """The move (and ponder move) if legal; else, having said so, a legal move chosen without
        the engine. `bestmove 0000` only when there is no legal move."""
        if move is not None and not board.is_legal(move):
            self.info("error: the search returned an illegal move; playing a legal one instead")
            move = None
        if move is None:
            ponder = None
            move = fallback_move(board)
            if move is None:
                return "bestmove 0000"
        line = "bestmove " + board.uci(move, chess960=self.chess960)
        if ponder is not None:
            board.push(move)
            if board.is_legal(ponder):
                line += " ponder " + board.uci(ponder, chess960=self.chess960)
            board.pop()
        return line

    def info_line(self, board: chess.Board, info: SearchInfo) -> str:
        """Format a search report as an `info` line (PV moves checked for legality)."""
        mate = info.mate
        score = f"mate {mate}" if mate is not None else f"cp {info.cp}"
        if self.show_wdl.value:
            from garfish.engine.wdl import material, wdl  # loaded with the engine, before any search

            score += " wdl {} {} {}".format(*wdl(info.score, material(board)))
        if info.bound == "lower":
            score += " lowerbound"
        elif info.bound == "upper":
            score += " upperbound"
        walk = board.copy(stack=False)
        pv = []
        for move in info.pv:
            if not walk.is_legal(move):
                break
            pv.append(walk.uci(move, chess960=self.chess960))
            walk.push(move)
        line = (f"info depth {info.depth} seldepth {max(info.seldepth, info.depth)} multipv {info.multipv} "
                f"score {score} nodes {info.nodes} nps {info.nps} hashfull {info.hashfull} tbhits {info.tbhits} "
                f"time {int(info.time * 1000)}")
        return line + (" pv " + " ".join(pv) if pv else "")

    def cmd_stop(self, args: list[str]) -> None:
        """Stop the search; its thread prints the bestmove."""
        self.finish_search()

    def cmd_ponderhit(self, args: list[str]) -> None:
        """The pondered move was played: switch the search to the normal clock."""
        if self.searching() and self.search_limits is not None:
            # The limits first: a search thread that has not started yet reads them, one that
            # has started hears it from searcher.ponderhit().
            self.search_limits.ponder = False
            if self.searcher is not None:
                self.searcher.ponderhit()
            self.release.set()

    def cmd_quit(self, args: list[str]) -> bool:
        """End the session (after stopping any search and ending the helper processes)."""
        self.finish_search()
        if self.loaded.is_set() and self.searcher is not None:
            self.searcher.close()
        return False

    def cmd_display(self, args: list[str]) -> None:
        """Show the board, FEN, key and checkers (for humans)."""
        board = self.board
        for row in str(board).splitlines():
            self.send(row)
        self.send(f"Fen: {board.fen()}")
        self.send(f"Key: {chess.polyglot.zobrist_hash(board):016X}")
        checkers = " ".join(chess.square_name(sq) for sq in board.checkers())
        self.send(f"Checkers: {checkers}")

    def cmd_eval(self, args: list[str]) -> None:
        """Print the static evaluation of the current position, and which evaluation gave it."""
        searcher = self.wait_loaded()
        if searcher is not None:
            from garfish.engine.evaluate import evaluate

            evaluator = searcher.evaluator
            score = evaluate(self.board) if evaluator is None else evaluator.evaluate(self.board)
            white = score if self.board.turn == chess.WHITE else -score
            self.send(f"info string eval {score} cp (side to move), {white} cp (white), by {self.evaluation(searcher)}")

    def cmd_bench(self, args: list[str]) -> None:
        """Run the bench and print its node count."""
        self.finish_search()
        depth = int(args[0]) if args and args[0].isdigit() else None
        searcher = self.wait_loaded()
        if searcher is not None:
            from garfish.uci.tools import print_bench

            print_bench(depth, self.send, evaluator=searcher.evaluator)

    def run_perft(self, depth: int) -> None:
        """go perft N: one `move: count` line per root move, then the total."""
        from garfish.perft.core import divide

        if depth < 1:
            raise UciError("go perft needs a depth of at least 1")
        total = 0
        for move, count in divide(self.board, depth):
            self.send(f"{self.board.uci(move, chess960=self.chess960)}: {count}")
            total += count
        self.send("")
        self.send(f"Nodes searched: {total}")


def run_session(stream: TextIO = sys.stdin, out: TextIO = sys.stdout) -> None:
    """Run a UCI session over the given streams."""
    UciEngine(out).run(stream)
