"""What an instructor trying the workflow as a new user met in the reports and messages: an
overridden part shown next to its old parse error, three words for points waiting for staff,
"1 points", a class mean blind to machine points, YAML's `yes` shown as 'True'."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from attngrade.cli import main
from attngrade.runtime.text import counted

ROOT = Path(__file__).resolve().parents[2]
WORDING = ROOT / "tests" / "data" / "classes" / "wording"
DECISIONS = ROOT / "tests" / "data" / "overrides" / "wording.yaml"


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wording") / "out"
    assert main(["run", str(WORDING), "-o", str(out), "--solutions", str(ROOT / "solutions"), "--workers", "0",
                 "--overrides", str(DECISIONS)]) == 0
    return out


def _part(out: Path, student: str, part: str) -> dict:
    results = {r["student"]: r for r in json.loads((out / "results.json").read_text(encoding="utf-8"))}
    return next(p for p in results[student]["parts"] if p["id"] == part)


def _section(report: str, part: str) -> str:
    start = report.index(f'<section class="part" id="part-{part}">')
    return report[start:report.index("</section>", start)]


def test_reports_and_wording_an_overridden_part_shows_only_the_staff_verdict(out):
    """ana's 1b could not be read; course staff gave it 4 of 4: the part says so, and the old parse
    error is kept apart, struck, not shown as the verdict's reason."""
    part = _part(out, "ana", "1b")
    assert (part["status"], part["score"], part["pending_points"]) == ("correct", 4.0, 0.0)
    assert part["feedback"] == ["graded by course staff: the closing parenthesis is missing, but the construction "
                                "is clear"]
    assert any("is never closed" in line for line in part["overruled"])
    section = _section((out / "ana" / "report.html").read_text(encoding="utf-8"), "1b")
    verdict = section[:section.index('<details class="overruled">')]
    assert "never closed" not in verdict and "graded by course staff" in verdict
    assert re.search(r"<del>.*never closed", section, re.S)


def test_reports_and_wording_one_word_for_points_waiting_for_staff(out, capsys):
    """`pending`, in results.json, the reports and the terminal; never `manual`."""
    assert _part(out, "bo", "1a")["status"] == "pending"
    report = (out / "bo" / "report.html").read_text(encoding="utf-8")
    index = (out / "index.html").read_text(encoding="utf-8")
    for page in (report, index):
        assert '<span class="status pending">pending</span>' in page
        assert "manual" not in re.sub(r"<style>.*?</style>", "", page, flags=re.S)
    assert main(["check", str(WORDING / "bo.yaml")]) == 0
    said = capsys.readouterr().out
    assert re.search(r"\] 1a\s+pending", said) and "manual" not in said
    assert "<li>graded by course staff" not in report  # nothing of bo's was graded by a person yet


def test_reports_and_wording_singular_and_plural_right(out):
    assert (counted(1, "point"), counted(2, "point"), counted(1.5, "point"), counted(1, "entry", "entries"),
            counted(1.0000001, "student")) == ("1 point", "2 points", "1.5 points", "1 entry", "1 student")
    report = (out / "ana" / "report.html").read_text(encoding="utf-8")
    assert "1 more point is still to be graded by course staff" in report  # 1e.i's written answer
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "2 graded submissions" in index and not re.search(r"\b1 (points|students)\b", index)


def test_reports_and_wording_the_class_pages_means_count_machine_points(out):
    """Both students earned 1e.i's 2 machine points; its written point waits: the mean is 2 of the
    2 decided, not 0 and not '–'."""
    index = (out / "index.html").read_text(encoding="utf-8")
    row = index[index.index('<a href="#groups-cs224n-w21-a5-1e.i">'):]
    row = row[:row.index("</tr>")]
    assert "2.00 of 2 decided" in row


def test_reports_and_wording_yaml_booleans_shown_as_written(out):
    """`1a: yes` is the written answer 'yes', as in every other format, not Python's True."""
    assert _part(out, "bo", "1a")["readings"] == {"answer": "yes"}
    assert "True" not in (out / "bo" / "report.html").read_text(encoding="utf-8")
