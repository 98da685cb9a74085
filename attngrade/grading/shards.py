"""The plan stage split across processes: each plans a contiguous share of the class.

Reading answers (parsing them into sympy) is most of the plan stage, and in one process it
is serial. With several workers the class is cut into shares once the student ids are
unique (over the whole class, as in one process); forked children plan the later shares
while this process plans the first, and the shares' plans are joined in order. Each share
has its own memo of readings, so an answer written in two shares is read twice (the
statistics count what was done), but a task planned in two shares is one task: the run
stage still checks each distinct answer once, and every verdict is the one a single
process gives.

Splitting costs a fixed share of a second (a second process's first readings, and the
readings coming back pickled: unpickling sympy trees costs about a fifth of building them),
so a class is split only when it has at least `SPLIT_MATH` distinct math answers, counted
from the raw answers before anything is read: a class that writes the same few formulas
again and again reads them from the memo faster than a second process could start. And
only a class below `SPLIT_BELOW` is split, as the report processes inherit only such a
class: the shares' plans are held whole while they are joined.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Callable, Iterator, Sequence

from ..checkers import REGISTRY
from ..errors import SubmissionError
from ..records import Result, Submission
from ..runtime.lifeline import end_with_parent
from ..runtime.scale import LARGE_CLASS
from ..sandbox import prestart
from .identity import submission_names, unique_students
from .plan import Plan, Resolve, Stats, SubmissionReading, frozen, plan, split_fields
from .tasks import Task, check_of

log = logging.getLogger(__name__)

SPLIT_FROM = 200  # submissions from which a second process may pay for itself
SPLIT_BELOW = LARGE_CLASS  # ... and below which the shares' plans are small enough to hold whole
SPLIT_MATH = 1_000  # distinct math answers from which it does: each takes about a millisecond to read

Items = Sequence[Submission | Result]
_SHARED: tuple[list[Submission | Result], Resolve] | None = None  # set only while children are forked for it


def plan_split(items: Items, resolve: Resolve, stats: Stats, workers: int,
               advance: Callable[[int], None] | None = None, on_task: Callable[[Task], None] | None = None) -> Plan:
    """`plan(items, resolve, stats)`, by `workers` processes when the class is large enough
    and fork exists (submissions loaded one by one, a `Loading`, are planned here: they are read
    once). `advance` is told of each submission planned (the progress bar); `on_task`, of each
    task planned while the class is planned in this process alone (see `plan`)."""
    advance = advance or (lambda count: None)
    names = submission_names(items)  # looked over here: `plan` is given the items one by one
    if not (workers > 1 and isinstance(items, Sequence) and SPLIT_FROM <= len(items) < SPLIT_BELOW
            and "fork" in multiprocessing.get_all_start_methods()):
        return plan(_counted(items, advance), resolve, stats, reserved=names, on_task=on_task)
    resolve = remembered(resolve)
    if distinct_math(items, resolve) < SPLIT_MATH:
        return plan(_counted(items, advance), resolve, stats, reserved=names, on_task=on_task)
    every = list(unique_students(items, names))
    bounds = _shares(len(every), workers)
    global _SHARED
    _SHARED = (every, resolve)
    try:
        with ProcessPoolExecutor(len(bounds) - 1, mp_context=multiprocessing.get_context("fork"),
                                 initializer=end_with_parent, initargs=(os.getpid(),)) as pool:
            later = [pool.submit(_plan_share, start, stop) for start, stop in bounds[1:]]
            # No task is sent while the class is split: the shares' processes have the cores.
            joined = plan(_counted(every[:bounds[0][1]], advance), resolve, stats)
            for future, (start, stop) in zip(later, bounds[1:]):
                _join(joined, _share(future, every[start:stop], resolve), resolve)
                advance(stop - start)
    finally:
        _SHARED = None
    return joined


def distinct_math(items: Items, resolve: Resolve) -> int:
    """How many distinct raw answers the class gives to math fields (what reading costs)."""
    seen = set()
    for item in items:
        if not isinstance(item, Submission):
            continue
        try:
            homework = resolve(item.homework).homework
        except SubmissionError:
            continue  # a homework nobody has: this student's error row, nothing to read
        for part in homework.parts:
            raw = item.answers.get(part.id)
            fields = split_fields(part, raw) if raw is not None else None
            for field in part.fields:
                if fields and field.kind == "math" and field.name in fields:
                    seen.add((item.homework, part.id, field.name, frozen(fields[field.name])))
    return len(seen)


def remembered(resolve: Resolve) -> Resolve:
    """`resolve`, each homework resolved once (its error too, raised again each time)."""
    known: dict[str, Any] = {}

    def again(homework: str) -> Any:
        if homework not in known:
            try:
                known[homework] = resolve(homework)
            except SubmissionError as err:
                known[homework] = err
        if isinstance(known[homework], SubmissionError):
            # A new exception each time: raising the same one again would lengthen its traceback
            # by this frame for every student on that homework.
            raise SubmissionError(str(known[homework]))
        return known[homework]

    return again


def _shares(count: int, workers: int) -> list[tuple[int, int]]:
    size = -(-count // workers)
    return [(start, min(start + size, count)) for start in range(0, count, size)]


def _counted(items: Items, advance: Callable[[int], None]) -> Iterator[Submission | Result]:
    for item in items:
        yield item
        advance(1)


def _plan_share(start: int, stop: int) -> Plan:
    """In a child: plan items[start:stop] (the sandbox is the parent's to start)."""
    assert _SHARED is not None, "called only in a child forked by plan_split"
    items, resolve = _SHARED
    share = plan(items[start:stop], resolve, Stats(), prestart=False, reserved=())  # ids made unique already
    share.assignments = {}  # the parent resolves its own: its check workers inherit those
    return share


def _share(future: Future, items: Items, resolve: Resolve) -> Plan:
    """A child's plan of a share; if the child failed, the share planned here (so an instructor's
    ConfigError is raised here, as in one process)."""
    try:
        return future.result()
    except Exception:  # noqa: BLE001 - a failed child is not a failed class
        log.warning("the process planning a share of the class failed; planning it here", exc_info=True)
        return plan(items, resolve, Stats(), reserved=())  # ids made unique already


def _join(joined: Plan, share: Plan, resolve: Resolve) -> None:
    """Add a later share to `joined`: its entries after, its homeworks resolved here, each task once."""
    joined.entries.extend(share.entries)
    for entry in share.entries:
        if isinstance(entry, SubmissionReading) and entry.submission.homework not in joined.assignments:
            joined.assignments[entry.submission.homework] = resolve(entry.submission.homework)
    repeated = []
    for key, task in share.tasks.items():
        if key in joined.tasks:
            repeated.append(check_of(key, joined.assignments))
        else:
            joined.tasks[key] = task
    joined.stats.add(share.stats, repeated)
    if any(REGISTRY[check_of(key, joined.assignments)].runs_code for key in share.tasks):
        prestart()
