"""Students graded under a new id since the run before (a template's placeholder put right, an LMS
download graded with --ids-from-names): their overrides and staff grades go with them where the
answer is the same, and wait for a person again where it changed."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from attngrade.cli import main
from attngrade.outputs import staff
from attngrade.outputs.history import Renamed

ROOT = Path(__file__).resolve().parents[2]
HW = "cs224n-w21-a5"
ONE_A = {"ana": "k_j^T q must be much larger than every other k_i^T q", "bo": "The weights sum to one."}
ONE_C = "c swings between v_a and v_b from one sample to the next"


def _write(cls: Path, one_a: dict[str, str]) -> None:
    """Each file named after its student, but claiming the id the LMS gave it (s-ana, s-bo)."""
    cls.mkdir(exist_ok=True)
    for name, text in one_a.items():
        body = {"homework": HW, "student": f"s-{name}", "answers": {"1a": text, "1c.ii": ONE_C}}
        (cls / f"{name}.yaml").write_text(json.dumps(body), encoding="utf-8")


def _run(cls: Path, out: Path, *extra: str) -> int:
    return main(["run", str(cls), "-o", str(out), "--solutions", str(ROOT / "solutions"), "--workers", "0", *extra])


def _grades(out: Path) -> dict[str, dict[str, str]]:
    return {row["student"]: row for row in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}


def _own_grade(out: Path, student: str, part: str, points: float) -> None:
    """A grade for this one student's answer (not for everyone who wrote it), and a comment to them."""
    with staff.store(out / staff.STORE) as conn:
        row = next(r for r in staff.answers_of(conn, HW, part) if r["student"] == student)
        item = staff.edit_item(conn, (HW, part), {"points": points, "text": "names both values"}, "tess")
        staff.change(conn, (HW, part), {f"student:{student}": row["fp"]}, staff.Change("add", item.id), "tess")
        staff.set_student_comment(conn, (HW, part), student, "well put", 0, "tess")


def test_template_placeholders_become_ids_after_the_fix_the_rerun_keeps_overrides_and_staff_grades(tmp_path, capsys):
    cls, out = tmp_path / "class", tmp_path / "out"
    _write(cls, ONE_A)
    assert _run(cls, out) == 0
    assert sorted(_grades(out)) == ["s-ana", "s-bo"]
    with staff.store(out / staff.STORE, create=True):
        pass
    assert _run(cls, out) == 0  # the store now holds this run's answers
    _own_grade(out, "s-ana", "1c.ii", 3)
    decisions = tmp_path / "decisions.yaml"
    decisions.write_text("students:\n"
                         "- {student: s-ana, part: 1a, manual_score: 2}\n"
                         "- {student: s-bo, part: 1a, manual_score: 1}\n", encoding="utf-8")
    assert _run(cls, out, "--overrides", str(decisions)) == 0
    assert (_grades(out)["s-ana"]["1a"], _grades(out)["s-ana"]["1c.ii"], _grades(out)["s-bo"]["1a"]) == ("2", "3", "1")
    capsys.readouterr()

    # The files' names become the ids; bo rewrites 1a meanwhile.
    _write(cls, {**ONE_A, "bo": "Only one weight is large."})
    assert _run(cls, out, "--overrides", str(decisions), "--ids-from-names") == 0
    said = capsys.readouterr().out
    now = _grades(out)
    assert sorted(now) == ["ana", "bo"]
    assert now["ana"]["1a"] == "2" and now["ana"]["1c.ii"] == "3"  # the same answers: decisions kept
    assert now["bo"]["1a"] == ""  # a changed answer waits for a person again
    assert "line 2: 's-ana' is graded as 'ana' now (the same submission and answer to 1a)" in said
    assert "line 3: 's-bo' is graded as 'bo' now, and the answer to 1a changed since this decision" in said
    results = {r["student"]: r for r in json.loads((out / "results.json").read_text(encoding="utf-8"))}
    one_c = next(p for p in results["ana"]["parts"] if p["id"] == "1c.ii")
    assert any("well put" in line for line in one_c["feedback"])  # the comment to the student went along
    with staff.store(out / staff.STORE) as conn:
        log = staff.audit_log(conn)
    assert {(e["action"], json.loads(e["before"]), json.loads(e["after"])) for e in log if e["action"] == "renamed"} \
        == {("renamed", "s-ana", "ana"), ("renamed", "s-bo", "bo")}


def test_students_who_traded_ids_keep_their_own_staff_grades(tmp_path):
    cls, out = tmp_path / "class", tmp_path / "out"
    _write(cls, ONE_A)
    assert _run(cls, out) == 0
    with staff.store(out / staff.STORE, create=True):
        pass
    assert _run(cls, out) == 0
    _own_grade(out, "s-ana", "1c.ii", 3)
    with staff.store(out / staff.STORE) as conn:
        same = frozenset({"1c.ii"})
        staff.carry(conn, {"s-ana": Renamed("s-ana", "s-bo", same), "s-bo": Renamed("s-bo", "s-ana", same)})
        grades = staff.grades_of(conn, HW, "1c.ii")
        comments = staff.student_comments(conn, HW, "1c.ii")
    assert set(grades) == {"student:s-bo"} and set(comments) == {"s-bo"}  # the grade went with its submission


def test_a_different_unreadable_answer_is_not_the_same_answer(tmp_path, capsys):
    """Two unreadable answers both read as nothing: what the reader said of each tells them apart."""
    cls, out = tmp_path / "class", tmp_path / "out"
    cls.mkdir()
    body = {"homework": HW, "student": "s-ana", "answers": {"1b": "C (k_a + k_b"}}
    (cls / "ana.yaml").write_text(json.dumps(body), encoding="utf-8")
    (cls / "bo.yaml").write_text(json.dumps({**body, "student": "s-bo"}), encoding="utf-8")  # a class, not a folder
    assert _run(cls, out) == 0
    decisions = tmp_path / "decisions.yaml"
    decisions.write_text("students:\n- {student: s-ana, part: 1b, score: 4}\n", encoding="utf-8")
    body["answers"]["1b"] = "C [k_a + k_b"
    (cls / "ana.yaml").write_text(json.dumps(body), encoding="utf-8")
    capsys.readouterr()
    assert _run(cls, out, "--overrides", str(decisions), "--ids-from-names") == 0
    assert "the answer to 1b changed since this decision" in capsys.readouterr().out
    assert _grades(out)["ana"]["1b"] == ""  # waits for staff again
