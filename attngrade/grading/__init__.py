"""Grading in three plain stages, the same for every entry point (`pipeline.grade`).

- **plan** (`plan.py`): load and read every submission (`loading.py`, ids by `identity.py`);
  list the distinct tasks (a check and the canonical form of what it reads). Nothing is
  checked. With several workers, a class with many distinct formulas is read by several
  processes (`shards.py`).
- **run** (`execute.py`, `distributed.py`): execute the distinct tasks through an Executor
  (in this process, a pool of worker processes under budgets, or a Dask cluster); knows
  nothing of students. With local workers and a class loaded whole it begins while the plan
  reads (`execute.Stream`).
- **assemble** (`assemble.py`): each Verdict from the readings and the outcomes, with one
  points ledger (`ledger.py`) that every output reads.

Answer groups (`groups.py`) are made from the assembled results.
"""

from __future__ import annotations

from .assemble import assemble
from .assignment import Assignment, assignment
from .execute import Executor, InProcess, Showing, WorkerPool, default_workers, executor, run
from .loading import load_all
from .pipeline import Class, Graded, Hooks, Options, grade, grade_answer, grade_submission, resolver, self_check
from .plan import Plan, Stats, plan
from .tasks import Task, TaskKey, run_task

__all__ = ["Assignment", "Class", "Executor", "Graded", "Hooks", "InProcess", "Options", "Plan", "Showing", "Stats",
           "Task", "TaskKey", "WorkerPool", "assemble", "assignment", "default_workers", "executor", "grade",
           "grade_answer", "grade_submission", "load_all", "plan", "resolver", "run", "run_task", "self_check"]
