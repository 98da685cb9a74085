"""The run stage: execute distinct tasks somewhere and return their outcomes.

It knows nothing of submissions. An Executor takes tasks keyed by TaskKey and the
Assignments they belong to, and returns one Outcome per task. Two live here: in
this process (under SIGALRM) and a pool of worker processes (pebble), each task
under a hard time limit and each worker under a memory cap. A check that hangs
(sympy on a hostile formula) or eats memory is killed with its worker, which is
replaced; the student gets an `invalid` verdict with the reason.
"""

from __future__ import annotations

import atexit
import gc
import logging
import multiprocessing
import os
import resource
import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from functools import partial
from multiprocessing import forkserver
from typing import Any, Callable, Iterable, Mapping, Protocol

from ..checkers import REGISTRY, Outcome
from ..runtime.deadline import time_limit
from ..runtime.lifeline import end_with_parent
from ..runtime.scale import default_workers
from ..sandbox import ENV_SOCKET
from .assignment import Assignment
from .tasks import Task, TaskKey, check_of, run_task, runs_code, task_budget, timed_out, worker_died

log = logging.getLogger(__name__)

MEMORY_LIMIT = 2 * 1024**3  # bytes of address space per worker, above what it was forked with
GRACE = 1.0  # seconds past the budget before the worker is killed outright


class Executor(Protocol):
    def run(self, tasks: Mapping[TaskKey, Task], assignments: Mapping[str, Assignment]) -> dict[TaskKey, Outcome]:
        ...


@dataclass(frozen=True)
class InProcess:
    """Run tasks here, one after another, each under a budget: a SIGALRM on the main thread; off it,
    a check that ran past its budget is timed out once it ends (see `deadline.time_limit`)."""

    budget: float = 2.0
    on_done: Callable[[int], None] | None = field(default=None, compare=False)  # progress: tasks finished

    def run(self, tasks: Mapping[TaskKey, Task], assignments: Mapping[str, Assignment]) -> dict[TaskKey, Outcome]:
        outcomes = {}
        for key, task in tasks.items():
            outcomes[key] = run_task(task, assignments[key.homework], self.budget)
            if self.on_done is not None:
                self.on_done(1)
        return outcomes


@dataclass(frozen=True)
class WorkerPool:
    """Run tasks in `workers` processes, each task under a hard time limit.

    One task on the main thread runs here (a pool costs more than it saves). Off the
    main thread no signal can stop a check, so even one task goes to a worker.
    """

    workers: int
    budget: float = 2.0
    memory: int = MEMORY_LIMIT
    on_done: Callable[[int], None] | None = field(default=None, compare=False)  # progress: tasks finished
    # How workers start: None for the platform's default (fork on Linux: they inherit the
    # assignments); "forkserver" for a large class, whose workers must not be forked from a
    # parent holding its plan (see `start_fork_server`).
    start_method: str | None = None

    def run(self, tasks: Mapping[TaskKey, Task], assignments: Mapping[str, Assignment]) -> dict[TaskKey, Outcome]:
        on_main = threading.current_thread() is threading.main_thread()
        if not tasks:
            return {}
        # Checks that only compare short text (a written answer waiting for staff, a choice, a
        # shape) cost less than a round trip to a worker: they run here, and without a time
        # limit (a few microseconds each: arming the alarm would cost twice the check).
        trivial = {k: t for k, t in tasks.items() if check_of(k, assignments) in TRIVIAL}
        rest = {k: t for k, t in tasks.items() if k not in trivial}
        if not rest or (on_main and (self.workers <= 1 or len(rest) <= 1)):
            # A check that reads what student code sent back (any size, any shape) runs in a worker
            # under the memory cap, even here: never in the process that holds the class.
            code = {k: t for k, t in rest.items() if runs_code(t, assignments)}
            capped = Stream(self, assignments).outcomes(code) if code and on_main else {}
            return {**InProcess(0.0, self.on_done).run(trivial, assignments),
                    **InProcess(self.budget, self.on_done).run({k: t for k, t in rest.items() if k not in capped},
                                                               assignments), **capped}
        return Stream(self, assignments).outcomes(tasks)

    def stream(self, assignments: Mapping[str, Assignment], show: "Showing | None" = None) -> "Stream | None":
        """A run begun now, sent tasks as a plan lists them (`Stream`); None where it would not pay
        (one worker) or the workers could not be stopped (off the main thread: see `run`). `show`:
        what the workers make of each batch besides its outcomes, kept here (see `Showing`)."""
        if self.workers <= 1 or threading.current_thread() is not threading.main_thread():
            return None
        return Stream(self, assignments, beside=True, show=show)

    def _timeout(self, batch: list[TaskKey], assignments: Mapping[str, Assignment]) -> float | None:
        """The hard limit of a batch: one task's budget (each is enforced in the worker) plus a grace.

        A batch takes a small part of one budget; one that runs past it holds a check that
        ignores its alarm (C code that never returns to Python), or several slow ones. It is
        killed then and its tasks are run alone, so one stuck check costs two budgets, not the
        sum of its batch's."""
        if self.budget <= 0:
            return None
        return max(task_budget(check_of(key, assignments), self.budget) for key in batch) + GRACE

    def _lost(self, key: TaskKey, err: BaseException, assignments: Mapping[str, Assignment]) -> Outcome:
        """The outcome of a task run alone whose worker was killed: by the hard time limit, or for memory."""
        if isinstance(err, FutureTimeout):
            check = check_of(key, assignments)
            return timed_out(task_budget(check, self.budget), check)
        return worker_died()


Make = Callable[[list[Task], Mapping[str, Assignment]], Any]  # see `Showing`


@dataclass(frozen=True)
class Showing:
    """Work for the run stage's workers beyond the checks, for a layer above this one: `make` (a
    module-level function, sent to the workers) is called in a worker with each batch's tasks and
    the assignments, and `keep` here with what it made. `grade run` uses it to have the workers make
    the MathML of the readings they check and their answer groups' fingerprints while the class is
    still read (batch._made_beside). It gets what is left of the batch's budget: a batch whose checks
    took their time is only checked, and the layer above makes the rest itself."""

    make: Make
    keep: Callable[[Any], None]


class Stream:
    """A WorkerPool's run begun before the plan is done: each task is sent to the workers as the
    plan lists it, in batches (`add`), so that they check while the rest of the class is read;
    `outcomes` sends what is left and collects every outcome. Begun `beside` a plan in this
    process, it has one worker fewer than the pool's: this process is the other, reading.

    A task the plan never announced is sent by `outcomes`, so `add` only ever makes the run
    earlier. Trivial checks are kept for this process, at the end (see `WorkerPool.run`)."""

    def __init__(self, owner: WorkerPool, assignments: Mapping[str, Assignment], beside: bool = False,
                 show: "Showing | None" = None):

        from pebble import ProcessPool

        self.owner, self.assignments = owner, assignments
        context = multiprocessing.get_context(owner.start_method)
        # Forked workers are handed the assignments unpickled (pages shared with the parent); others
        # get a copy. Never through a global set here: two Dask threads of one worker run two pools.
        inherited = context.get_start_method() == "fork"
        self._start = partial(ProcessPool, initializer=_start_worker, context=context,
                              initargs=(owner.memory, dict(assignments), _sandbox_socket(),
                                        os.getpid() if inherited else None))  # else forked by the fork server
        # `beside` a plan, this process reads the class on one of the cores: one worker fewer (what is
        # sent after the plan gets a pool of its own for the missing one: `outcomes`).
        self._fewer = min(int(beside), owner.workers - 1)
        self._pool = self._start(max_workers=max(1, owner.workers - self._fewer))
        self._extra: Any = None
        self._tasks: dict[TaskKey, Task] = {}
        self._pending: list[TaskKey] = []
        self._code: list[TaskKey] = []
        self._sent: dict[Any, list[TaskKey]] = {}
        self._refused = False  # the pool refused a batch during the plan: the rest waits for `outcomes`
        self._show = show

    def add(self, task: Task) -> None:
        """Send `task` soon, with the next full batch. Never raises: the plan calls it for a student,
        and a pool that cannot take work now (no process to fork) is no student's error; `outcomes`
        sends what is held, and says so if the pool still cannot."""
        if not self._keep(task) or len(self._pending) < BATCH or self._refused:
            return
        try:
            self._send(self._pending, show=True)
        except Exception:  # noqa: BLE001 - said by `outcomes`, which sends it again
            log.debug("the check workers refused a batch while the class was read", exc_info=True)
            self._refused = True
            return
        self._pending = []

    def drop(self, keys: Iterable[TaskKey]) -> None:
        """Never send `keys` (held, not sent yet: code waits for the plan's end, see `_keep`)."""
        gone = set(keys)
        self._code = [k for k in self._code if k not in gone]
        self._pending = [k for k in self._pending if k not in gone]

    def _keep(self, task: Task) -> bool:
        """Hold `task` to be sent; False if it is not held here (known, or this process's)."""
        if task.key in self._tasks:
            return False
        self._tasks[task.key] = task
        check = check_of(task.key, self.assignments)
        if check in TRIVIAL:
            return False
        # Code runs after the plan: its sandbox imports torch meanwhile, not inside the first check's budget.
        (self._code if runs_code(task, self.assignments) else self._pending).append(task.key)
        return True

    def _send(self, batch: list[TaskKey], pool: Any = None, show: bool = False) -> None:
        # `show`: a batch sent while the plan reads, when a worker has time for more than the checks;
        # after the plan, the run stage's end waits for the last batch.
        make = self._show.make if show and self._show is not None else None
        self._sent[self._schedule(batch, pool, make)] = batch

    def _schedule(self, batch: list[TaskKey], pool: Any = None, make: Make | None = None) -> Any:
        # The code sandbox may have started after the workers (the plan starts it when it meets code).
        return (pool or self._pool).schedule(_run_batch_in_worker,
                                             args=([self._tasks[k] for k in batch], self.owner.budget,
                                                   _sandbox_socket(), make),
                                             timeout=self.owner._timeout(batch, self.assignments))

    def outcomes(self, tasks: Mapping[TaskKey, Task],
                 meanwhile: Callable[[], None] | None = None) -> dict[TaskKey, Outcome]:
        """The outcome of every one of `tasks` (those not sent yet are sent now); `meanwhile`, work of
        this process's own, is done once every task is sent, while the workers check."""
        from pebble import ProcessExpired

        owner, on_done = self.owner, self.owner.on_done
        try:
            for task in tasks.values():
                self._keep(task)
            # What is left goes in batches sized for the workers to finish together (code alone, first).
            # Beside the plan one worker was left out; for what is left now (all of it, if nothing was
            # sent while the plan read, as when it is split), it is a pool of its own, forked now
            # (after the sandbox started), taking every other batch.
            if self._fewer and (self._code or len(self._pending) >= 2 * BATCH):
                self._extra = self._start(max_workers=self._fewer)
            for i, batch in enumerate(_batches(self._code + self._pending, self.assignments, owner.workers)):
                self._send(batch, self._extra if self._extra is not None and i % 2 else None)
            self._code, self._pending = [], []
            # ... while the workers check, the trivial ones are done here.
            trivial = {k: t for k, t in tasks.items() if check_of(k, self.assignments) in TRIVIAL}
            outcomes = InProcess(0.0, on_done).run(trivial, self.assignments)
            if meanwhile is not None:
                meanwhile()
            again: list[TaskKey] = []  # tasks of a batch whose worker was killed: each is run on its own
            for future, batch in self._sent.items():
                try:
                    done = self._checked(future.result())
                except (FutureTimeout, ProcessExpired, MemoryError) as err:
                    if len(batch) > 1:
                        again.extend(batch)
                        continue
                    done = [owner._lost(batch[0], err, self.assignments)]
                outcomes.update(zip(batch, done))
                if on_done is not None:
                    on_done(len(batch))
            alone = {key: self._schedule([key]) for key in again}
            for key, future in alone.items():
                try:
                    outcomes[key] = self._checked(future.result())[0]
                except (FutureTimeout, ProcessExpired, MemoryError) as err:
                    outcomes[key] = owner._lost(key, err, self.assignments)
                if on_done is not None:
                    on_done(1)
        except BaseException:
            self.close()
            raise
        for pool in (self._pool, self._extra):
            if pool is not None:
                _retire(pool)
        self._pool = self._extra = None
        return {key: outcomes[key] for key in tasks}

    def _checked(self, done: "Checked") -> list[Outcome]:
        if done.shown is not None and self._show is not None:
            self._show.keep(done.shown)
        return done.outcomes

    def close(self) -> None:
        """Stop the workers now (the run stopped before its outcomes were asked for)."""
        for pool in (self._pool, self._extra):
            if pool is not None:
                pool.stop()  # Ctrl-C or a broken pool: the workers are killed, not waited for
                pool.join()
        self._pool = self._extra = None


_RETIRING: list[threading.Thread] = []
_SETTLE_AT_EXIT: list[bool] = []  # registered once, after pebble's own exit handler (so it runs first)


def _retire(pool: Any) -> None:
    """Stop a pool whose every task is done, and join it off this thread (see `settle`).

    pebble's pool threads look at the pool's state every 0.1 s, so joining here costs 50-90 ms
    of a run stage that takes ~0.3 s for 1,000 students; the workers are idle by now, and the
    join (which ends them) needs nothing from this thread."""
    pool.stop()
    if not _SETTLE_AT_EXIT:
        atexit.register(settle)
        _SETTLE_AT_EXIT.append(True)
    joining = threading.Thread(target=pool.join, name="attngrade-pool-join", daemon=True)
    _RETIRING.append(joining)
    joining.start()


def settle() -> None:
    """Wait for the pools being joined in the background: before forking (a child must not be
    made while another thread stops workers) and at exit."""
    while _RETIRING:
        _RETIRING.pop().join()


BATCH = 32  # most tasks sent to a worker at once: a round trip costs about what a quick check does


def _batches(keys: list[TaskKey], assignments: Mapping[str, Assignment], workers: int) -> list[list[TaskKey]]:
    """Tasks in batches: small enough that every worker gets several (the last ones finish together),
    large enough that a round trip is paid per batch, not per check. A check that runs code takes
    seconds: it goes alone."""
    runs_code = {k: REGISTRY[check_of(k, assignments)].runs_code for k in keys}
    code = [k for k in keys if runs_code[k]]
    quick = [k for k in keys if not runs_code[k]]
    size = max(1, min(BATCH, len(quick) // (4 * max(1, workers))))
    return [[k] for k in code] + [quick[i:i + size] for i in range(0, len(quick), size)]


TRIVIAL = frozenset({"manual", "choice", "dimensions"})


def executor(workers: int | None, budget: float, from_server: bool = False) -> Executor:
    """The local executor for `--workers N` (None: every core); `from_server`: its workers are
    started by the fork server (`start_fork_server`), where there is one."""
    workers = default_workers(workers)
    return WorkerPool(workers, budget, start_method="forkserver" if from_server and _has_fork_server() else None)


def start_fork_server() -> bool:
    """Start multiprocessing's fork server with the checks imported; False where there is none
    or it cannot start (the run stage then forks its workers from this process, as for a small class).

    Used for a large class. Workers forked from a parent that holds the plan of 100,000
    students share its pages only until either side writes to them, and the parent writes all
    over its heap while it sends the tasks: each worker ends up with a private copy of most of
    it (600 MB each at 100,000 students with distinct prediction files). Forked from the server,
    a fresh process, a worker holds the checks, the assignments (sent once, as it starts) and
    what it checks. Started before the class is read, the server imports the checks meanwhile."""
    if not _has_fork_server():
        return False

    try:
        multiprocessing.get_context("forkserver").set_forkserver_preload([__name__])
        forkserver.ensure_running()
    except (OSError, ValueError) as err:  # e.g. no AF_UNIX socket allowed, or its path too long
        log.info("no fork server (%s): the run stage's workers are forked from this process", err)
        return False
    return True


def _has_fork_server() -> bool:

    return "forkserver" in multiprocessing.get_all_start_methods()


def run(tasks: Mapping[TaskKey, Task], assignments: Mapping[str, Assignment], executor: Executor,
        known: Mapping[TaskKey, Outcome] | None = None) -> dict[TaskKey, Outcome]:
    """Outcome of every task; tasks whose outcome is already `known` are not run again."""
    known = known or {}
    todo = {key: task for key, task in tasks.items() if key not in known}
    outcomes = executor.run(todo, assignments) if todo else {}
    return {key: known[key] if key in known else outcomes[key] for key in tasks}


# -- inside a worker process ------------------------------------------------------------------
_ASSIGNMENTS: dict[str, Assignment] = {}


def _sandbox_socket() -> str | None:
    """The socket of the code sandbox this process started, if any (see `_start_worker`)."""
    return os.environ.get(ENV_SOCKET)


def _start_worker(memory: int, assignments: Mapping[str, Assignment] | None, sandbox_socket: str | None,
                  parent: int | None = None) -> None:

    end_with_parent(parent)
    # What the worker inherited (the class, the plan so far) is out of its collector's reach: a
    # collection would write to every object of it, copying the pages it shares with the parent.
    gc.freeze()
    if assignments is not None:
        _ASSIGNMENTS.clear()
        _ASSIGNMENTS.update(assignments)
    if sandbox_socket is not None:  # a worker from the fork server has the environment of its start
        _use_sandbox(sandbox_socket)
    try:
        cap = memory if memory == resource.RLIM_INFINITY else memory + _mapped()
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ImportError, ValueError, OSError):
        pass  # not on this platform: the time limit still applies


def _mapped() -> int:
    """Bytes of address space this process holds already (0 where /proc cannot tell).

    A worker may use `memory` more than it was forked with: forked from a process that maps
    more than the cap (a notebook or test process that imported torch maps gigabytes it never
    touches), a flat cap would fail the worker's first allocation, and every answer it checked
    would be called too large to check."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _use_sandbox(socket: str) -> None:
    """Run code in the sandbox the parent started (its zygote serves the workers too)."""
    os.environ[ENV_SOCKET] = socket


@dataclass(frozen=True)
class Checked:
    """What a worker sends back for a batch: the outcome of each task, in order, and what `Showing`
    asked it to make of the batch (or None)."""

    outcomes: list[Outcome]
    shown: Any = None


def _run_batch_in_worker(tasks: list[Task], budget: float, sandbox_socket: str | None = None,
                         make: Make | None = None) -> Checked:
    if sandbox_socket is not None:
        _use_sandbox(sandbox_socket)
    started = time.monotonic()
    outcomes = [run_task(task, _ASSIGNMENTS[task.key.homework], budget) for task in tasks]
    left = budget - (time.monotonic() - started) if budget > 0 else None
    return Checked(outcomes, _made(make, tasks, left) if make is not None else None)


def _made(make: Make, tasks: list[Task], seconds: float | None = None) -> Any:
    """What `make` makes of a batch within `seconds` (None: no limit), or None: work beyond the checks
    never costs their outcomes, nor brings their batch near its hard time limit."""
    if seconds is not None and seconds < MAKE_AT_LEAST:
        return None
    try:
        with time_limit(seconds or 0):  # (0: no limit)
            return make(tasks, _ASSIGNMENTS)
    except Exception:  # noqa: BLE001 - (BudgetExceeded too) the layer that asked for it makes it itself, later
        log.debug("a worker could not make what was asked beside the checks", exc_info=True)
        return None


MAKE_AT_LEAST = 0.1  # seconds of a batch's budget left for `Showing.make` to be worth starting
