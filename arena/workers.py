"""Worker processes of the tools that run one engine per process (`garfish epd -j N`, `garfish datagen -j N`).

A worker ignores Ctrl-C (the terminal sends it to the whole process group): the parent decides,
and stops its workers with SIGTERM, which a worker turns into KeyboardInterrupt so that it shuts
its engine down on the way out.
"""

from __future__ import annotations

import logging
import queue
import signal
import time
from typing import Any, Callable

LOG = logging.getLogger(__name__)
POLL_SECONDS = 0.5  # how often the parent checks that worker processes are alive
WORKER_JOIN_SECONDS = 10.0


def interrupt_on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM handler of the workers: unwind (once) like Ctrl-C so that the engine is shut down."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def run_as_worker(body: Callable[[], None]) -> None:
    """Run a worker process's body with the workers' signal handling; a stop by the parent ends it quietly."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, interrupt_on_sigterm)
    try:
        body()
    except KeyboardInterrupt:
        LOG.debug("worker stopped by the parent")
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a SIGTERM while exiting just ends the process


def shut_down(processes: list[Any], tasks: Any, results: Any, graceful: bool) -> None:
    """Stop the workers: wait for them after a complete run, else SIGTERM them (they close their engines).

    The result queue is drained meanwhile (a worker cannot exit while its queue feeder is blocked),
    and the task queue's feeder thread is not waited for (its unsent tasks are dropped).
    """
    tasks.cancel_join_thread()
    if not graceful:
        for process in processes:
            if process.is_alive():
                process.terminate()
    deadline = time.monotonic() + WORKER_JOIN_SECONDS
    while any(process.is_alive() for process in processes) and time.monotonic() < deadline:
        drain(results)
        for process in processes:
            process.join(POLL_SECONDS / 10)
    for process in processes:
        if process.is_alive():
            process.kill()
            process.join(WORKER_JOIN_SECONDS)
    drain(results)


def drain(results: Any) -> None:
    """Throw away whatever is waiting in a queue."""
    while True:
        try:
            results.get_nowait()
        except queue.Empty:
            return
