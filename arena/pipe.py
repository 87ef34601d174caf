"""A lean UCI client over the engine's own pipes, for `garfish datagen`'s fixed-node self-play.

`garfish datagen` asks an engine for hundreds of thousands of moves an hour at a few milliseconds
each, and python-chess's client (arena.driver.EngineProcess, over asyncio in a second thread)
costs about a millisecond a move of that, in its event loop, its board copies and a watchdog
thread a move (`scripts/uci_overhead.py`: 2.9 against 4.4 ms a move with Stockfish at 2,000
nodes). This client writes the same commands (`position`, `go nodes N`) and reads the answers
itself, with select() for the deadline: one process, no threads. It parses only what datagen
needs, the last `info` line's score and the `bestmove`; everything else an engine may send is
skipped. It keeps EngineProcess's contract for what datagen calls (new_game, play, restart,
close, kill; EngineStartError and MoveError with the same kinds), so a misbehaving engine is
dropped, reported and restarted in the same way.
"""

from __future__ import annotations

import logging
import os
import select
import shlex
import signal
import subprocess
import time
from typing import Optional

import chess
import chess.engine

from garfish.arena.driver import (QUIT_TIMEOUT, EngineSpec, EngineStartError, MoveError, MoveResult, coerce_options,
                                  describe_exception)

LOG = logging.getLogger(__name__)
READ_CHUNK = 65536


class EngineGone(Exception):
    """The engine's output ended (it exited or closed its pipe)."""


class PipeEngine:
    """One running UCI engine on raw pipes: start, configure, new game, fixed-node move with a deadline,
    restart, close."""

    def __init__(self, spec: EngineSpec) -> None:
        """Start the engine described by spec (raises EngineStartError)."""
        self.spec = spec
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.engine_name = ""
        self._buffer = b""
        self.start()

    @property
    def name(self) -> str:
        """The display name: the spec's name, else the engine's `id name`, else the program name."""
        return self.spec.name or self.engine_name or os.path.basename(self.spec.argv[0])

    # ----------------------------------------------------------------- the pipes
    def _send(self, text: str) -> None:
        """Write command lines (raises EngineGone when the engine has closed its input)."""
        process = self.process
        if process is None or process.stdin is None:
            raise EngineGone("the engine is not running")
        if LOG.isEnabledFor(logging.DEBUG):
            for line in text.splitlines():
                LOG.debug("%s << %s", self.name, line)
        try:
            process.stdin.write(text.encode())
            process.stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as exc:
            raise EngineGone(f"the engine closed its input ({type(exc).__name__})") from None

    def _read_line(self, deadline: Optional[float]) -> Optional[str]:
        """The engine's next output line, or None when `deadline` (perf_counter) passes first; raises
        EngineGone at the end of its output."""
        process = self.process
        if process is None or process.stdout is None:
            raise EngineGone("the engine is not running")
        fd = process.stdout.fileno()
        while b"\n" not in self._buffer:
            if deadline is not None:
                left = deadline - time.perf_counter()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    return None
            chunk = os.read(fd, READ_CHUNK)
            if not chunk:
                raise EngineGone("the engine's output ended")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\n")
        line = raw.decode(errors="replace").strip()
        LOG.debug("%s >> %s", self.name, line)
        return line

    def _wait_for(self, word: str, seconds: float) -> list[str]:
        """The lines read up to the first starting with `word` (raises TimeoutError, EngineGone)."""
        deadline = time.perf_counter() + seconds
        lines: list[str] = []
        while True:
            line = self._read_line(deadline)
            if line is None:
                raise TimeoutError(f"no {word} within {seconds:g} s")
            if line.split(" ", 1)[0] == word:
                return lines
            lines.append(line)

    # ----------------------------------------------------------------- life
    def start(self) -> None:
        """Start the process, wait for uciok, set the options, wait for readyok."""
        command = shlex.join(self.spec.argv)
        self._buffer = b""
        try:
            self.process = subprocess.Popen(
                self.spec.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=None if self.spec.show_stderr else subprocess.DEVNULL, process_group=0)
        except OSError as exc:
            raise EngineStartError(f"cannot start engine '{command}': {describe_exception(exc)}") from None
        try:
            self._send("uci\n")
            lines = self._wait_for("uciok", self.spec.start_timeout)
            declared = declared_options(lines)
            for line in lines:
                if line.startswith("id name "):
                    self.engine_name = line[len("id name "):].strip()
            self._send("".join(setoption_lines(declared, self.spec.options)) + "isready\n")
            self._wait_for("readyok", self.spec.start_timeout)
        except (ValueError, TimeoutError, EngineGone) as exc:
            self.close()
            raise EngineStartError(f"engine '{command}' failed to get ready: {describe_exception(exc)}") from None

    def alive(self) -> bool:
        """True while the engine process runs."""
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """Hard-kill the engine's process group."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # already gone: nothing to kill
        process.wait()

    def close(self) -> None:
        """Send quit, give the engine QUIT_TIMEOUT seconds, then kill it; close the pipes."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            try:
                self._send("quit\n")
                process.wait(QUIT_TIMEOUT)
            except (EngineGone, subprocess.TimeoutExpired):
                pass  # killed just below
        self.kill()
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass  # a broken pipe on closing: the process is gone either way
        self.process = None

    def restart(self) -> None:
        """Close (or kill) the engine and start a fresh process (raises EngineStartError)."""
        self.close()
        self.start()

    # ----------------------------------------------------------------- games
    def new_game(self, key: object) -> None:
        """Send ucinewgame + isready, outside any clock (raises MoveError('crash') when the engine has
        died or does not answer). `key` is EngineProcess's game marker, unused here."""
        try:
            self._send("ucinewgame\nisready\n")
            self._wait_for("readyok", self.spec.start_timeout)
        except (TimeoutError, EngineGone) as exc:
            raise MoveError("crash", f"no answer to ucinewgame/isready: {exc}", 0.0) from None

    def play(self, board: chess.Board, limit: chess.engine.Limit, game: object,
             deadline: Optional[float]) -> MoveResult:
        """Ask for a move at `limit` (nodes and/or depth); kill the engine if it has not answered after
        `deadline` seconds. Returns a legal move with {'score': PovScore} from the last info line that
        had one, or raises MoveError: 'timeout' (killed), 'crash' (died) or 'illegal' (an illegal move,
        `0000` or `bestmove (none)` while legal moves exist)."""
        start = time.perf_counter()
        until = start + deadline if deadline is not None else None
        score: Optional[chess.engine.PovScore] = None
        try:
            self._send(position_command(board) + go_command(limit))
            while True:
                line = self._read_line(until)
                if line is None:
                    elapsed = time.perf_counter() - start
                    self.kill()
                    raise MoveError("timeout", f"no bestmove after {elapsed:.2f} s, engine killed", elapsed)
                if line.startswith("info ") and " score " in line and not line.startswith("info string"):
                    score = parse_score(line, board.turn) or score
                elif line.startswith("bestmove"):
                    break
        except EngineGone as exc:
            self.kill()  # its output ended: whatever is left of it is of no use
            raise MoveError("crash", str(exc), time.perf_counter() - start) from None
        elapsed = time.perf_counter() - start
        words = line.split()
        text = words[1] if len(words) > 1 else "(none)"
        if text == "(none)":
            raise MoveError("illegal", "bestmove (none) while legal moves exist", elapsed)
        try:
            move = board.parse_uci(text)
        except ValueError:
            raise MoveError("illegal", f"illegal move {text} in this position", elapsed) from None
        if not move:
            raise MoveError("illegal", "null move bestmove 0000", elapsed)
        info: dict = {} if score is None else {"score": score}
        return MoveResult(move, info, elapsed)


# --------------------------------------------------------------------------- the commands
def declared_options(lines: list[str]) -> chess.engine.UciOptionMap[chess.engine.Option]:
    """The engine's `option name N type T ...` lines, by name (any case), as python-chess keeps them."""
    options: chess.engine.UciOptionMap[chess.engine.Option] = chess.engine.UciOptionMap()
    for line in lines:
        if line.startswith("option name "):
            name, _, rest = line[len("option name "):].partition(" type ")
            options[name.strip()] = chess.engine.Option(name.strip(), rest.split(" ", 1)[0], None, None, None, [])
    return options


def setoption_lines(declared: chess.engine.UciOptionMap[chess.engine.Option], options: dict[str, str]) -> list[str]:
    """`setoption` lines for the options asked for (raises ValueError for an undeclared, a managed or
    a mistyped one; arena.driver.coerce_options checks them as for python-chess's client)."""
    lines: list[str] = []
    for name, value in coerce_options(declared, options).items():
        if declared[name].is_managed() or name.lower() == "uci_analysemode":
            raise ValueError(f"option '{name}' is set by garfish datagen itself")
        if value is None:  # a button
            lines.append(f"setoption name {name}\n")
        else:
            text = ("true" if value else "false") if isinstance(value, bool) else value
            lines.append(f"setoption name {name} value {text}\n")
    return lines


def position_command(board: chess.Board) -> str:
    """`position` as python-chess's client writes it: the game's first position and its moves."""
    root = board.root() if all(board.move_stack) else board
    fen = root.fen(en_passant="fen")
    head = "position startpos" if fen == chess.STARTING_FEN else f"position fen {fen}"
    if root is board or not board.move_stack:
        return head + "\n"
    return head + " moves " + " ".join(move.uci() for move in board.move_stack) + "\n"


def go_command(limit: chess.engine.Limit) -> str:
    """`go` with the limit's nodes and depth (datagen's limits)."""
    words = ["go"]
    if limit.depth is not None:
        words += ["depth", str(limit.depth)]
    if limit.nodes is not None:
        words += ["nodes", str(limit.nodes)]
    return " ".join(words) + "\n"


def parse_score(line: str, turn: chess.Color) -> Optional[chess.engine.PovScore]:
    """The score of an `info` line (`score cp X` or `score mate N`, from the side to move), or None."""
    words = line.split()
    try:
        at = words.index("score")
        kind, value = words[at + 1], int(words[at + 2])
    except (ValueError, IndexError):
        return None
    if kind == "cp":
        return chess.engine.PovScore(chess.engine.Cp(value), turn)
    if kind == "mate":
        return chess.engine.PovScore(chess.engine.Mate(value), turn)
    return None
