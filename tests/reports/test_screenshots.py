"""Screenshots of real reports in headless Chromium, and what a reader would see in them.

Each test opens a page written by `grade run` (or rendered here from the same records),
takes a screenshot and checks laid-out properties: no console errors, math with a size,
heatmap axes named as the problem names them, matrix brackets taller than a line, no
overlapping boxes, no empty cells, and no script run from a hostile answer.
Fixtures (browser, out, open_page) are in conftest.py; tests/tools/screenshots.py makes
docs/screenshots/ with the same helpers.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import replace
from pathlib import Path

import screenshots

from attngrade.cli import main
from attngrade.grading import assignment, grade_submission
from attngrade.problems.keys import load_keys
from attngrade.problems import load_homework
from attngrade.reports import render_student
from attngrade.intake.submissions import load_submission

ROOT = Path(__file__).resolve().parents[2]


def boxes(locator) -> list[dict]:
    return [locator.nth(i).bounding_box() for i in range(locator.count())]


def overlap(a: dict, b: dict, slack: float = 0.5) -> bool:
    return (a["x"] + a["width"] - slack > b["x"] and b["x"] + b["width"] - slack > a["x"]
            and a["y"] + a["height"] - slack > b["y"] and b["y"] + b["height"] - slack > a["y"])


def inside(inner: dict, outer: dict) -> bool:
    return (inner["x"] >= outer["x"] - 0.5 and inner["y"] >= outer["y"] - 0.5
            and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
            and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5)


def shot_of(page, png: Path) -> Path:
    screenshots.shoot(page, png, 20_000)
    assert png.stat().st_size > 20_000, "a rendered page, not a blank one"
    return png


def assert_laid_out(page) -> None:
    """Every math element has a size, nothing runs off the side, every table cell says something."""
    math = boxes(page.locator("math"))
    assert math and all(b and b["width"] > 2 and b["height"] > 5 for b in math)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert page.locator("script").count() == 0


def test_student_report(open_page, out, tmp_path):
    page, problems = open_page(out / "seed-000" / "report.html")
    shot_of(page, tmp_path / "student.png")
    assert problems == []
    assert_laid_out(page)
    for answer in (page.locator(".answer").nth(i) for i in range(page.locator(".answer").count())):
        name, value = answer.locator(":scope > *").all()
        assert not overlap(name.bounding_box(), value.bounding_box())
    summary = page.locator("table.summary td")
    assert all(summary.nth(i).inner_text().strip() for i in range(summary.count()))


def heatmap_labels(page, part: str, axis: str) -> tuple[list[str], list[dict], dict]:
    svg = page.locator(f'[id="part-{part}"] .plot svg')
    texts = svg.locator("g.panel").first.locator(f"g.{axis} > text")
    return [texts.nth(i).text_content() for i in range(texts.count())], boxes(texts), svg.bounding_box()


def test_heatmap_axes_carry_the_problems_names_readably(open_page, out, tmp_path):
    page, problems = open_page(out / "seed-000" / "report.html")
    assert problems == []
    expected = {  # part -> (query names, key names), as text (subscripts are tspans)
        "1b": (["q"], ["k1", "ka", "k3", "k4", "kb", "k6"]),
        "1c.i": (["q"], ["μ1", "μa", "μ3", "μ4", "μb", "μ6"]),
        "1d.i": (["mean"], ["μ1", "μa", "μ3", "μ4", "μb", "μ6"]),
        "1e.ii": (["q1", "q2", "q3"], ["x1", "x2", "x3"]),
    }
    for part, (queries, keys) in expected.items():
        page.locator(f'[id="part-{part}"] .plot').screenshot(path=str(tmp_path / f"heatmap-{part}.png"))
        for axis, names in (("rows", queries), ("cols", keys)):
            shown, placed, svg = heatmap_labels(page, part, axis)
            assert shown == names, part
            assert all(b["width"] > 3 and b["height"] > 6 and inside(b, svg) for b in placed), (part, axis)
            assert not any(overlap(a, b) for i, a in enumerate(placed) for b in placed[i + 1:]), (part, axis)
        subscripts = page.locator(f'[id="part-{part}"] .plot svg g.cols tspan')
        assert subscripts.count() == 2 * len(keys)  # both panels, each key subscripted
    cells = page.locator('[id="part-1e.ii"] .plot svg rect')
    assert cells.count() == 18 and all(b["width"] >= 30 for b in boxes(cells))
    assert "no requirement on this query" in page.locator('[id="part-1e.ii"] .plot svg').text_content()


def test_matrix_brackets_grow_with_the_matrix(open_page, tmp_path):
    # A course's own homework that asks for the 2×2 shift block alone (a math field, a matrix): the
    # bundled parts read matrices into other forms (Fa22 1c takes the whole d×d matrix as text).
    homework = ROOT / "tests" / "data" / "homeworks"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["run", str(homework / "shift-block-class"), "--homework", str(homework / "shift-block"),
                     "-o", str(tmp_path / "out")]) == 0
    page, problems = open_page(tmp_path / "out" / "seed-003" / "report.html")
    shot_of(page, tmp_path / "matrix.png")
    assert problems == []
    assert_laid_out(page)
    matrix = page.locator('[id="part-block"] .answer math').first
    matrix.screenshot(path=str(tmp_path / "matrix-answer.png"))
    table = matrix.locator("mtable").bounding_box()
    brackets = matrix.locator("mtable").locator("xpath=..").locator(":scope > mo")
    assert brackets.count() == 2
    letter = matrix.locator("mi").first.bounding_box()["height"]
    for bracket in boxes(brackets):
        assert bracket["height"] > 1.8 * letter  # taller than a line: it stretched
        assert bracket["height"] >= 0.9 * table["height"]


def test_statement_math_is_laid_out_as_math(open_page, tmp_path):
    hw = load_homework("cs224n-w21-a5")
    statement = (r"With the same $x_1, x_2, x_3$, give $d \times d$ matrices $V, K, Q$ "
                 r"($v_i = V x_i$, $k_i = K x_i$, $q_i = Q x_i$) so that $c_2 \approx u_b$ and "
                 r"$c_1 \approx u_b - u_c$; here $\beta = \|u_a\|$ and <em>not</em> \$5.")
    problems_ = tuple(replace(pr, parts=tuple(replace(p, statement=statement) if p.id == "1e.ii" else p
                                               for p in pr.parts)) for pr in hw.problems)
    hw = replace(hw, problems=problems_)
    result = grade_submission(assignment(hw, load_keys(ROOT / "solutions", hw)),
                              load_submission(ROOT / "examples/cs224n-w21-a5/seed-000.yaml"))
    path = tmp_path / "report.html"
    path.write_text(render_student(result, hw), encoding="utf-8")
    page, problems = open_page(path)
    assert problems == []
    shown = page.locator('[id="part-1e.ii"] p.statement')
    shown.screenshot(path=str(tmp_path / "statement.png"))
    assert shown.locator("math").count() == 9
    assert all(b["width"] > 5 and b["height"] > 8 for b in boxes(shown.locator("math")))
    text = shown.inner_text()
    assert "$" not in text.replace("$5", "") and "\\times" not in text and "<em>not</em>" in text
    line = shown.locator("math").first.bounding_box()["height"]
    assert line < 40  # inline math stays inline


def test_hostile_answers_are_text_in_the_picture(open_page, out, tmp_path):
    page, problems = open_page(out / "hostile-text" / "report.html")
    shot_of(page, tmp_path / "hostile.png")
    assert problems == []
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("img").count() == 0 and page.locator("script").count() == 0
    written = page.locator('[id="part-1a"] .answer pre')
    assert written.bounding_box()["height"] > 10 and "<script>window.__pwned=1</script>" in written.inner_text()


def test_class_page(open_page, out, tmp_path):
    page, problems = open_page(out / "index.html")
    shot_of(page, tmp_path / "class.png")
    assert problems == []
    assert_laid_out(page)
    bars = page.locator("svg.histogram rect")
    assert any(b["height"] > 20 for b in boxes(bars))
    for table in ("table.parts", "table.students"):
        cells = page.locator(f"{table} td")
        assert cells.count() and all(cells.nth(i).inner_text().strip() for i in range(cells.count())), table
    # The answer-group tables of every part line up: the same columns at the same places.
    headers = page.locator("table.groups tr:first-child")
    columns = {tuple(round(b["x"]) for b in boxes(headers.nth(i).locator("th"))) for i in range(headers.count())}
    assert headers.count() > 10 and len(columns) == 1
    # A verdict and its points stay on one line.
    heights = page.eval_on_selector_all("td.verdict", """cells => cells.map(cell => {
        const range = document.createRange(); range.selectNodeContents(cell);
        return range.getBoundingClientRect().height; })""")
    assert heights and max(heights) < 30
