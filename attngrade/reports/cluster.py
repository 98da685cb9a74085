"""Students' reports rendered on the Dask cluster of `grade run --executor dask`.

Chunks of results go to the workers, which render each student's page and send it back;
this process writes the pages as chunks come back (the workers need not share OUT's disk)
and meanwhile writes its own outputs and the class page, which needs the whole class.
Same interface as `parallel.ReportPool`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..grading.distributed import DaskExecutor
from ..records import Homework, Result
from ..runtime.files import write_atomic, write_new
from .pages import render_student
from .parallel import ReportJob

CHUNK = 200  # reports a worker renders per task: pages are small, a round trip is not
IN_FLIGHT_PER_THREAD = 3  # chunks sent ahead per worker thread: none waits while this process writes


@dataclass
class ClusterReports:
    executor: DaskExecutor

    early = None  # no local processes to lend (see `parallel.ReportPool.early`)

    def start(self, reports: int) -> None:
        """Nothing to fork ahead: the cluster is already there."""

    def prepare(self) -> None:
        """Nothing to prepare here: the cluster's workers render the reports."""

    def close(self) -> None:
        """The cluster is the executor's to close (after the run)."""

    def write(self, job: ReportJob, advance: Callable[[int], None],
              meanwhile: Callable[[], None] | None = None) -> None:
        """OUT/<folder>/report.html for every result of `job`, and its class page beside them."""
        results, folders, out, homeworks, rubric = job.results, job.folders, job.out, job.homeworks, job.rubric
        also, fresh = job.page, job.fresh
        from dask.distributed import as_completed

        client = self.executor.client()
        fails = self.executor.failures  # the cluster's failures only: a full disk here is said as such
        used = {r.homework for r in results}
        mine = {hid: hw for hid, hw in homeworks.items() if hid in used}  # small: sent with each chunk
        write = write_new if fresh else write_atomic
        todo = iter(range(0, len(results), CHUNK))
        starts: dict[Any, int] = {}

        def send(start: int) -> Any:
            future = client.submit(render_chunk, list(results[start:start + CHUNK]), mine, rubric, pure=False)
            starts[future] = start
            return future

        # A few chunks per worker in flight, not the whole class: its pickled results and its
        # pages would otherwise all be held at once, which a large class cannot afford.
        with fails("rendering the reports"):
            flight = max(2, IN_FLIGHT_PER_THREAD * sum(client.nthreads().values()))
            running = as_completed([send(start) for start in itertools.islice(todo, flight)])
        if also is not None:
            also.write(results, folders, homeworks)
        if meanwhile is not None:
            meanwhile()
        while True:
            with fails("rendering the reports"):
                future = next(running, None)
                if future is None:
                    break
                start, pages = starts.pop(future), future.result()
                following = next(todo, None)
                if following is not None:
                    running.add(send(following))
            for folder, page in zip(folders[start:start + len(pages)], pages):
                write(out / folder / "report.html", page)
            advance(len(pages))


def render_chunk(results: list[Result], homeworks: Mapping[str, Homework], rubric: bool) -> list[str]:
    """On a Dask worker: each result's report page."""
    return [render_student(result, homeworks.get(result.homework or ""), rubric=rubric) for result in results]
