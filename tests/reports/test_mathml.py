"""MathML made in one process and kept in another (attngrade/reports/mathml.py: shown, remember)."""

from __future__ import annotations

import pytest

from attngrade.mathlang import SymbolTable, parse
from attngrade.reports import mathml


@pytest.fixture(autouse=True)
def empty(monkeypatch):
    monkeypatch.setattr(mathml, "_CACHE", {})
    monkeypatch.setattr(mathml, "_STATEMENTS", {})
    monkeypatch.setattr(mathml, "_shown_here", 0)


def _readings(*texts: str) -> list:
    table = SymbolTable.from_data({"a": {}, "b": {}})
    return [parse(text, table) for text in texts]


def test_shown_is_what_this_process_had_not_made_and_remember_keeps_it():
    a, b, again = _readings("a + b", "a*b", "b + a")  # the third is the first, written otherwise
    mathml.to_mathml(a)
    made = mathml.shown([a, b, again, "not math"], ["Let $x$ be", "Let $x$ be"])
    assert set(made.math) == {b.canonical}, "only what was not made here before, once"
    assert list(made.statements) == ["Let $x$ be"]
    elsewhere = dict(made.math)
    mathml._CACHE.clear()
    mathml._STATEMENTS.clear()
    mathml.remember(made)
    assert mathml._CACHE == elsewhere and mathml.to_mathml(b) == elsewhere[b.canonical]
    assert mathml.statement_html("Let $x$ be") is made.statements["Let $x$ be"]


def test_remember_keeps_no_more_than_a_process_keeps(monkeypatch):
    monkeypatch.setattr(mathml, "KEPT", 2)
    made = mathml.shown(_readings("a", "b", "a + b", "a*b"))
    assert len(made.math) == 4
    mathml._CACHE.clear()
    mathml._CACHE["held"] = None
    mathml.remember(made)
    assert len(mathml._CACHE) == 2 and "held" in mathml._CACHE


def test_a_worker_makes_a_bounded_number_for_others(monkeypatch):
    # A class whose every answer is distinct saves nothing by it: the worker stops early. What it
    # inherited (a notebook that rendered reports before) does not count against it.
    monkeypatch.setattr(mathml, "SHOWN_FOR_OTHERS", 3)
    for inherited in _readings("a - b", "b - a*b"):
        mathml.to_mathml(inherited)
    first = mathml.shown(_readings("a", "b"))
    later = mathml.shown(_readings("a + b", "a*b", "a - a*b"))
    assert len(first.math) == 2 and len(later.math) == 1


def test_a_reading_that_cannot_be_drawn_is_not_sent(monkeypatch):
    a, b = _readings("a", "b")

    def broken(value):
        raise RuntimeError("the printer failed")

    monkeypatch.setattr(mathml, "latex", broken)
    assert mathml.to_mathml(a) is None, "shown as text, not a crash"
    assert mathml.shown([b]).math == {}, "the report process tries again"
