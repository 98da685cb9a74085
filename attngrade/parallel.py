"""Run distinct checks in worker processes, each under a hard time and memory limit.

A check that hangs (sympy on a hostile formula) or eats memory is killed with its
worker process and replaced; the student gets an `invalid` verdict with the reason,
and the rest of the class is graded. On Linux workers are forked from the parent,
which has already imported everything, so a pool starts in milliseconds.
"""

from __future__ import annotations

import os
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Mapping

from .checkers import Outcome
from .grading import Task, run_task, timed_out

MEMORY_LIMIT = 2 * 1024**3  # bytes of address space per worker
GRACE = 1.0  # seconds past the budget before the worker is killed outright


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def _limit_memory(limit: int) -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass  # not on this platform: the time limit still applies


def run_tasks(tasks: Mapping[Any, Task], *, workers: int, budget: float,
              memory: int = MEMORY_LIMIT) -> dict[Any, Outcome]:
    """Outcome of every task, keyed like `tasks`.

    With one worker (or one task) on the main thread checks run here, under SIGALRM. Off
    the main thread no signal can stop a check, so even one task goes to a worker process.
    """
    import threading

    on_main = threading.current_thread() is threading.main_thread()
    if not tasks:
        return {}
    if on_main and (workers <= 1 or len(tasks) <= 1):
        return {key: run_task(task, budget) for key, task in tasks.items()}
    workers = max(1, workers)
    from pebble import ProcessExpired, ProcessPool

    outcomes: dict[Any, Outcome] = {}
    with ProcessPool(max_workers=workers, initializer=_limit_memory, initargs=(memory,)) as pool:
        futures = {key: pool.schedule(run_task, args=(task, budget), timeout=budget + GRACE if budget > 0 else None)
                   for key, task in tasks.items()}
        for key, future in futures.items():
            try:
                outcomes[key] = future.result()
            except FutureTimeout:
                outcomes[key] = timed_out(budget)
            except (ProcessExpired, MemoryError):
                outcomes[key] = Outcome(0.0, ("checking this answer needed more memory than a check may use; "
                                              "write it more simply",), invalid=True)
    return outcomes
