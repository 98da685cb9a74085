"""The staff store (outputs/staff.py): grades keyed by answer, applied to a run's results, kept across
reruns, several writers at once, the audit log, and overrides.yaml in and out."""

from __future__ import annotations

import contextlib
import io
import json
import threading
from pathlib import Path

import pytest

from attngrade.cli import main as cli
from attngrade.grading import Class, Options, grade
from attngrade.outputs import staff
from attngrade.outputs.overrides import apply as apply_overrides
from attngrade.outputs.overrides import load as load_overrides
from attngrade.outputs.write import groups_of

ROOT = Path(__file__).resolve().parents[2]
HW = "cs224n-w21-a5"
ANSWERS = {
    "ana": "k_j^T q must be much larger than every other k_i^T q",
    "ben": "k_j^T q must be much larger than every other k_i^T q",
    "cy": "K_j^T q must be much larger than every other   k_i^T q.",
    "dee": "The weights put all their mass on one key.",
}


def write_class(folder: Path, answers: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.yaml"):
        old.unlink()
    for student, text in answers.items():
        body = {"homework": HW, "student": student, "answers": {"1a": text, "1b": "C (k_a + k_b)",
                                                                 "1e.i": {"c2": "u_a", "possible": "no",
                                                                          "why": f"x2 wins ({student})"}}}
        (folder / f"{student}.yaml").write_text(json.dumps(body), encoding="utf-8")
    return folder


def graded(folder: Path):
    done = grade(Class([folder]), Options(solutions=ROOT / "solutions", workers=0))
    return done.results, groups_of(done.results, done.homeworks, {}), done.homeworks


def part(result, part_id):
    return next(v for v in result.parts if v.part == part_id)


@pytest.fixture
def run(tmp_path):
    results, groups, homeworks = graded(write_class(tmp_path / "class", ANSWERS))
    return tmp_path, results, groups, homeworks


def test_normalized_text_ignores_case_spacing_punctuation_and_latex_spacing():
    assert staff.normalized("  K_j^T q \\, must  DOMINATE!  ") == staff.normalized("k_j^T q must dominate")
    assert staff.normalized("$q = C\\;k_j$.") == "q = c k_j"
    assert staff.fingerprint({"a": "q  =\\, C k_j"}) == staff.fingerprint({"a": "q = C k_j"})
    assert staff.fingerprint({"a": "K"}) != staff.fingerprint({"a": "k"})  # case is meaning in math


def test_without_a_store_results_come_back_unchanged(run):
    tmp, results, groups, homeworks = run
    same, said = staff.apply(results, groups, tmp / staff.STORE, homeworks)
    assert same is results and said == []
    assert not (tmp / staff.STORE).exists()


def grade_answer(path: Path, student: str, part_id: str, item_points: float, who: str = "tess") -> int:
    """Grade the answer `student` gave (all who gave the same) with one new rubric item; its id."""
    with staff.store(path) as conn:
        row = next(r for r in staff.answers_of(conn, HW, part_id) if r["student"] == student)
        item = staff.edit_item(conn, (HW, part_id), {"points": item_points, "text": "right idea"}, who)
        staff.change(conn, (HW, part_id), {row["fp"]: None}, staff.Change("add", item.id), who)
    return item.id


def test_a_grade_reaches_every_student_with_that_answer_and_lowers_pending(run):
    tmp, results, groups, homeworks = run
    path = tmp / staff.STORE
    staff.store(path, create=True).__enter__().close()
    staff.apply(results, groups, path, homeworks)  # the snapshot of this run
    grade_answer(path, "ana", "1a", 2)
    applied, said = staff.apply(results, groups, path, homeworks)
    by = {r.student: r for r in applied}
    for student in ("ana", "ben"):  # the same answer
        v = part(by[student], "1a")
        assert (v.score, v.status, v.pending_points) == (2.0, "correct", 0.0)
        assert any(line.startswith(staff.MARK) and "right idea" in line for line in v.feedback)
        assert by[student].score == pytest.approx(next(r for r in results if r.student == student).score + 2)
    assert part(by["cy"], "1a").pending_points == 2.0  # another fingerprint (case): not graded by this
    assert part(by["dee"], "1a").status == "pending"
    assert "applied the staff grades of 2 answers" in said[0]


def test_changing_an_items_points_regrades_everyone_graded_with_it(run):
    tmp, results, groups, homeworks = run
    path = tmp / staff.STORE
    staff.store(path, create=True).__enter__().close()
    staff.apply(results, groups, path, homeworks)
    item = grade_answer(path, "ana", "1a", 2)
    with staff.store(path) as conn:
        staff.edit_item(conn, (HW, "1a"), {"id": item, "points": 1.5, "version": 1}, "tess")
    applied, _ = staff.apply(results, groups, path, homeworks)
    assert [part(r, "1a").score for r in applied if r.student in ("ana", "ben")] == [1.5, 1.5]


def test_a_rerun_keeps_unchanged_answers_and_asks_for_another_look_at_changed_ones(run):
    tmp, results, groups, homeworks = run
    path = tmp / staff.STORE
    staff.store(path, create=True).__enter__().close()
    staff.apply(results, groups, path, homeworks)
    grade_answer(path, "ana", "1a", 2)
    grade_answer(path, "dee", "1a", 1)
    changed = {**ANSWERS, "dee": "Only one weight is large.", "eve": ANSWERS["ana"]}  # eve is new
    results2, groups2, homeworks2 = graded(write_class(tmp / "class", changed))
    applied, said = staff.apply(results2, groups2, path, homeworks2)
    by = {r.student: part(r, "1a") for r in applied}
    assert by["ana"].score == by["ben"].score == by["eve"].score == 2.0  # eve wrote a graded answer
    assert by["dee"].status == "pending" and by["dee"].pending_points == 2.0
    assert "1 graded answer changed since grading and needs another look: dee 1a" in said[1]
    with staff.store(path) as conn:
        _, again = staff.decisions(conn)
    assert again == [(HW, "dee", "1a")]


def test_two_writers_at_once_lose_no_update_and_a_stale_comment_is_refused(run):
    tmp, results, groups, homeworks = run
    path = tmp / staff.STORE
    staff.store(path, create=True).__enter__().close()
    staff.apply(results, groups, path, homeworks)
    with staff.store(path) as conn:
        fp = next(r["fp"] for r in staff.answers_of(conn, HW, "1a") if r["student"] == "dee")
        items = [staff.edit_item(conn, (HW, "1a"), {"points": 0.5, "text": f"item {i}"}, "x").id for i in range(8)]
    errors = []

    def writer(item: int, who: str) -> None:
        try:
            with staff.store(path) as conn:
                staff.change(conn, (HW, "1a"), {fp: None}, staff.Change("add", item), who)
        except Exception as err:  # noqa: BLE001 - collected and asserted below
            errors.append(err)

    threads = [threading.Thread(target=writer, args=(item, f"ta{i % 2}")) for i, item in enumerate(items)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with staff.store(path) as conn:
        grade_now = staff.grades_of(conn, HW, "1a")[fp]
        assert sorted(grade_now.items) == sorted(items) and grade_now.version == len(items)
        staff.change(conn, (HW, "1a"), {fp: None}, staff.Change("comment", value="first", expected={fp: 8}), "ta0")
        with pytest.raises(staff.Conflict):
            staff.change(conn, (HW, "1a"), {fp: None}, staff.Change("comment", value="second", expected={fp: 8}),
                         "ta1")
        assert staff.grades_of(conn, HW, "1a")[fp].comment == "first"
        log = staff.audit_log(conn)
    assert {entry["who"] for entry in log} >= {"ta0", "ta1"}
    last = log[0]
    assert last["action"] == "comment" and json.loads(last["after"])["comment"] == "first"
    assert json.loads(last["before"])["comment"] == ""


def test_exported_decisions_give_the_same_scores_through_overrides(run):
    tmp, results, groups, homeworks = run
    path = tmp / staff.STORE
    staff.store(path, create=True).__enter__().close()
    staff.apply(results, groups, path, homeworks)
    grade_answer(path, "ana", "1a", 2)
    grade_answer(path, "ana", "1e.i", 0.5)
    with staff.store(path) as conn:
        staff.set_student_comment(conn, (HW, "1a"), "ben", "see me", 0, "tess")
        exported = tmp / "decisions.yaml"
        exported.write_text(staff.export_overrides(conn), encoding="utf-8")
    applied, _ = staff.apply(results, groups, path, homeworks)
    group_of = {(m, g.part): (hw, g.id) for hw, by in groups.items() for gs in by.values() for g in gs for m in g.members}
    decided = apply_overrides(results, load_overrides(exported, results, groups, homeworks), group_of)
    assert [r.score for r in decided] == [r.score for r in applied]
    assert any("see me" in line for line in part(next(r for r in decided if r.student == "ben"), "1a").feedback)


def test_imported_overrides_become_staff_grades(run):
    tmp, results, groups, homeworks = run
    path = tmp / staff.STORE
    staff.store(path, create=True).__enter__().close()
    staff.apply(results, groups, path, homeworks)
    decisions = tmp / "overrides.yaml"
    decisions.write_text("students:\n- student: dee\n  part: 1a\n  manual_score: 1.5\n  comment: close\n"
                         "- student: cy\n  part: 1a\n  score: 2\n", encoding="utf-8")
    with staff.store(path) as conn:
        said = staff.import_overrides(conn, decisions, "importer")
    assert said[0].endswith("imported 2 decisions")
    applied, _ = staff.apply(results, groups, path, homeworks)
    by = {r.student: part(r, "1a") for r in applied}
    assert (by["dee"].score, by["cy"].score, by["ana"].status) == (1.5, 2.0, "pending")
    assert any("close" in line for line in by["dee"].feedback)


def test_the_store_survives_grade_run_rerunning_into_the_same_out(tmp_path):
    klass = write_class(tmp_path / "class", ANSWERS)
    out = tmp_path / "out"
    args = ["run", str(klass), "-o", str(out), "--solutions", str(ROOT / "solutions"), "--workers", "0"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert cli(args) == 0
    results, groups, homeworks = graded(klass)
    with staff.store(out / staff.STORE, create=True):
        pass
    staff.apply(results, groups, out / staff.STORE, homeworks)
    grade_answer(out / staff.STORE, "ana", "1a", 2)
    with staff.store(out / staff.STORE) as conn:  # a reader holding the store open while the run switches OUT
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert cli(args) == 0
        assert len(staff.grades_of(conn, HW, "1a")) == 1
    assert sorted(p.name for p in out.glob("staff.sqlite*") if not p.name.endswith(("-wal", "-shm"))) == [staff.STORE]
    applied, _ = staff.apply(results, groups, out / staff.STORE, homeworks)
    assert part(next(r for r in applied if r.student == "ben"), "1a").score == 2.0
