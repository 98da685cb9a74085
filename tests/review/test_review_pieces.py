"""The review app's pieces on their own: what a request body may hold, claims handed out among graders,
graders' names and secrets, and a part's progress and reference solution as the API gives them."""

from __future__ import annotations

import json

import pytest

from attngrade import staff
from attngrade.review import classroom
from attngrade.review.inputs import BadInput, parse_body
from attngrade.staff import claims, graders

from review_fixtures import HW, run_grade, serving


@pytest.mark.parametrize("body, status", [
    (b'{"a": 1}', None), (b'{"a": NaN}', 400), (b'{"a": -Infinity}', 400), (b'{"a": 1e400}', 400), (b"[1]", 400),
    (b'{"a": "\\udc80"}', 400), (b"\xc3\x28", 400), (b"[" * 9 + b"]" * 9, 400), (b'{"a": "[[[[[[[[[[["}', None),
    (b"{" + b'"k": ' * 2, 400), (b" " * (300 * 1024), 413)])
def test_a_body_is_bounded_utf8_json_with_finite_numbers_and_unicode_text(body, status):
    if status is None:
        assert isinstance(parse_body(body, "application/json; charset=utf-8"), dict)
        return
    with pytest.raises(BadInput) as err:
        parse_body(body, "application/json")
    assert err.value.status == status
    with pytest.raises(BadInput) as err:
        parse_body(b"{}", "text/plain")
    assert err.value.status == 415


def test_claims_hand_each_grader_a_group_no_other_holds(tmp_path):
    with staff.store(tmp_path / staff.STORE, create=True) as conn:
        where, order = (HW, "1a"), ["g1", "g2", "g3"]
        assert claims.take_next(conn, where, order, "ann") == ("g1", 0)
        assert claims.take_next(conn, where, order, "ben") == ("g2", 1)
        assert claims.take_next(conn, where, order, "ann", after="g1") == ("g3", 1)  # ann's g1 is free again
        assert claims.take_next(conn, where, ["g2", "g3"], "cy") == (None, 2)  # every one is held by another
        assert claims.holders(conn, where) == {"g2": "ben", "g3": "ann"}
        assert claims.renew(conn, where, "g2", "ben") and not claims.renew(conn, where, "g2", "ann")
        claims.release(conn, where, "ben")
        assert claims.take_next(conn, where, ["g2", "g3"], "cy") == ("g2", 1)


def test_graders_names_are_any_script_and_secrets_are_kept_only_as_digests(tmp_path):
    with staff.store(tmp_path / staff.STORE, create=True) as conn:
        secret = graders.add(conn, "张伟", "instructor")
        assert graders.grader_of(conn, secret) == "张伟"
        assert secret not in (tmp_path / staff.STORE).read_bytes().decode("latin-1")
        again = graders.add(conn, "张伟", "instructor")  # a new secret ends the old one's access
        assert graders.grader_of(conn, secret) is None and graders.grader_of(conn, again) == "张伟"
        assert graders.revoke(conn, "张伟", "instructor") and graders.grader_of(conn, again) is None
        for wrong in ("", "a,b", "x\u200by", "tab\there", "n" * 61):
            with pytest.raises(ValueError):
                graders.checked_name(wrong)
        assert graders.checked_name("  Łukasz ") == "Łukasz"


def test_a_parts_progress_rounds_pending_points_and_counts_each_graders_answers():
    units = [classroom.Unit(f"u{i}", f"k{i}", f"k{i}", [f"s{i}"], {"answer": "x"}, "x", {f"s{i}": 0.0}, 2 / 3,
                            "invalid") for i in range(3)]
    part = classroom.Part(HW, "1b", {"q": "math"}, 0.0, 4.0, "", units, [classroom.Group("g", units)], 0.7, "ngrams")
    grade = staff.Grade("k0", graded=True, who="ann")
    found = classroom.State(part, [], {"k0": grade}, {})
    made = classroom.progress(found)
    assert made["pending_points"] == 1.33 and made["by_grader"] == {"ann": 1} and made["to_grade"] == 2


def test_the_reference_solution_and_the_rendered_statement_are_on_the_part_for_staff(server):
    data = server.part("1a")
    assert data["reference"]["answer"]["answer"].startswith("k_j^T q must be far larger")
    assert "k_j^T q must be much larger" in data["reference"]["rubric"]
    assert "<math" in data["statement_html"] and "<script" not in data["statement_html"]
    assert server.api(f"/api/parts/{HW}/1a", token=False)[0] == 403  # staff only


def test_a_partly_read_answer_is_transcribed_and_staff_grade_what_its_checks_leave_waiting(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    answers = {"1e.i": {"c2": "u_a ]]", "possible": "no", "why": "x2 scores itself twice"}}
    (klass / "p1.yaml").write_text(json.dumps({"homework": HW, "student": "p1", "answers": answers}), encoding="utf-8")
    out = tmp_path / "out"
    run_grade(klass, out)
    with serving(out) as server:
        group = server.part("1e.i")["groups"][0]
        unit = group["units"][0]
        assert unit["unreadable"] and unit["status"] == "partly pending"
        wrong = {"unit": unit["id"], "text": {"c2": "u_a +", "possible": "no", "why": "x2"}, "expected": 0}
        status, said = server.api(f"/api/parts/{HW}/1e.i/transcribe", wrong)
        assert status == 422 and "does not read" in said["error"]
        right = {**wrong, "text": {"c2": "u_a", "possible": "no", "why": "x2 scores itself twice"}}
        status, done = server.api(f"/api/parts/{HW}/1e.i/transcribe", right)
        assert status == 200 and done["verdict"]["pending_points"] == 1.0  # the written field still waits
        assert not done["group"]["graded"] and done["progress"]["pending_points"] == 1.0
        status, graded = server.grade("1e.i", done["group"], "adjust", value=1)
        assert status == 200 and graded["group"]["graded"] and graded["group"]["members"][0]["score"] == 3.0
    run_grade(klass, out)
    part = next(p for p in json.loads((out / "results.json").read_text(encoding="utf-8"))[0]["parts"]
                if p["id"] == "1e.i")
    assert (part["score"], part["pending_points"]) == (3.0, 0.0)
    assert any("transcribed it as: c2: u_a" in line for line in part["feedback"])
