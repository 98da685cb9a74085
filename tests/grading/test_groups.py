"""Answer groups: the same answer up to notation is one group, whichever process fingerprinted it."""

from __future__ import annotations

from pathlib import Path


from attngrade.grading import groups
from attngrade.grading import assignment, grade
from attngrade.grading.groups import answer_groups, fingerprint, prints_of
from attngrade.mathlang import Value
from attngrade.problems import load_homework
from attngrade.records import Submission
from attngrade.grading import Options
from attngrade.outputs.run import RunRequest, grade_run

ROOT = Path(__file__).resolve().parents[2]
V = "(u_b u_b^T - u_c u_c^T)/beta^2"


def _graded(answers: dict[str, str]):
    """1e.ii answered by one student per (name, Q) pair, graded without a key."""
    hw = load_homework("cs224n-w21-a5")
    subs = [Submission(name, hw.id, {"1e.ii": {"V": V, "K": "I", "Q": q}}, Path(f"{name}.yaml"))
            for name, q in answers.items()]
    graded = grade(subs, Options(assignments={hw.id: assignment(hw, None, self_check=True)}))
    return hw, graded.results


def _members(hw, results, made=None) -> list[list[str]]:
    return sorted(g.members for g in answer_groups(results, {p.id: p for p in hw.parts}, made)["1e.ii"])


def test_answers_equal_up_to_notation_are_one_group_and_others_are_not():
    hw, results = _graded({"ann": "beta (u_d u_a^T)", "bo": "beta u_d u_a^T", "cy": "beta u_a u_d^T"})
    assert _members(hw, results) == [["ann", "bo"], ["cy"]]


def test_a_fingerprint_made_in_another_process_is_the_one_made_here():
    # What a run-stage worker hands back (`prints_of`) must group exactly as this process would.
    from attngrade.grading import resolver
    from attngrade.grading import load_all, plan

    planned = plan(load_all([ROOT / "examples" / "cs224n-w21-a5", ROOT / "examples" / "mimuw-2022-p4"]),
                   resolver(Options(solutions=ROOT / "solutions")))
    import pickle

    sent = pickle.loads(pickle.dumps(list(planned.tasks.values())))  # as a worker receives its batch
    made = prints_of(sent, planned.assignments)
    expected = {}
    for task in planned.tasks.values():
        part = planned.assignments[task.key.homework].homework.part(task.key.part)
        for name, value in task.answers.items():
            if isinstance(value, Value):
                expected[(task.key.homework, task.key.part, name, value.canonical)] = fingerprint(part, name, value)
    assert len(expected) > 10 and made == expected


def test_a_fingerprint_made_already_is_used_and_only_for_its_homework():
    hw, results = _graded({"ann": "beta u_d u_a^T", "cy": "beta u_a u_d^T"})
    (cy,) = [r for r in results if r.student == "cy"]
    q = next(v for v in cy.parts if v.part == "1e.ii").readings["Q"]
    part = hw.part("1e.ii")
    ann_print = fingerprint(part, "Q", next(v for r in results if r.student == "ann"
                                           for v in r.parts if v.part == "1e.ii").readings["Q"])
    assert _members(hw, results, {("another-homework", "1e.ii", "Q", q.canonical): ann_print}) == [["ann"], ["cy"]]
    assert _members(hw, results, {(hw.id, "1e.ii", "Q", q.canonical): ann_print}) == [["ann", "cy"]], \
        "the fingerprint given, not one made again"
    assert _members(hw, results) == [["ann"], ["cy"]], "and only where it was given"


def test_the_run_stage_workers_fingerprint_what_they_check(tmp_path, monkeypatch):
    # With two workers the math fingerprints are made while the class is read, not after the run
    # stage in this process; the groups are the one-worker run's, to the member.
    from attngrade.grading import execute

    made_here: list[str] = []
    real = groups._math_fingerprint
    monkeypatch.setattr(groups, "_math_fingerprint", lambda *a: made_here.append(a[2].canonical) or real(*a))
    monkeypatch.setattr(execute, "BATCH", 1)  # each task sent as the plan lists it
    classes = [ROOT / "examples" / "cs224n-w21-a5", ROOT / "examples" / "eecs182-sp23-transformers"]

    def grouped(workers: int) -> dict:
        ran = grade_run(RunRequest(classes, tmp_path / f"out{workers}", Options(solutions=ROOT / "solutions", workers=workers), show_progress=False))
        return {hid: {pid: [(g.id, g.members) for g in gs] for pid, gs in by_part.items()}
                for hid, by_part in ran.groups.items()}

    two = grouped(2)
    assert made_here == [], "made by the run stage's worker"
    one = grouped(1)
    assert made_here, "the one-worker run makes them itself"
    assert two == one and sum(len(gs) for by_part in one.values() for gs in by_part.values()) > 10


def test_what_a_worker_fails_to_make_of_one_kind_costs_nothing_of_the_other(monkeypatch):
    from attngrade.outputs import run as batch
    from attngrade.grading import resolver
    from attngrade.grading import load_all, plan
    from attngrade.reports import mathml

    planned = plan(load_all([ROOT / "examples" / "cs224n-w21-a5"]), resolver(Options(solutions=ROOT / "solutions")))
    tasks = list(planned.tasks.values())

    def broken(*args):
        raise MemoryError("under the worker's memory cap")

    monkeypatch.setattr(batch, "prints_of", broken)
    monkeypatch.setattr(mathml, "_CACHE", {})  # as in a fresh worker
    monkeypatch.setattr(mathml, "_shown_here", 0)
    shown, prints = batch._made_beside(tasks, planned.assignments)
    assert prints is None and shown is not None and shown.math
    kept: dict = {}
    monkeypatch.setattr(mathml, "_CACHE", {})  # as in the parent
    batch._keep_beside(kept, (shown, prints))
    assert kept == {} and set(shown.math) <= set(mathml._CACHE)


def test_a_batch_whose_time_is_up_makes_nothing_more(monkeypatch):
    # The MathML took the batch's last moments: the fingerprints are not begun after it.
    from attngrade.outputs import run as batch
    from attngrade.runtime.deadline import BudgetExceeded
    from attngrade.grading import execute

    asked: list[str] = []

    def slow(*args):
        asked.append("mathml")
        raise BudgetExceeded()

    monkeypatch.setattr(batch, "shown_of", slow)
    monkeypatch.setattr(batch, "prints_of", lambda *a: asked.append("prints") or {})
    assert execute._made(batch._made_beside, [], 1.0) is None
    assert asked == ["mathml"]
