"""A Dask executor for the run stage: distinct tasks on a cluster, for classes of any size.

`grade run --executor dask` starts a LocalCluster on this machine; `--executor
dask=tcp://scheduler:8786` uses a running cluster. The tasks are sent in chunks, and each
Dask worker runs its chunk through the same WorkerPool as a laptop does, so every check
still runs in a process of its own under the time and memory budget (a hostile answer
cannot hang or exhaust a Dask worker). The workers need attngrade installed (the same
version) and must be allowed to start processes: run them with
`DASK_DISTRIBUTED__WORKER__DAEMON=False` (the LocalCluster here is set up that way).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..checkers import Outcome
from ..errors import ConfigError
from .assignment import Assignment
from .execute import MEMORY_LIMIT, WorkerPool
from .tasks import Task, TaskKey

CHUNKS_PER_WORKER = 2  # a few chunks per worker balance the load; each chunk pays for one pool
CONNECT_SECONDS = 10  # a scheduler that does not answer by then is a configuration error


@dataclass(frozen=True)
class DaskExecutor:
    address: str | None = None  # None: a LocalCluster on this machine
    workers: int = 2  # LocalCluster workers (one process and one thread each)
    budget: float = 2.0
    on_done: Callable[[int], None] | None = field(default=None, compare=False)  # progress: tasks finished

    def run(self, tasks: Mapping[TaskKey, Task], assignments: Mapping[str, Assignment]) -> dict[TaskKey, Outcome]:
        if not tasks:
            return {}
        try:
            import dask
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ConfigError("--executor dask needs Dask: pip install 'attngrade[dask]'") from None
        cluster = None
        with dask.config.set({"distributed.worker.daemon": False}):
            if self.address is None:
                cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
            try:
                client = Client(cluster if cluster is not None else self.address, timeout=CONNECT_SECONDS)
            except OSError as err:
                raise ConfigError(f"--executor dask={self.address}: no Dask scheduler answers there ({err})") from None
        try:
            count = max(1, len(client.scheduler_info().get("workers", {})))
            keys = list(tasks)
            size = max(1, -(-len(keys) // (count * CHUNKS_PER_WORKER)))
            chunks = [keys[i:i + size] for i in range(0, len(keys), size)]
            needed = {key.homework: assignments[key.homework] for key in keys}
            shared = client.scatter(needed, broadcast=True)
            futures = [client.submit(run_chunk, [tasks[k] for k in chunk], shared, self.budget, pure=False)
                       for chunk in chunks]
            outcomes: dict[TaskKey, Outcome] = {}
            for chunk, future in zip(chunks, futures):
                outcomes.update(zip(chunk, future.result()))
                if self.on_done is not None:
                    self.on_done(len(chunk))
            return outcomes
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def run_chunk(tasks: list[Task], assignments: Mapping[str, Assignment], budget: float) -> list[Outcome]:
    """On a Dask worker: the chunk's outcomes, each task in a process of its own under the budget."""
    import multiprocessing

    if multiprocessing.current_process().daemon:
        raise RuntimeError("this Dask worker cannot start processes, so attngrade cannot hold checks to their "
                           "time budget; start the workers with DASK_DISTRIBUTED__WORKER__DAEMON=False")
    # Off the main thread (Dask runs tasks in threads), so the pool sends even one task to a process.
    pool = WorkerPool(workers=1, budget=budget, memory=MEMORY_LIMIT)
    done = pool.run({task.key: task for task in tasks}, assignments)
    return [done[task.key] for task in tasks]


def executor_from(spec: str, budget: float, workers: int | None) -> DaskExecutor:
    """`dask` or `dask=ADDRESS` from the command line."""
    name, _, address = spec.partition("=")
    if name != "dask":
        raise ConfigError(f"--executor {spec!r}: the executors are 'local' (the default) and 'dask[=ADDRESS]'")
    return DaskExecutor(address=address or None, workers=workers or 2, budget=budget)
