"""grades.csv comes row by row, each row a whole CSV record, hostile ids included."""

from __future__ import annotations

import csv
import io

import json
import os
from pathlib import Path

import pytest

from attngrade.cli import main
from attngrade.outputs.layout import folder_names
from attngrade.outputs.tables import grades_csv, spreadsheet_cell
from attngrade.runtime.text import printable
from attngrade.problems import BUNDLED
from attngrade.records import Result, Verdict

A5 = BUNDLED.load_homework("cs224n-w21-a5")


def _graded(student: str, score: float) -> Result:
    return Result(student, A5.id, score, A5.max_score, (Verdict("1b", score, 4.0, "correct"),))


def test_grades_csv_yields_one_complete_record_per_student():
    results = [_graded("ada", 4.0), _graded('line\nbreak, "quoted"', 1.5),
               Result("=HYPERLINK(1)", None, 0.0, 0.0, error="not YAML")]
    pieces = list(grades_csv(results, {A5.id: A5}))
    assert len(pieces) == 1 + len(results)  # the header, then one piece per student
    for piece in pieces:  # each piece parses alone: the file can be written as they come
        assert len(list(csv.reader(io.StringIO(piece)))) == 1
    rows = list(csv.DictReader(io.StringIO("".join(pieces))))
    assert [r["student"] for r in rows] == ["ada", 'line\nbreak, "quoted"', "'=HYPERLINK(1)"]  # formula defused
    assert rows[0]["1b"] == "4" and rows[1]["1b"] == "1.5" and rows[2]["1b"] == ""
    assert rows[2]["error"] == "not YAML"
    assert list(rows[0])[:3] == ["student", "homework", A5.parts[0].id]


@pytest.mark.parametrize("text", ["=1+1", " =1+1", "\ufeff=1+1", "\u200b@SUM(A1)", "\u00a0\u3000-2+3",
                                  "\uff1dHYPERLINK(1)", "\t=1", "\r+1", "+1", "\u2066=1", "\u00ad\u034f=1",
                                  "\ufe0f\U000e0001@x", "\ufe66HYPERLINK(1)", "\ufe62 1", "\n\x0b=1",
                                  "\u200b=1", "\u200c+1", "\u200d-1", "\u2060@x", "\u200b\u200c\u200d\u2060\ufeff=1",
                                  "\u200b \u200b=1", "\u2061\u2062\u2063\u2064+1"])
def test_a_cell_a_spreadsheet_could_take_for_a_formula_is_defused(text):
    # Zero-width characters before the formula are skipped when deciding (some programs skip them),
    # and shown as their escapes in the cell: neither hides a formula.
    assert spreadsheet_cell(text) == printable("'" + text)  # and what a terminal acts on, shown as escapes


@pytest.mark.parametrize("text", ["ada", "a=b", "a-1", "", "   ", "x@example.com", "\u00e9=", "1+1"])
def test_a_cell_no_spreadsheet_takes_for_a_formula_is_left_as_it_is(text):
    assert spreadsheet_cell(text) == text


@pytest.mark.parametrize("text, shown", [("\u200b", "\\u200b"), ("a\u200bda", "a\\u200bda"),
                                         ("\u2060ada", "\\u2060ada"), ("ada\ufeff", "ada\\ufeff"),
                                         ("\u200b1+1", "\\u200b1+1")])
def test_a_zero_width_character_in_a_cell_is_shown_as_its_escape(text, shown):
    # No formula follows it, so nothing is defused; the character is shown, so that an id with one
    # cannot pass for another (a\u200bda is not ada).
    assert spreadsheet_cell(text) == shown


def _named(*students: str) -> list[Result]:
    return [Result(student=s, homework="cs224n-w21-a5", score=0.0, max_score=1.0) for s in students]


def test_a_student_keeps_the_folder_of_the_run_before_while_it_is_still_one_of_theirs():
    # Bob and a_b come first and would take bob and a_b; eve's old folder is not one her id gives.
    wanted = [None, None, "bob", "a_b-2", "mallory", "zed-02", "amy-3", "bo-" + "9" * 5000]
    assert folder_names(_named("Bob", "a_b", "bob", "a b", "eve", "zed", "amy", "bo"), wanted) == [
        "Bob-2", "a_b", "bob", "a_b-2", "eve", "zed", "amy-3", "bo"]
    assert folder_names(_named("Bob", "bob")) == ["Bob", "bob-2"]  # without a run before: first come


def test_a_folder_held_for_a_person_goes_to_nobody():
    assert folder_names(_named("a_b", "bob"), held=["a_b", "BOB"]) == ["a_b-2", "bob-2"]


def test_folder_names_are_unique_even_where_case_is_ignored():
    # 'a b' becomes a_b, so the third student's own id must not land in the second one's folder.
    assert folder_names(_named("a b", "a_b", "a_b-2")) == ["a_b", "a_b-2", "a_b-2-2"]
    assert folder_names(_named("Alice", "alice", "ALICE")) == ["Alice", "alice-2", "ALICE-3"]
    assert folder_names(_named("x", "x", "../x", "")) == ["x", "x-2", "x-3", "student"]
    assert folder_names(_named("index.html", "Results.JSON", ".overrides.sha256")) == [
        "index.html-2", "Results.JSON-2", "overrides.sha256"]  # never a file the run writes beside them


def test_students_whose_ids_clash_as_folders_each_get_their_own_report(tmp_path):
    root = Path(__file__).resolve().parents[2]
    cls = tmp_path / "class"
    cls.mkdir()
    body = (root / "examples" / "cs224n-w21-a5" / "full-marks.yaml").read_text(encoding="utf-8")
    for n, student in enumerate(("a b", "a_b", "a_b-2")):
        (cls / f"s{n}.yaml").write_text(body.replace("student: full-marks", f"student: '{student}'"), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(cls), "-o", str(out), "--solutions", str(root / "solutions"), "--workers", "1"]) == 0
    listed = [r["student"] for r in json.loads((out / "results.json").read_text(encoding="utf-8"))]
    assert sorted(listed) == ["a b", "a_b", "a_b-2"]
    for student, folder in zip(listed, folder_names(_named(*listed))):
        assert f"{student}</" in (out / folder / "report.html").read_text(encoding="utf-8")


def test_a_report_in_a_staged_out_is_written_directly_and_never_over_another_file(tmp_path):
    from attngrade.runtime.files import write_new

    write_new(tmp_path / "ann" / "report.html", ["<p>", "ann", "</p>"])  # its folder made if not there
    assert (tmp_path / "ann" / "report.html").read_text() == "<p>ann</p>"
    assert [p.name for p in (tmp_path / "ann").iterdir()] == ["report.html"], "no temporary file was made"
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "ann" / "report.html").stat().st_mode & 0o777 == 0o666 & ~umask
    with pytest.raises(FileExistsError):
        write_new(tmp_path / "ann" / "report.html", "a second report for one folder is a bug, not a rewrite")
    assert (tmp_path / "ann" / "report.html").read_text() == "<p>ann</p>"
