"""An answer the reader cannot read: pending for staff in a class run, invalid in a self-check."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import shutil
from pathlib import Path

from attngrade.cli import main

ROOT = Path(__file__).resolve().parents[2]
CLASS = ROOT / "tests" / "data" / "classes" / "unreadable"


def _run(tmp_path: Path, *extra: str) -> tuple[dict, dict, dict]:
    out = tmp_path / "out"
    assert main(["run", str(CLASS), "-o", str(out), "--solutions", str(ROOT / "solutions"), "--workers", "1",
                 *extra]) == 0
    results = {r["student"]: r for r in json.loads((out / "results.json").read_text())}
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open())}
    groups = json.loads(_groups(out))
    return results, rows, groups


def _groups(out: Path) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["groups", str(out), "--part", "1b", "--json"]) == 0
    return printed.getvalue()


def _part(result: dict, part: str) -> dict:
    return next(p for p in result["parts"] if p["id"] == part)


def test_a_class_run_leaves_an_unreadable_answer_to_staff_with_the_reason(tmp_path):
    results, rows, groups = _run(tmp_path)
    ada = _part(results["ada"], "1b")
    assert ada["status"] == "invalid" and ada["score"] == 0 and ada["pending_points"] == ada["max_score"] == 4
    assert ada["feedback"][0].startswith("could not read this answer, so course staff will grade it")
    assert "never closed" in ada["feedback"][1]
    assert rows["ada"]["1b"] == "" and float(rows["ada"]["pending"]) == 4  # blank, never a 0
    assert _part(results["cy"], "1b")["pending_points"] == 0  # a readable answer is graded as ever
    members = [sorted(g["members"]) for g in groups["1b"]]
    assert ["ada", "bo"] in members, "the two answers that fail the same way are one group for staff"


def test_the_same_file_through_grade_check_is_invalid_with_the_message(capsys):
    assert main(["check", str(CLASS / "ada.yaml"), "--json"]) == 0
    part = _part(json.loads(capsys.readouterr().out), "1b")
    assert part["status"] == "invalid" and part["pending_points"] == 0
    assert "never closed" in part["feedback"][0]


def test_the_flag_for_zero_gives_zero_with_the_reason(tmp_path):
    results, rows, _ = _run(tmp_path, "--unreadable", "zero")
    ada = _part(results["ada"], "1b")
    assert ada["status"] == "invalid" and ada["score"] == 0 and ada["pending_points"] == 0
    assert "never closed" in ada["feedback"][0]
    assert rows["ada"]["1b"] == "0"


def test_a_homework_can_choose_zero(tmp_path):
    folder = tmp_path / "hw"
    assert main(["new-homework", "cs224n-w21-a5", "-o", str(folder), "--solutions", str(ROOT / "solutions")]) == 0
    homework_file = folder / "homework.yaml"
    homework_file.write_text(homework_file.read_text() + "unreadable: zero\n")
    shutil.copytree(CLASS, tmp_path / "cls")
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "cls"), "-o", str(out), "--homework", str(folder), "--workers", "1"]) == 0
    ada = next(r for r in json.loads((out / "results.json").read_text()) if r["student"] == "ada")
    assert _part(ada, "1b")["pending_points"] == 0 and _part(ada, "1b")["score"] == 0
