"""Students' reports rendered by several processes at once.

Rendering (jinja2, MathML) is the largest share of the write stage and each report is
independent, so with `workers` > 1 the reports are split into chunks and rendered by
forked processes, which write them themselves; only a count comes back.

How the children get the class depends on its size. A class of fewer than
`FORK_EARLY_FROM` students is inherited: the children are forked when the reports are
due, with the class already in memory, and are sent only index ranges. Unpickling the
class would cost the children a large share of the rendering (its readings are sympy trees),
and at this size the pages a child copies from its parent are few.

A larger class is pickled to children forked by `ReportPool.start`, which `grade run`
calls once it knows how many submissions there are, before it reads them: a child forked
later would share the pages of a parent holding the whole class, and every page the
parent touches afterwards (its reference counts change as it writes results.json) is then
copied, so each child ends up holding a copy of the class. The class page is a child's
job too, except for a very large class (pickling the whole class would cost more than
rendering it here). Either way the parent writes
results.json and grades.csv while the children render; an inheriting class's parent is one
of the renderers too, taking ranges beside its children once its own outputs are written.
Where fork is not available (or for a small class) the reports are rendered here, one after
the other.
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import signal
import threading
from collections import deque
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..grading.groups import Group
from ..records import Homework, Result
from ..runtime.files import write_atomic, write_new
from ..runtime.lifeline import end_with_parent
from ..runtime.scale import LARGE_CLASS
from .pages import compile_templates, index_pieces, render_student, warm

log = logging.getLogger(__name__)

CHUNK = 50  # reports a child renders per task: enough to pay for the round trip
SERIAL_BELOW = 200  # a smaller class is rendered here: starting processes would cost more
FORK_EARLY_FROM = LARGE_CLASS  # students from which the children are forked before the class is read (see above)
CLASS_PAGE_HERE_FROM = 20_000  # students from which the class page is rendered here, not pickled to a child


class ReportPool:
    """Processes that render reports, forked by `start` (while this process is small)."""

    def __init__(self, workers: int, thaws: bool = False):
        """`thaws`: the caller unfreezes the collector's permanent generation itself once the reports
        are written (`grade run` does), so the class frozen for the children is left frozen here."""
        self.workers, self.thaws = workers, thaws
        self._pool: ProcessPoolExecutor | None = None

    def start(self, reports: int) -> None:
        """Fork the processes now if `reports` reports are to be pickled to them (a large class)."""
        if self._pool is None and reports >= max(FORK_EARLY_FROM, SERIAL_BELOW) and self._can_fork:
            self._pool = _fork(self.workers)
            self._pool.submit(int).result()  # forks every worker now (fork pools start them all at once)

    @property
    def _can_fork(self) -> bool:
        return self.workers > 1 and "fork" in multiprocessing.get_all_start_methods()

    def prepare(self) -> None:
        """Make ready here what each report process needs first (`reports.warm`), for those forked from
        this process when the reports are due: `grade run` calls it while it waits for the run stage's
        last outcomes. Processes forked before the class was read (a large class) compile their own.
        A failure here is no grading's: the renderers compile and import what they need themselves."""
        if self._pool is not None or not self._can_fork:
            return
        try:
            warm()
        except Exception:  # noqa: BLE001 - said where a report is rendered, if it fails there too
            log.debug("the report processes could not be prepared ahead", exc_info=True)

    def __enter__(self) -> "ReportPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def early(self) -> ProcessPoolExecutor | None:
        """The processes forked before the class was read (a large class), free for other work until
        the reports are due (`folders.FolderMaker`)."""
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def write(self, job: ReportJob, advance: Callable[[int], None],
              meanwhile: Callable[[], None] | None = None) -> None:
        """OUT/<folder>/report.html for every result of `job`, and its class page beside them.

        `meanwhile` (the outputs this process writes: results.json, grades.csv, the overrides
        template) runs here while the children render, rather than after them."""
        results, folders, out, homeworks, rubric = job.results, job.folders, job.out, job.homeworks, job.rubric
        also, fresh = job.page, job.fresh
        if len(results) < SERIAL_BELOW or not self._can_fork:
            _render(results, folders, out, homeworks, rubric, advance, fresh)
            if also is not None:
                also.write(results, folders, homeworks)
            if meanwhile is not None:
                meanwhile()
            return
        if self._pool is None:
            _write_inherited(self.workers, job, advance,
                             meanwhile, self.thaws)
            return
        used = {r.homework for r in results}
        mine = {hid: hw for hid, hw in homeworks.items() if hid in used}
        # The class page is the longest single job: first in the queue, so it ends with the reports.
        # It needs the whole class, so a large class renders it here instead of pickling it whole.
        page_here = also is not None and len(results) >= CLASS_PAGE_HERE_FROM
        jobs = [self._pool.submit(_class_page, also, results, folders, mine)] if also and not page_here else []
        jobs += [self._pool.submit(_render_chunk, results[i:i + CHUNK], folders[i:i + CHUNK], out, mine, rubric,
                                   fresh) for i in range(0, len(results), CHUNK)]
        if page_here:
            also.write(results, folders, homeworks)
        _collect(jobs, meanwhile, advance)


@dataclass(frozen=True)
class ClassPage:
    """OUT/index.html: what it needs besides the results (picklable, so a child can render it)."""

    path: Path
    title: str
    groups: dict[str, dict[str, list[Group]]] | None = None

    def write(self, results: Sequence[Result], folders: Sequence[str], homeworks: dict[str, Homework]) -> None:
        write_atomic(self.path, index_pieces(list(zip(results, folders)), self.title, homeworks, self.groups))


def write_reports(job: ReportJob, workers: int, advance: Callable[[int], None], pool: Any = None,
                  meanwhile: Callable[[], None] | None = None) -> None:
    """OUT/<folder>/report.html for every result, in parallel where it pays (in `pool`, if given:
    a ReportPool, or a cluster's `cluster.ClusterReports`)."""
    if pool is not None:
        pool.write(job, advance, meanwhile)
        return
    with ReportPool(workers) as late:
        late.start(len(job.results))
        late.write(job, advance, meanwhile)


@dataclass(frozen=True)
class ReportJob:
    """Every student's report and the class page: what to render and where. Inherited children
    render it from memory they share with the parent; `fresh`: `out` is a staged OUT no one reads
    yet, whose reports need no temporary file (`runtime.files.write_new`)."""

    results: Sequence[Result]
    folders: Sequence[str]
    out: Path
    homeworks: dict[str, Homework]
    rubric: bool
    page: ClassPage | None
    fresh: bool = False


_INHERITED: ReportJob | None = None  # set only while children forked for it are running


def _write_inherited(workers: int, job: ReportJob, advance: Callable[[int], None],
                     meanwhile: Callable[[], None] | None, thaws: bool = False) -> None:
    """Fork children that see `job` in the memory they share with this process; send them ranges.

    This process is one of the `workers`: it writes its own outputs (`meanwhile`) while the children
    begin, then renders ranges beside them. One process fewer to fork, to fault in the pages of the
    class and to end, and no third process sharing two cores."""
    global _INHERITED
    _INHERITED = job
    # The class goes to the collector's permanent generation: a child's collections then
    # never write to its objects' headers, so the pages holding them stay shared. (A caller
    # that froze it already, or that unfreezes it itself, is left to: counting what is frozen
    # walks all of it, sympy included, at the one moment nothing else runs.)
    thaw_here = not thaws and gc.get_freeze_count() == 0
    gc.freeze()
    try:
        with _fork(workers - 1) as pool:
            ranges = _Ranges(pool, len(job.results), ahead=workers - 1)
            # The class page is the longest single job: a child's first, so it ends with the reports.
            jobs = [pool.submit(_inherited_page)] if job.page is not None else []
            try:
                ranges.send()
                if meanwhile is not None:
                    meanwhile()
                while (taken := ranges.take()) is not None:
                    advance(_inherited_chunk(*taken))
                _collect(jobs + ranges.sent, None, advance)
            except BaseException:
                ranges.stop()  # (Ctrl-C, a full disk): the pool's end then waits only for what the children hold
                raise
    finally:
        if thaw_here:
            gc.unfreeze()
        _INHERITED = None


class _Ranges:
    """The ranges of a class's reports, handed out as they are due: `ahead` queued for the children at
    any time (one more sent as each ends), the rest taken by this process (`take`) when it is free."""

    def __init__(self, pool: ProcessPoolExecutor, count: int, ahead: int):
        self._pool, self._ahead = pool, ahead
        self._left = deque((i, min(i + CHUNK, count)) for i in range(0, count, CHUNK))
        self._lock = threading.Lock()
        self._queued = 0
        self.sent: list = []

    def send(self, ended: object = None) -> None:
        """Queue ranges for the children up to `ahead`; called again, by the pool's thread, as each ends."""
        with self._lock:
            self._queued -= ended is not None
            due = []
            while self._left and self._queued < self._ahead:
                try:
                    due.append(self._pool.submit(_inherited_chunk, *self._left[0]))
                except RuntimeError:  # a pool broken or shut down: its futures say why; the rest is `take`n here
                    if ended is None:
                        raise
                    break
                self._left.popleft()
                self._queued += 1
            self.sent += due
        for future in due:  # outside the lock: a future already done calls back at once, in this thread
            future.add_done_callback(self.send)

    def stop(self) -> None:
        """Hand out nothing more (the write stopped)."""
        with self._lock:
            self._left.clear()

    def take(self) -> tuple[int, int] | None:
        with self._lock:
            return self._left.popleft() if self._left else None


def _collect(jobs: list, meanwhile: Callable[[], None] | None, advance: Callable[[int], None]) -> None:
    """This process's own outputs while the children render, then each job's count as it ends."""
    if meanwhile is not None:
        meanwhile()
    for done in as_completed(jobs):
        advance(done.result())


def _inherited_page() -> int:
    job = _INHERITED
    assert job is not None and job.page is not None, "called only in a child forked by _write_inherited"
    job.page.write(job.results, job.folders, job.homeworks)
    return 0


def _inherited_chunk(start: int, stop: int) -> int:
    job = _INHERITED
    assert job is not None, "called only in a child forked by _write_inherited"
    _render(job.results[start:stop], job.folders[start:stop], job.out, job.homeworks, job.rubric, lambda n: None,
            job.fresh)
    return stop - start


def _fork(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=_start_child,
                               initargs=(os.getpid(),))


def _class_page(page: ClassPage, results: Sequence[Result], folders: Sequence[str],
                homeworks: dict[str, Homework]) -> int:
    page.write(results, folders, homeworks)
    return 0


def _start_child(parent: int) -> None:
    end_with_parent(parent)
    # Ctrl-C reaches the whole process group; the parent stops the run and shuts the pool down.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Early children: while the parent is still reading and checking the class, so the first
    # chunk does not pay. Inherited ones find them compiled if the parent prepared (`prepare`).
    compile_templates()


def _render_chunk(results: Sequence[Result], folders: Sequence[str], out: Path, homeworks: dict[str, Homework],
                  rubric: bool, fresh: bool = False) -> int:
    _render(results, folders, out, homeworks, rubric, lambda n: None, fresh)
    return len(results)


def _render(results: Sequence[Result], folders: Sequence[str], out: Path, homeworks: dict[str, Homework],
            rubric: bool, advance: Callable[[int], None], fresh: bool = False) -> None:
    write = write_new if fresh else write_atomic
    for result, folder in zip(results, folders):
        write(out / folder / "report.html", render_student(result, homeworks.get(result.homework or ""), rubric=rubric))
        advance(1)
