"""Property: the key of every formula part, written with the decorations students add, reads and
grades exactly as the key.

For every part of every bundled homework whose key is a formula, the key's text is wrapped in
random combinations of what docs/normalization.md takes off or rewrites: a definition in front,
a condition or a period after, sizing and spacing macros, other brackets for its parentheses,
and Unicode. The decorated answer must read as the same value (the same sympy object, kind
and shape: so the same check task) and earn the same status and score as the key itself.

Bounded: a fixed number of examples per field, the same ones every run (derandomize);
ATTNGRADE_EXPLORE=N explores N fresh ones per field.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attngrade.grading import assignment, grade_answer
from attngrade.mathlang import Value, parse
from attngrade.problems import BUNDLED, load_homework
from attngrade.problems.keys import load_keys

ROOT = Path(__file__).resolve().parents[2]
# ATTNGRADE_EXPLORE=N explores N fresh random examples per field instead.
EXPLORE = int(os.environ.get("ATTNGRADE_EXPLORE", "0"))
EXAMPLES = settings(max_examples=EXPLORE or 4, deadline=None, derandomize=not EXPLORE, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@cache
def _assignment(homework: str):
    hw = load_homework(homework)
    return assignment(hw, load_keys(ROOT / "solutions", hw))


def _formula_fields() -> list[tuple[str, str, str]]:
    found = []
    for homework in BUNDLED.homework_ids():
        keys = load_keys(ROOT / "solutions", load_homework(homework))
        for part_id, fields in (keys.answers if keys else {}).items():
            found += [(homework, part_id, name) for name, key in fields.items() if isinstance(key, Value)]
    return found


FIELDS = _formula_fields()


def _answer(homework: str, part_id: str, field: str, text: str) -> dict:
    """The part's answer: the key in every field, `text` in `field`."""
    part = load_homework(homework).part(part_id)
    keys = _assignment(homework).keys.answers.get(part_id, {})
    out = {}
    for f in part.fields:
        key = keys.get(f.name)
        if f.name == field:
            out[f.name] = text
        elif isinstance(key, Value):
            out[f.name] = key.text
        elif key is not None:
            out[f.name] = key
        elif f.kind != "file":
            out[f.name] = "x"
    return out


# -- the decorations ----------------------------------------------------------------------------
FRONT = ["", "{field} = ", "{field}' = ", r"\hat{{y}}_{{i}} = ", "f(x, y) = ", r"\text{{ans}} := ", "{field}: ",
         r"\mathbf{{a}}_{{i,j}} \approx "]
AFTER = ["", ".", r", C \to \infty", r"\quad (C \gg 1)", r", \text{where } C \text{ is large}", ", C → ∞.",
         r"\quad\text{for large } C"]
BRACKETS = [("(", ")"), (r"\left(", r"\right)"), (r"\big(", r"\big)"), (r"\Bigl(", r"\Bigr)"), ("[", "]"),
            (r"\left[", r"\right]"), (r"\{", r"\}"), (r"\left\{", r"\right\}")]
UNICODE = [("^2", "²"), ("^T", "ᵀ"), ("beta", "β"), ("sigma", "σ"), ("phi", "φ"), (r"\|", "‖"), (r"\sqrt", "√"),
           ("^n", "ⁿ")]
SPACES = ["", r"\,", r"\;", r"\!", r"\quad"]


def _pairs(text: str) -> list[tuple[int, int]]:
    """The positions of each matching pair of parentheses."""
    stack, pairs = [], []
    for i, ch in enumerate(text):
        if ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            pairs.append((stack.pop(), i))
    return pairs


def _rebracket(text: str, choices: list[int]) -> str:
    """Each pair of parentheses replaced by the bracket `choices` names for it."""
    edits = []
    for (open_at, close_at), choice in zip(_pairs(text), choices):
        left, right = BRACKETS[choice % len(BRACKETS)]
        edits += [(open_at, left), (close_at, right)]
    out = list(text)
    for at, new in sorted(edits, reverse=True):
        out[at] = new
    return "".join(out)


@st.composite
def decorated(draw, key: str, field: str) -> str:
    text = _rebracket(key, draw(st.lists(st.integers(0, len(BRACKETS) - 1), min_size=8, max_size=8)))
    for ascii_form, uni in UNICODE:
        if draw(st.booleans()):
            text = text.replace(ascii_form, uni)
    space = draw(st.sampled_from(SPACES))
    text = re.sub(r" (?=[+-] )", lambda m: f" {space}", text) if space else text
    if draw(st.booleans()):
        text = r"\displaystyle " + text
    front = draw(st.sampled_from(FRONT)).format(field=field)
    return front + text + draw(st.sampled_from(AFTER))


@pytest.mark.parametrize("homework, part_id, field", FIELDS, ids=[f"{h}:{p}:{f}" for h, p, f in FIELDS])
def test_the_key_in_decorations_reads_and_grades_as_the_key(homework, part_id, field):
    assert FIELDS, "no formula keys found"
    key = _assignment(homework).keys.answers[part_id][field]
    table = load_homework(homework).part(part_id).table_for(field)
    plain = grade_answer(_assignment(homework), part_id, _answer(homework, part_id, field, key.text))

    @EXAMPLES
    @given(decorated(key.text, field))
    def reads_and_grades_as_the_key(text: str) -> None:
        value = parse(text, table, name=field)
        assert (value.expr, value.kind, value.shape) == (key.expr, key.kind, key.shape), text
        verdict = grade_answer(_assignment(homework), part_id, _answer(homework, part_id, field, text))
        assert (verdict.status, verdict.score) == (plain.status, plain.score), (text, verdict.feedback)

    reads_and_grades_as_the_key()
