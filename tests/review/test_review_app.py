"""`grade review` over HTTP and `grade groups`: graders' secrets, the address, the headers, the Host
check, the JSON API with versions and claims, and the command that prints the groups without a server."""

from __future__ import annotations

import contextlib
import http.client
import io
import ipaddress
import json
import subprocess
import sys

import pytest

from attngrade.cli import main as cli

from review_fixtures import HOSTILE, HW, ROOT, SAME


def raw(server, path: str, headers: dict[str, str], method: str = "GET", body: bytes | None = None):
    host, port = server.base.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    response.data = response.read()
    return response


def test_each_grader_has_a_url_of_their_own_on_a_loopback_address_of_the_run_with_the_secret_in_its_fragment(server):
    assert set(server.urls) == {"alice", "bob", "Łukasz"}
    host = server.base.removeprefix("http://").rsplit(":", 1)[0]
    assert ipaddress.ip_address(host).is_loopback
    for name, url in server.urls.items():
        assert url.startswith(server.base + "/#k=") and len(server.secrets[name]) >= 40
    assert len(set(server.secrets.values())) == 3
    for name in server.urls:  # a name in any script: the secret names the grader, no header carries the name
        status, me = server.api("/api/me", grader=name)
        assert status == 200 and me["grader"] == name
    assert server.api("/api/parts", token=False)[0] == 403
    assert raw(server, "/api/parts", {"X-Attngrade-Token": server.token[:-1] + "x"}).status == 403


def test_pages_are_shells_without_data_and_nothing_ever_sets_a_cookie(server):
    page = raw(server, "/", {})
    assert page.status == 200 and b"/static/review.js" in page.data
    for student in ("s00", "s07", SAME.encode()[:20].decode()):
        assert student.encode() not in page.data
    assert server.token.encode() not in page.data
    for path, headers in [("/", {}), (f"/part/{HW}/1a", {}), ("/api/parts", {"X-Attngrade-Token": server.token}),
                          (f"/?token={server.token}", {})]:
        response = raw(server, path, headers)
        assert response.getheader("set-cookie") is None
        assert "script-src 'self'" in response.getheader("content-security-policy")
        assert response.getheader("x-content-type-options") == "nosniff"
        assert response.getheader("referrer-policy") == "no-referrer"


def test_a_foreign_host_name_or_origin_is_refused_even_with_the_secret(server):
    rebound = raw(server, "/api/parts", {"X-Attngrade-Token": server.token, "Host": "attacker.example:80"})
    assert rebound.status == 400
    other = raw(server, "/api/parts", {"X-Attngrade-Token": server.token, "Origin": "http://127.0.0.1:9999"})
    assert other.status == 403


def test_no_state_changes_without_the_secret_in_a_header_and_a_post(server):
    data = server.part("1a")
    group = data["groups"][0]
    host, port = server.base.removeprefix("http://").rsplit(":", 1)
    body = json.dumps({"units": [u["id"] for u in group["units"]], "op": "confirm",
                       "expected": {u["id"]: u["version"] for u in group["units"]}}).encode()
    path = f"/api/parts/{HW}/1a/grade"
    # a cookie or a query string never stands for the secret
    assert raw(server, path, {"Cookie": f"attngrade_{port}={server.token}", "Content-Type": "application/json"},
               "POST", body).status == 403
    in_query = raw(server, path + f"?token={server.token}", {"Content-Type": "application/json"}, "POST", body)
    assert in_query.status == 403
    # a GET changes nothing: the old preferences route is gone, a change route answers only POST
    assert raw(server, "/prefs?anonymous=0", {}).status == 404
    assert raw(server, path, {"X-Attngrade-Token": server.token}).status == 405
    # a form a page of another site could post is not JSON
    assert raw(server, path, {"X-Attngrade-Token": server.token, "Content-Type": "text/plain"}, "POST",
               body).status == 415
    assert not any(g["graded"] for g in server.part("1a")["groups"])


def test_the_audit_log_names_the_grader_whose_secret_made_each_change(server):
    shared = next(g for g in server.part("1a")["groups"] if g["answer"] == SAME)
    item = server.part("1a")["rubric"][0]["id"]
    assert server.grade("1a", shared, "add", grader="bob", item=item)[0] == 200
    fresh = next(g for g in server.part("1a")["groups"] if g["answer"] == SAME)
    assert server.grade("1a", fresh, "adjust", grader="Łukasz", value=-0.5)[0] == 200
    log = server.api("/api/audit")[1]
    assert [(e["who"], e["action"]) for e in log if e["action"] in ("add", "adjust")] == [("Łukasz", "adjust"),
                                                                                        ("bob", "add")]
    assert server.api("/api/parts")[1][0]["by_grader"] == {"Łukasz": 3}


def test_a_grader_added_while_the_app_runs_is_let_in_and_one_revoked_is_shut_out_at_once(server, graded_out):
    _, out = graded_out
    added = subprocess.run([sys.executable, "-m", "attngrade", "review", str(out), "--add-grader", "Zoë"],
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert added.returncode == 0, added.stderr
    url = added.stdout.strip().split("Zoë: ", 1)[1]
    assert url.startswith(server.base + "/#k=")
    server.secrets["Zoë"] = url.split("#k=")[1]
    assert server.api("/api/me", grader="Zoë")[1]["grader"] == "Zoë"
    assert server.api("/api/me", grader="bob")[0] == 200
    revoked = subprocess.run([sys.executable, "-m", "attngrade", "review", str(out), "--revoke-grader", "bob"],
                             capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert revoked.returncode == 0 and "bob: access ended" in revoked.stdout
    assert server.api("/api/me", grader="bob")[0] == 403
    assert server.api("/api/me", grader="alice")[0] == 200
    log = server.api("/api/audit")[1]
    assert {"add grader", "revoke grader"} <= {e["action"] for e in log}


def test_every_change_carries_the_versions_it_saw_and_a_stale_one_is_refused_with_the_current_state(server):
    data = server.part("1a")
    shared = next(g for g in data["groups"] if g["answer"] == SAME)
    first, second = data["rubric"][0], data["rubric"][1]
    units = [u["id"] for u in shared["units"]]
    assert server.api(f"/api/parts/{HW}/1a/grade", {"units": units, "op": "add", "item": first["id"]})[0] == 400
    status, done = server.grade("1a", shared, "add", item=first["id"])
    assert status == 200 and done["group"]["graded"] and done["group"]["items"] == [first["id"]]
    assert [m["score"] for m in done["group"]["members"]] == [first["points"]] * 3
    assert done["progress"]["graded"] == 3
    # bob's page still shows the group as it was: his `a` (set items) or key cannot replace alice's item unseen
    status, stale = server.grade("1a", shared, "set_items", grader="bob", items=[second["id"]])
    assert status == 409 and "changed meanwhile by alice" in stale["error"]
    assert stale["group"]["items"] == [first["id"]]
    status, stale = server.grade("1a", shared, "comment", grader="bob", value="late")
    assert status == 409 and stale["group"]["units"][0]["comment"] == ""
    # from the state the 409 showed, the same change goes through
    assert server.grade("1a", stale["group"], "comment", grader="bob", value="late")[0] == 200
    status, hostile = server.api(f"/api/parts/{HW}/1a?q=window.__pwned")
    assert [g["answer"] for g in hostile["groups"]] == [HOSTILE]  # JSON keeps the text as text


def test_next_hands_two_graders_different_groups_and_none_held_by_another(server):
    order = [g["id"] for g in server.part("1a")["groups"]]
    handed = {}
    for name in ("alice", "bob", "Łukasz"):
        status, got = server.api(f"/api/parts/{HW}/1a/next", {}, grader=name)
        assert status == 200
        handed[name] = got["group"]
    assert sorted(handed.values()) == sorted(order)  # three groups, three graders, no group twice
    status, fourth = server.api(f"/api/parts/{HW}/1a/next", {"after": handed["alice"]}, grader="alice")
    assert fourth["group"] == handed["alice"] and fourth["held_by_others"] == 2  # the rest are others'
    part = server.part("1a")
    assert {g["id"]: g["claimed_by"] for g in part["groups"]} == {gid: who for who, gid in handed.items()}
    assert server.api(f"/api/parts/{HW}/1a/leave", {}, grader="bob")[0] == 200
    status, freed = server.api(f"/api/parts/{HW}/1a/next", {"after": handed["alice"]}, grader="alice")
    assert freed["group"] == handed["bob"]


def test_a_key_on_a_group_whose_answers_disagree_never_takes_an_item_from_a_graded_one(server):
    data = server.part("1a")
    rubric = [i["id"] for i in data["rubric"]]
    shared = next(g for g in data["groups"] if g["answer"] == SAME)
    other = next(g for g in data["groups"] if g["id"] != shared["id"] and g["answer"] != HOSTILE)
    assert server.grade("1a", shared, "add", item=rubric[0])[0] == 200  # 3 students: +item 1, graded
    assert server.api(f"/api/parts/{HW}/1a/merge", {"groups": [shared["id"], other["id"]],
                                                   "version": server.part("1a")["version"]})[0] == 200
    merged = next(g for g in server.part("1a")["groups"] if g["placed"])
    assert merged["mixed"] and not merged["graded"]
    # pressing item 1's key on the mixed group: the ungraded answers get it, the graded keep theirs
    status, done = server.grade("1a", merged, "add", item=rubric[1])
    assert status == 200
    by_unit = {u["id"]: u for u in done["group"]["units"]}
    graded_before = {u["id"] for u in merged["units"] if u["graded"]}
    assert all(by_unit[u]["items"] == [rubric[0]] for u in graded_before)
    assert all(by_unit[u]["items"] == [rubric[1]] for u in by_unit if u not in graded_before)
    # all graded now, differently: a key asks first (409), and does it for all only when told
    status, asked = server.grade("1a", done["group"], "remove", item=rubric[0])
    assert status == 409 and asked["disagree"] and "graded differently" in asked["error"]
    status, forced = server.grade("1a", asked["group"], "add", item=rubric[2], every=True)
    assert status == 200 and all(rubric[2] in u["items"] for u in forced["group"]["units"])


def test_split_and_merge_carry_the_grouping_they_saw(server):
    data = server.part("1a")
    shared = next(g for g in data["groups"] if g["answer"] == SAME)
    split = {"unit": shared["units"][0]["id"], "student": "s01"}
    assert server.api(f"/api/parts/{HW}/1a/split", split)[0] == 400  # no version: which grouping was seen?
    assert server.api(f"/api/parts/{HW}/1a/split", {**split, "version": "0" * 16})[0] == 409
    assert server.api(f"/api/parts/{HW}/1a/split", {**split, "version": data["version"]})[0] == 200
    after = server.part("1a")
    alone = [g for g in after["groups"] if [m["student"] for m in g["members"]] == ["s01"]]
    rest = next(g for g in after["groups"] if g["answer"] == SAME and g["size"] == 2)
    assert alone and rest and after["version"] != data["version"]
    status, _ = server.api(f"/api/parts/{HW}/1a/merge", {"groups": [alone[0]["id"], rest["id"]],
                                                        "version": after["version"]})
    assert status == 200
    merged = [g for g in server.part("1a")["groups"] if g["placed"]]
    assert merged and sorted(m["student"] for m in merged[0]["members"]) == ["s00", "s01", "s02"]
    now = server.part("1a")["version"]
    assert server.api(f"/api/parts/{HW}/1a/threshold", {"value": 2, "version": now})[0] == 400
    assert server.api(f"/api/parts/{HW}/1a/threshold", {"value": 0.9, "version": data["version"]})[0] == 409
    assert server.api(f"/api/parts/{HW}/1a/threshold", {"value": 0.9, "version": now})[0] == 200
    log = json.dumps(server.api("/api/audit")[1])
    assert "alone:student:s01" not in log  # a split's label is keyed, never the id


def test_a_student_comment_refused_as_stale_can_be_saved_again_from_what_the_refusal_showed(server):
    path = f"/api/parts/{HW}/1a/comment"
    assert server.api(path, {"student": "s07", "text": "first", "expected": 0})[1] == {"version": 1}
    status, stale = server.api(path, {"student": "s07", "text": "second", "expected": 0}, grader="bob")
    assert status == 409 and stale["current"] == {"comment": "first", "version": 1}
    assert "s07" not in stale["error"]
    assert server.api(path, {"student": "s07", "text": "second", "expected": 1}, grader="bob")[1] == {"version": 2}


def test_grade_groups_prints_each_parts_groups_as_json_and_never_writes_to_out(graded_out, capsys):
    _, out = graded_out
    assert cli(["groups", str(out), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert set(found) == {"1a", "1c.ii"}
    assert sum(len(g["members"]) for g in found["1c.ii"]) == 50
    shared = next(g for g in found["1a"] if g["answer"] == SAME)
    assert shared["members"] == ["s00", "s01", "s02"] and shared["size"] == 3
    assert not (out / "staff.sqlite").exists()  # printing groups leaves OUT as it was
    assert cli(["review", str(out), "--export", str(out.parent / "none.yaml")]) == 0  # makes the store
    capsys.readouterr()
    store = out / "staff.sqlite"
    before = (store.read_bytes(), store.stat().st_mtime_ns, sorted(p.name for p in out.iterdir()))
    assert cli(["groups", str(out), "--part", "1a", "--json"]) == 0
    assert list(json.loads(capsys.readouterr().out)) == ["1a"]
    assert (store.read_bytes(), store.stat().st_mtime_ns, sorted(p.name for p in out.iterdir())) == before
    with contextlib.redirect_stderr(io.StringIO()) as err:
        assert cli(["groups", str(out), "--part", "9z"]) == 2
    assert "no part of this run waits for staff" in err.getvalue()


@pytest.mark.parametrize("host", [None, "127.0.0.1"])
def test_review_refuses_an_out_without_results(tmp_path, host):
    with contextlib.redirect_stderr(io.StringIO()) as err:
        assert cli(["review", str(tmp_path)] + (["--host", host] if host else [])) == 2
    assert "no results.json" in err.getvalue()
