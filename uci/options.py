"""UCI options as typed data: each is declared once (UciOptions), with its on-change handler, and
the `uci` listing, `setoption` validation and the option's effect all come from that declaration."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Generic, Iterable, Optional, TypeVar

if TYPE_CHECKING:
    from garfish.engine.engine import Engine

T = TypeVar("T")


class OptionError(ValueError):
    """A setoption that names no option, gives a value out of range, or whose effect failed."""


@dataclass
class Option(Generic[T]):
    """One UCI option: its default, current value and the handler that carries out a new value."""

    name: str
    default: T
    help: str = ""
    on_change: Optional[Callable[[T], None]] = None
    """Called with a new value before it is kept; raises OptionError when the effect cannot be
    carried out, and must then leave the previous working state."""
    value: T = field(init=False)
    kind: ClassVar[str] = ""  # the UCI type: "spin", "check", "button", "string"

    def __post_init__(self) -> None:
        self.value = self.default

    def declaration(self) -> str:
        """The `option ...` line sent in reply to `uci`."""
        return f"option name {self.name} type {self.kind}"

    def parse(self, text: Optional[str]) -> T:
        """Turn setoption's value text into a typed value, or raise OptionError saying why."""
        if text is None:
            raise OptionError(f"option '{self.name}' needs a value")
        return self.read(text.strip())

    def read(self, text: str) -> T:
        """The typed value of a value text, or OptionError."""
        raise NotImplementedError

    def set(self, value: T) -> None:
        """Carry out a parsed value through on_change, then keep it; on OptionError the old value stays."""
        if self.on_change is not None:
            self.on_change(value)
        self.value = value


@dataclass
class Spin(Option[int]):
    """An integer between min and max."""

    min: int = field(kw_only=True)
    max: int = field(kw_only=True)
    kind: ClassVar[str] = "spin"

    def declaration(self) -> str:
        """The `option ...` line, with default and range."""
        return f"{super().declaration()} default {self.default} min {self.min} max {self.max}"

    def read(self, text: str) -> int:
        """The integer, within range."""
        try:
            number = int(text)
        except ValueError:
            raise OptionError(f"option '{self.name}' takes an integer, not '{text}'") from None
        if not self.min <= number <= self.max:
            raise OptionError(f"option '{self.name}' must be between {self.min} and {self.max}, not {number}")
        return number


@dataclass
class Check(Option[bool]):
    """true or false."""

    kind: ClassVar[str] = "check"

    def declaration(self) -> str:
        """The `option ...` line, with default."""
        return f"{super().declaration()} default {'true' if self.default else 'false'}"

    def read(self, text: str) -> bool:
        """True or False from 'true' or 'false' (any case)."""
        lowered = text.lower()
        if lowered not in ("true", "false"):
            raise OptionError(f"option '{self.name}' takes true or false, not '{text}'")
        return lowered == "true"


@dataclass
class Button(Option[None]):
    """An action without a value."""

    default: None = None
    kind: ClassVar[str] = "button"

    def parse(self, text: Optional[str]) -> None:
        """Nothing to read: a button ignores any value."""
        return None


# How UCI writes an empty string value (Stockfish's `type string default <empty>`); GUIs send it back.
EMPTY = "<empty>"


@dataclass
class String(Option[str]):
    """Free text such as a file path; empty by default."""

    default: str = ""
    kind: ClassVar[str] = "string"

    def declaration(self) -> str:
        """The `option ...` line, with default (`<empty>` for the empty string)."""
        return f"{super().declaration()} default {self.default or EMPTY}"

    def parse(self, text: Optional[str]) -> str:
        """The text as sent; no value, or `<empty>`, is the empty string."""
        text = (text or "").strip()
        return "" if text == EMPTY else text


def find_option(options: Iterable[Option[Any]], name: str) -> Option[Any]:
    """The option with this name (case-insensitive, as the UCI protocol says), or OptionError."""
    wanted = " ".join(name.split()).lower()
    for option in options:
        if option.name.lower() == wanted:
            return option
    raise OptionError(f"no such option '{name}'")


def carried_out_by(setter: Callable[[T], Any]) -> Callable[[T], None]:
    """An on_change handler that carries a value out through an Engine setter; the engine's
    EngineError (the setting could not be carried out, the old state kept) becomes OptionError."""
    from garfish.engine.engine import EngineError  # no NumPy nor Numba: the engine builds itself later

    def handler(value: T) -> None:
        try:
            setter(value)
        except EngineError as exc:
            raise OptionError(str(exc)) from None

    return handler


class UciOptions:
    """Every option Garfish declares, in the order `uci` lists them, each with its effect: the
    engine's settings go to the Engine's setters; the others are read where they apply (the
    protocol's `go`, its formatting of `info` lines and moves)."""

    def __init__(self, engine: Engine, say: Callable[[str], None], on_chess960: Callable[[bool], None]) -> None:
        """engine: the Engine whose settings the options change; say: where a setting's outcome is
        reported (an `info string`); on_chess960: what UCI_Chess960 changes (the protocol's board)."""
        from garfish.engine.engine import DEFAULT_HASH_MB, MAX_THREADS, MIN_HASH_MB
        from garfish.engine.evaluation.evalfile import DEFAULT_EVAL_FILE  # no Numba: the EvalFile default
        from garfish.engine.search.skill import ELO_MAX, ELO_MIN, SKILL_LEVEL_MAX  # no Numba: the strength range

        self.engine = engine
        self.say = say

        def set_book_file(path: str) -> None:
            book = engine.set_book_file(path)
            if book is not None:
                say(f"book '{path}': {book.size} entries")

        def set_syzygy_path(path: str) -> None:
            tables = engine.set_syzygy_path(path)
            if tables is not None:
                say(f"Found {tables.wdl_count} WDL and {tables.dtz_count} DTZ tablebase files "
                    f"(up to {tables.max_pieces}-man)")

        def set_eval_file(value: str) -> None:
            changed = value != engine.eval_file
            evaluation = engine.set_eval_file(value)
            if changed and engine.searcher is not None:
                say(f"EvalFile {value}: {evaluation}")

        self.hash = Spin("Hash", DEFAULT_HASH_MB, "transposition table size in MB", carried_out_by(engine.set_hash),
                         min=MIN_HASH_MB, max=32768)
        self.clear_hash = Button("Clear Hash", help="empty the transposition table",
                                 on_change=carried_out_by(lambda _: engine.clear_hash()))
        self.threads = Spin("Threads", 1, "search processes: the main search and Threads - 1 Lazy SMP helpers",
                            carried_out_by(engine.set_threads), min=1, max=MAX_THREADS)
        self.move_overhead = Spin("Move Overhead", 30, "milliseconds kept back per move for GUI and network lag",
                                  min=0, max=5000)
        self.ponder = Check("Ponder", False, "the GUI may send go ponder")
        self.uci_chess960 = Check("UCI_Chess960", False, "Chess960 castling notation (king takes rook)",
                                  on_chess960)
        self.own_book = Check("OwnBook", False, "play moves from the BookFile while the position is in it")
        self.book_file = String("BookFile", help="Polyglot opening book (.bin)",
                                on_change=carried_out_by(set_book_file))
        self.book_best_move = Check("BookBestMove", False,
                                    "play the book's highest-weight move, not a random one by weight",
                                    lambda on: setattr(engine, "book_best_move", on))
        self.show_wdl = Check("UCI_ShowWDL", False, "add win/draw/loss chances (per mille) to info lines")
        self.analyse_mode = Check("UCI_AnalyseMode", False, "the GUI analyses: search every position, never the book")
        self.multipv = Spin("MultiPV", 1, "report this many best moves, each with its own score and PV",
                            min=1, max=256)
        self.limit_strength = Check("UCI_LimitStrength", False, "play at about the strength UCI_Elo")
        self.uci_elo = Spin("UCI_Elo", ELO_MAX, "the strength played at with UCI_LimitStrength",
                            min=ELO_MIN, max=ELO_MAX)
        self.skill_level = Spin("Skill Level", SKILL_LEVEL_MAX,
                                "strength 0-20 on the same scale (20: full strength; UCI_LimitStrength overrides it)",
                                min=0, max=SKILL_LEVEL_MAX)
        self.syzygy_path = String("SyzygyPath", help=f"Syzygy tablebase folders, separated by '{os.pathsep}'",
                                  on_change=carried_out_by(set_syzygy_path))
        self.syzygy_probe_depth = Spin("SyzygyProbeDepth", engine.syzygy_probe_depth,
                                       "least depth to probe positions at the probe limit",
                                       engine.set_syzygy_probe_depth, min=1, max=100)
        self.syzygy_50_move_rule = Check("Syzygy50MoveRule", engine.syzygy_rule50,
                                         "a tablebase win the fifty-move rule turns into a draw is a draw",
                                         engine.set_syzygy_rule50)
        self.syzygy_probe_limit = Spin("SyzygyProbeLimit", engine.syzygy_probe_limit,
                                       "most pieces of a position probed in the tablebases",
                                       engine.set_syzygy_probe_limit, min=0, max=7)
        self.eval_file = String("EvalFile", DEFAULT_EVAL_FILE,
                                "the evaluation: a network file (.gfnn), or <classic> for the hand-written one",
                                carried_out_by(set_eval_file))
        self.all: list[Option[Any]] = [
            self.hash, self.clear_hash, self.threads, self.move_overhead, self.ponder, self.uci_chess960,
            self.own_book, self.book_file, self.book_best_move, self.show_wdl, self.analyse_mode, self.multipv,
            self.limit_strength, self.uci_elo, self.skill_level, self.syzygy_path, self.syzygy_probe_depth, self.syzygy_50_move_rule,
            self.syzygy_probe_limit, self.eval_file,
        ]

    def find(self, name: str) -> Option[Any]:
        """The option with this name (case-insensitive), or OptionError."""
        return find_option(self.all, name)

    def follow_engine(self) -> None:
        """Show the settings the engine was built with where it could not build what was asked
        (the smallest table for want of memory, the hand-written evaluation for a network it could
        not load)."""
        self.hash.value = self.engine.hash_mb
        self.eval_file.value = self.engine.eval_file
