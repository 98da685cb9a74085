"""A Dask executor for the run stage and the reports: a cluster, for classes of any size.

`grade run --executor dask` starts a LocalCluster on this machine; `--executor
dask=tcp://scheduler:8786` uses a running cluster, kept for the write stage, whose
students' reports the workers render (`reports.cluster`). The tasks are sent in chunks, and each
Dask worker runs its chunk through the same WorkerPool as a laptop does, so every check
still runs in a process of its own under the time and memory budget (a hostile answer
cannot hang or exhaust a Dask worker). The workers need attngrade installed (the same
version) and must be allowed to start processes: run them with
`DASK_DISTRIBUTED__WORKER__DAEMON=False` (the LocalCluster here is set up that way).
"""

from __future__ import annotations

import multiprocessing
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from .. import __version__
from ..checkers import REGISTRY, Outcome
from ..errors import ConfigError
from ..sandbox import torch_missing
from .assignment import Assignment
from .execute import MEMORY_LIMIT, WorkerPool, default_workers
from .tasks import Task, TaskKey, check_of

CHUNKS_PER_WORKER = 2  # a few chunks per worker balance the load; each chunk pays for one pool
CANNOT_FORK = ("cannot start processes, so attngrade cannot hold checks to their time budget; start the workers "
               "with DASK_DISTRIBUTED__WORKER__DAEMON=False")
CONNECT_SECONDS = 10  # a scheduler that does not answer by then (or has no worker) is a configuration error


@dataclass
class _Connection:
    """The cluster both stages use (checks, then reports): connected once, closed by `close`."""

    client: Any = None
    cluster: Any = None


@dataclass(frozen=True)
class DaskExecutor:
    address: str | None = None  # None: a LocalCluster on this machine
    workers: int = 2  # LocalCluster workers (one process and one thread each)
    budget: float = 2.0
    on_done: Callable[[int], None] | None = field(default=None, compare=False)  # progress: tasks finished
    connection: _Connection = field(default_factory=_Connection, compare=False, repr=False)  # shared by `replace` copies

    @property
    def spec(self) -> str:
        """As the command line gave it, for messages."""
        return "--executor dask" + (f"={self.address}" if self.address else "")

    def check(self) -> None:
        """A cluster at `address` that cannot check this class is said before the class is read:
        nothing answers, no worker has joined, or the workers cannot run attngrade's checks."""
        if self.address is None:
            return  # a LocalCluster is started when the tasks are known
        _workers(self.client(), self.spec, runs_code=False)

    def run(self, tasks: Mapping[TaskKey, Task], assignments: Mapping[str, Assignment]) -> dict[TaskKey, Outcome]:
        if not tasks:
            return {}
        client = self.client()
        runs_code = any(REGISTRY[check_of(key, assignments)].runs_code for key in tasks)
        slots = _workers(client, self.spec, runs_code)
        keys = list(tasks)
        size = max(1, -(-len(keys) // (slots * CHUNKS_PER_WORKER)))
        chunks = [keys[i:i + size] for i in range(0, len(keys), size)]
        outcomes: dict[TaskKey, Outcome] = {}
        with self.failures("checking"):
            needed = {key.homework: assignments[key.homework] for key in keys}
            # Scattered under keys of their own: a dict's keys would be the homework ids, which
            # another scatter on this connection (or a hand-made one on the cluster) may also use.
            shared = dict(zip(needed, client.scatter(list(needed.values()), broadcast=True)))
            futures = [client.submit(run_chunk, [tasks[k] for k in chunk], shared, self.budget, pure=False)
                       for chunk in chunks]
            for chunk, future in zip(chunks, futures):
                outcomes.update(zip(chunk, future.result()))
                if self.on_done is not None:
                    self.on_done(len(chunk))
        return outcomes

    def client(self) -> Any:
        """The cluster's client, connected (a LocalCluster started) on first use."""
        if self.connection.client is None:
            dask, client_type, cluster_type = _dask()
            with dask.config.set({"distributed.worker.daemon": False}):
                if self.address is None:
                    self.connection.cluster = cluster_type(n_workers=self.workers, threads_per_worker=1,
                                                        processes=True, dashboard_address=None)
                target = self.connection.cluster if self.connection.cluster is not None else self.address
                self.connection.client = _connect(client_type, target, self.spec)
        return self.connection.client

    @contextmanager
    def failures(self, doing: str) -> Iterator[None]:
        """The cluster's failure while `doing` is a configuration error, never a student's verdict."""
        try:
            yield
        except Exception as err:  # noqa: BLE001 - said, with what to do
            raise ConfigError(f"{self.spec}: the cluster failed while {doing} ({type(err).__name__}: "
                              f"{str(err)[:300]}); nothing was written: look at the workers' logs, then run "
                              "again (or without --executor)") from err

    def close(self) -> None:
        connection = self.connection
        if connection.client is not None:
            connection.client.close()
        if connection.cluster is not None:
            connection.cluster.close()
        connection.client = connection.cluster = None


def _dask() -> tuple[Any, Any, Any]:
    try:
        import dask
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ConfigError("--executor dask needs Dask: pip install 'attngrade[dask]'") from None
    return dask, Client, LocalCluster


def _connect(client_type: Any, target: Any, spec: str) -> Any:
    """A client of `target`, or a ConfigError within CONNECT_SECONDS and a little more: Dask's own
    timeout covers the connection, not a server that accepts it and never answers as a scheduler."""
    box: dict[str, Any] = {}

    def connect() -> None:
        try:
            box["client"] = client_type(target, timeout=CONNECT_SECONDS)
        except BaseException as err:  # noqa: BLE001 - said below
            box["error"] = err

    thread = threading.Thread(target=connect, name="attngrade-dask-connect", daemon=True)
    thread.start()
    thread.join(CONNECT_SECONDS + 5)
    hint = "start one with `dask scheduler`, or check the address (tcp://HOST:8786)"
    if thread.is_alive():
        raise ConfigError(f"{spec}: nothing answered as a Dask scheduler within {CONNECT_SECONDS} s; {hint}")
    if "error" in box:
        err = box["error"]
        raise ConfigError(f"{spec}: no Dask scheduler answers there ({type(err).__name__}: {str(err)[:200]}); "
                          f"{hint}") from None
    return box["client"]


def _workers(client: Any, spec: str, runs_code: bool) -> int:
    """How many checks the cluster runs at once (threads over all workers), once it is known that
    every worker runs this attngrade, may start processes, and has PyTorch if code is checked."""
    try:
        client.wait_for_workers(1, timeout=CONNECT_SECONDS)
    except Exception:  # noqa: BLE001 - distributed raises TimeoutError (or its own) here
        raise ConfigError(f"{spec}: no worker has joined the scheduler; start workers with "
                          "`DASK_DISTRIBUTED__WORKER__DAEMON=False dask worker SCHEDULER_ADDRESS`") from None
    try:
        facts = client.run(worker_facts)
    except Exception as err:  # noqa: BLE001 - e.g. ModuleNotFoundError: attngrade is not on the worker
        raise ConfigError(f"{spec}: the workers cannot run attngrade ({type(err).__name__}: {str(err)[:200]}); "
                          "install the same attngrade on every worker: pip install 'attngrade[dask]'") from None

    for address, fact in sorted(facts.items()):
        if fact["version"] != __version__:
            raise ConfigError(f"{spec}: the worker at {address} runs attngrade {fact['version']}, this machine "
                              f"{__version__}; install the same version everywhere (verdicts must not depend "
                              "on the worker)")
        if fact["daemon"]:
            raise ConfigError(f"{spec}: the worker at {address} {CANNOT_FORK}")
        if runs_code and fact["torch_missing"] and not torch_missing():
            raise ConfigError(f"{spec}: the worker at {address} has no PyTorch, which this class's code parts "
                              "run with (this machine has it); install attngrade[torch] on every worker")
    return max(1, sum(client.nthreads().values()))


def worker_facts() -> dict[str, Any]:
    """On a Dask worker: what decides whether it can check as this machine does."""
    return {"version": __version__, "daemon": bool(multiprocessing.current_process().daemon),
            "torch_missing": torch_missing() is not None}


def run_chunk(tasks: list[Task], assignments: Mapping[str, Assignment], budget: float) -> list[Outcome]:
    """On a Dask worker: the chunk's outcomes, each task in a process of its own under the budget."""
    if multiprocessing.current_process().daemon:
        raise RuntimeError(f"this Dask worker {CANNOT_FORK}")
    # Off the main thread (Dask runs tasks in threads), so the pool sends even one task to a process.
    pool = WorkerPool(workers=1, budget=budget, memory=MEMORY_LIMIT)
    done = pool.run({task.key: task for task in tasks}, assignments)
    return [done[task.key] for task in tasks]


def executor_from(spec: str, budget: float, workers: int | None) -> DaskExecutor:
    """`dask` or `dask=ADDRESS` from the command line (a LocalCluster of `workers`, every core by default)."""
    name, _, address = spec.partition("=")
    if name != "dask":
        raise ConfigError(f"--executor {spec!r}: the executors are 'local' (the default) and 'dask[=ADDRESS]'")
    count = max(1, default_workers(workers))
    return DaskExecutor(address=address or None, workers=count, budget=budget)
