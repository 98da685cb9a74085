"""Graded anonymously, no student id leaves the server: not in a page, an API answer, an audit line, a
search, an order or an export; only the instructor's command line lifts it. Graded with ids, an id
that could pass for another (invisible characters, look-alike letters) is shown with its escapes."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import subprocess
import sys

from attngrade.cli import main as cli
from attngrade.review.names import escaped

from review_fixtures import HW, ROOT, SAME, run_grade, serving

IDS = re.compile(r"\bs\d\d\b")  # the class's students are s00..s49


def every_answer(server) -> list[tuple[str, str]]:
    """(route, text) of every reading route, and of the pages."""
    paths = ["/api/me", "/api/parts", f"/api/parts/{HW}/1a", f"/api/parts/{HW}/1c.ii", f"/api/parts/{HW}/1a?q=s07",
             f"/api/parts/{HW}/1a/requests", "/api/integrity", "/api/audit?limit=10000", "/", f"/part/{HW}/1a",
             "/audit"]
    return [(p, json.dumps(server.api(p)[1])) for p in paths]


def test_graded_anonymously_no_id_leaves_the_server_and_only_the_command_line_lifts_it(graded_out, tmp_path):
    klass, out = graded_out
    requests = tmp_path / "requests.csv"
    requests.write_text("student,part,message\ns07,1a,please look again\n", encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli(["review", str(out), "--requests", str(requests)]) == 0
    with serving(out, "--anonymous") as server:
        data = server.part("1a")
        assert data["anonymous"] and server.api("/api/me")[1]["anonymous"]
        shared = next(g for g in data["groups"] if g["answer"] == SAME)
        shown = [m["student"] for m in shared["members"]]
        assert shown == sorted(shown) and all(s.startswith("anon-") for s in shown)  # ordered by pseudonym
        assert server.api(f"/api/parts/{HW}/1a?q=s01")[1]["groups"] == []  # a search never matches a hidden id
        found = server.api(f"/api/parts/{HW}/1a?q={shown[1]}")[1]["groups"]
        assert [g["id"] for g in found] == [shared["id"]]
        assert server.api(f"/api/parts/{HW}/1a/split", {"unit": shared["units"][0]["id"], "student": shown[1],
                                                       "version": data["version"]})[0] == 200
        alone = next(g for g in server.part("1a")["groups"] if [m["student"] for m in g["members"]] == [shown[1]])
        for student in ("s00", "s01", "s02"):  # its id is keyed by the store's secret, not a hash of the id
            assert hashlib.sha256(f"student:{student}".encode()).hexdigest()[:10] not in alone["id"]
        path = f"/api/parts/{HW}/1a/comment"
        assert server.api(path, {"student": shown[0], "text": "see me", "expected": 0})[0] == 200
        status, stale = server.api(path, {"student": shown[0], "text": "late", "expected": 0}, grader="bob")
        assert status == 409
        assert server.grade("1a", alone, "add", item=data["rubric"][0]["id"])[0] == 200
        assert server.grade("1a", alone, "adjust", value=1)[0] == 409  # stale: its message names no one either
        answers = every_answer(server)
        for route, text in answers + [("409", json.dumps(stale))]:
            assert IDS.findall(text) == [], route
        exported = tmp_path / "decisions.yaml"
        with contextlib.redirect_stdout(io.StringIO()):
            assert cli(["review", str(out), "--export", str(exported)]) == 0
        written = exported.read_text(encoding="utf-8")
        assert IDS.findall(written) == [] and "anon-" in written
        # no page can lift it: the instructor's command line does, and the running app follows at once
        lifted = subprocess.run([sys.executable, "-m", "attngrade", "review", str(out), "--no-anonymous", "--export",
                                 str(tmp_path / "again.yaml")], capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert lifted.returncode == 0, lifted.stderr
        assert not server.api("/api/me")[1]["anonymous"]
        assert "s01" in json.dumps(server.part("1a"))
    with contextlib.redirect_stdout(io.StringIO()):  # the pseudonymous file is taken back as the same decisions
        assert cli(["review", str(out), "--import", str(exported)]) == 0
    run_grade(klass, out)


def test_an_id_that_could_pass_for_another_is_shown_with_its_escapes(tmp_path):
    ids = ["ana", "\u0430na", "a\u200bna", "\uff53\uff10\uff17", "s07", "\u202eana", "Łukasz", "张伟"]
    klass = tmp_path / "class"
    klass.mkdir()
    for i, student in enumerate(ids):
        body = {"homework": HW, "student": student, "answers": {"1a": f"answer {i}: the score of key j must win"}}
        (klass / f"x{i}.yaml").write_text(json.dumps(body), encoding="utf-8")
    out = tmp_path / "out"
    run_grade(klass, out)
    with serving(out) as server:
        shown = sorted(m["student"] for g in server.part("1a")["groups"] for m in g["members"])
    assert shown == sorted(["ana", "\\u{0430}na", "a\\u{200b}na", "\\u{ff53}\\u{ff10}\\u{ff17}", "s07",
                            "\\u{202e}ana", "Łukasz", "张伟"])
    assert len(set(shown)) == len(ids)
    assert escaped("Андрей") == "Андрей"  # a name in one script that looks like no Latin one is itself
