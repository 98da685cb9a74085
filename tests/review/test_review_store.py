"""The staff store under strain: a damaged, unwritable, missing or older store; a write while a run moves
it; an overrides file taken in all at once and once only; a comment kept with the answer it was
written for; and `grade run`'s and `grade export`'s words about staff."""

from __future__ import annotations

import contextlib
import csv
import importlib
import io
import json
import os
import sqlite3
import threading
import time

import pytest
import yaml

from attngrade import staff
from attngrade.cli import main as cli
from attngrade.errors import ConfigError
from attngrade.review.classroom import Classroom

from review_fixtures import HW, run_grade, write_class


def quiet(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli(list(argv))
    return code, out.getvalue(), err.getvalue()


def made_store(out) -> Classroom:
    room = Classroom(out)
    room.start()
    return room


def test_the_first_run_says_how_many_answers_wait_and_names_grade_review(tmp_path):
    klass, out = write_class(tmp_path / "class"), tmp_path / "out"
    said = run_grade(klass, out)
    assert "100 answers wait for course staff: grade them in `grade review" in said
    made_store(out)
    again = run_grade(klass, out)
    assert "wait for course staff: grade them in" not in again
    assert "100 still wait for staff (grade review)" in again


def test_a_damaged_store_never_stops_grade_run_and_every_command_names_it(graded_out):
    klass, out = graded_out
    (out / staff.STORE).write_bytes(b"these bytes are no SQLite database at all" * 100)
    said = run_grade(klass, out)  # grades all the same
    assert f"{out / staff.STORE}: the staff store is damaged" in said and "Staff grades were not applied" in said
    assert len(json.loads((out / "results.json").read_text(encoding="utf-8"))) == 50
    for argv in (["review", str(out), "--export", str(out.parent / "x.yaml")], ["groups", str(out)],
                 ["review", str(out), "--add-grader", "ann"]):
        code, _, err = quiet(*argv)
        assert code == 2 and str(out / staff.STORE) in err and "damaged" in err and "Traceback" not in err


def test_a_missing_store_is_waited_for_then_named_and_an_unwritable_one_said_with_what_to_do(tmp_path):
    started = time.monotonic()
    with pytest.raises(staff.StoreError, match="does not exist"):
        staff.open_store(tmp_path / staff.STORE, wait=0.3)
    assert time.monotonic() - started >= 0.3
    refused = sqlite3.OperationalError("attempt to write a readonly database")
    said = str(staff.explained(tmp_path / staff.STORE, refused))
    assert "cannot be written" in said and "chmod u+w" in said and str(tmp_path) in said


@pytest.mark.skipif(os.geteuid() == 0, reason="the superuser writes read-only files")
def test_an_unwritable_store_is_a_clear_error(graded_out):
    _, out = graded_out
    made_store(out)
    (out / staff.STORE).chmod(0o444)
    try:
        code, _, err = quiet("review", str(out), "--add-grader", "ann")
    finally:
        (out / staff.STORE).chmod(0o644)
    assert code == 2 and "cannot be written" in err


def test_a_write_while_a_run_moves_the_store_waits_for_it_and_is_kept(graded_out):
    _, out = graded_out
    room = made_store(out)
    path, away = out / staff.STORE, out.parent / "moving.sqlite"
    path.rename(away)

    def back() -> None:
        time.sleep(0.4)  # the run's switch, which this write must outlast
        away.rename(path)

    mover = threading.Thread(target=back)
    mover.start()
    room.write(lambda conn: staff.set_student_comment(conn, (HW, "1a"), "s05", "written during the switch", 0, "ann"))
    mover.join()
    with staff.store(path) as conn:
        assert staff.student_comments(conn, HW, "1a")["s05"][0] == "written during the switch"


def test_an_overrides_import_is_all_or_nothing_and_once_only(graded_out, tmp_path):
    _, out = graded_out
    made_store(out)
    bad = tmp_path / "bad.yaml"
    bad.write_text("students:\n- {student: s05, part: 1a, manual_score: 1.5}\n"
                   "- {student: s06, part: 1a, manual_score: 2, comment: fine}\n"
                   "- {student: s07, part: 1a, manual_score: .nan}\n"
                   "- {student: s08, part: 1a, score: .inf}\n", encoding="utf-8")
    with staff.store(out / staff.STORE) as conn:
        before = len(staff.audit_log(conn, 10_000))
    code, _, err = quiet("review", str(out), "--import", str(bad))
    assert code == 2 and "students[2]: manual_score nan" in err and "students[3]" in err
    assert "nothing was imported" in err
    with staff.store(out / staff.STORE) as conn:
        assert len(staff.audit_log(conn, 10_000)) == before
        assert not any(g.graded for g in staff.grades_of(conn, HW, "1a").values())
    good = tmp_path / "good.yaml"
    good.write_text("\n".join(bad.read_text(encoding="utf-8").splitlines()[:3]) + "\n", encoding="utf-8")
    code, said, _ = quiet("review", str(out), "--import", str(good))
    assert code == 0 and "imported 2 decisions" in said
    code, said, _ = quiet("review", str(out), "--import", str(good))
    assert code == 0 and "imported 0 decisions; 2 decisions already in the store" in said
    run_grade(out.parent / "class", out)
    grades = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
    assert (grades["s05"]["1a"], grades["s06"]["1a"]) == ("1.5", "2")


def test_the_first_runs_template_imports_its_groups_before_any_store_was_made(graded_out):
    """results.json names each part's answer group, so a store made from it knows the groups of the
    overrides template the same run wrote: a group's score reaches every member at once."""
    klass, out = graded_out
    template = yaml.safe_load((out / "overrides.yaml").read_text(encoding="utf-8"))
    entry = next(g for g in template["groups"] if g["part"] == "1a" and g["count"] > 1)
    entry["score"] = 1.5
    filled = out / "overrides.yaml"
    filled.write_text(yaml.safe_dump({"groups": [entry]}), encoding="utf-8")
    code, said, err = quiet("review", str(out), "--import", str(filled))
    assert code == 0 and "imported 1 decision" in said, said + err  # one answer, however many wrote it
    assert "has no answer waiting for staff" not in said + err
    run_grade(klass, out)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    members = [r["student"] for r in results for p in r["parts"] if p.get("group") == entry["group"]]
    grades = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
    assert len(members) == entry["count"] and {grades[m]["1a"] for m in members} == {"1.5"}


def test_a_comment_on_an_old_answer_stays_with_that_answer(graded_out):
    klass, out = graded_out
    made_store(out)
    with staff.store(out / staff.STORE) as conn:
        staff.set_student_comment(conn, (HW, "1a"), "s05", "see the second paragraph", 0, "ann")
    write_class(klass, changed={"s05": "An answer written again from scratch."})
    run_grade(klass, out)

    def feedback() -> list[str]:
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        return next(p for r in results if r["student"] == "s05" for p in r["parts"] if p["id"] == "1a")["feedback"]
    with staff.store(out / staff.STORE) as conn:
        assert "s05" not in staff.student_comments(conn, HW, "1a")
        row = next(r for r in staff.answers_of(conn, HW, "1a") if r["student"] == "s05")
        staff.change(conn, (HW, "1a"), {row["fp"]: None}, staff.Change("adjust", value=1.0), "ann")
    run_grade(klass, out)
    assert not any("second paragraph" in line for line in feedback())
    write_class(klass)  # back to the answer the comment was written for
    run_grade(klass, out)
    with staff.store(out / staff.STORE) as conn:
        assert staff.student_comments(conn, HW, "1a")["s05"][0] == "see the second paragraph"


def test_an_older_store_is_brought_to_this_schema_and_reads_what_it_cannot_hold_as_zero(graded_out):
    _, out = graded_out
    path = out / staff.STORE
    conn = sqlite3.connect(path)
    conn.executescript(importlib.import_module("attngrade.staff.store")._TABLES)  # as schema 1 made it
    conn.execute("INSERT INTO meta VALUES ('schema', '1')")
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    answer = staff.answer_of(HW, "s05", next(p for r in results if r["student"] == "s05" for p in r["parts"]
                                             if p["id"] == "1a"))
    conn.execute("INSERT INTO answers VALUES (?,?,?,?,?,?,?,?,?,?,?)", (HW, "1a", "s05", answer.fp, "{}", "pending",
                                                                         0.0, 2.0, 2.0, None, None))
    conn.execute("INSERT INTO comments VALUES (?,?,?,?,?,?,?)", (HW, "1a", "s05", "old comment", 1, "ann", "t"))
    conn.execute("INSERT INTO grades VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                 (HW, "1a", "fp-of-nothing", None, "[1, \"x\", true]", float("inf"), "", 1, 1, "ann", "t"))
    conn.commit()
    conn.close()
    room = made_store(out)
    with staff.store(path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0] == str(staff.SCHEMA)
        assert staff.student_comments(conn, HW, "1a")["s05"][0] == "old comment"
        grade = staff.grades_of(conn, HW, "1a")["fp-of-nothing"]
        assert (grade.items, grade.adjust) == ([1], 0.0)
    assert room.part(HW, "1a") is not None


def test_a_store_of_another_program_is_not_taken_for_one(tmp_path):
    path = tmp_path / staff.STORE
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes(x)")
    conn.commit()
    conn.close()
    with pytest.raises(ConfigError, match="not a staff store"):
        staff.open_store(path)
