"""`grade review` over HTTP and `grade groups`: the token, the headers, the Host check, the JSON API, and
the command that prints the groups without a server."""

from __future__ import annotations

import contextlib
import http.client
import io
import json

import pytest

from attngrade.cli import main as cli

from review_fixtures import HOSTILE, HW, SAME


def raw(server, path: str, headers: dict[str, str]) -> http.client.HTTPResponse:
    host, port = server.base.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("GET", path, headers=headers)
    return conn.getresponse()


def test_the_printed_url_is_local_and_every_request_needs_its_token(server):
    assert server.url.startswith("http://127.0.0.1:") and len(server.token) >= 30
    assert server.api("/api/parts", token=False)[0] == 403
    wrong = raw(server, "/api/parts", {"X-Attngrade-Token": server.token[:-1] + "x"})
    assert wrong.status == 403
    welcome = raw(server, f"/?token={server.token}", {})
    assert welcome.status == 303 and welcome.getheader("location") == "/"
    cookie = welcome.getheader("set-cookie")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    by_cookie = raw(server, "/", {"Cookie": cookie.split(";")[0]})
    assert by_cookie.status == 200
    for response in (wrong, welcome, by_cookie):
        assert "script-src 'self'" in response.getheader("content-security-policy")
        assert response.getheader("x-content-type-options") == "nosniff"
        assert response.getheader("referrer-policy") == "no-referrer"


def test_a_foreign_host_name_is_refused_even_with_the_token(server):
    rebound = raw(server, "/api/parts", {"X-Attngrade-Token": server.token, "Host": "attacker.example:80"})
    assert rebound.status == 400


def test_a_change_needs_the_header_token_not_only_the_cookie(server):
    status, data = server.api(f"/api/parts/{HW}/1a")
    unit = data["groups"][0]["units"][0]["id"]
    host, port = server.base.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("POST", f"/api/parts/{HW}/1a/grade", body=json.dumps({"units": [unit], "op": "confirm"}),
                 headers={"Cookie": f"attngrade_{port}={server.token}", "Content-Type": "application/json"})
    assert conn.getresponse().status == 403


def test_the_api_grades_a_group_and_refuses_a_stale_comment(server):
    status, data = server.api(f"/api/parts/{HW}/1a")
    assert status == 200 and data["written"] and data["rubric"]
    shared = next(g for g in data["groups"] if g["answer"] == SAME)
    units = [u["id"] for u in shared["units"]]
    item = data["rubric"][0]
    status, done = server.api(f"/api/parts/{HW}/1a/grade", {"units": units, "op": "add", "item": item["id"]})
    assert status == 200 and done["group"]["graded"] and done["group"]["items"] == [item["id"]]
    assert [m["score"] for m in done["group"]["members"]] == [item["points"]] * 3
    assert done["progress"]["graded"] == 3
    versions = {u["id"]: u["version"] for u in done["group"]["units"]}
    assert server.api(f"/api/parts/{HW}/1a/grade", {"units": units, "op": "comment", "value": "ok",
                                                    "expected": versions})[0] == 200
    status, stale = server.api(f"/api/parts/{HW}/1a/grade", {"units": units, "op": "comment", "value": "late",
                                                             "expected": versions})
    assert status == 409 and "changed meanwhile" in stale["error"] and stale["group"]["units"][0]["comment"] == "ok"
    status, hostile = server.api(f"/api/parts/{HW}/1a?q=window.__pwned")
    assert [g["answer"] for g in hostile["groups"]] == [HOSTILE]  # JSON keeps the text as text


def test_split_and_merge_move_answers_between_groups(server):
    data = server.api(f"/api/parts/{HW}/1a")[1]
    shared = next(g for g in data["groups"] if g["answer"] == SAME)
    status, _ = server.api(f"/api/parts/{HW}/1a/split", {"unit": shared["units"][0]["id"], "student": "s01"})
    assert status == 200
    after = server.api(f"/api/parts/{HW}/1a")[1]["groups"]
    alone = [g for g in after if [m["student"] for m in g["members"]] == ["s01"]]
    rest = next(g for g in after if g["answer"] == SAME and g["size"] == 2)
    assert alone and rest
    status, _ = server.api(f"/api/parts/{HW}/1a/merge", {"groups": [alone[0]["id"], rest["id"]]})
    assert status == 200
    merged = [g for g in server.api(f"/api/parts/{HW}/1a")[1]["groups"] if g["placed"]]
    assert merged and sorted(m["student"] for m in merged[0]["members"]) == ["s00", "s01", "s02"]
    assert server.api(f"/api/parts/{HW}/1a/threshold", {"value": 2})[0] == 400


def test_grade_groups_prints_each_parts_groups_as_json(graded_out, capsys):
    _, out = graded_out
    assert cli(["groups", str(out), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert set(found) == {"1a", "1c.ii"}
    assert sum(len(g["members"]) for g in found["1c.ii"]) == 50
    shared = next(g for g in found["1a"] if g["answer"] == SAME)
    assert shared["members"] == ["s00", "s01", "s02"] and shared["size"] == 3
    assert not (out / "staff.sqlite").exists()  # printing groups leaves OUT as it was
    assert cli(["groups", str(out), "--part", "1a", "--json"]) == 0
    assert list(json.loads(capsys.readouterr().out)) == ["1a"]
    with contextlib.redirect_stderr(io.StringIO()) as err:
        assert cli(["groups", str(out), "--part", "9z"]) == 2
    assert "no part of this run waits for staff" in err.getvalue()


@pytest.mark.parametrize("host", ["127.0.0.1"])
def test_review_refuses_an_out_without_results(tmp_path, host):
    with contextlib.redirect_stderr(io.StringIO()) as err:
        assert cli(["review", str(tmp_path), "--host", host]) == 2
    assert "no results.json" in err.getvalue()


def test_grading_anonymously_the_audit_log_shows_no_student_id(server):
    assert server.api(f"/api/parts/{HW}/1a/comment", {"student": "s07", "text": "see me", "expected": 0})[0] == 200
    plain = server.api("/api/audit")[1]
    assert any(row["target"] == "student:s07" for row in plain)
    response = raw(server, "/api/audit", {"X-Attngrade-Token": server.token, "Cookie": "attngrade_anonymous=1"})
    assert response.status == 200
    anonymous = json.loads(response.read())
    assert len(anonymous) == len(plain) and not any("s07" in json.dumps(row) for row in anonymous)
    assert any(row["target"].startswith("student:anon-") for row in anonymous)
    assert server.api("/api/audit?limit=lots")[0] == 400
