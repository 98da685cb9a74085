"""Every route of `grade review` fed what it does not take: wrong shapes and types, numbers JSON does
not allow, bytes that are not UTF-8, deep nesting, lone surrogates, bodies, paths and queries too
large. Each answers a 4xx saying what was wrong (never a 500), and nothing stored then keeps any
route from answering afterwards."""

from __future__ import annotations

import http.client
import json

import pytest

from review_fixtures import HW

POSTS = ["grade", "rubric", "split", "merge", "threshold", "comment", "next", "poll", "transcribe", "leave"]
GETS = ["/api/me", "/api/parts", f"/api/parts/{HW}/1a", f"/api/parts/{HW}/1a/requests", "/api/integrity",
        "/api/audit"]
PAGES = ["/", "/next", "/audit", f"/part/{HW}/1a", f"/requests/{HW}/1a", "/static/review.js", "/favicon.ico"]


def send(server, method: str, path: str, body: bytes | None = None, content_type: str = "application/json",
         token: bool = True) -> tuple[int, bytes]:
    host, port = server.base.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    headers = {"Content-Type": content_type}
    if token:
        headers["X-Attngrade-Token"] = server.token
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    return response.status, response.read()


def bodies(part: dict) -> list[bytes]:
    """Bodies no route takes, and some that look nearly right."""
    group = part["groups"][0]
    unit = group["units"][0]["id"]
    near = {"units": [unit], "expected": {unit: 0}, "op": "adjust"}
    deep = b"[" * 5000 + b"]" * 5000
    made = [b"", b"null", b"[]", b'"text"', b"42", b"{", b"{\"a\": }", b"\xff\xfe\x00",
            "{\"text\": \"é\"}".encode("latin-1"),
            b'{"value": NaN}', b'{"value": Infinity}', b'{"value": -Infinity}', b'{"value": 1e999}',
            b'{"value": ' + b"9" * 5000 + b"}", b'{"units": "' + b"\\ud800" + b'"}', deep,
            b'{"a": ' * 30 + b"1" + b"}" * 30, b'{"x": "' + b"y" * (300 * 1024) + b'"}']
    shaped = [
        {**near, "value": "lots"}, {**near, "value": True}, {**near, "value": None}, {**near, "value": [1]},
        {**near, "value": 1e308}, {**near, "units": unit}, {**near, "units": [5]}, {**near, "units": []},
        {**near, "units": [{"id": unit}]}, {**near, "expected": [0]}, {**near, "expected": {unit: "0"}},
        {**near, "expected": {unit: True}}, {**near, "op": 7}, {**near, "op": "drop_table"},
        {**near, "op": "add"}, {**near, "op": "add", "item": "1"}, {**near, "op": "add", "item": 10**30},
        {**near, "op": "set_items", "items": "1,2"}, {**near, "op": "set_items", "items": [True]},
        {**near, "op": "comment", "value": {"nested": 1}}, {**near, "op": "comment", "value": "\ud800"},
        {**near, "every": "yes"}, {"points": "two", "text": "x"}, {"points": 1e999, "text": "x"},
        {"points": 1, "text": 5}, {"points": 1}, {"id": "1", "version": 1}, {"id": 10**6, "version": 1, "points": 1},
        {"id": True, "version": 1}, {"unit": 5, "version": part["version"]}, {"unit": unit},
        {"unit": unit, "version": part["version"], "student": ["s01"]}, {"groups": "g1", "version": part["version"]},
        {"groups": [group["id"]], "version": part["version"]}, {"groups": [1, 2], "version": part["version"]},
        {"value": "0.5"}, {"value": -1}, {"student": 5, "text": "x", "expected": 0},
        {"student": "s01", "text": ["x"], "expected": 0}, {"student": "s01", "text": "x", "expected": "0"},
        {"student": "s01", "text": "x" * 50_000, "expected": 0}, {"since": "0"}, {"since": -5, "focus": 5},
        {"since": 0, "version": ["v"]}, {"after": 5}, {"unit": unit, "text": "C k_a", "expected": 0},
        {"unit": unit, "text": {"answer": 5}, "expected": 0}, {"unit": unit, "text": {}, "expected": 0},
        {"reply": 5, "expected": 0}, {"reply": "ok", "expected": 0, "grade": {"items": "x", "adjust": 1}},
        {"reply": "ok", "expected": 0, "grade": [1]}]
    return made + [json.dumps(s).encode() for s in shaped]


def test_no_request_gets_a_500_and_every_route_answers_afterwards(server):
    part = server.part("1a")
    statuses: dict[int, int] = {}
    routes = [f"/api/parts/{HW}/1a/{name}" for name in POSTS] + ["/api/next", "/api/requests/1/reply"]
    for route in routes:
        for body in bodies(part):
            status, text = send(server, "POST", route, body)
            statuses[status] = statuses.get(status, 0) + 1
            assert status < 500, (route, body[:80], text[:300])
            if 400 <= status < 500 and status != 404:
                assert text and (b"error" in text or text.startswith(b"4")), (route, body[:80])
        for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
            assert send(server, "POST", route, b"a=1", content_type)[0] == 415
    assert statuses.get(200, 0) < sum(statuses.values()) / 4  # nearly everything above is refused
    odd = ["?limit=-1", "?limit=lots", "?limit=" + "9" * 40, "?q=" + "x" * 3000, "?q=%ff%fe", "?since=x&since=y",
           "?q=%00", "?limit=1e3"]
    for route in GETS:
        for query in odd:
            status, text = send(server, "GET", route + query)
            assert status < 500, (route, query, text[:300])
    for path in ["/api/parts/%ED%A0%80/1a", "/part/%ff/%fe", "/api/parts/" + "x" * 3000 + "/1a",
                 "/static/..%2f..%2fetc",
                 "/api/parts/nohw/nopart", f"/api/parts/{HW}/1a/requests/extra", "/api/requests/abc/reply",
                 "/api/requests/99999999999999999999/reply", "/%7f%00"]:
        for method in ("GET", "POST"):
            status, text = send(server, method, path, b"{}")
            assert status < 500, (method, path, text[:300])
    for method in ("PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"):
        assert send(server, method, f"/api/parts/{HW}/1a/grade", b"{}")[0] == 405
    for route in GETS + PAGES:
        status, text = send(server, "GET", route)
        assert status in (200, 204), (route, text[:300])
        if route.startswith("/api/"):
            json.loads(text)  # what was stored meanwhile can still be served


@pytest.mark.parametrize("value", [1e308, -1e308, 1e6 + 1])
def test_an_adjustment_or_item_points_beyond_any_grade_is_refused(server, value):
    part = server.part("1a")
    group = part["groups"][0]
    status, said = server.grade("1a", group, "adjust", value=value)
    assert status == 400 and "finite number of points" in said["error"]
    status, said = server.api(f"/api/parts/{HW}/1a/rubric", {"points": value, "text": "huge"})
    assert status == 400
    assert server.api(f"/api/parts/{HW}/1a")[0] == 200
