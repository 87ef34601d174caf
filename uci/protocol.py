"""The UCI conversation: read commands, keep the position and the options, print the replies.

The engine itself is an engine.engine.Engine: it builds itself on a background thread at start-up
(so that neither `uciok` nor `isready` waits for the Numba kernels; a `go` does, the wait off its clock, and
settings given meanwhile are kept for the build) and searches on a thread
of its own while the main thread owns stdin and answers at once (`isready` included). This module
parses, dispatches and formats; every reply goes through send(), which flushes, from either thread.
"""

from __future__ import annotations

import sys
import threading
import traceback
from typing import TYPE_CHECKING, Callable, Optional, TextIO, Union

import chess
import chess.polyglot

from garfish.uci import __version__
from garfish.uci.options import OptionError, UciOptions

if TYPE_CHECKING:  # at run time the engine loads on a background thread, after `uciok`
    from garfish.engine.search.driver import SearchInfo
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


class UciEngine:
    """One UCI session: reads commands, keeps the position and the options, and talks to an Engine."""

    def __init__(self, out: TextIO = sys.stdout) -> None:
        from garfish.engine.engine import Engine  # no NumPy nor Numba: the engine builds itself later

        self.out = out
        self.out_lock = threading.Lock()
        self.board = chess.Board()
        self.debug = False
        self.engine = Engine(load=False, on_message=self.info, on_progress=self.progress)
        self.options = UciOptions(self.engine, self.info, self.set_chess960)
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
        self.engine.start_loading()  # neither `uciok` nor `isready` waits for it; a `go` does

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

    @staticmethod
    def progress(text: str) -> None:
        """A line about the engine's building (a first start compiles): to stderr, where GUIs log it."""
        try:
            print(text, file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass  # no stderr to write to

    def ready(self) -> bool:
        """Block until the engine can answer a `go`: built (it says how it was built otherwise than
        asked, or why it could not be; the options then show the settings it was built with), or
        compiling its kernels on a first start (moves meanwhile from a quick search); whether built."""
        built = self.engine.wait_answerable()
        if built:
            self.options.follow_engine()
        return built

    @property
    def chess960(self) -> bool:
        """Whether moves are written in Chess960 notation (king takes rook)."""
        return self.options.uci_chess960.value

    def set_chess960(self, on: bool) -> None:
        """UCI_Chess960: the current board and the next ones use Chess960 castling."""
        self.board.chess960 = on

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
        for option in self.options.all:
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
        if not self.engine.searching:
            self.ready()
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
            option = self.options.find(name)
            parsed = option.parse(value)
            self.engine.wait()
            option.set(parsed)
        except OptionError as exc:
            raise UciError(str(exc)) from None

    def cmd_ucinewgame(self, args: list[str]) -> None:
        """A new game: clear the TT and histories."""
        self.engine.wait()
        self.board = chess.Board(chess960=self.chess960)
        self.engine.new_game()

    def cmd_position(self, args: list[str]) -> None:
        """position startpos|fen <FEN> [moves ...]: all or nothing."""
        board = parse_position(args, self.chess960)
        self.engine.wait()
        self.board = board

    def cmd_go(self, args: list[str]) -> None:
        """Start a search on the engine's search thread (or run `go perft N`)."""
        self.engine.wait()
        limits, perft = parse_go(args, self.board, lambda text: self.info(f"error: {text}"))
        if perft is not None:
            self.run_perft(perft)
            return
        self.ready()  # an engine that failed to load (said here) plays a move chosen without a search
        options = self.options
        limits.move_overhead = options.move_overhead.value / 1000.0
        limits.multipv = options.multipv.value
        from garfish.engine.search.skill import skill_level_elo  # no Numba: Skill Level's Elo

        limits.elo = options.uci_elo.value if options.limit_strength.value else skill_level_elo(options.skill_level.value)
        use_book = options.own_book.value and not options.analyse_mode.value and book_applies(limits)
        board = self.board.copy()
        self.engine.go(board, limits, on_info=lambda info: self.send(self.info_line(board, info)),
                       on_bestmove=lambda move, ponder: self.send(self.bestmove_line(board, move, ponder)),
                       use_book=use_book)

    def bestmove_line(self, board: chess.Board, move: Optional[chess.Move], ponder: Optional[chess.Move]) -> str:
        """The `bestmove` line of the engine's move (legal, or None when there is no legal move)."""
        if move is None:
            return "bestmove 0000"
        line = "bestmove " + board.uci(move, chess960=self.chess960)
        if ponder is not None:
            board.push(move)
            line += " ponder " + board.uci(ponder, chess960=self.chess960)
            board.pop()
        return line

    def info_line(self, board: chess.Board, info: SearchInfo) -> str:
        """Format a search report as an `info` line (PV moves checked for legality)."""
        mate = info.mate
        score = f"mate {mate}" if mate is not None else f"cp {info.cp}"
        if self.options.show_wdl.value:
            from garfish.engine.evaluation.wdl import material, wdl  # loaded with the engine, before any search

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
        """Stop the search; the engine's search thread then sends the bestmove."""
        self.engine.wait()

    def cmd_ponderhit(self, args: list[str]) -> None:
        """The pondered move was played: the search goes on under the normal clock."""
        self.engine.ponderhit()

    def cmd_quit(self, args: list[str]) -> bool:
        """End the session (after stopping any search and ending the helper processes)."""
        self.engine.close()
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
        if self.engine.wait_ready():
            score = self.engine.evaluate(self.board)
            white = score if self.board.turn == chess.WHITE else -score
            self.send(f"info string eval {score} cp (side to move), {white} cp (white), by {self.engine.evaluation}")

    def cmd_bench(self, args: list[str]) -> None:
        """Run the bench and print its node count."""
        self.engine.wait()
        depth = int(args[0]) if args and args[0].isdigit() else None
        if self.engine.wait_ready():
            from garfish.uci.tools import print_bench

            print_bench(depth, self.send, evaluator=self.engine.evaluator)

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
