"""Test campaigns on a Dask distributed cluster: `garfish match --cluster ADDRESS`, `garfish epd --cluster ADDRESS`.

ADDRESS is a running scheduler (`dask scheduler` prints it, e.g. tcp://10.0.0.5:8786), or `local`
/ `local:N` for a cluster of N single-threaded worker processes on this machine (default: one per core).

What every worker needs (the client cannot ship it):
  * this Garfish installed in the Python environment the worker runs in (start `dask worker`
    from that environment), since the tasks are functions of garfish.arena;
  * every engine command given with cmd= (match) or --engine (epd) runnable on the worker:
    give absolute paths. The default engine (no cmd=) is the Garfish of the worker's own environment.
Openings and test positions travel with the tasks.

Work is handed out by game pair (match), position (epd) or game (analyse, datagen); results stream
back to the client, which counts, reports and writes them as a local run does. Each worker thread
keeps its engines running from one task to the next (a worker plugin owns them, python-chess's
clients or datagen's pipes, and closes them when the worker stops). A worker that dies mid-task
loses nothing: the scheduler hands its tasks to another worker, and a task's result arrives, and is
counted, once. A worker that cannot start an engine fails its task with an error naming the worker,
its host and the command, and the run stops.
When a run stops early (an SPRT decision, an error, Ctrl-C) the tasks not yet started are
cancelled; those already running are finished by their workers and discarded.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import replace
from typing import Any, Callable, Generator, Iterator, Optional, Sequence

from distributed import Client, LocalCluster, WorkerPlugin, as_completed, get_worker

from garfish.arena.driver import (CHESS960_OPTION, DEFAULT_COMMAND, EngineProcess, EngineSpec, EngineStartError,
                                  quiet_python_chess)
from garfish.arena.game import Adjudication, GameRecord, TimeControl, play_game
from garfish.arena.openings import GameTask
from garfish.arena.suite import EpdConfig, EpdPosition, PositionResult, solve
from garfish.arena.workers import Engine

LOG = logging.getLogger(__name__)
PLUGIN_NAME = "garfish-engines"
LOCAL_PREFIX = "local"
WORKER_GARFISH = "<garfish on the worker>"  # stands for the worker's own Garfish in a shipped EngineSpec
CONNECT_TIMEOUT = 30.0  # seconds to reach the scheduler
WORKER_WAIT = 60.0  # seconds to wait for the first worker to join
RECONNECT_POLL = 0.1  # seconds between looks at a client reconnecting to its scheduler


class ClusterError(EngineStartError):
    """The cluster cannot be used (scheduler unreachable, no worker): the tools report it as an engine start."""


class WorkerEngineError(EngineStartError):
    """A worker could not start or restart an engine; the message names the worker, its host and the command."""


# --------------------------------------------------------------------------- on the workers
class EnginePool(WorkerPlugin):
    """A Dask worker plugin owning the engines of the worker's tasks: a task takes a set of engines
    (started on first use by its client, EngineProcess or PipeEngine), gives it back when done, and the next
    task with the same engines and client reuses it. Each set is used by one task at a time, so a worker
    with several threads runs several sets."""

    def __init__(self) -> None:
        """Empty; the worker calls setup() after unpickling the plugin."""
        self.idle: dict[str, list[list[Any]]] = {}
        self.lock = threading.Lock()
        self.where = "worker"

    def __getstate__(self) -> dict[str, Any]:
        """Only the empty plugin travels to the workers."""
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """A fresh, empty plugin on the worker."""
        self.__init__()  # type: ignore[misc]

    def setup(self, worker: Any) -> None:
        """Called by the worker when the plugin is registered."""
        self.where = f"worker {worker.address} on host {socket.gethostname()}"
        quiet_python_chess(False)

    def teardown(self, worker: Any) -> None:
        """Close every idle engine when the worker stops."""
        with self.lock:
            sets = [engines for group in self.idle.values() for engines in group]
            self.idle.clear()
        for engines in sets:
            close_all(engines)

    def take(self, specs: list[EngineSpec], client: Callable[[EngineSpec], Engine]) -> list[Engine]:
        """A running set of engines for these specs, started by `client` (raises WorkerEngineError naming
        this worker)."""
        with self.lock:
            group = self.idle.get(pool_key(specs, client), [])
            engines: Optional[list[Engine]] = group.pop() if group else None
        if engines is not None and all(engine.alive() for engine in engines):
            for engine, spec in zip(engines, specs):
                engine.spec = on_worker(spec)  # the same engine; the display name may be new
            return engines
        if engines is not None:
            close_all(engines)
        started: list[Engine] = []
        for spec in specs:
            try:
                started.append(client(on_worker(spec)))
            except EngineStartError as exc:
                close_all(started)
                raise WorkerEngineError(f"{self.where}: {exc}") from None
        return started

    def give(self, specs: list[EngineSpec], client: Callable[[EngineSpec], Engine], engines: list[Engine]) -> None:
        """Return a set after a task; a set with a dead engine is closed instead."""
        if not all(engine.alive() for engine in engines):
            close_all(engines)
            return
        with self.lock:
            self.idle.setdefault(pool_key(specs, client), []).append(engines)

    @contextlib.contextmanager
    def borrowed(self, specs: list[EngineSpec], client: Callable[[EngineSpec], Engine]) -> Iterator[list[Engine]]:
        """A set of engines for one task, started by `client`: given back when the task ends, closed when it
        fails (an engine that could not be restarted raises WorkerEngineError naming this worker)."""
        engines = self.take(specs, client)
        try:
            yield engines
        except EngineStartError as exc:
            close_all(engines)
            raise WorkerEngineError(f"{self.where}: {exc}") from None
        except BaseException:
            close_all(engines)
            raise
        self.give(specs, client, engines)


def pool_key(specs: list[EngineSpec], client: Callable[[EngineSpec], Any]) -> str:
    """Engine sets are shared by tasks of the same client whose specs differ at most in the display name."""
    return f"{getattr(client, '__name__', client)}: {[replace(spec, name=None) for spec in specs]!r}"


def close_all(engines: Sequence[Engine]) -> None:
    """Close engines, ignoring any that is already gone."""
    for engine in engines:
        engine.close()


def on_worker(spec: EngineSpec) -> EngineSpec:
    """The spec with the default engine resolved to this process's own Garfish."""
    if spec.argv == [WORKER_GARFISH]:
        return replace(spec, argv=list(DEFAULT_COMMAND))
    return spec


def pool() -> EnginePool:
    """This worker's engine pool."""
    plugin = get_worker().plugins.get(PLUGIN_NAME)
    if not isinstance(plugin, EnginePool):
        raise RuntimeError("the garfish engine plugin is not registered on this worker")
    return plugin


def engine_facts(specs: list[EngineSpec]) -> list[tuple[str, bool]]:
    """Task: each engine's display name and whether it declares UCI_Chess960 (checks the worker can run them)."""
    with pool().borrowed(specs, EngineProcess) as engines:
        return [(engine.name, engine.supports(CHESS960_OPTION)) for engine in engines]


def play_pair(specs: list[EngineSpec], tasks: list[GameTask], tc: TimeControl, adjudication: Adjudication,
              event: str) -> list[GameRecord]:
    """Task: play the games of one opening pair with this worker's engines."""
    with pool().borrowed(specs, EngineProcess) as engines:
        return [play_game(task, engines, tc, adjudication, event, threading.Event()) for task in tasks]


def solve_position(config: EpdConfig, position: EpdPosition) -> PositionResult:
    """Task: `garfish epd`'s solve() of one position with this worker's engine."""
    with pool().borrowed([config.spec], EngineProcess) as engines:
        return solve(engines[0], position, config)


# --------------------------------------------------------------------------- on the client
def for_workers(spec: EngineSpec) -> EngineSpec:
    """The spec as shipped: the default command (this machine's Python) becomes 'the worker's Garfish'."""
    if list(spec.argv) == list(DEFAULT_COMMAND):
        return replace(spec, argv=[WORKER_GARFISH])
    return replace(spec)


def local_workers(address: str) -> Optional[int]:
    """`local` -> one worker per core, `local:N` -> N; None for a scheduler address (ValueError for a bad N)."""
    if address != LOCAL_PREFIX and not address.startswith(LOCAL_PREFIX + ":"):
        return None
    text = address[len(LOCAL_PREFIX) + 1:]
    if not text:
        return os.cpu_count() or 1
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"--cluster local:N needs a positive number of workers, not '{text}'")
    return int(text)


def check_address(address: str) -> None:
    """Validate --cluster before anything starts (ValueError with the reason)."""
    if not address.strip():
        raise ValueError("--cluster needs a scheduler address (tcp://HOST:8786) or local[:N]")
    local_workers(address)


@contextlib.contextmanager
def connect(address: str, verbose: bool = False) -> Iterator[Client]:
    """A client on the scheduler at `address` (or on a new local cluster), with at least one worker and the
    engine plugin registered; closed on exit. Raises ClusterError."""
    if not verbose:
        for name in ("distributed", "tornado"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    workers = local_workers(address)
    cluster = None
    client = None
    try:
        if workers is not None:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.WARNING if verbose else logging.CRITICAL)
            client = Client(cluster, timeout=CONNECT_TIMEOUT)
        else:
            client = Client(address, timeout=CONNECT_TIMEOUT)
        client.wait_for_workers(1, timeout=WORKER_WAIT)
        client.register_plugin(EnginePool(), name=PLUGIN_NAME)
    except (OSError, TimeoutError) as exc:
        for item in (client, cluster):
            if item is not None:
                item.close()
        what = "no worker joined" if client is not None else "cannot reach the scheduler"
        raise ClusterError(f"Dask cluster {address}: {what}: {exc or type(exc).__name__}") from None
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def rejoin(client: Client, address: str, seconds: float = CONNECT_TIMEOUT) -> None:
    """After the client lost its scheduler (its futures cancelled): wait until it is connected again, to a
    scheduler restarted at `address` within `seconds`, with a worker, and register the engine plugin there
    again (the new scheduler has none). Raises ClusterError when the cluster does not come back."""
    deadline = time.monotonic() + seconds
    while client.status != "running":
        if client.status in ("closing", "closed") or time.monotonic() > deadline:
            raise ClusterError(f"Dask cluster {address}: lost the scheduler, and it did not come back "
                               f"within {seconds:g} s") from None
        time.sleep(RECONNECT_POLL)
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT)
        client.register_plugin(EnginePool(), name=PLUGIN_NAME)
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"Dask cluster {address}: the scheduler is back, but no worker joined within "
                           f"{WORKER_WAIT:g} s (a worker ends with its scheduler: start them again): "
                           f"{exc or type(exc).__name__}") from None


def probe(client: Client, specs: list[EngineSpec]) -> list[tuple[str, bool]]:
    """Start the engines on one worker: their engine_facts (raises WorkerEngineError when they do not start)."""
    return client.submit(engine_facts, specs, pure=False).result()


def worker_threads(client: Client) -> int:
    """How many tasks the cluster runs at once."""
    return sum(client.nthreads().values())


def task_error(future: Any) -> str:
    """A failed task's error as one line."""
    exc = future.exception()
    if isinstance(exc, WorkerEngineError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def stream(client: Client, func: Callable[..., Any], jobs: list[tuple[int, tuple[Any, ...]]],
           label: str) -> Generator[Any, None, None]:
    """Submit func(*args) for each (number, args), lower numbers first, and yield the results as they
    arrive. A failed task raises WorkerEngineError with its error; unfinished tasks are cancelled when the
    caller stops (or on any exit)."""
    run = uuid.uuid4().hex[:8]
    futures = {client.submit(func, *args, key=f"garfish-{run}-{number}", priority=-number): number
               for number, args in jobs}
    try:
        for future in as_completed(list(futures)):
            number = futures.pop(future)
            if future.status == "error":
                raise WorkerEngineError(f"{label} {number}: {task_error(future)}")
            result = future.result()
            future.release()  # a result the cluster keeps would be recomputed if its worker died later
            yield result
    finally:
        pending = [future for future in futures if not future.done()]
        if pending:
            client.cancel(pending)
