"""Drive one engine process through python-chess: start, configure, new game, timed move, restart, kill.

Shared by `garfish epd` and `garfish match`. An engine speaks UCI or, with protocol "xboard",
XBoard/CECP (python-chess's `chess.engine` speaks both). Every engine runs in its own process group
(so a wrapper script and its children can be killed together, and Ctrl-C in the terminal
reaches only the tool, which then shuts the engines down itself), and with `cpus` on those
processors only (os.sched_setaffinity before the engine's program starts, so its threads and
children inherit it).
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import logging
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional, Union

import chess
import chess.engine

LOG = logging.getLogger(__name__)

# The installed Garfish of this Python: -P keeps the working folder off sys.path, so that a `garfish/`
# folder there (a checkout) is not imported instead (as the launcher starts it).
DEFAULT_COMMAND = (sys.executable, "-P", "-m", "garfish.uci")
START_TIMEOUT = 60.0  # seconds for the uci/uciok handshake, option setting and isready (first Numba compile)
QUIT_TIMEOUT = 2.0  # seconds an engine gets to exit after `quit` before it is killed
PONDER_STOP_TIMEOUT = 5.0  # seconds an engine gets to answer `stop` (and then isready) to end its ponder search
INFO = chess.engine.INFO_BASIC | chess.engine.INFO_SCORE
TRUE_WORDS = ("true", "1", "yes", "on")
FALSE_WORDS = ("false", "0", "no", "off")
QUOTED = re.compile(r"'([^']*)'")
CHESS960_OPTION = "UCI_Chess960"
PROTOCOLS = ("uci", "xboard")

ConfigValue = Union[str, int, bool, None]


class EngineStartError(Exception):
    """The engine could not be started, configured or made ready."""


class MoveError(Exception):
    """An engine failed to deliver a legal move: kind is 'illegal', 'timeout' or 'crash'."""

    def __init__(self, kind: str, detail: str, elapsed: float) -> None:
        """Carry the failure kind, its description and the time spent."""
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.elapsed = elapsed


@dataclass
class EngineSpec:
    """How to start an engine: argv, UCI options (name -> text value), display name, stderr handling."""

    argv: list[str]
    options: dict[str, str] = field(default_factory=dict)
    name: Optional[str] = None
    show_stderr: bool = False
    start_timeout: float = START_TIMEOUT
    ponder: bool = False  # think on the opponent's time: `go ponder` on the expected reply after each move
    protocol: str = "uci"  # or "xboard" (XBoard/CECP version 2)
    cpus: Optional[tuple[int, ...]] = None  # the processors the engine may run on (None: any)


@dataclass
class MoveResult:
    """A legal move with the engine's last info line (depth, nodes, score...) and the wall time it took;
    ponderhit: the move came from a ponder search that the opponent's move turned into the real one."""

    move: chess.Move
    info: dict
    elapsed: float
    ponderhit: bool = False


def split_command(command: str) -> list[str]:
    """Split a shell-quoted engine command line into argv, or raise ValueError."""
    argv = shlex.split(command)
    if not argv:
        raise ValueError("the engine command is empty")
    return argv


def parse_option_pairs(pairs: list[str]) -> dict[str, str]:
    """['Hash=64', 'Move Overhead=10'] -> {'Hash': '64', 'Move Overhead': '10'}; ValueError on a missing '='."""
    options: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"option '{pair}' is not NAME=VALUE")
        options[name.strip()] = value.strip()
    return options


def coerce_options(declared: Mapping[str, chess.engine.Option], options: dict[str, str]) -> dict[str, ConfigValue]:
    """Turn text option values into the types python-chess expects, checking names against the engine's list."""
    typed: dict[str, ConfigValue] = {}
    for name, text in options.items():
        option = declared.get(name)
        if option is None:
            known = ", ".join(sorted(declared)) or "none"
            raise ValueError(f"the engine has no option '{name}' (it declares: {known})")
        value: ConfigValue = text
        if option.type == "check":
            if text.lower() in TRUE_WORDS:
                value = True
            elif text.lower() in FALSE_WORDS:
                value = False
            else:
                raise ValueError(f"option '{option.name}' takes true or false, not '{text}'")
        elif option.type == "spin":
            try:
                value = int(text)
            except ValueError:
                raise ValueError(f"option '{option.name}' takes an integer, not '{text}'") from None
        elif option.type == "button":
            value = None
        typed[option.name] = value
    return typed


def describe_exception(exc: BaseException) -> str:
    """A one-line description of an exception for error messages."""
    text = str(exc).strip()
    if isinstance(exc, (TimeoutError, concurrent.futures.TimeoutError)) and not text:
        text = "no answer in time"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class EngineProcess:
    """One running UCI engine: start, configure, new game, timed move with a kill watchdog, restart, close."""

    def __init__(self, spec: EngineSpec) -> None:
        """Start the engine described by spec (raises EngineStartError)."""
        self.spec = spec
        self.engine: Optional[chess.engine.SimpleEngine] = None
        self.pid: Optional[int] = None
        self.engine_name = ""
        self.broken = False  # set by kill(): the process is (being) killed and must be restarted
        self.paused = False  # set by pause(): the process group is stopped (SIGSTOP) until resume()
        # The position of the running ponder search (the engine's last move and the reply it
        # expects played), or None when the engine is not pondering.
        self.pondering: Optional[chess.Board] = None
        self.start()

    @property
    def name(self) -> str:
        """The display name: the spec's name, else the engine's `id name`, else the program name."""
        return self.spec.name or self.engine_name or os.path.basename(self.spec.argv[0])

    def start(self) -> None:
        """Start the process, wait for uciok, set the options, wait for readyok."""
        stderr = None if self.spec.show_stderr else subprocess.DEVNULL
        command = " ".join(shlex.quote(arg) for arg in self.spec.argv)
        popen = (chess.engine.SimpleEngine.popen_xboard if self.spec.protocol == "xboard"
                 else chess.engine.SimpleEngine.popen_uci)
        try:
            self.engine = popen(self.spec.argv, timeout=self.spec.start_timeout, setpgrp=True, stderr=stderr,
                                preexec_fn=child_setup(self.spec.cpus))
        except (OSError, chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError,
                concurrent.futures.TimeoutError) as exc:
            raise EngineStartError(f"cannot start engine '{command}': {describe_exception(exc)}") from None
        self.pid = self.engine.transport.get_pid()
        try:
            if self.spec.options:
                self.engine.configure(coerce_options(self.engine.options, self.spec.options))
            self.engine.ping()
        except (ValueError, chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError,
                concurrent.futures.TimeoutError) as exc:
            self.close()
            raise EngineStartError(f"engine '{command}' failed to get ready: {describe_exception(exc)}") from None
        self.engine_name = self.engine.id.get("name", "")
        self.broken = False
        self.paused = False
        self.pondering = None

    def alive(self) -> bool:
        """True while the engine process runs and has not been killed."""
        return self.engine is not None and not self.broken and not self.engine.returncode.done()

    def supports(self, option: str) -> bool:
        """Whether the engine declares this UCI option (e.g. UCI_Chess960)."""
        return self.engine is not None and option in self.engine.options

    def pause(self) -> None:
        """Stop the engine's process group (SIGSTOP) while it has no game, so that an engine that polls
        while idle takes nothing from the games on its core; resume() before anything is sent to it."""
        if self.pid is not None and self.alive() and not self.paused:
            try:
                os.killpg(self.pid, signal.SIGSTOP)
                self.paused = True
            except OSError as exc:
                LOG.debug("could not pause engine process group %s: %s", self.pid, exc)

    def resume(self) -> None:
        """Let a paused engine run again (SIGCONT)."""
        if self.pid is not None and self.paused:
            self.paused = False
            try:
                os.killpg(self.pid, signal.SIGCONT)
            except OSError as exc:
                LOG.debug("could not resume engine process group %s: %s", self.pid, exc)

    def kill(self) -> None:
        """Hard-kill the engine's process group (callable from any thread); alive() is False from now on."""
        self.broken = True
        self.pondering = None
        if self.pid is None or (self.engine is not None and self.engine.returncode.done()):
            return
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            LOG.debug("engine process group %s already gone", self.pid)
        except OSError as exc:
            LOG.warning("could not kill engine process group %s: %s", self.pid, exc)

    def close(self) -> None:
        """Send quit, give the engine QUIT_TIMEOUT seconds, then kill it and stop python-chess's loop."""
        engine = self.engine
        if engine is None:
            return
        self.resume()
        if self.alive():
            engine.timeout = QUIT_TIMEOUT
            try:
                engine.quit()
            except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError,
                    concurrent.futures.TimeoutError) as exc:
                LOG.debug("engine %s did not quit cleanly: %s", self.name, describe_exception(exc))
        self.kill()
        engine.close()
        self.engine = None

    def restart(self) -> None:
        """Close (or kill) the engine and start a fresh process (raises EngineStartError)."""
        self.close()
        self.start()

    def new_game(self, key: object) -> None:
        """Send ucinewgame + isready now, outside any clock, and mark `key` as python-chess's current game.

        play(game=key) then does not send ucinewgame again inside the timed move.
        Raises MoveError('crash') when the engine has died or does not answer isready, and
        MoveError('timeout') when it does not end a ponder search left from the last game.
        """
        engine = self.engine
        if engine is None or not self.alive():
            raise MoveError("crash", "the engine is not running", 0.0)
        self.stop_pondering()  # never ucinewgame during a search
        protocol = engine.protocol
        if isinstance(protocol, chess.engine.XBoardProtocol):
            # python-chess sends `new` (and the position) itself when play() names another game
            try:
                engine.ping()
            except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError,
                    concurrent.futures.TimeoutError) as exc:
                raise MoveError("crash", f"no answer to ping: {describe_exception(exc)}", 0.0) from None
            return
        if not isinstance(protocol, chess.engine.UciProtocol):
            raise MoveError("crash", "neither a UCI nor an XBoard engine", 0.0)

        def send() -> None:
            """Runs in python-chess's event loop thread."""
            protocol.send_line("ucinewgame")
            protocol.game = key
            protocol.first_game = False
            protocol.ponderhit = False  # as python-chess's own ucinewgame: no ponderhit carried over

        try:
            protocol.loop.call_soon_threadsafe(send)
            engine.ping()
        except (RuntimeError, chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError,
                concurrent.futures.TimeoutError) as exc:
            raise MoveError("crash", f"no answer to ucinewgame/isready: {describe_exception(exc)}", 0.0) from None

    def stop_pondering(self) -> None:
        """End a running ponder search (`stop`, its bestmove discarded, then isready), outside any clock.

        Raises MoveError('timeout') when the engine does not answer within PONDER_STOP_TIMEOUT
        seconds (it is killed), MoveError('crash') when it has died.
        """
        engine, pondered, self.pondering = self.engine, self.pondering, None
        if pondered is None or engine is None or not self.alive():
            return
        timeout, engine.timeout = engine.timeout, PONDER_STOP_TIMEOUT
        start = time.perf_counter()
        try:
            engine.ping()  # python-chess sends `stop` to the pondering play command before the isready
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError,
                concurrent.futures.TimeoutError) as exc:
            elapsed = time.perf_counter() - start
            if isinstance(exc, (TimeoutError, concurrent.futures.TimeoutError)):
                self.kill()
                raise MoveError("timeout", f"no bestmove and readyok within {elapsed:.2f} s of stop "
                                f"ending a ponder search, engine killed", elapsed) from None
            raise MoveError("crash", f"while stopping a ponder search: {describe_exception(exc)}", elapsed) from None
        finally:
            engine.timeout = timeout

    def play(self, board: chess.Board, limit: chess.engine.Limit, game: object,
             deadline: Optional[float]) -> MoveResult:
        """Ask for a move; kill the engine if it has not answered after `deadline` seconds.

        With pondering on (spec.ponder), an engine that ponders on exactly this position gets
        `ponderhit` and the clock runs from it; one that ponders on another position is stopped
        first, outside the clock, and then searches as usual. After a move with a ponder move
        python-chess starts `go ponder` on the expected reply.

        Returns a legal move, or raises MoveError: 'timeout' (killed by the watchdog; restart
        the engine), 'crash' (died or broke the protocol; restart it) or 'illegal' (an illegal
        move, a null move `0000` or `bestmove (none)` while legal moves exist).
        """
        engine = self.engine
        if engine is None or not self.alive():
            raise MoveError("crash", "the engine is not running", 0.0)
        pondered = self.pondering
        # A ponderhit when the engine ponders on this very position and its ponder search is still
        # running (python-chess's play command has not ended); else stop it and search as usual.
        ponderhit = (pondered is not None and pondered == board and pondered.move_stack == board.move_stack
                     and engine.protocol.command is not None)
        if not ponderhit:
            self.stop_pondering()
        self.pondering = None
        fired = threading.Event()

        def on_deadline() -> None:
            """Watchdog: the engine overran its deadline."""
            fired.set()
            self.kill()

        timer = threading.Timer(deadline, on_deadline) if deadline is not None else None
        if timer is not None:
            timer.daemon = True
        start = time.perf_counter()
        if timer is not None:
            timer.start()
        try:
            # A copy: python-chess keeps the board it is given to recognise a ponderhit later, and
            # the game's board moves on (it would take a stop at the game's end for a ponderhit).
            result = engine.play(board.copy(), limit, game=game, info=INFO, ponder=self.spec.ponder)
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError,
                concurrent.futures.TimeoutError, RuntimeError) as exc:
            elapsed = time.perf_counter() - start
            raise self._move_error(exc, fired.is_set(), elapsed) from None
        finally:
            if timer is not None:
                timer.cancel()
        elapsed = time.perf_counter() - start
        if fired.is_set():
            raise MoveError("timeout", f"bestmove came after the watchdog fired ({elapsed:.2f} s)", elapsed)
        move = result.move
        if move is None:
            raise MoveError("illegal", "bestmove (none) while legal moves exist", elapsed)
        if not move:
            raise MoveError("illegal", "null move bestmove 0000", elapsed)
        if not board.is_legal(move):  # python-chess checked it against the position it last sent
            raise MoveError("illegal", f"illegal move {move.uci()} in this position", elapsed)
        if self.spec.ponder and result.ponder is not None:
            self.pondering = board.copy()  # python-chess has sent `go ponder` on this position
            self.pondering.push(move)
            self.pondering.push(result.ponder)
        return MoveResult(move, dict(result.info), elapsed, ponderhit)

    def _move_error(self, exc: BaseException, watchdog_fired: bool, elapsed: float) -> MoveError:
        """Classify an exception from play(): timeout (watchdog), illegal move, or crash."""
        text = str(exc)
        if watchdog_fired or isinstance(exc, (TimeoutError, concurrent.futures.TimeoutError)):
            self.kill()
            return MoveError("timeout", f"no bestmove after {elapsed:.2f} s, engine killed", elapsed)
        if isinstance(exc, chess.engine.EngineError) and ("illegal uci" in text or "invalid uci" in text):
            quoted = QUOTED.search(text)
            return MoveError("illegal", f"illegal move {quoted.group(1) if quoted else text}", elapsed)
        if not self.alive() or "died" in text or "dead" in text:
            return MoveError("crash", text or "the engine died", elapsed)
        return MoveError("crash", f"protocol error: {describe_exception(exc)}", elapsed)


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def libc_prctl() -> Optional[Callable[..., int]]:
    """Linux's prctl from the C library, or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


PRCTL = libc_prctl()


def child_setup(cpus: Optional[tuple[int, ...]]) -> Optional[Callable[[], None]]:
    """What an engine's process runs before its program starts (None: nothing to run).

    On Linux the kernel is asked to SIGKILL the engine when the tool that started it dies (prctl
    PR_SET_PDEATHSIG): a tool stopped by SIGINT or SIGTERM shuts its engines down itself, this covers
    SIGKILL and crashes, after which an engine that does not quit on end of input (GNU Chess 6.2.7
    spins at full speed) would run on, taking the core from whatever runs there next. The signal
    comes when the thread that started the engine ends: python-chess starts each engine from its own
    event-loop thread, which lives as long as the engine does. It survives exec, not fork: an
    engine's own children are left to the process group (killpg) and to the engine. With `cpus`,
    the engine is then kept on those processors (its threads and children inherit it).
    """
    chosen = None if cpus is None else set(cpus)
    if PRCTL is None and chosen is None:
        return None
    prctl, parent = PRCTL, os.getpid()

    def setup() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
            if os.getppid() != parent:  # the tool died before the signal was armed
                os.kill(os.getpid(), signal.SIGKILL)
        if chosen is not None:
            os.sched_setaffinity(0, chosen)

    return setup


def parse_cpus(text: str) -> list[int]:
    """'0,1' or '2-5' or '0,2-3' -> the processor numbers (ValueError when malformed or not this machine's)."""
    cpus: list[int] = []
    for part in text.split(","):
        first, dash, last = part.strip().partition("-")
        try:
            numbers = range(int(first), int(last) + 1) if dash else range(int(first), int(first) + 1)
        except ValueError:
            raise ValueError(f"--pin takes processor numbers such as 0,1 or 0-3, not '{text}'") from None
        if not numbers:
            raise ValueError(f"--pin: empty range '{part}'")
        cpus.extend(numbers)
    machine = os.cpu_count() or 1  # the machine's, not this process's own set: the runner may keep off the games' cores
    missing = sorted(cpu for cpu in cpus if not 0 <= cpu < machine)
    if missing:
        raise ValueError(f"--pin: processor {missing[0]} is not one of this machine's (0-{machine - 1})")
    if len(set(cpus)) != len(cpus):
        raise ValueError(f"--pin names a processor twice: '{text}'")
    return cpus


def quiet_python_chess(verbose: bool) -> None:
    """Silence python-chess's engine warnings unless verbose (the tools report problems themselves)."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not verbose:
        logging.getLogger("chess.engine").setLevel(logging.CRITICAL)
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
