"""Reports in a real browser: headless Chromium through Playwright (no downloaded browser)."""

from __future__ import annotations

# Fixtures (browser, out, open_page) are in conftest.py; they skip without Chromium.


def test_student_report_loads_cleanly_with_mathml_and_heatmap(open_page, out):
    page, problems = open_page(out / "seed-000" / "report.html")
    assert problems == []
    assert page.locator("math").count() >= 5  # answers rendered as MathML, not images or script
    assert page.locator("script").count() == 0
    heatmap = page.locator('[id="part-1e.ii"] .plot svg')
    assert heatmap.count() == 1 and heatmap.bounding_box()["width"] > 100
    assert "c1 ≈ u_b, not u_b - u_c" in page.locator('[id="part-1e.ii"]').inner_text()


def test_prediction_file_evidence_is_shown(open_page, out):
    page, problems = open_page(out / "parachutel" / "report.html")
    assert problems == []
    text = page.locator('[id="part-2f"]').inner_text()
    assert "133/500 = 26.6%" in text and "pass line 10.0%: reached" in text
    assert page.locator('[id="part-2f"] table.file td code').count() >= 2  # first mismatching lines


def test_hostile_answers_run_no_script(open_page, out):
    page, problems = open_page(out / "hostile-text" / "report.html")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("img").count() == 0 and page.locator("script").count() == 0
    body = page.locator("body").inner_text()
    assert '<img src=x onerror="window.__pwned=1">' in body  # shown as text
    assert problems == []


def test_class_page_groups_notations_into_one_group(open_page, out):
    page, problems = open_page(out / "index.html")
    assert problems == []
    assert page.locator("math").count() > 0 and page.locator(".plot svg").count() >= 1  # histogram
    groups = page.locator('[id="groups-cs224n-w21-a5-1e.ii"] tr.group')
    counts = {}
    for i in range(groups.count()):
        row = groups.nth(i)
        members = row.locator("td").nth(3).inner_text()
        counts[members] = int(row.locator("td.count").inner_text())
    same = next(k for k in counts if "latex" in k)
    assert {"latex", "ascii", "unicode-and-primes", "full-marks"} <= {m.strip() for m in same.split(",")}
    assert counts[same] == len(same.split(","))
    assert not any("different-construction" in k and "latex" in k for k in counts)  # other K, Q: own group


def test_screenshots_of_a_report_and_the_class_page(open_page, out, tmp_path):
    for name, path in (("report", out / "seed-000" / "report.html"), ("class", out / "index.html")):
        page, problems = open_page(path)
        shot = tmp_path / f"{name}.png"
        page.screenshot(path=str(shot), full_page=True)
        assert problems == []
        assert shot.stat().st_size > 20_000  # a rendered page, not a blank one
        assert page.evaluate("document.body.scrollHeight") > 900
