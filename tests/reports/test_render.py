"""Rendering without a browser: escaping, MathML sanitizing, plots, and speed-critical caching."""

from __future__ import annotations

from pathlib import Path

import pytest

from attngrade.grading import assignment, grade_submission
from attngrade.problems.keys import load_keys
from attngrade.mathlang import parse
from attngrade.problems import load_homework
from attngrade.reports import render_student
from attngrade.reports.mathml import latex_to_mathml, sanitize, statement_html, to_mathml
from attngrade.intake.submissions import load_submission

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


def test_statement_math_is_mathml_and_its_text_is_escaped():
    html = str(statement_html(r"Scores $k_i^\top q$ <b>bold</b> & $$\frac{a}{b}$$, $\bad{$, \$5 and a lone $"))
    assert html.startswith("Scores <math") and "<msubsup>" in html and "<mfrac>" in html
    assert 'display="block"' in html  # $$...$$
    assert "&lt;b&gt;bold&lt;/b&gt; &amp;" in html and "<b>" not in html
    assert "<code>$\\bad{$</code>" in html  # LaTeX latex2mathml cannot read: its source, escaped
    assert "$5 and a lone $" in html


def test_statement_math_cannot_smuggle_markup():
    html = str(statement_html(r"$x<script>alert(1)</script>$ and $\text{<img src=x onerror=alert(1)>}$"))
    assert "<script" not in html and "<img" not in html


def test_matrix_brackets_stretch_even_from_plain_bmatrix():
    markup = str(latex_to_mathml(r"\begin{bmatrix}1 & 2\\3 & 4\end{bmatrix}"))
    assert markup.count('<mo stretchy="true" fence="true" symmetric="true">') == 2 and "<mtable>" in markup


def test_heatmap_axes_use_the_problems_names():
    html = _seed_000_report()
    query = html.split('id="part-1b"')[1].split("</section>")[0]
    assert ">k<tspan" in query and "<tspan" in query and ">a</tspan>" in query and ">b</tspan>" in query
    assert ">k<tspan font-size=\"10\" dy=\"4\">1</tspan>" in query  # the unnamed keys are k_1.. by position
    means = html.split('id="part-1c.i"')[1].split("</section>")[0]
    assert "μ<tspan" in means
    heads = html.split('id="part-1d.i"')[1].split("</section>")[0]
    assert "averaged over the heads q1, q2" in heads
    qkv = html.split('id="part-1e.ii"')[1].split("</section>")[0]
    assert ">x<tspan" in qkv and ">q<tspan" in qkv
    assert "no requirement on this query" in qkv  # the routing target says nothing about query 3


def test_heatmap_labels_from_evidence_win_and_fall_back_to_numbers():
    from attngrade.reports.plots import heatmap

    named = str(heatmap([0.5, 0.5], None, "t", ["q"], ["k_a", "mu_b"]))
    assert ">k<tspan" in named and "μ<tspan" in named
    wrong_count = str(heatmap([0.2, 0.3, 0.5], None, "t", ["q"], ["k_a"]))  # names that do not fit: numbered
    assert wrong_count.count("<tspan") == 3 and "k_a" not in wrong_count
    assert "<tspan" in str(heatmap([[1, 0], [0, 1]], [[0, 1], [1, 0]], "t"))


def test_class_page_shows_yes_no_and_no_score_for_groups_waiting_for_staff(tmp_path):
    from attngrade.cli import main

    assert main(["run", str(ROOT / "examples/cs224n-w21-a5"), "-o", str(tmp_path), "--solutions",
                 str(ROOT / "solutions"), "--workers", "0"]) == 0
    index = (tmp_path / "index.html").read_text()
    groups = index.split('id="groups-cs224n-w21-a5-1e.i"')[1].split("</details>")[0]
    assert "False" not in groups and "True" not in groups and "<code>no</code>" in groups
    waiting = index.split('id="groups-cs224n-w21-a5-1a"')[1].split("</details>")[0]
    assert "–/2" in waiting and "0/2" not in waiting


def test_class_page_links_each_group_member_to_their_report_in_every_homework(tmp_path):
    """Two homeworks on one page: every member links to their own report folder."""
    import re
    import shutil

    from attngrade.cli import main

    for homework in ("cs224n-w21-a5", "mimuw-2022-p4"):
        shutil.copytree(ROOT / "examples" / homework, tmp_path / "class" / homework)
    assert main(["run", str(tmp_path / "class"), "-o", str(tmp_path / "out"), "--solutions",
                 str(ROOT / "solutions"), "--workers", "0"]) == 0
    index = (tmp_path / "out" / "index.html").read_text()
    for homework in ("cs224n-w21-a5", "mimuw-2022-p4"):
        groups = index.split(f'id="groups-{homework}-1b"')[1].split("</details>")[0]
        links = re.findall(r'<a href="([^"]+)/report.html">', groups)
        assert links, homework
        assert all((tmp_path / "out" / folder / "report.html").is_file() for folder in links)


@pytest.mark.parametrize("given", ["a/zoe.yaml", "/srv/course/a/zoe.yaml"])  # a class named on the command line
def test_a_students_report_shortens_their_path_and_nothing_else(given):
    from attngrade.records import Result
    from attngrade.reports.views import student_view

    source = given
    result = Result(student="zoe", homework=None, score=0.0, max_score=0.0, source=source,
                    error=f"{source}: line 5, column 1: not valid YAML",
                    notes=("unknown top-level key 'extra/data' was ignored", "see ../x and a/b"))
    view = student_view(result, None)
    assert view["error"] == "zoe.yaml: line 5, column 1: not valid YAML"
    assert view["notes"] == list(result.notes)


def test_an_id_with_a_right_to_left_override_cannot_pass_for_another_student(data_dir, tmp_path):
    """"\u202eecila" would show as "alice" and reorder the names after it in a group's members:
    every page and the overrides file show the override as its escape instead."""
    from attngrade.cli import main

    out = tmp_path / "out"
    assert main(["run", str(data_dir / "classes/bidi-ids"), "-o", str(out), "--solutions",
                 str(ROOT / "solutions"), "--workers", "0"]) == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    pages = [index, *(p.read_text(encoding="utf-8") for p in out.glob("*/report.html"))]
    assert len(pages) == 3
    for page in pages:
        assert "\u202e" not in page
    # Names that share a line are each isolated too, so that a right-to-left name reorders nothing after it
    members = index.split('id="groups-cs224n-w21-a5-1a"')[1].split("</details>")[0]
    assert "<bdi>\\u202eecila</bdi>" in members and "<bdi>alice</bdi>" in members
    students = index.split('<table class="students">')[1]
    assert ">\\u202eecila</a>" in students and ">alice</a>" in students
    overrides = (out / "overrides.yaml").read_text(encoding="utf-8")
    assert "\u202e" not in overrides and '"\\u202eecila"' in overrides
