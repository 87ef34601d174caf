"""Worker processes of the tools that run one engine per process (`garfish epd -j N`, `garfish analyse -j N`,
`garfish datagen -j N`).

A worker ignores Ctrl-C (the terminal sends it to the whole process group): the parent decides,
and stops its workers with SIGTERM, which a worker turns into KeyboardInterrupt so that it shuts
its engine down on the way out.

A worker and its parent talk through two queues: tasks (None: no more) and results, on which a worker
puts ("ready", its engine's name), ("result", a task's result), ("fatal", why it cannot go on),
("done", None) at the end, and any events of its own (`garfish analyse`'s ("moves", n)). serve_tasks
is such a worker's loop, run_pool the parent's side.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import queue
import signal
import time
from typing import Any, Callable, Generator, Iterator, Optional, TypeVar

from garfish.arena.driver import EngineProcess, EngineSpec, EngineStartError, quiet_python_chess
from garfish.arena.pipe import PipeEngine

LOG = logging.getLogger(__name__)
POLL_SECONDS = 0.5  # how often the parent checks that worker processes are alive
WORKER_JOIN_SECONDS = 10.0
FEEDER_JOIN_SECONDS = 1.0  # after a stop: a feeder blocked on a full pipe is not waited for long
Engine = TypeVar("Engine", EngineProcess, PipeEngine)


class StopSignal:
    """A worker's SIGTERM: raised as KeyboardInterrupt at once, or, inside a `held()` block, when the block ends.

    An engine's start must not be cut short: python-chess starts it from a thread that is not a
    daemon, and an engine whose start was interrupted would keep that thread, and so the worker, alive.
    """

    def __init__(self) -> None:
        """No stop yet, outside any held block."""
        self.depth = 0
        self.pending = False

    def handle(self, signum: int, frame: Any) -> None:
        """The SIGTERM handler: unwind (once) like Ctrl-C so that the engine is shut down."""
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if self.depth:
            self.pending = True
            return
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold a stop back until the block has run (for starting and restarting engines)."""
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            if not self.depth and self.pending:
                raise KeyboardInterrupt


def run_as_worker(body: Callable[[StopSignal], None]) -> None:
    """Run a worker process's body (given its StopSignal) with the workers' signal handling; a stop by the
    parent ends it quietly."""
    stop = StopSignal()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, stop.handle)
    try:
        body(stop)
    except KeyboardInterrupt:
        LOG.debug("worker stopped by the parent")
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a SIGTERM while exiting just ends the process


def start_engine(spec: EngineSpec, results: Any, stop: StopSignal,
                 client: Callable[[EngineSpec], Engine]) -> Optional[Engine]:
    """Start a worker's engine with `client` (EngineProcess or PipeEngine; a stop held back until it is
    up) and tell the parent on `results`: ("ready", its name), or ("fatal", why it did not start) and None."""
    try:
        with stop.held():
            engine = client(spec)
    except EngineStartError as exc:
        results.put(("fatal", str(exc)))
        return None
    results.put(("ready", engine.name))
    return engine


Report = Callable[[str, Any], None]  # a worker's event for its parent: report(kind, payload)


def serve_tasks(spec: EngineSpec, tasks: Any, results: Any, stop: StopSignal,
                handle: Callable[[EngineProcess, Any, Report], Any]) -> None:
    """A worker's loop: own one engine, put ("result", handle(engine, task, report)) on `results` for each
    task until a None arrives, then ("done", None); ("fatal", why) when the engine cannot be restarted."""
    quiet_python_chess(False)
    engine = start_engine(spec, results, stop, EngineProcess)
    if engine is None:
        return
    try:
        while True:
            task = tasks.get()
            if task is None:
                break
            results.put(("result", handle(engine, task, lambda kind, payload: results.put((kind, payload)))))
        results.put(("done", None))
    except EngineStartError as exc:
        results.put(("fatal", f"engine could not be restarted: {exc}"))
    finally:
        engine.close()


def run_pool(target: Callable[[Any, Any, Any], None], config: Any, items: list[Any],
             jobs: int) -> Generator[tuple[str, Any], None, None]:
    """Hand the items to `jobs` worker processes running target(config, tasks, results) and yield their
    events but "done" and "fatal" as they come, until every item has its result; raises EngineStartError
    for a "fatal" or when every worker has exited early. The workers are stopped on any exit."""
    context = multiprocessing.get_context("spawn")
    tasks = context.Queue()
    results = context.Queue()
    for item in items:
        tasks.put(item)
    for _ in range(jobs):
        tasks.put(None)
    processes = [context.Process(target=target, args=(config, tasks, results), daemon=True) for _ in range(jobs)]
    for process in processes:
        process.start()
    received = finished = 0
    completed = False
    try:
        while received < len(items) and finished < jobs:
            try:
                kind, payload = results.get(timeout=POLL_SECONDS)
            except queue.Empty:
                if not any(process.is_alive() for process in processes):
                    raise EngineStartError("all worker processes exited early") from None
                continue
            if kind == "fatal":
                raise EngineStartError(payload)
            if kind == "done":
                finished += 1
                continue
            received += kind == "result"
            yield kind, payload
        completed = True
    finally:
        shut_down(processes, tasks, results, graceful=completed)


def shut_down(processes: list[Any], tasks: Any, results: Any, graceful: bool) -> None:
    """Stop the workers: wait for them after a complete run, else SIGTERM them (they close their engines).

    The result queue is drained meanwhile (a worker cannot exit while its queue feeder is blocked);
    the task queue's unsent tasks are dropped, and then its feeder thread is let end (see close_tasks).
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
    close_tasks(tasks, WORKER_JOIN_SECONDS if graceful else FEEDER_JOIN_SECONDS)


def close_tasks(tasks: Any, seconds: float) -> None:
    """Close the task queue and wait up to `seconds` for its feeder thread to end.

    Otherwise the feeder thread, a daemon that holds the queue's write lock and size semaphore, ends
    while the interpreter exits and frees them itself, in a thread the shutdown may stop halfway: the
    resource tracker then reports "leaked semaphore objects" on stderr.
    """
    drain(tasks)  # room in the pipe for what the feeder still holds
    tasks.close()
    feeder = getattr(tasks, "_thread", None)  # multiprocessing.Queue's feeder thread (CPython 3.8-3.14)
    if feeder is not None:
        feeder.join(seconds)


def drain(waiting: Any) -> None:
    """Throw away whatever is waiting in a queue."""
    while True:
        try:
            waiting.get_nowait()
        except queue.Empty:
            return
