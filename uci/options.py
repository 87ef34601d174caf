"""UCI options, declared once as typed data: the `uci` listing and `setoption` both use it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

Value = Union[int, bool, str, None]


class OptionError(ValueError):
    """A setoption that names no option or gives a value out of range."""


@dataclass
class Option:
    """One UCI option: its type, default and limits."""

    name: str
    type: str  # "spin", "check", "button", "string"
    default: Value = None
    min: Optional[int] = None
    max: Optional[int] = None
    help: str = ""

    def declaration(self) -> str:
        """The `option ...` line sent in reply to `uci`."""
        line = f"option name {self.name} type {self.type}"
        if self.type == "check":
            line += f" default {'true' if self.default else 'false'}"
        elif self.type == "spin":
            line += f" default {self.default} min {self.min} max {self.max}"
        elif self.type == "string":
            line += f" default {self.default if self.default not in (None, '') else '<empty>'}"
        return line

    def parse(self, text: Optional[str]) -> Value:
        """Turn setoption's value text into a typed value, or raise OptionError saying why."""
        if self.type == "button":
            return None
        if text is None:
            raise OptionError(f"option '{self.name}' needs a value")
        if self.type == "check":
            lowered = text.strip().lower()
            if lowered not in ("true", "false"):
                raise OptionError(f"option '{self.name}' takes true or false, not '{text}'")
            return lowered == "true"
        if self.type == "spin":
            try:
                number = int(text.strip())
            except ValueError:
                raise OptionError(f"option '{self.name}' takes an integer, not '{text}'") from None
            assert self.min is not None and self.max is not None
            if not self.min <= number <= self.max:
                raise OptionError(f"option '{self.name}' must be between {self.min} and {self.max}, not {number}")
            return number
        return text


OPTIONS = [
    Option("Hash", "spin", 16, 1, 32768, "transposition table size in MB"),
    Option("Clear Hash", "button", help="empty the transposition table"),
    Option("Threads", "spin", 1, 1, 512, "search threads (Garfish searches with one)"),
    Option("Move Overhead", "spin", 30, 0, 5000, "milliseconds kept back per move for GUI and network lag"),
    Option("Ponder", "check", False, help="the GUI may send go ponder"),
    Option("UCI_Chess960", "check", False, help="Chess960 castling notation (king takes rook)"),
]


def find_option(name: str) -> Option:
    """The option with this name (case-insensitive, as the UCI protocol says), or OptionError."""
    wanted = " ".join(name.split()).lower()
    for option in OPTIONS:
        if option.name.lower() == wanted:
            return option
    raise OptionError(f"no such option '{name}'")
