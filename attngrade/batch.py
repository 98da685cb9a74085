"""`grade run`: grade a batch of submissions and write every output.

One bad submission never stops the batch: it gets an error row in grades.csv and an
error report of its own, and the exit code says that something could not be graded.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from .errors import ConfigError, SubmissionError
from .grading import Grader
from .keys import load_keys
from .output import folder_names, grades_csv, results_json, write_atomic
from .problems import load_homework
from .records import Homework, Result
from .reports import render_index, render_student
from .submissions import discover, load_submission

log = logging.getLogger(__name__)


@dataclass
class Batch:
    """What a run produced, for the CLI's summary and exit code."""

    results: list[Result] = field(default_factory=list)
    out: Path | None = None
    graders: dict[str, Grader] = field(default_factory=dict)

    @property
    def failed(self) -> list[Result]:
        return [r for r in self.results if r.error]


def _grader(homework_id: str, solutions: Path, graders: dict[str, Grader], gold: dict[str, Path]) -> Grader:
    if homework_id not in graders:
        try:
            homework = load_homework(homework_id)
        except ConfigError as err:
            # A student naming a homework that does not exist is the student's error.
            raise SubmissionError(str(err)) from None
        keys = load_keys(solutions, homework)
        graders[homework_id] = Grader(homework, keys, self_check=False, solutions=solutions, gold=dict(gold))
    return graders[homework_id]


def grade_paths(paths: Iterable[Path], solutions: Path,
                progress: Callable[[Iterable[Path]], Iterable[Path]] = lambda xs: xs,
                gold: dict[str, Path] | None = None) -> Batch:
    batch = Batch()
    for path in progress(list(discover(list(paths)))):
        batch.results.append(grade_one(path, solutions, batch.graders, gold or {}))
    return batch


def grade_one(path: Path, solutions: Path, graders: dict[str, Grader], gold: dict[str, Path] | None = None) -> Result:
    """Grade one submission path; any failure becomes an error Result, never an exception."""
    student = path.stem if path.is_file() else path.name
    homework: str | None = None
    try:
        submission = load_submission(path)
        student, homework = submission.student, submission.homework
        return _grader(submission.homework, solutions, graders, gold or {}).grade(submission)
    except SubmissionError as err:
        return Result(student=student, homework=homework, score=0.0, max_score=0.0, error=str(err),
                      source=str(path))
    except ConfigError:
        raise
    except Exception as err:  # noqa: BLE001 - one broken submission must not stop a class
        log.debug("internal error grading %s", path, exc_info=True)
        return Result(student=student, homework=homework, score=0.0, max_score=0.0,
                      error=f"{path}: attngrade failed on this submission ({type(err).__name__}: {err}); "
                            "course staff will grade it by hand", source=str(path))


def run(paths: list[Path], out: Path, solutions: Path = Path("solutions"), *, show_progress: bool = True,
        gold: dict[str, Path] | None = None) -> Batch:
    """Grade every submission under `paths` and write results, grades and reports to `out`."""
    progress = _progress if show_progress and sys.stderr.isatty() else (lambda xs: xs)
    batch = grade_paths(paths, solutions, progress, gold)
    batch.out = out
    write_outputs(batch.results, out, {g.homework.id: g.homework for g in batch.graders.values()})
    return batch


def write_outputs(results: list[Result], out: Path, homeworks: dict[str, Homework]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    folders = folder_names(results)
    for result, folder in zip(results, folders):
        write_atomic(out / folder / "report.html", render_student(result, homeworks.get(result.homework or "")))
    write_atomic(out / "results.json", results_json(results))
    write_atomic(out / "grades.csv", grades_csv(results, homeworks))
    write_atomic(out / "index.html", render_index(list(zip(results, folders)), "Class results"))


def _progress(paths: list[Path]) -> Iterable[Path]:
    from rich.progress import track  # only on a terminal: keeps `grade check` start-up light

    return track(paths, description="grading", transient=True)
