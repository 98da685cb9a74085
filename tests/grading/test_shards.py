"""The plan split across processes gives the plan of one process: same tasks, same verdicts, same ids."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from attngrade.grading import resolver
from attngrade.grading import InProcess, assemble, load_all, plan, run
from attngrade.grading import shards
from attngrade.grading.plan import Stats
from attngrade.records import Submission
from attngrade.grading import Options

ROOT = Path(__file__).resolve().parents[2]
CLASSES = ("cs224n-w21-a5", "mimuw-2022-p4", "eecs182-sp23-transformers", "nyu-dl-transformer", "eecs182-fa22-hw8")


@pytest.fixture(scope="module")
def items(tmp_path_factory):
    """The example classes, a second submission under the first one's id (in the other share),
    and one for a homework nobody has."""
    loaded = load_all([ROOT / "examples" / name for name in CLASSES])
    first = next(i for i in loaded if isinstance(i, Submission))
    stray = tmp_path_factory.mktemp("stray") / "stray.yaml"
    stray.write_text("homework: no-such-homework\nstudent: stray\nanswers:\n  1a: x\n", encoding="utf-8")
    return [*loaded, replace(first, path=first.path.with_name("again.yaml")), *load_all([stray])]


def _graded(planned) -> list[dict]:
    outcomes = run(planned.tasks, planned.assignments, InProcess(2.0))
    return [r.to_json() for r in assemble(planned, outcomes)]


def test_a_split_plan_grades_the_class_as_one_process_does(items, monkeypatch):
    monkeypatch.setattr(shards, "SPLIT_FROM", 2)
    monkeypatch.setattr(shards, "SPLIT_MATH", 1)
    resolve = resolver(Options(solutions=ROOT / "solutions"))
    alone, split = plan(items, resolve, Stats()), shards.plan_split(items, resolve, Stats(), workers=2)
    assert list(split.tasks) == [k for k in alone.tasks if k in split.tasks] and set(split.tasks) == set(alone.tasks)
    assert list(split.assignments) == list(alone.assignments)  # homeworks in the order they first appear
    assert json.dumps(_graded(split)) == json.dumps(_graded(alone))
    students = [r["student"] for r in _graded(split)]
    assert len(set(students)) == len(students)  # the repeated id was renamed, across shares
    assert any(r.get("error") and "no-such-homework" in r["error"] for r in _graded(split))
    # one task however many shares planned it; the answers read twice are counted as read
    assert (split.stats.tasks, split.stats.checks, split.stats.by_check) == \
        (alone.stats.tasks, alone.stats.checks, alone.stats.by_check)
    assert split.stats.reads == alone.stats.reads and split.stats.read_hits <= alone.stats.read_hits


def test_a_class_that_repeats_its_formulas_is_not_split(items, monkeypatch):
    monkeypatch.setattr(shards, "SPLIT_FROM", 2)
    resolve = resolver(Options(solutions=ROOT / "solutions"))
    distinct = shards.distinct_math(items, resolve)
    assert 0 < distinct < shards.SPLIT_MATH
    assert shards.distinct_math(items + items, resolve) == distinct  # copies add nothing to read
    forked = []
    monkeypatch.setattr(shards, "ProcessPoolExecutor", lambda *a, **k: forked.append(1))
    shards.plan_split(items, resolve, Stats(), workers=2)
    assert not forked


def test_a_homework_nobody_has_is_refused_again_without_a_growing_traceback():
    # Every student on a mistyped homework asks again: the same exception raised again kept a
    # frame per student alive (a 100,000-student class on one typo).
    from attngrade.errors import SubmissionError
    from attngrade.grading.shards import remembered

    def resolve(homework):
        raise SubmissionError(f"no homework '{homework}'")

    again = remembered(resolve)
    depths = []
    for _ in range(50):
        try:
            again("hw9")
        except SubmissionError as err:
            assert str(err) == "no homework 'hw9'"
            tb, depth = err.__traceback__, 0
            while tb is not None:
                tb, depth = tb.tb_next, depth + 1
            depths.append(depth)
    assert max(depths) <= 3
