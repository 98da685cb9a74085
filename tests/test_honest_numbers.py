"""Pending is not zero: points that wait for course staff are shown as waiting everywhere."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from attngrade.cli import main

ROOT = Path(__file__).resolve().parent.parent
A5 = ROOT / "examples" / "cs224n-w21-a5"


def _run(tmp_path: Path) -> tuple[dict, dict, Path]:
    out = tmp_path / "out"
    assert main(["run", str(A5), "-o", str(out), "--workers", "1"]) == 0
    rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").open())}
    results = {r["student"]: r for r in json.loads((out / "results.json").read_text())}
    return rows, results, out


def test_pending_points_are_blank_in_grades_csv_and_counted_in_results_json(tmp_path, capsys):
    rows, results, _ = _run(tmp_path)
    full = results["full-marks"]
    parts = {p["id"]: p for p in full["parts"]}
    assert parts["1a"]["status"] == "pending" and parts["1a"]["pending_points"] == 2  # text, for staff
    assert rows["full-marks"]["1a"] == ""  # not a 0
    assert parts["1e.i"]["pending_points"] == 1 and rows["full-marks"]["1e.i"] == "2"  # 2 decided, 1 waits
    assert full["pending_points"] == 8 and rows["full-marks"]["pending"] == "8"
    assert rows["full-marks"]["total"] == "13"
    assert parts["3a"]["status"] == "missing" and parts["3a"]["pending_points"] == 0  # nothing to grade
    # scores are rounded for people, exact in JSON
    assert rows["seed-001"]["total"] == "10.33" and results["seed-001"]["score"] == 10.333333


def test_a_test_prediction_file_without_gold_waits_instead_of_earning(tmp_path, capsys):
    _, results, _ = _run(tmp_path)
    for student in ("parachutel", "Alireza1044"):
        part = {p["id"]: p for p in results[student]["parts"]}["2g.i"]
        assert part["max_score"] == 8  # the same maximum for every student
        assert part["pending_points"] >= 2  # the test file's 2 points wait for the test gold
        assert not any("points for" in line for line in part["feedback"])


def test_reports_say_what_is_still_to_come(tmp_path, capsys):
    _, results, out = _run(tmp_path)
    report = (out / "full-marks" / "report.html").read_text()
    assert "Score: 13 / 61</strong>" in report and "8 more points are still to be graded by course staff" in report
    index = (out / "index.html").read_text()
    assert "decided so far" in index and "waiting for course staff (not counted as 0)" in index
    assert "mean so far" in index


def test_self_check_counts_only_what_a_machine_decided(capsys):
    assert main(["check", str(A5 / "full-marks.yaml")]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    # 1b 4 + 1c.i 2 + 1d.i 1 + 1e.ii 4 earned; of the machine points, 1e.i waits for the key, and the
    # unanswered 2d-2g.i count (machine points, nothing answered); unanswered text parts do not
    from attngrade.problems import load_homework

    hw = load_homework("cs224n-w21-a5")
    machine = sum(c.points for p in hw.parts for c in p.checks if c.check != "manual")
    text = sum(c.points for p in hw.parts for c in p.checks if c.check == "manual")
    key_1e_i = sum(c.points for c in hw.part("1e.i").checks if c.check != "manual")
    assert last.startswith(f"machine-checked so far: 11 of {machine - key_1e_i:g} points (of 61")
    assert machine - key_1e_i + text + key_1e_i == 61


def test_an_unreadable_field_and_a_missing_one_are_different_answer_groups():
    from attngrade.grading import Options, assignment, grade
    from attngrade.grading.groups import answer_groups
    from attngrade.problems import load_homework
    from attngrade.records import Submission

    hw = load_homework("cs224n-w21-a5")
    v = "(u_b u_b^T - u_c u_c^T)/beta^2"
    subs = [Submission("typo", hw.id, {"1e.ii": {"V": v, "K": "I", "Q": "(u_d u_a^T"}}, Path("a.yaml")),
            Submission("blank", hw.id, {"1e.ii": {"V": v, "K": "I"}}, Path("b.yaml")),
            Submission("blank-2", hw.id, {"1e.ii": {"V": v, "K": "I"}}, Path("c.yaml"))]
    results = grade(subs, Options(assignments={hw.id: assignment(hw, None, self_check=True)})).results
    groups = answer_groups(results, {p.id: p for p in hw.parts})["1e.ii"]
    assert sorted(g.members for g in groups) == [["blank", "blank-2"], ["typo"]]
