"""Grading in three plain stages, the same for every entry point.

- **plan** (`plan.py`): load and read every submission; list the distinct tasks
  (a check and the canonical form of what it reads). Nothing is checked. With several
  workers, a class with many distinct formulas is read by several processes (`shards.py`).
- **run** (`execute.py`): execute the distinct tasks through an Executor (in this
  process, or a pool of worker processes under budgets); knows nothing of students. With
  local workers and a class loaded whole it begins while the plan reads (`execute.Stream`):
  each task is sent as the plan lists it.
- **assemble** (`assemble.py`): each Verdict from the readings and the outcomes, with
  one points ledger (`ledger.py`) that every output reads.

`grade check`, `grade run`, `grade gradescope` and the benchmark all call these; the
memo statistics are part of the Plan they return.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from ..records import Result, Submission, Verdict
from .assemble import assemble
from .assignment import Assignment, assignment
from .execute import Executor, InProcess, WorkerPool, default_workers, executor, run, start_fork_server
from .plan import Plan, Stats, error_result, load_all, plan
from .tasks import Task, TaskKey, run_task


def grade(items: Iterable[Submission | Result], assignments: dict[str, Assignment] | Any,
          runner: Executor | None = None) -> tuple[list[Result], Plan]:
    """plan → run → assemble; `assignments` maps homework ids (or is a resolve function)."""
    resolve = assignments if callable(assignments) else _lookup(assignments)
    p = plan(items, resolve)
    outcomes = run(p.tasks, p.assignments, runner or InProcess())
    return assemble(p, outcomes), p


def grade_submission(given: Assignment, submission: Submission, runner: Executor | None = None) -> Result:
    """One submission of `given`'s homework, graded in this process."""
    (result,), _ = grade([submission], {given.id: given}, runner)
    return result


def grade_answer(given: Assignment, part_id: str, raw: Any, folder: Path | None = None,
                 runner: Executor | None = None) -> Verdict:
    """One answer to one part, as if it were the only answer of a submission."""
    submission = Submission(student="answer", homework=given.id, answers={part_id: raw},
                            path=Path("answer.yaml"), folder=folder)
    result = grade_submission(given, submission, runner)
    return next(v for v in result.parts if v.part == part_id)


def _lookup(assignments: dict[str, Assignment]):
    from ..errors import SubmissionError

    def resolve(homework: str) -> Assignment:
        if homework not in assignments:
            raise SubmissionError(f"this submission answers homework '{homework}', which is not being graded "
                                  f"here ({', '.join(assignments)})")
        return assignments[homework]

    return resolve


__all__ = ["Assignment", "Executor", "InProcess", "Plan", "Stats", "Task", "TaskKey", "WorkerPool", "assemble",
           "assignment", "default_workers", "error_result", "executor", "grade", "grade_answer", "start_fork_server",
           "grade_submission", "load_all", "plan", "run", "run_task"]
