"""Students' reports rendered by several processes at once.

Rendering (jinja2, MathML) is the largest share of the write stage and each report is
independent, so with `workers` > 1 the reports are split into chunks and rendered by
forked processes. Forked children see the results already in memory (nothing is pickled
on the way in) and write their reports themselves; only a count comes back. Where fork
is not available (or for a small class) they are rendered here, one after the other.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable, Sequence

from ..output import write_atomic
from ..records import Homework, Result

CHUNK = 50  # reports a child renders per task: enough to pay for the round trip
SERIAL_BELOW = 200  # a smaller class is rendered here: starting processes would cost more

# What the forked children read: set just before the pool starts, cleared after.
_SHARED: dict[str, Any] = {}


def write_reports(results: Sequence[Result], folders: Sequence[str], out: Path, homeworks: dict[str, Homework],
                  rubric: bool, workers: int, advance: Callable[[int], None],
                  also: Callable[[], None] | None = None) -> None:
    """OUT/<folder>/report.html for every result, in parallel where it pays.

    `also` is one more page to write (the class page), run first beside the reports."""
    if workers <= 1 or len(results) < SERIAL_BELOW or "fork" not in multiprocessing.get_all_start_methods():
        _render(results, folders, out, homeworks, rubric, advance)
        if also is not None:
            also()
        return
    _SHARED.update(results=results, folders=folders, out=out, homeworks=homeworks, rubric=rubric, also=also)
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            jobs = [pool.submit(_also)] if also is not None else []
            chunks = [(i, min(i + CHUNK, len(results))) for i in range(0, len(results), CHUNK)]
            jobs += [pool.submit(_render_chunk, start, end) for start, end in chunks]
            for done in as_completed(jobs):
                advance(done.result())
    finally:
        _SHARED.clear()


def _also() -> int:
    _SHARED["also"]()
    return 0


def _render_chunk(start: int, end: int) -> int:
    s = _SHARED
    _render(s["results"][start:end], s["folders"][start:end], s["out"], s["homeworks"], s["rubric"], lambda n: None)
    return end - start


def _render(results: Sequence[Result], folders: Sequence[str], out: Path, homeworks: dict[str, Homework],
            rubric: bool, advance: Callable[[int], None]) -> None:
    from . import render_student

    for result, folder in zip(results, folders):
        write_atomic(out / folder / "report.html",
                     render_student(result, homeworks.get(result.homework or ""), rubric=rubric))
        advance(1)
