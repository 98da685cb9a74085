"""Gradescope's results.json, made from attngrade's Result.

The layout follows Gradescope's autograder specification
(https://gradescope-autograders.readthedocs.io/en/latest/specs/):

* one test per machine-checked part: `name`, `number` (the part id), `score`, `max_score`,
  `status` ("passed"/"failed"), `output` (HTML), `output_format`, `visibility`;
* `max_score` of a part is its machine points (its points minus text checks), the same
  for every student; points a check left to course staff (e.g. a test-set share
  without the test gold); text-only parts get no test and count nowhere;
* a part whose checks compare with a key or with instructor gold is shown when grades
  are published (`after_published`); until then the top-level output says how those
  answers were read, the way `grade check` does, and nothing more;
* integrity flags are one hidden test for staff;
* top-level `score` is the sum of the tests' scores.

All text is HTML-escaped: answers are the student's text, and nothing a student writes
may render as markup in a student's or a grader's browser.
"""

from __future__ import annotations

import html
import traceback
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from .. import __version__
from ..checkers import REGISTRY
from ..records import CheckSpec, Homework, Part, PartPoints, Result, Status, Verdict
from ..runtime.text import counted

FORMAT = "html"
FLAGS_TEST = "Integrity flags (course staff only)"
ERROR_TEST = "Submission could not be graded"
DETAILS_TEST = "Error details (course staff only)"
# A part's test fails with these; `pending` and `unchecked` wait for course staff, which is no failure.
FAILED = (Status.INCORRECT, Status.PARTIAL, Status.INVALID, Status.MISSING, Status.ERROR)


def compares_with_secret(spec: CheckSpec, gold: Iterable[str]) -> bool:
    """The check compares with something students do not have: a key, or bundled instructor gold."""
    return REGISTRY[spec.check].needs_key or (spec.params or {}).get("gold") in set(gold)


def machine_checked(part: Part) -> bool:
    return any(spec.check != "manual" for spec in part.checks)


@dataclass
class Context:
    homework: Homework
    gold: tuple[str, ...] = ()
    visibility: Mapping[str, str] = field(default_factory=dict)
    student: str = ""
    answers_file: str = ""  # relative to the submission folder
    notes: tuple[str, ...] = ()  # about the submission as a whole, for the student


def results(result: Result, selfcheck: Result, ctx: Context, execution_time: float = 0.0) -> dict[str, Any]:
    """results.json for a graded submission.

    `selfcheck` is the same submission graded without keys or gold (what `grade check`
    shows); it is the only source of what students see of key-checked parts before
    grades are published.
    """
    verdicts = {v.part: v for v in result.parts}
    checked = {v.part: v for v in selfcheck.parts}
    tests: list[dict[str, Any]] = []
    shown_now, shown_later, text_parts, staff_rest = [], [], [], []
    for problem in ctx.homework.problems:
        for part in problem.parts:
            verdict = verdicts.get(part.id)
            if verdict is None:
                continue
            if not machine_checked(part):
                text_parts.append(part.id)
                continue
            points = verdict.points
            secret = any(compares_with_secret(s, ctx.gold) for s in part.checks if s.check != "manual")
            visibility = ctx.visibility.get("key" if secret else "property", "visible")
            (shown_later if secret else shown_now).append(part)
            if points.staff or points.text:
                staff_rest.append(part.id)
            tests.append(_part_test(part, problem.title, verdict, points, visibility))
    flags = [flag for v in result.parts for flag in v.flags]
    tests.append({
        "name": FLAGS_TEST,
        "status": "failed" if flags else "passed",
        "output": (_list_text(flags) if flags else "<p>No integrity flags.</p>"),  # flags quote student text
        "output_format": FORMAT,
        "visibility": "hidden",
    })
    score = round(sum(t.get("score", 0.0) for t in tests), 6)
    output = _summary(result, checked, ctx, shown_now, shown_later, text_parts, staff_rest)
    return {
        "score": score,
        "execution_time": round(execution_time, 3),
        "output": output,
        "output_format": FORMAT,
        "test_output_format": FORMAT,
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {"attngrade": __version__, "homework": ctx.homework.id, "student": ctx.student},
        "tests": tests,
    }


def _part_test(part: Part, title: str, verdict: Verdict, points: PartPoints, visibility: str) -> dict[str, Any]:
    machine = round(points.decided + points.staff, 6)  # a part's machine points: the same for everyone
    score = round(min(verdict.score, machine), 6)
    # points left to staff are not failed points: the test passes when all it decided was earned
    failed = verdict.status in FAILED or score < points.decided - 1e-9
    body = [f"<p><strong>{_e(verdict.status)}</strong>: {score:g} of {counted(machine, 'point')}</p>"]
    if verdict.shown:
        body.append("<p>How your answer was read:</p>")
        body.append(_list(f"{name}: <code>{_e(text)}</code>" for name, text in _escaped_keys(verdict.shown)))
    if verdict.feedback:
        body.append(_list_text(verdict.feedback))
    rest = []
    if points.staff:
        rest.append(f"{counted(points.staff, 'point')} that attngrade could not decide")
    if points.text:
        rest.append(f"{counted(points.text, 'point')} for the written answer")
    if rest:
        body.append(f"<p>Course staff grade the rest of this part: {' and '.join(rest)}.</p>")
    return {
        "name": f"{part.id}: {title}" if title else part.id,
        "number": part.id,
        "score": score,
        "max_score": machine,
        "status": "failed" if failed else "passed",
        "output": "\n".join(body),
        "output_format": FORMAT,
        "visibility": visibility,
        "tags": sorted({s.check for s in part.checks if s.check != "manual"}),
    }


def _summary(result: Result, checked: Mapping[str, Verdict], ctx: Context, shown_now: list[Part],
             shown_later: list[Part], text_parts: list[str], staff_rest: list[str]) -> str:
    hw = ctx.homework
    who = f" for {_e(ctx.student)}" if ctx.student else ""
    course = f"{hw.course}: {hw.title}" if hw.course else hw.title
    out = [f"<p>attngrade {_e(__version__)} graded <code>{_e(ctx.answers_file)}</code>{who} "
           f"({_e(course)}).</p>"]
    notes = list(result.notes) + list(ctx.notes)
    if notes:
        out.append("<p>About your submission:</p>")
        out.append(_list_text(notes))
    if shown_now:
        out.append("<p>Checked by what your answers do, with points shown now: "
                   f"{_e(', '.join(p.id for p in shown_now))}.</p>")
    if shown_later:
        ids = ", ".join(p.id for p in shown_later)
        out.append(f"<p>Compared with the answer key or with data only course staff have, with points shown "
                   f"when grades are published: {_e(ids)}. Until then, this is how those answers were read "
                   "(what <code>grade check</code> shows):</p>")
        for part in shown_later:
            verdict = checked.get(part.id)
            if verdict is None:
                continue
            out.append(f"<h4>{_e(part.id)}</h4>")
            if verdict.shown:
                out.append(_list(f"{name} read as: <code>{_e(text)}</code>"
                                 for name, text in _escaped_keys(verdict.shown)))
            if verdict.feedback:
                out.append(_list_text(verdict.feedback))
    if text_parts or staff_rest:
        pieces = []
        if text_parts:
            pieces.append(f"the written parts {', '.join(text_parts)}")
        if staff_rest:
            pieces.append(f"the rest of {', '.join(staff_rest)}")
        out.append(f"<p>Graded by course staff on Gradescope: {_e(' and '.join(pieces))}.</p>")
    return "\n".join(out)


# -- submissions that could not be graded ------------------------------------------------------
def error_results(message: str, details: str, *, execution_time: float = 0.0) -> dict[str, Any]:
    """results.json when grading failed: what to do (visible), and the details (staff only)."""
    return {
        "score": 0.0,
        "execution_time": round(execution_time, 3),
        "output": _paragraphs(message),
        "output_format": FORMAT,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {"attngrade": __version__},
        "tests": [
            {"name": ERROR_TEST, "status": "failed", "output": _paragraphs(message), "output_format": FORMAT,
             "visibility": "visible"},
            {"name": DETAILS_TEST, "status": "failed", "output": f"<pre>{_e(details)}</pre>",
             "output_format": FORMAT, "visibility": "hidden"},
        ],
    }


def details_of(err: BaseException, extra: str = "") -> str:
    text = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    return f"{extra}\n\n{text}".strip() if extra else text


# -- html ---------------------------------------------------------------------------------------
def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _escaped_keys(mapping: Mapping[str, str]) -> Iterable[tuple[str, str]]:
    return ((_e(k), v) for k, v in mapping.items())


def _list(items: Iterable[str]) -> str:
    """<ul> of items that are HTML already."""
    return "<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"


def _list_text(lines: Iterable[str]) -> str:
    """<ul> of plain lines; a line of several lines (an error with a caret) keeps its layout."""
    lines = [line.strip("\n") for line in lines]
    return _list(f"<pre>{_e(line)}</pre>" if "\n" in line else _e(line) for line in lines if line.strip())


def _paragraphs(text: str) -> str:
    return "\n".join(f"<p>{_e(p)}</p>" if "\n" not in p.strip() else f"<pre>{_e(p)}</pre>"
                     for p in text.split("\n\n") if p.strip())
