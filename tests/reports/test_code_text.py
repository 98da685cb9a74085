"""What a student's code says reaches every output as the code's text, and harmless.

The bug classes in tests/data/code/bugs.yaml that raise exceptions (class name and message) and
print text holding a terminal's escape sequences, a right-to-left override, an isolate, a zero-width
space, line breaks and attngrade's own words for its failures are graded as a class by `grade run`,
and one by `grade check`: no report, class page, results file or terminal line holds one of those
characters raw, and no line reads as attngrade saying it failed. The pages escape on their own too:
a verdict whose feedback holds them raw is rendered with each shown as its escape.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkers"))
from code_fixtures import code_submission, grade_code, grader_wording, part, raw_characters  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BUGS = ("getitem-raises-control-characters", "forward-raises-control-characters",
        "getitem-prints-control-characters-and-ends")
FEEDBACK = ("\x1b[31mred", "\u202eevil", "first\r\nsecond", "zero\u200bwidth", "\u2066isolated\u2069")


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory, torch):
    """The class of the three bug classes, graded by `grade run` in a process of its own."""
    folder = tmp_path_factory.mktemp("code-text")
    for n, bug in enumerate(BUGS):
        code_submission(folder / "class" / f"s{n}", bug, student=f"s{n}")
    done = subprocess.run([sys.executable, "-m", "attngrade", "run", str(folder / "class"), "-o", str(folder / "out"),
                           "--solutions", str(ROOT / "solutions"), "--workers", "1"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    return folder / "out", done.stdout + done.stderr


def test_no_page_of_a_class_holds_what_the_code_said_raw(graded_class):
    out, terminal = graded_class
    pages = [out / "index.html", *sorted(out.glob("*/report.html"))]
    assert len(pages) == 1 + len(BUGS)
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not raw_characters(text), (page, raw_characters(text))
        assert not grader_wording(text.splitlines()), page
    assert not raw_characters(terminal) and not grader_wording(terminal.splitlines())


def test_the_results_quote_the_code_and_wait_for_no_one(graded_class):
    out, _ = graded_class
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    for result in results:
        code = [v for v in result["parts"] if v["id"] in ("2e", "2g.i")]
        for verdict in code:
            assert not raw_characters("".join(verdict["feedback"])), verdict["feedback"]
            assert not grader_wording(verdict["feedback"]) and verdict["pending_points"] == 0, verdict
    quoted = [line for r in results for v in r["parts"] for line in v["feedback"] if "your code raised «" in line]
    assert any("\\x1b[31m" in line and "\\u202e" in line and "\\x0d\\n" in line for line in quoted), quoted


@pytest.mark.parametrize("bug", BUGS)
def test_grade_check_shows_the_code_text_escaped_on_the_terminal(tmp_path, torch, bug):
    folder = code_submission(tmp_path / "s1", bug)
    done = subprocess.run([sys.executable, "-m", "attngrade", "check", str(folder)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    terminal = done.stdout + done.stderr
    assert "your code raised «" in terminal or "your code printed «" in terminal, terminal
    assert not raw_characters(terminal) and not grader_wording(terminal.splitlines()), terminal


def test_a_report_escapes_feedback_that_holds_controls_raw(tmp_path, a5, a5_keys, torch):
    """Whatever a check writes, the page shows controls, bidi marks and zero-width characters as
    their escapes: autoescaping alone makes text safe for HTML, not for the reader."""
    from attngrade.reports import render_index, render_student

    result = grade_code(code_submission(tmp_path / "s1"), a5, a5_keys)
    raw = replace(part(result, "2g.i"), feedback=FEEDBACK)
    result = replace(result, parts=tuple(raw if v.part == "2g.i" else v for v in result.parts),
                     notes=("note \x1b[2J\u202e",))
    for html in (render_student(result, a5), render_index([(result, "s1")], "class \u202e", {a5.id: a5})):
        assert not raw_characters(html), raw_characters(html)
    page = render_student(result, a5)
    assert "\\x1b[31mred" in page and "\\u202eevil" in page and "first\\x0d" in page and "zero\\u200bwidth" in page
