"""Words are decided only when sure: no accepted phrasing earns the point once it is denied or joined
by a second answer.

For every choice and yes/no field of every bundled homework, each phrasing the reader accepts as an
option (the option itself, its synonyms, the bare answer words) is taken, and hypothesis appends to it
a negation, a second option, a contrast or a hedge. The machine must then read something other than
that option (another option, or nothing: the answer goes to course staff), never the option itself.
"""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attngrade.problems import homework_ids, load_homework
from attngrade.reading import FieldError, read_field

_YES_WORDS = ("yes", "true", "possible", "it is possible", "correct")
_NO_WORDS = ("no", "false", "impossible", "it is not possible", "incorrect")

# What is appended to an accepted phrasing `{p}` (with `{q}`, a phrasing of another answer).
DENIALS = ("not {p}", "it is not {p}", "never {p}", "{p} is wrong", "{p}, not {p}", "{p}? No, not {p}",
           "rather than {p}", "{p} is incorrect", "it is not true that {p}", "I do not think that {p}",
           "nobody would say that {p}", "it is not true under the assumptions we were given in lecture that {p}")
SECOND = ("{p} or {q}", "{p} and {q}", "{p}, but also {q}", "not only {p} but {q}", "{p}, {q}", "{q} and {p}",
          "both {p} and {q}", "{p} as well as {q}", "either {p} or {q}")
HEDGES = ("maybe {p}", "{p}, perhaps", "possibly {p}, it depends", "{p}, unless {q}")


@cache
def _fields() -> list[tuple[str, str, str]]:
    """(homework, part, field) of every choice and yes/no field in the bank."""
    found = []
    for homework in homework_ids():
        for part in load_homework(homework).parts:
            found += [(homework, part.id, f.name) for f in part.fields if f.kind in ("choice", "bool")]
    return found


@cache
def _accepted(homework: str, part_id: str, name: str) -> list[tuple[str, object, tuple[str, ...]]]:
    """(phrasing, what it reads as, phrasings of the other answers) for every accepted phrasing."""
    part = load_homework(homework).part(part_id)
    field = part.field(name)
    if field.kind == "bool":
        groups = {True: (*_YES_WORDS, *field.options.get("yes", ())), False: (*_NO_WORDS, *field.options.get("no", ()))}
    else:
        groups = {option: (option, *synonyms) for option, synonyms in field.options.items()}
    out = []
    for value, phrasings in groups.items():
        others = tuple(p for other, ps in groups.items() if other != value for p in ps)
        for phrasing in phrasings:
            if _read(part, field, phrasing) == value:
                out.append((phrasing, value, others))
    return out


def _read(part, field, text):
    try:
        return read_field(part, field, text)
    except FieldError:
        return None


def test_the_bank_has_choice_and_yes_no_fields_with_accepted_phrasings():
    assert len(_fields()) >= 10
    for key in _fields():
        assert _accepted(*key), key


# Words around the answer that change nothing: the property must hold with them too.
FRAMES = ("{t}", "I think {t}", "The answer is {t}.", "{t}!", "so: {t}", "In short, {t}")


def test_every_denied_or_doubled_phrasing_of_the_bank_is_refused():
    """All of them, each template with each other answer (tens of thousands of readings, seconds)."""
    wrong = []
    for homework, part_id, name in _fields():
        part = load_homework(homework).part(part_id)
        for phrasing, value, others in _accepted(homework, part_id, name):
            for template in DENIALS + SECOND + HEDGES:
                for other in (others if "{q}" in template else (phrasing,)):
                    text = template.format(p=phrasing, q=other)
                    if _read(part, part.field(name), text) == value:
                        wrong.append(f"{homework} {part_id}.{name}: {text!r}")
    assert wrong == []


@settings(max_examples=1500, deadline=None)
@given(data=st.data())
def test_a_denied_or_doubled_phrasing_never_earns_the_point(data):
    homework, part_id, name = data.draw(st.sampled_from(_fields()))
    phrasing, value, others = data.draw(st.sampled_from(_accepted(homework, part_id, name)))
    template = data.draw(st.sampled_from(DENIALS + SECOND + HEDGES))
    other = data.draw(st.sampled_from(others)) if others else phrasing
    text = data.draw(st.sampled_from(FRAMES)).format(t=template.format(p=phrasing, q=other))
    part = load_homework(homework).part(part_id)
    got = _read(part, part.field(name), text)
    assert got != value, f"{homework} {part_id}.{name}: {text!r} was read as {got!r}"


@pytest.mark.parametrize("text", ["The second student is right, and it is useful", "the student is wrong, not useful"])
def test_a_referent_and_the_answer_saying_two_things_go_to_staff(text):
    part = load_homework("eecs182-sp23-transformers").part("h")
    assert _read(part, part.field("useful"), text) is None


@pytest.mark.parametrize("text, reading", [
    ("They can differ.", False), ("They do not have to match", False), ("No, they need not be the same.", False),
    ("The dimensions can be different because W_k maps them", False), ("They must have the same dimension", True),
    ("It is not true that they can differ", None), ("Yes, they can differ", None), ("They can not differ", None),
    ("Nothing is required beyond matching dimensions", None),
    ("It is not true under the assumptions we were given in lecture that they can differ", None)])
def test_a_part_s_own_phrases_answer_yes_or_no_and_a_denial_far_before_them_goes_to_staff(text, reading):
    part = load_homework("eecs182-fa22-hw8").part("1d")
    assert _read(part, part.field("required"), text) is reading
