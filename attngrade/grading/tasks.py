"""A Task: one distinct check of one distinct answer, and how to run one.

A task is named by its TaskKey (homework, part, check index, the canonical forms of
the answers it reads), so two students who wrote the same thing, however spelled,
share one task. A Task is small and picklable: a worker finds the part, key and
gold in the Assignment it was given once, not in every task.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Mapping

from ..checkers import REGISTRY, Outcome
from ..checkers.messages import INTERNAL_ERROR
from ..errors import ConfigError
from ..mathlang import Value
from ..reading import FileReading
from ..runtime.deadline import BudgetExceeded, time_limit
from .assignment import Assignment

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskKey:
    homework: str
    part: str
    index: int
    inputs: tuple[str | None, ...]  # canonical form of each field the check reads


@dataclass(frozen=True)
class Task:
    key: TaskKey
    answers: Mapping[str, Any]  # field -> reading


def canonical(reading: Any) -> str:
    if isinstance(reading, Value):
        return reading.canonical
    if isinstance(reading, FileReading):
        return f"file:{reading.name}:{reading.sha256}"
    return f"{type(reading).__name__}:{reading!r}"


def run_task(task: Task, assignment: Assignment, budget: float = 0.0) -> Outcome:
    """Run one check; never raises for a student's answer, whatever the check does."""
    part = assignment.homework.part(task.key.part)
    if part is None:
        raise ConfigError(f"task for unknown part {task.key.part} of {assignment.id}")
    spec = part.checks[task.key.index]
    budget = task_budget(spec.check, budget)
    ctx = assignment.context(part, task.key.index)
    try:
        with time_limit(budget):
            return REGISTRY[spec.check].run(task.answers, ctx)
    except ConfigError:
        raise
    except BudgetExceeded:
        return timed_out(budget, spec.check)
    except MemoryError:
        return Outcome(0.0, ("this answer is too large to check within the memory limit; simplify it",),
                       invalid=True)
    except Exception as err:  # noqa: BLE001 - a checker bug must not sink the class
        log.warning("check %s failed on part %s", spec.check, part.id, exc_info=True)
        return failed(f"{type(err).__name__} in the {spec.check} check")


def check_of(key: TaskKey, assignments: Mapping[str, Assignment]) -> str:
    """The name of the check a task runs ("" for a part its homework does not have)."""
    part = assignments[key.homework].homework.part(key.part)
    return part.checks[key.index].check if part is not None else ""


def runs_code(task: Task, assignments: Mapping[str, Assignment]) -> bool:
    """Whether `task` runs student code (its check runs code, on fields this task's answers hold)."""
    part = assignments[task.key.homework].homework.part(task.key.part)
    if part is None:
        return False
    spec = part.checks[task.key.index]
    return REGISTRY[spec.check].runs_code_on(spec, task.answers)


CODE_BUDGET = 40.0  # seconds for a check that runs student code: the sandbox child has its own limits


def task_budget(check: str, budget: float) -> float:
    """The time budget of one check: --budget, or CODE_BUDGET for a check that runs student code."""
    return max(budget, CODE_BUDGET) if budget > 0 and REGISTRY[check].runs_code else budget


def timed_out(budget: float, check: str | None = None) -> Outcome:
    """A check stopped at its time limit: what to do differs for code (a notebook, files) and formulas."""
    if check is not None and REGISTRY[check].runs_code:
        return Outcome(0.0, (f"checking this took longer than the {budget:g} s limit; hand in only the code and "
                             "files the part asks for, without large cells, outputs or data",), invalid=True)
    return Outcome(0.0, (f"checking this answer took longer than the {budget:g} s limit; "
                         "write it more simply (expand fewer products, use smaller powers)",), invalid=True)


def worker_died() -> Outcome:
    """The worker process was killed (over its memory cap, or by the hard timeout)."""
    return Outcome(0.0, ("checking this answer needed more memory than a check may use; write it more simply",),
                   invalid=True)


def failed(error: str) -> Outcome:
    """attngrade's own failure: course staff's problem, never the student's zero."""
    return Outcome(0.0, (INTERNAL_ERROR.format(error=error),), failed=True)
