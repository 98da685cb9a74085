"""Regrade requests: taken in from an LMS's CSV or a YAML list (all or none, once each), answered in the
app with a grade and a reply, and the reply in the student's report, the audit log and `grade export`."""

from __future__ import annotations

import contextlib
import csv
import io
import json

from attngrade.cli import main as cli

from review_fixtures import HW, run_grade, serving, write_class

REQUESTS = ('SID,Question,Request\n'
            's05,"1a: Attention can copy","I said the same as the solution, please look again"\n'
            's06,1c.ii,"Why only 1 point?"\n'
            's08,1b,"Is C(k_a + k_b) not enough?"\n')


def quiet(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_requests_are_imported_answered_and_reach_the_report_the_audit_log_and_the_export(tmp_path):
    klass = write_class(tmp_path / "class", extra={"s08": {"1b": "C (k_a + k_b)"}})
    out = tmp_path / "out"
    run_grade(klass, out)
    wrong = tmp_path / "wrong.csv"
    wrong.write_text(REQUESTS + 's99,1a,"who am I"\ns05,9z,"no such part"\n', encoding="utf-8")
    code, _, err = quiet("review", str(out), "--requests", str(wrong))
    assert code == 2 and "no student 's99'" in err and "no part '9z'" in err and "nothing was imported" in err
    given = tmp_path / "requests.csv"
    given.write_text(REQUESTS, encoding="utf-8")
    code, said, _ = quiet("review", str(out), "--requests", str(given))
    assert code == 0 and "imported 3 regrade requests" in said
    code, said, _ = quiet("review", str(out), "--requests", str(given))
    assert "imported 0 regrade requests; 3 requests already there" in said
    with serving(out) as server:
        parts = {p["part"]: p for p in server.api("/api/parts")[1]}
        assert [parts[p]["requests_open"] for p in ("1a", "1c.ii", "1b")] == [1, 1, 1]
        queue = server.api(f"/api/parts/{HW}/1a/requests")[1]
        asked = queue["requests"][0]
        assert asked["student"] == "s05" and "look again" in asked["message"]
        assert asked["grade"]["staff"] is None and asked["answer"]["answer"].startswith("q lines up")
        item = queue["rubric"][0]
        body = {"reply": "You are right: the first item holds.", "expected": asked["version"],
                "grade": {"items": [item["id"]], "adjust": 0, "expected": asked["own"]["version"]}}
        status, done = server.api(f"/api/requests/{asked['id']}/reply", body, grader="bob")
        assert status == 200 and done["request"]["answered"] and done["request"]["by"] == "bob"
        assert server.api(f"/api/requests/{asked['id']}/reply", body)[0] == 409  # answered meanwhile
        again = server.api(f"/api/parts/{HW}/1a/requests")[1]["requests"][0]
        assert again["grade"]["staff"] == item["points"]
        assert any(h["action"] == "regrade reply" for h in again["history"])
        machine = server.api(f"/api/parts/{HW}/1b/requests")[1]["requests"][0]
        assert machine["grade"]["machine"] == 4.0 and machine["grade"]["cap"] == 0.0  # full marks: a reply only
        status, _ = server.api(f"/api/requests/{machine['id']}/reply", {"reply": "Yes: it earned every point.",
                                                                         "expected": machine["version"]})
        assert status == 200
        log = server.api("/api/audit")[1]
    assert sum(e["action"] == "regrade reply" for e in log) == 2 and {e["who"] for e in log} >= {"bob"}
    run_grade(klass, out)
    report = (out / "s05" / "report.html").read_text(encoding="utf-8")
    assert "regrade request: You are right: the first item holds." in report
    assert "regrade request: Yes: it earned every point." in (out / "s08" / "report.html").read_text(encoding="utf-8")
    results = {r["student"]: r for r in json.loads((out / "results.json").read_text(encoding="utf-8"))}
    assert next(p for p in results["s05"]["parts"] if p["id"] == "1a")["score"] == item["points"]
    assert next(p for p in results["s08"]["parts"] if p["id"] == "1b")["score"] == 4.0
    code, said, _ = quiet("export", str(out), "--format", "canvas")
    assert code == 0 and "2 answered regrade requests" in said and "export-cs224n-w21-a5-canvas.csv" in said
    rows = list(csv.DictReader((out / f"requests-{HW}.csv").open(encoding="utf-8")))
    assert [(r["student"], r["part"], r["answered by"]) for r in rows] == [("s05", "1a", "bob"), ("s08", "1b", "alice")]
    assert rows[0]["reply"] == "You are right: the first item holds." and rows[0]["score"] == str(item["points"])


def test_a_yaml_list_of_requests_is_taken_in_too(graded_out, tmp_path):
    _, out = graded_out
    given = tmp_path / "requests.yaml"
    given.write_text("requests:\n- {student: s10, part: 1c.ii, message: 'Please regrade:\n\n  two lines'}\n",
                     encoding="utf-8")
    code, said, _ = quiet("review", str(out), "--requests", str(given))
    assert code == 0 and "imported 1 regrade request" in said
    not_yaml = tmp_path / "broken.yaml"
    not_yaml.write_text("requests: [\n", encoding="utf-8")
    code, _, err = quiet("review", str(out), "--requests", str(not_yaml))
    assert code == 2 and "not valid YAML" in err


def test_a_request_is_answered_on_its_part_queue_in_the_browser(browser, graded_out, tmp_path):
    _, out = graded_out
    given = tmp_path / "requests.csv"
    given.write_text("student,part,message\ns05,1a,\"Please look again:\nI named both keys.\"\n", encoding="utf-8")
    assert quiet("review", str(out), "--requests", str(given))[0] == 0
    with serving(out) as server:
        page = browser.new_context().new_page()
        page.goto(server.urls["bob"])
        page.wait_for_selector("table.parts tbody tr", timeout=30_000)
        page.click(f'a[href="/requests/{HW}/1a"]')
        request = page.locator("section.request")
        request.wait_for(timeout=30_000)
        assert "I named both keys." in request.locator("blockquote.message").inner_text()
        assert "q lines up" in request.locator("pre.answer").inner_text()
        request.locator("button.item").first.click()
        request.locator("textarea.reply").fill("Right: the first item was missing.\nFixed.")
        request.locator("button.save").click()
        page.wait_for_selector("#status:text-is('saved')", timeout=30_000)
        asked = server.api(f"/api/parts/{HW}/1a/requests")[1]
    first = asked["rubric"][0]
    done = asked["requests"][0]
    assert done["by"] == "bob" and done["reply"] == "Right: the first item was missing.\nFixed."
    assert done["grade"]["items"] == [first["id"]] and done["grade"]["staff"] == first["points"]
