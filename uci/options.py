"""UCI options as typed data: each is declared once, with its on-change handler, and the
`uci` listing, `setoption` validation and the option's effect all come from that declaration."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Generic, Iterable, Optional, TypeVar

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
