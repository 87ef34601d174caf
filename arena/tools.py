"""What the command-line tools (garfish epd, match, datagen) share: their exit codes and the --cluster check.

Kept apart from driver.py (one engine process), which cluster.py imports: the --cluster check imports
cluster.py to see that Dask is installed.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Callable, Iterator

EXIT_OK = 0
EXIT_ENGINE = 1  # an engine failed to start or run
EXIT_USAGE = 2  # bad arguments or input files
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C
CLUSTER_HINT = ("--cluster needs Dask's distributed package: pip install 'garfish[cluster]' "
                "(in a checkout: .venv/bin/python -m pip install -e '.[cluster]')")


def check_cluster(address: str) -> None:
    """The tools' --cluster value is usable and Dask's distributed is installed (ValueError otherwise)."""
    try:
        from garfish.arena import cluster
    except ImportError:
        raise ValueError(CLUSTER_HINT) from None
    cluster.check_address(address)


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """While inside, SIGTERM and SIGINT raise KeyboardInterrupt in the main thread, so that a tool stops
    as after Ctrl-C (its engines shut down, what is finished kept) however it was started: `kill` sends
    SIGTERM, and a process started in the background by a shell script inherits SIGINT ignored, which
    would make `kill -INT` do nothing. Outside the main thread (a test's), it changes nothing."""
    # (garfish datagen sets a flag instead, read between games: on_stop_signals with its own handler.)
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        """The handler: unwind like Ctrl-C, once; a second signal is ignored while the tool shuts down (its
        engines killed, its files written: each step has its own timeout)."""
        for other in STOP_SIGNALS:
            signal.signal(other, signal.SIG_IGN)
        raise KeyboardInterrupt

    with on_stop_signals(interrupt):
        yield


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # Ctrl-C (kill -INT) and kill


@contextlib.contextmanager
def on_stop_signals(handler: Callable[[int, Any], None]) -> Iterator[None]:
    """While inside, SIGINT and SIGTERM call handler(signum, frame); the handlers before are put back after."""
    previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
