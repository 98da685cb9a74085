"""A homework that asks to be graded anonymously (`anonymous: true` in its homework.yaml): `grade
review` shows no student id from its first start, without --anonymous; the instructor's
--no-anonymous lifts it, and their word stays over the homework's at every later start."""

from __future__ import annotations

import contextlib
import io
import json

from attngrade.cli import main as cli

from review_fixtures import ROOT, serving

HOMEWORKS = ROOT / "tests" / "data" / "homeworks"
QUIZ = HOMEWORKS / "anonymous-quiz"
STUDENTS = ("ana-lopez", "bo-chen", "cyd-okafor")


def quiet(*args: str) -> int:
    with contextlib.redirect_stdout(io.StringIO()):
        return cli(list(args))


def members(server) -> list[str]:
    status, data = server.api("/api/parts/anonymous-quiz/1a")
    assert status == 200, data
    return [m["student"] for group in data["groups"] for m in group["members"]]


def everything(server) -> str:
    """What the reading routes answer, as one text."""
    return json.dumps([server.api(path)[1] for path in ("/api/me", "/api/parts", "/api/parts/anonymous-quiz/1a",
                                                        "/api/audit?limit=1000", "/", "/part/anonymous-quiz/1a")])


def test_a_homework_that_asks_for_anonymity_is_graded_anonymously_unless_the_instructor_lifts_it(tmp_path):
    out = tmp_path / "out"
    assert quiet("run", str(HOMEWORKS / "anonymous-quiz-class"), "--homework", str(QUIZ), "-o", str(out)) == 0
    with serving(out, "--homework", str(QUIZ)) as server:
        assert server.api("/api/me")[1]["anonymous"]
        shown = members(server)
        assert len(shown) == 3 and all(s.startswith("anon-") for s in shown)
        text = everything(server)
        assert [s for s in STUDENTS if s in text] == []
    exported = tmp_path / "decisions.yaml"
    assert quiet("review", str(out), "--homework", str(QUIZ), "--export", str(exported)) == 0
    assert [s for s in STUDENTS if s in exported.read_text(encoding="utf-8")] == []
    with serving(out, "--homework", str(QUIZ), "--no-anonymous") as server:
        assert not server.api("/api/me")[1]["anonymous"]
        assert sorted(members(server)) == list(STUDENTS)
    with serving(out, "--homework", str(QUIZ)) as server:  # lifted: the homework's word does not come back
        assert not server.api("/api/me")[1]["anonymous"] and sorted(members(server)) == list(STUDENTS)


def test_started_without_its_folder_the_homework_is_graded_anonymously_and_says_why(tmp_path):
    """Whether an own homework asks for anonymity is in its folder: an app that was not given the
    folder cannot know, so it hides the ids until the instructor names the folder or lifts it."""
    out = tmp_path / "out"
    assert quiet("run", str(HOMEWORKS / "anonymous-quiz-class"), "--homework", str(QUIZ), "-o", str(out)) == 0
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        assert cli(["review", str(out), "--export", str(tmp_path / "decisions.yaml")]) == 0
    assert "anonymous-quiz: not a bundled homework, so whether it asks for anonymous grading is not known" \
           in said.getvalue()
    assert [s for s in STUDENTS if s in (tmp_path / "decisions.yaml").read_text(encoding="utf-8")] == []
    with serving(out) as server:
        assert server.api("/api/me")[1]["anonymous"]
        assert [s for s in STUDENTS if s in everything(server)] == []
