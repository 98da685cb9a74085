"""The staff grading app end to end in a real browser: headless system Chromium through Playwright,
against `grade review` running as a real server on a graded class. Every wait is for a state of the
page (a selector), never for a time."""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import threading
from pathlib import Path

import pytest

from review_fixtures import HOSTILE, HW, ROOT, SAME, run_grade, serving, write_class

VIEWPORT = {"width": 1280, "height": 900}
WAIT = 30_000  # ms: generous, for a loaded machine; every wait ends as soon as the state is there


def open_as(browser, server, grader: str, part_id: str | None = None):
    """A tab of its own (its own sessionStorage) opened from `grader`'s URL, then a part's page."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.goto(server.urls[grader])
    page.wait_for_selector("table.parts tbody tr", timeout=WAIT)
    assert "#k=" not in page.url and server.secrets[grader] not in page.url  # out of the address bar at once
    if part_id is not None:
        page.click(f'a[href="/part/{HW}/{part_id}"]')
        page.wait_for_selector("section.group.current", timeout=WAIT)
        idle(page)
    return page, problems


def idle(page) -> None:
    page.wait_for_selector("body[data-busy='0']", state="attached", timeout=WAIT)


def current(page) -> str:
    return page.locator("section.group.current").get_attribute("id")


def test_keyboard_grading_takes_two_presses_per_group_and_no_mouse(browser, server):
    page, problems = open_as(browser, server, "alice", "1c.ii")
    data = server.part("1c.ii")
    assert sum(g["size"] for g in data["groups"]) == 50
    first = data["rubric"][0]
    for _ in data["groups"]:
        page.keyboard.press("1")
        page.keyboard.press("Enter")
    page.wait_for_selector("#to-grade-count:text-is('0')", timeout=WAIT)
    for group in server.part("1c.ii")["groups"]:
        assert group["graded"] and group["items"] == [first["id"]]
        assert all(m["score"] == first["points"] for m in group["members"])
    page.click("#next-link")  # the next ungraded group of any part: 1c.ii is done, 1a is not
    page.wait_for_selector(f'#part[data-part="1a"] section.group.current', timeout=WAIT)
    assert page.url.startswith(f"{server.base}/part/{HW}/1a#g")
    assert problems == []


def test_a_rubric_item_applied_to_a_group_then_repriced_changes_every_member(browser, server, tmp_path):
    page, problems = open_as(browser, server, "alice", "1a")
    data = server.part("1a")
    shared = next(g for g in data["groups"] if g["answer"] == SAME)
    group = page.locator(f'section.group[id="{shared["id"]}"]')
    group.locator("button.item").nth(0).click()  # the mouse works too
    page.wait_for_selector(f'section.group[id="{shared["id"]}"].graded', timeout=WAIT)
    item = data["rubric"][0]
    side = page.locator(f'ol.rubric li[data-item="{item["id"]}"]')
    side.locator(".item-points").fill("1.25")
    side.locator(".item-save").click()
    page.wait_for_selector(f'section.group[id="{shared["id"]}"] [data-role="points"]:text-is("1.25")', timeout=WAIT)
    page.locator(f'section.group[id="{shared["id"]}"] details.members summary').click()
    scores = page.locator(f'section.group[id="{shared["id"]}"] [data-role="score"]').all_inner_texts()
    assert scores == ["1.25", "1.25", "1.25"]
    after = next(g for g in server.part("1a")["groups"] if g["id"] == shared["id"])
    assert [m["score"] for m in after["members"]] == [1.25, 1.25, 1.25]
    page.locator("h1").scroll_into_view_if_needed()
    shot = tmp_path / "review.png"
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 20_000
    if os.environ.get("ATTNGRADE_WRITE_SCREENSHOTS"):
        shutil.copy(shot, ROOT / "docs" / "screenshots" / "review.png")
    assert problems == []


def test_an_answer_holding_a_script_stays_inert_text(browser, server):
    page, problems = open_as(browser, server, "alice", "1a")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("section.group img").count() == 0
    assert HOSTILE in page.locator("section.group pre.answer").all_inner_texts()
    assert page.locator("script").count() == 1  # ours, from /static, and no other
    csp = page.evaluate("fetch(location.href).then(r => r.headers.get('content-security-policy'))")
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert problems == []


def test_a_comment_refused_as_stale_keeps_what_was_typed_and_saves_on_the_next_try(browser, server):
    one, _ = open_as(browser, server, "alice", "1a")
    two, _ = open_as(browser, server, "bob", "1a")
    target = current(one)
    two.locator(f'section.group[id="{target}"]').click()
    two.route("**/poll", lambda route: route.abort())  # bob's page does not hear of alice's change in time
    box = two.locator(f'section.group[id="{target}"] textarea.group-comment')
    box.fill("from bob\nsecond line")
    one.locator(f'section.group[id="{target}"] textarea.group-comment').fill("from alice")
    one.locator(f'section.group[id="{target}"] button.save-comment').click()
    idle(one)
    two.locator(f'section.group[id="{target}"] button.save-comment').click()
    two.wait_for_selector("#status.bad", timeout=WAIT)
    assert "changed meanwhile by alice" in two.locator("#status").inner_text()
    assert next(g for g in server.part("1a")["groups"] if g["id"] == target)["units"][0]["comment"] == "from alice"
    kept = two.locator(f'section.group[id="{target}"] textarea.group-comment')  # the page shows both
    assert kept.input_value() == "from bob\nsecond line" and "unsaved" in kept.get_attribute("class")
    assert "from alice" in two.locator(f'section.group[id="{target}"] .saved-now').inner_text()
    two.locator(f'section.group[id="{target}"] button.save-comment').click()  # bob saves again, knowingly
    two.wait_for_selector("#status:not(.bad)", timeout=WAIT)
    group = next(g for g in server.part("1a")["groups"] if g["id"] == target)
    assert group["units"][0]["comment"] == "from bob\nsecond line"  # multi-line


def test_no_other_server_of_the_host_gets_the_secret_and_a_second_graders_url_acts_as_that_grader(browser, server):
    host = server.base.removeprefix("http://").rsplit(":", 1)[0]
    seen: list[str] = []

    class Record(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the standard library's name
            seen.append(self.requestline + "\n" + str(self.headers))
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html><body>another server</body></html>")

        def log_message(self, *args):
            pass

    others = [http.server.HTTPServer((h, 0), Record) for h in {host, "127.0.0.1"}]
    threads = [threading.Thread(target=o.serve_forever, daemon=True) for o in others]
    for t in threads:
        t.start()
    try:
        page, _ = open_as(browser, server, "alice", "1a")
        page.keyboard.press("1")
        idle(page)
        assert page.context.cookies() == []  # nothing for any port of this host to receive
        for other in others:
            where = f"http://{other.server_address[0]}:{other.server_address[1]}"
            page.goto(where + "/x?after=staff")
            page.wait_for_selector("text=another server", timeout=WAIT)
            extra = page.context.new_page()
            extra.goto(where + "/y")
            extra.wait_for_selector("text=another server", timeout=WAIT)
        for _ in others:
            page.go_back()
        page.wait_for_selector("section.group", timeout=WAIT)  # the tab still holds the secret, not the URL
        assert server.secrets["alice"] not in page.url
    finally:
        for other in others:
            other.shutdown()
            other.server_close()
    assert len(seen) >= 4
    for request in seen:
        assert all(secret not in request for secret in server.secrets.values())
        assert "cookie" not in request.lower()
    bob, _ = open_as(browser, server, "bob", "1a")
    bob.keyboard.press("2")
    idle(bob)
    actions = [(e["who"], e["action"]) for e in server.api("/api/audit")[1] if e["action"] == "add"]
    assert ("bob", "add") in actions and ("alice", "add") in actions


def answers_300() -> list[str]:
    """Three hundred answers to 1c.ii: a few dozen things said, each in several wordings."""
    says = ["c leans to v_a when ||k_a|| > 1 and to v_b when it is below 1", "c is always the average of v_a and v_b",
            "the output flips between v_a and v_b from sample to sample", "c equals v_a because k_a is longer",
            "the weights stay at one half each whatever the norm",
            "c is a random mix that depends on the length of k_a",
            "c ignores v_b entirely", "the softmax saturates on whichever key is longer in that sample",
            "c moves toward v_b when k_a shrinks", "nothing changes since keys are orthonormal"]
    frames = ["{}.", "I think {}.", "{} in every sample.", "Because of the variance, {}.", "So {}.",
              "{}, as alpha is small."]
    extras = ["", " The mean is unchanged.", " This is due to the sampling noise.", " See part (i).", " It varies."]
    made = []
    for i in range(300):
        say, frame, extra = says[i % 10], frames[(i // 10) % 6], extras[(i // 60) % 5]
        made.append(frame.format(say) + extra + (f" Case {i}." if i % 3 == 0 else ""))
    return made


def write_team_class(folder: Path, changed: dict[int, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, text in enumerate(answers_300()):
        text = (changed or {}).get(i, text)
        body = {"homework": HW, "student": f"t{i:03d}", "answers": {"1c.ii": text}}
        (folder / f"t{i:03d}.yaml").write_text(json.dumps(body), encoding="utf-8")
    return folder


def test_three_graders_at_once_grade_every_answer_once_and_see_each_others_grades(browser, tmp_path):
    klass, out = write_team_class(tmp_path / "class"), tmp_path / "out"
    run_grade(klass, out)
    with serving(out) as server:
        names = ["alice", "bob", "Łukasz"]
        pages = {name: open_as(browser, server, name, "1c.ii")[0] for name in names}
        item = server.part("1c.ii")["rubric"][0]["id"]
        handed: dict[str, str] = {}
        rounds = 0
        while int(pages["alice"].locator("#to-grade-count").inner_text()) > 0 and rounds < 400:
            rounds += 1
            pressed = {}
            for name, page in pages.items():
                gid = current(page)
                section = page.locator(f'section.group[id="{gid}"]')
                if section.get_attribute("data-claimed-by") == name and "graded" not in section.get_attribute("class"):
                    assert handed.setdefault(gid, name) == name, f"{gid} handed to {handed[gid]} and {name}"
                    page.keyboard.press("1")
                    page.keyboard.press("Enter")
                    pressed[name] = gid
                else:
                    page.keyboard.press("n")  # ask again: a group may have come free
            for name in pressed:
                idle(pages[name])
            for name, gid in list(pressed.items())[:1 if rounds % 4 else 3]:
                for other, page in pages.items():
                    if other != name:  # the others' pages show it graded within 2 s, without a reload
                        page.wait_for_selector(f'section.group[id="{gid}"].graded', state="attached", timeout=2000)
            for page in pages.values():
                idle(page)
        final = server.part("1c.ii")
        assert final["progress"]["to_grade"] == 0 and sum(g["size"] for g in final["groups"]) == 300
        assert len(final["groups"]) >= 30  # enough groups for three graders to meet
        assert len(set(handed)) == len(final["groups"]) and len(set(handed.values())) == 3
        log = server.api("/api/audit?limit=10000")[1]
        grading = ("add", "remove", "set_items", "confirm", "unconfirm")
        graded_rows = [e for e in log if e["part"] == "1c.ii" and e["action"] in grading]
        keys = [e["target"] for e in graded_rows]
        units = {u["id"] for g in final["groups"] for u in g["units"]}
        assert len(keys) == len(set(keys)) == len(units)  # each answer graded once: no one's grade replaced
        assert all(u["items"] == [item] for g in final["groups"] for u in g["units"])
        before = {u["id"]: (u["items"], u["points"], u["version"]) for g in final["groups"] for u in g["units"]}
        # a resubmission: t007 changed their answer; the rerun puts it in a group of its own
        write_team_class(klass, changed={7: "c depends on the phase of the moon."})
        run_grade(klass, out)
        page = pages["bob"]
        page.wait_for_selector("section.group .tag.again", timeout=WAIT)
        changed = page.locator("section.group", has=page.locator(".tag.again"))
        assert changed.count() == 1 and "phase of the moon" in changed.locator("pre.answer").first.inner_text()
        assert "Graded before" in changed.inner_text()
        gid = changed.get_attribute("id")
        page.keyboard.press("n")
        page.wait_for_selector(f'section.group.current[id="{gid}"]', timeout=WAIT)
        page.keyboard.press("2")
        page.keyboard.press("Enter")
        idle(page)
        after = server.part("1c.ii")
        assert after["progress"]["to_grade"] == 0
        now = {u["id"]: (u["items"], u["points"], u["version"]) for g in after["groups"] for u in g["units"]}
        moved = [u for u in now if u not in before]
        assert len(moved) == 1 and {k: v for k, v in now.items() if k in before} == \
            {k: v for k, v in before.items() if k in now}  # no other answer's grade touched


def test_a_transcription_is_graded_by_the_parts_check_and_reaches_the_report_and_grades(browser, tmp_path):
    unreadable = "q = C (k_a + k_b) where C >> 0 ]]]"
    other = "the same as in 1a but for two keys ]]"
    extra = {"s40": {"1b": unreadable}, "s41": {"1b": unreadable}, "s42": {"1b": other}}
    klass, out = write_class(tmp_path / "class", extra=extra), tmp_path / "out"
    run_grade(klass, out)
    with serving(out) as server:
        page, problems = open_as(browser, server, "Łukasz", "1b")
        groups = server.part("1b")["groups"]
        assert sorted(g["size"] for g in groups) == [1, 2]  # identical unreadable answers: transcribed once
        two = next(g for g in groups if g["size"] == 2)
        one = next(g for g in groups if g["size"] == 1)
        assert unreadable in two["answer"]  # the reader's message quotes what the student wrote
        for group, typed in ((two, "C (k_a + k_b"), (two, "C (k_a + k_b)"), (one, "C k_a")):
            page.locator(f'section.group[id="{group["id"]}"]').click()
            page.keyboard.press("t")
            form = page.locator(f'section.group[id="{group["id"]}"] form.transcribe-form')
            form.locator("textarea").fill(typed)
            form.locator("textarea").press("Control+Enter")
            idle(page)
            if typed == "C (k_a + k_b":  # does not read: refused with the reader's own words
                assert "does not read" in form.locator(".reader").inner_text()
                form.locator("textarea").fill("")
                page.keyboard.press("Escape")
        page.wait_for_selector(f'section.group[id="{two["id"]}"].graded', timeout=WAIT)
        page.wait_for_selector(f'section.group[id="{one["id"]}"].graded', timeout=WAIT)
        shown = page.locator(f'section.group[id="{two["id"]}"] .verdict').inner_text()
        assert "correct" in shown and "4 of 4" in shown
        assert problems == [] or all("422" in p or "400" in p for p in problems)
    said = run_grade(klass, out)
    assert "applied the staff grades" in said
    results = {r["student"]: next(p for p in r["parts"] if p["id"] == "1b")
               for r in json.loads((out / "results.json").read_text(encoding="utf-8"))}
    assert (results["s40"]["score"], results["s41"]["score"], results["s42"]["score"]) == (4.0, 4.0, 0.0)
    assert results["s42"]["status"] == "incorrect"
    grades = {row.split(",")[0]: row for row in (out / "grades.csv").read_text(encoding="utf-8").splitlines()}
    header = (out / "grades.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert grades["s40"].split(",")[header.index("1b")] == "4"
    report = (out / "s40" / "report.html").read_text(encoding="utf-8")
    assert "transcribed it as" in report and "Łukasz" in report and "C (k_a + k_b)" in report
    assert "where C &gt;&gt; 0 ]]]" in report  # what the student wrote, kept
    with serving(out) as server:  # the audit log keeps each transcription
        log = server.api("/api/audit")[1]
    assert sum(e["action"] == "transcribe" for e in log) == 2


@pytest.mark.parametrize("anonymous", [True])
def test_graded_anonymously_no_page_shows_an_id(browser, graded_out, anonymous):
    _, out = graded_out
    with serving(out, "--anonymous") as server:
        page, _ = open_as(browser, server, "alice", "1a")
        page.locator("section.group.current details.members summary").click()
        shown = page.locator("main").inner_text()
        page.goto(server.base + "/audit")
        page.wait_for_selector("table.audit", timeout=WAIT)
        shown += page.locator("main").inner_text()
        page.goto(server.base + "/")
        page.wait_for_selector("table.parts tbody tr", timeout=WAIT)
        shown += page.locator("main").inner_text()
    assert re.findall(r"\bs\d\d\b", shown) == []  # the students are s00..s49
    assert "anon-" in shown
