"""The staff grading app end to end in a real browser: headless system Chromium through Playwright,
against `grade review` running as a real server on a graded class."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from attngrade.grading import Class, Options, grade
from attngrade.outputs import staff
from attngrade.outputs.write import groups_of

from review_fixtures import HOSTILE, HW, ROOT, SAME, run_grade, write_class

VIEWPORT = {"width": 1280, "height": 900}


def open_part(browser, server, part_id: str, context=None):
    """A page opened from the printed URL (the token becomes a cookie), then the part's page."""
    context = context or browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.goto(server.url)
    assert "token=" not in page.url  # the token left the address bar for a cookie
    page.click(f'a[href="/part/{HW}/{part_id}"]')
    page.wait_for_selector("section.group.current")
    return page, problems


def part_json(server, part_id: str) -> dict:
    status, data = server.api(f"/api/parts/{HW}/{part_id}")
    assert status == 200
    return data


def wait_for(check, timeout: float = 15.0):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def test_keyboard_grading_takes_two_presses_per_answer_and_no_mouse(browser, server):
    page, problems = open_part(browser, server, "1c.ii")
    data = part_json(server, "1c.ii")
    assert sum(g["size"] for g in data["groups"]) == 50
    first = data["rubric"][0]
    presses = 0
    for _ in data["groups"]:
        page.keyboard.press("1")
        page.keyboard.press("Enter")
        presses += 2
    done = wait_for(lambda: part_json(server, "1c.ii")["progress"]["to_grade"] == 0)
    assert done, part_json(server, "1c.ii")["progress"]
    assert presses <= 2 * 50
    for group in part_json(server, "1c.ii")["groups"]:
        assert group["graded"] and group["items"] == [first["id"]]
        assert all(m["score"] == first["points"] for m in group["members"])
    assert problems == []


def test_a_rubric_item_applied_to_a_group_then_repriced_changes_every_member(browser, server, tmp_path):
    page, problems = open_part(browser, server, "1a")
    data = part_json(server, "1a")
    shared = next(g for g in data["groups"] if g["answer"] == SAME)
    assert shared["size"] == 3
    group = page.locator(f'section.group[id="{shared["id"]}"]')
    group.locator("button.item").nth(0).click()  # the mouse works too
    group.locator("button.confirm").click()
    wait_for(lambda: next(g for g in part_json(server, "1a")["groups"] if g["id"] == shared["id"])["graded"])
    item = data["rubric"][0]
    side = page.locator(f'ol.rubric li[data-item="{item["id"]}"]')
    side.locator(".item-points").fill("1.25")
    side.locator(".item-save").click()
    page.wait_for_load_state("load")
    page.wait_for_selector(f'section.group[id="{shared["id"]}"]')
    page.locator(f'section.group[id="{shared["id"]}"] details.members summary').click()
    scores = page.locator(f'section.group[id="{shared["id"]}"] [data-role="score"]').all_inner_texts()
    assert scores == ["1.25", "1.25", "1.25"]
    after = next(g for g in part_json(server, "1a")["groups"] if g["id"] == shared["id"])
    assert [m["score"] for m in after["members"]] == [1.25, 1.25, 1.25]
    shot = tmp_path / "review.png"
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 20_000
    if os.environ.get("ATTNGRADE_WRITE_SCREENSHOTS"):
        shutil.copy(shot, ROOT / "docs" / "screenshots" / "review.png")
    assert problems == []


def test_two_browsers_grading_at_once_lose_no_update(browser, server):
    one, _ = open_part(browser, server, "1a")
    two, _ = open_part(browser, server, "1a", browser.new_context(viewport=VIEWPORT))
    target = one.locator("section.group.current").get_attribute("id")
    assert two.locator("section.group.current").get_attribute("id") == target  # both look at one group
    one.keyboard.press("1")  # each gives a different item, from a page that does not show the other's
    two.keyboard.press("2")
    one.keyboard.press("3")

    def items():
        group = next(g for g in part_json(server, "1a")["groups"] if g["id"] == target)
        return sorted(group["items"]) if len(group["items"]) == 3 else None
    rubric = [i["id"] for i in part_json(server, "1a")["rubric"]]
    assert wait_for(items) == sorted(rubric[:3])
    # A comment typed over a newer one is refused, and the page says so rather than overwriting it.
    one.locator("section.group.current input.group-comment").fill("from one")
    one.locator("section.group.current input.group-comment").press("Tab")
    wait_for(lambda: next(g for g in part_json(server, "1a")["groups"] if g["id"] == target)["units"][0]["comment"])
    box = two.locator("section.group.current input.group-comment")
    two.evaluate("document.querySelector('section.group.current').dataset.versions = "
                 "document.querySelector('section.group.current').dataset.versions.replace(/:\\d+/g, ':1')")
    box.fill("from two")
    box.press("Tab")
    two.wait_for_selector("#status.bad")
    assert "changed meanwhile" in two.locator("#status").inner_text()
    group = next(g for g in part_json(server, "1a")["groups"] if g["id"] == target)
    assert group["units"][0]["comment"] == "from one"
    status, log = server.api("/api/audit")
    assert status == 200 and {"add", "comment"} <= {e["action"] for e in log}


def test_a_request_without_the_token_is_refused(browser, server):
    context = browser.new_context()
    page = context.new_page()
    response = page.goto(server.base + "/")
    assert response.status == 403 and "token" in page.inner_text("body")
    assert page.goto(server.base + f"/api/parts/{HW}/1a").status == 403
    assert page.goto(server.base + "/static/review.js").status == 403
    assert server.api("/api/parts", token=False)[0] == 403
    # A page holding the cookie still cannot change anything without the header (a cross-site form could not)
    page, _ = open_part(browser, server, "1a")
    status = page.evaluate("fetch('/api/parts/%s/1a/threshold', {method: 'POST', body: '{\"value\": 0.5}'})"
                           ".then(r => r.status)" % HW)
    assert status == 403


def test_an_answer_holding_a_script_stays_inert_text(browser, server):
    page, problems = open_part(browser, server, "1a")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("section.group img").count() == 0
    assert HOSTILE in page.locator("section.group pre.answer").all_inner_texts()
    assert page.locator("script").count() == 1  # ours, from /static, and no other
    csp = page.evaluate("fetch(location.href).then(r => r.headers.get('content-security-policy'))")
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert problems == []


def test_after_a_rerun_only_the_changed_answer_needs_another_look(browser, server, graded_out):
    klass, out = graded_out
    page, _ = open_part(browser, server, "1a")
    for _ in part_json(server, "1a")["groups"]:
        page.keyboard.press("1")
        page.keyboard.press("Enter")
    assert wait_for(lambda: part_json(server, "1a")["progress"]["to_grade"] == 0)
    write_class(klass, changed={"s10": "The scores of every key are equal."})
    run_grade(klass, out)  # grade run again into the same OUT, the app still running
    second = grade(Class([klass]), Options(solutions=ROOT / "solutions", workers=0))
    results, said = staff.apply(second.results, groups_of(second.results, second.homeworks, {}),
                                out / staff.STORE, second.homeworks)
    assert "1 graded answer changed since grading and needs another look: s10 1a" in said[1]
    by = {r.student: next(v for v in r.parts if v.part == "1a") for r in results}
    assert by["s10"].pending_points == 2.0 and all(by[s].pending_points == 0 for s in by if s != "s10")
    page.goto(server.base + "/")
    row = page.locator("table.parts tr", has=page.locator(f'a[href="/part/{HW}/1a"]'))
    assert row.locator("td").nth(6).inner_text() == "1"
    page.goto(server.base + f"/part/{HW}/1a")
    again = page.locator("li[data-student]", has=page.locator(".tag.again"))
    assert again.count() == 1 and again.get_attribute("data-student") == "s10"
