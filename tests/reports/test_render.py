"""Rendering without a browser: escaping, MathML sanitizing, plots, and speed-critical caching."""

from __future__ import annotations

from pathlib import Path

from attngrade.grading import assignment, grade_submission
from attngrade.keys import load_keys
from attngrade.mathlang import parse
from attngrade.problems import load_homework
from attngrade.reports import render_student
from attngrade.reports.mathml import sanitize, to_mathml
from attngrade.submissions import load_submission

ROOT = Path(__file__).resolve().parents[2]


def test_mathml_comes_from_the_reading_not_the_raw_text():
    part = load_homework("cs224n-w21-a5").part("1e.ii")
    value = parse(r"\frac{1}{\beta^2}(u_b u_b^\top - u_c u_c^\top)", part.table)
    markup = str(to_mathml(value))
    assert markup.startswith("<math") and "<mfrac>" in markup and "β" in markup


def test_sanitizer_keeps_math_and_drops_everything_else():
    dirty = ('<math xmlns="http://www.w3.org/1998/Math/MathML" onload="x()"><mi href="javascript:x()">a</mi>'
             '<script>alert(1)</script><mtext>ok</mtext><foreignObject><img src="x"/></foreignObject></math>')
    clean = sanitize(dirty)
    assert "script" not in clean and "onload" not in clean and "img" not in clean and "javascript" not in clean
    assert "<mi>a</mi>" in clean and "<mtext>ok</mtext>" in clean


def test_student_text_is_escaped(data_dir):
    hw = load_homework("cs224n-w21-a5")
    result = grade_submission(assignment(hw, load_keys(ROOT / "solutions", hw)),
                              load_submission(data_dir / "classes/same-matrix-notations/hostile-text.yaml"))
    html = render_student(result, hw)
    assert "<script>window" not in html and "<img src=x" not in html
    assert "&lt;script&gt;window.__pwned = 2&lt;/script&gt;" in html


def test_report_shows_rubric_for_pending_parts_and_heatmap_for_1e_ii():
    hw = load_homework("cs224n-w21-a5")
    result = grade_submission(assignment(hw, load_keys(ROOT / "solutions", hw)),
                              load_submission(ROOT / "examples/cs224n-w21-a5/seed-000.yaml"))
    assert "Rubric:" not in render_student(result, hw)  # reports go to students: no rubric unless asked
    html = render_student(result, hw, rubric=True)
    assert "Rubric:" in html and "pending" in html
    part = html.split('id="part-1e.ii"')[1].split("</section>")[0]
    assert "<svg" in part and "your weights" in part and "needed" in part


def _seed_000_report() -> str:
    hw = load_homework("cs224n-w21-a5")
    result = grade_submission(assignment(hw, load_keys(ROOT / "solutions", hw)),
                              load_submission(ROOT / "examples/cs224n-w21-a5/seed-000.yaml"))
    return render_student(result, hw)


def test_each_answer_is_shown_once_and_booleans_as_yes_or_no():
    html = _seed_000_report()
    part = html.split('id="part-1e.i"')[1].split("</section>")[0]
    assert "<pre>no</pre>" in part and "False" not in part  # `possible: no` in YAML is a boolean
    q = html.split('id="part-1e.ii"')[1].split("</section>")[0]
    assert q.count("<math") >= 3 and "<details><summary>as written, and as read</summary>" in q


def test_a_part_waiting_for_staff_shows_no_score_yet():
    html = _seed_000_report()
    row = html.split('href="#part-1a"')[1].split("</tr>")[0]
    assert "– / 2" in row and "0 / 2" not in row
