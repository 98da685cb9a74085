"""`grade run`: grade a batch of submissions and write every output.

One bad submission never stops the batch: it gets an error row in grades.csv and an
error report of its own, and the exit code says that something could not be graded.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable

from .errors import ConfigError, SubmissionError
from .grading import Grader
from .keys import load_keys
from .output import folder_names, grades_csv, results_json, write_atomic
from .problems import load_homework
from .groups import Group, answer_groups
from .overrides import apply as apply_overrides
from .overrides import load as load_overrides
from .overrides import template, write_template
from .parallel import default_workers, run_tasks
from .records import Homework, Result, Submission
from .reports import render_index, render_student
from .submissions import discover, load_submission

log = logging.getLogger(__name__)


@dataclass
class Batch:
    """What a run produced, for the CLI's summary and exit code."""

    results: list[Result] = field(default_factory=list)
    out: Path | None = None
    graders: dict[str, Grader] = field(default_factory=dict)
    groups: dict[str, dict[str, list[Group]]] = field(default_factory=dict)  # homework -> part -> groups
    messages: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[Result]:
        return [r for r in self.results if r.error]


def _grader(homework_id: str, solutions: Path, graders: dict[str, Grader], gold: dict[str, Path],
            budget: float) -> Grader:
    if homework_id not in graders:
        try:
            homework = load_homework(homework_id)
        except ConfigError as err:
            # A student naming a homework that does not exist is the student's error.
            raise SubmissionError(str(err)) from None
        keys = load_keys(solutions, homework)
        graders[homework_id] = Grader(homework, keys, self_check=False, solutions=solutions, gold=dict(gold),
                                      budget=budget)
    return graders[homework_id]


def grade_paths(paths: Iterable[Path], solutions: Path,
                progress: Callable[[Iterable[Path]], Iterable[Path]] = lambda xs: xs,
                gold: dict[str, Path] | None = None, *, workers: int = 1, budget: float = 2.0) -> Batch:
    """Grade in three passes: read everything and collect the distinct checks; run them
    (in `workers` processes); then assemble every student's verdicts from the memo."""
    batch = Batch()
    loaded: list[tuple[Path, Submission | Result]] = []
    for path in list(discover(list(paths))):
        try:
            loaded.append((path, load_submission(path)))
        except SubmissionError as err:
            loaded.append((path, _error(path, None, str(err))))
    queue: dict = {}
    for path, item in loaded:
        if isinstance(item, Submission):
            try:
                grader = _grader(item.homework, solutions, batch.graders, gold or {}, budget)
            except SubmissionError:
                continue
            grader.collect = queue.setdefault(grader.homework.id, {})
            _safely(grader, item, path)
            grader.collect = None
    for homework_id, tasks in queue.items():
        batch.graders[homework_id].prime(run_tasks(tasks, workers=workers, budget=budget))
    for grader in batch.graders.values():
        grader.replaying = True
    for path, item in progress(loaded):
        if isinstance(item, Result):
            batch.results.append(item)
            continue
        item = _unique_student(item, batch.results)
        try:
            grader = _grader(item.homework, solutions, batch.graders, gold or {}, budget)
        except SubmissionError as err:
            batch.results.append(_error(path, item.homework, str(err), item.student))
            continue
        batch.results.append(_safely(grader, item, path))
    return batch


def _unique_student(submission: Submission, earlier: list[Result]) -> Submission:
    """A student id is the submission's own claim: two files claiming one id get two ids."""
    taken = {r.student for r in earlier}
    if submission.student not in taken:
        return submission
    n = 2
    while f"{submission.student}-{n}" in taken:
        n += 1
    new = f"{submission.student}-{n}"
    note = (f"another submission in this batch also says it is '{submission.student}'; "
            f"this one ({submission.path}) is listed as '{new}'")
    return replace(submission, student=new, notes=submission.notes + (note,))


def _error(path: Path, homework: str | None, message: str, student: str | None = None) -> Result:
    student = student or (path.stem if path.is_file() else path.name)
    return Result(student=student, homework=homework, score=0.0, max_score=0.0, error=message, source=str(path))


def _safely(grader: Grader, submission: Submission, path: Path) -> Result:
    """Grade one loaded submission; any failure becomes an error Result, never an exception."""
    try:
        return grader.grade(submission)
    except ConfigError:
        raise
    except Exception as err:  # noqa: BLE001 - one broken submission must not stop a class
        log.debug("internal error grading %s", path, exc_info=True)
        return _error(path, submission.homework,
                      f"{path}: attngrade failed on this submission ({type(err).__name__}: {err}); "
                      "course staff will grade it by hand", submission.student)


def run(paths: list[Path], out: Path, solutions: Path = Path("solutions"), *, show_progress: bool = True,
        gold: dict[str, Path] | None = None, workers: int | None = None, budget: float = 2.0,
        overrides: Path | None = None) -> Batch:
    """Grade every submission under `paths` and write results, grades and reports to `out`."""
    progress = _progress if show_progress and sys.stderr.isatty() else (lambda xs: xs)
    workers = default_workers() if workers is None else workers
    batch = grade_paths(paths, solutions, progress, gold, workers=workers, budget=budget)
    batch.out = out
    homeworks = {g.homework.id: g.homework for g in batch.graders.values()}
    for hid, hw in homeworks.items():
        mine = [r for r in batch.results if r.homework == hid and not r.error]
        batch.groups[hid] = answer_groups(mine, {p.id: p for p in hw.parts})
    if overrides is not None:
        group_of = {(member, g.part): (hid, g.id) for hid, by_part in batch.groups.items()
                    for gs in by_part.values() for g in gs for member in g.members}
        decisions = load_overrides(overrides, batch.results, batch.groups, homeworks)
        batch.results = apply_overrides(batch.results, decisions, group_of)
    write_outputs(batch.results, out, homeworks, batch.groups)
    batch.messages.append(write_template(out, template(batch.results, batch.groups, out / "overrides.yaml",
                                                        homeworks)))
    return batch


def write_outputs(results: list[Result], out: Path, homeworks: dict[str, Homework],
                  groups: dict[str, dict[str, list[Group]]] | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    folders = folder_names(results)
    for result, folder in zip(results, folders):
        write_atomic(out / folder / "report.html", render_student(result, homeworks.get(result.homework or "")))
    write_atomic(out / "results.json", results_json(results))
    write_atomic(out / "grades.csv", grades_csv(results, homeworks))
    write_atomic(out / "index.html", render_index(list(zip(results, folders)), "Class results", homeworks, groups))


def _progress(paths: list[Path]) -> Iterable[Path]:
    from rich.progress import track  # only on a terminal: keeps `grade check` start-up light

    return track(paths, description="grading", transient=True)
