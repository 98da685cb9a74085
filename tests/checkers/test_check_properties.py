"""Property: whatever a student writes with a part's own symbols, grading it yields a Verdict.

For real parts of the bank (attention constructions, formulas, orders of growth, a
rotation block, yes/no and text fields), answers are composed from the part's declared
symbols: sums, products, fractions, powers (up to beta^64), transposes, inner products,
norms, roots, logs and exponentials. Each is graded by `grading.grade_answer`, which runs
the part's registered checks (`REGISTRY[...]`) under the time budget. Every answer must
come back as a Verdict with an allowed status and a score within [0, max], never as an
exception, within the budget plus a little for reading.

CI runs 50 examples per part, the same ones every run (derandomize), in well under a
minute in total. ATTNGRADE_EXPLORE=N explores N fresh random examples per part instead.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from attngrade.grading import InProcess, assignment, grade_answer
from attngrade.problems.keys import load_keys
from attngrade.problems import load_homework
from attngrade.records import STATUSES, Verdict

ROOT = Path(__file__).resolve().parents[2]
BUDGET = 1.0  # seconds one check may take (the batch default is 2)
SLACK = 2.0  # reading the answer and assembling the verdict are not under the budget
EXPLORE = int(os.environ.get("ATTNGRADE_EXPLORE", "0"))
PROPERTY = settings(max_examples=EXPLORE or 50, deadline=None, derandomize=not EXPLORE, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
ALLOWED = set(STATUSES) - {"unchecked"}  # `unchecked` is for self-checks only

_homeworks: dict = {}


def homework(hid: str):
    if hid not in _homeworks:
        hw = load_homework(hid)
        _homeworks[hid] = (hw, load_keys(ROOT / "solutions", hw))
    return _homeworks[hid]


# -- composing answers from a part's symbols ----------------------------------------------
NUMBERS = ["2", "3", "0", "1", "\\frac{1}{2}", "-1", "10"]


def scalars(atoms: list[str], leaves: int = 6) -> st.SearchStrategy[str]:
    """Scalar expressions over `atoms` (numbers, scalar symbols, inner products...)."""
    base = st.sampled_from(atoms + NUMBERS)

    def extend(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from([" + ", " - ", " ", " \\cdot ", "/"]), inner).map("".join),
            inner.map(lambda s: f"({s})"),
            st.tuples(inner, inner).map(lambda p: f"\\frac{{{p[0]}}}{{{p[1]}}}"),
            st.tuples(st.sampled_from(atoms), st.sampled_from(["2", "3", "-1", "64", "-2", "1/2"])).map(
                lambda p: f"{p[0]}^{{{p[1]}}}"),
            inner.map(lambda s: f"\\sqrt{{{s}}}"),
            inner.map(lambda s: f"\\log({s})"),
            inner.map(lambda s: f"\\exp({s})"),
        )

    return st.recursive(base, extend, max_leaves=leaves)


def coefficient(atoms: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(st.just(""), scalars(atoms, leaves=3).map(lambda s: f"({s}) "))


def vectors(names: list[str], atoms: list[str]) -> st.SearchStrategy[str]:
    """Linear combinations of the part's vectors, with the odd outer product applied to one."""
    term = st.one_of(
        st.tuples(coefficient(atoms), st.sampled_from(names)).map("".join),
        st.tuples(coefficient(atoms), st.sampled_from(names), st.sampled_from(names), st.sampled_from(names)).map(
            lambda p: f"{p[0]}{p[1]} {p[2]}^T {p[3]}"),
        st.tuples(coefficient(atoms), st.lists(st.sampled_from(names), min_size=1, max_size=3)).map(
            lambda p: f"{p[0]}(" + " + ".join(p[1]) + ")"),
    )
    return st.lists(term, min_size=1, max_size=3).map(" + ".join)


def matrices(names: list[str], atoms: list[str], identity: bool = True) -> st.SearchStrategy[str]:
    """Sums of scaled outer products (and the identity): V, K and Q of an attention layer."""
    outer = st.tuples(coefficient(atoms), st.sampled_from(names), st.sampled_from(names)).map(
        lambda p: f"{p[0]}{p[1]} {p[2]}^T")
    terms = st.one_of(outer, coefficient(atoms).map(lambda c: f"{c}I")) if identity else outer
    single = st.lists(terms, min_size=1, max_size=3).map(" + ".join)
    return st.one_of(single, st.tuples(single, single).map(lambda p: f"({p[0]})({p[1]})"))


def inner_products(names: list[str]) -> list[str]:
    out = []
    for i, a in enumerate(names):
        for b in names[i:]:
            out += [f"{a}^T {b}", f"\\langle {a}, {b} \\rangle"]
        out += [f"\\|{a}\\|^2", f"\\|{a}\\|"]
    return out


def orders(names: list[str]) -> st.SearchStrategy[str]:
    factor = st.sampled_from([*names, *(f"{n}^2" for n in names), *(f"\\log {n}" for n in names), "1"])
    product = st.lists(factor, min_size=1, max_size=3).map(" ".join)
    return st.lists(product, min_size=1, max_size=2).map(lambda ps: "O(" + " + ".join(ps) + ")")


def blocks(atoms: list[str]) -> st.SearchStrategy[str]:
    entry = scalars(atoms, leaves=3)
    return st.lists(entry, min_size=4, max_size=4).map(
        lambda e: f"\\begin{{bmatrix}} {e[0]} & {e[1]} \\\\ {e[2]} & {e[3]} \\end{{bmatrix}}")


U = ["u_a", "u_b", "u_c", "u_d", "x_1", "x_2", "x_3"]
BETA = ["\\beta", "beta", "\\beta^2", "\\frac{1}{\\beta^2}", "\\beta^{64}", "\\beta^{-64}"]
YES_NO = st.sampled_from(["yes", "no", "true", "False", "maybe", "1", "__import__('os')"])
TEXT = st.text(max_size=200)


@dataclass(frozen=True)
class Case:
    homework: str
    part: str
    answers: st.SearchStrategy  # of the raw answer, as a submission's YAML would hold it

    def __str__(self) -> str:
        return f"{self.homework}:{self.part}"


CASES = [
    Case("cs224n-w21-a5", "1b", vectors(["k_a", "k_b"], ["C", "C^2", "c"])),
    Case("cs224n-w21-a5", "1c.i", vectors(["\\mu_a", "\\mu_b"], ["C", "\\lambda"])),
    Case("cs224n-w21-a5", "1d.i", st.fixed_dictionaries({"q1": vectors(["\\mu_a", "\\mu_b"], ["C"]),
                                                         "q2": vectors(["\\mu_a", "\\mu_b"], ["C"])})),
    Case("cs224n-w21-a5", "1e.i", st.fixed_dictionaries({"c2": vectors(U, BETA), "possible": YES_NO,
                                                         "why": TEXT})),
    Case("cs224n-w21-a5", "1e.ii", st.fixed_dictionaries({"V": matrices(U, BETA), "K": matrices(U, BETA),
                                                          "Q": matrices(U, BETA)})),
    Case("eecs182-sp23-transformers", "b", st.fixed_dictionaries({
        "added": scalars(inner_products(["x_1", "x_2", "p_1", "p_2"])),
        "concatenated": scalars(inner_products(["x_1", "x_2", "p_1", "p_2"]))})),
    Case("eecs182-sp23-transformers", "c.ii", scalars(["T", "m", "(2T - 1)", "T^2"])),
    Case("eecs182-sp23-transformers", "e", st.fixed_dictionaries({
        "one": scalars(["n", "k", "2^n", "n^k", "(k+1)^n"]), "two": scalars(["n", "3^n", "k"]),
        "k": scalars(["n", "k", "(k+1)^n", "k^n"])})),
    Case("eecs182-sp23-transformers", "f", st.fixed_dictionaries({
        "encoder": orders(["M", "N", "k"]), "cross": orders(["M", "N", "k"]), "decoder": orders(["M", "N", "k"])})),
    Case("eecs182-fa22-hw8", "1c", blocks(["\\cos(\\omega)", "\\sin(\\omega)", "\\cos \\omega", "\\omega", "t",
                                           "\\sin(\\omega t)", "\\cos(2\\omega)"])),
    Case("nyu-dl-transformer", "1.1b", st.fixed_dictionaries({"beta": scalars(["d", "\\sqrt{d}", "\\frac{1}{d}"]),
                                                               "why": TEXT})),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@PROPERTY
@given(data=st.data())
def test_any_composed_answer_gets_a_verdict_within_the_budget(case, data):
    hw, keys = homework(case.homework)
    part = hw.part(case.part)
    raw = data.draw(case.answers, label="answer")
    start = time.perf_counter()
    try:  # a fresh plan: every example runs its checks
        verdict = grade_answer(assignment(hw, keys), part.id, raw, runner=InProcess(BUDGET))
    except Exception as err:  # noqa: BLE001 - the property is that nothing escapes
        pytest.fail(f"{type(err).__name__} escaped grading {case} with {raw!r}: {err}")
    elapsed = time.perf_counter() - start
    assert isinstance(verdict, Verdict)
    event(f"status {verdict.status}")  # shown by pytest --hypothesis-show-statistics
    assert verdict.part == part.id
    assert verdict.status in ALLOWED, verdict
    assert 0 <= verdict.score <= verdict.max_score == part.points, verdict
    if verdict.status in ("incorrect", "missing"):
        assert verdict.score == 0, verdict
    if verdict.status == "correct":
        assert verdict.score == verdict.max_score, verdict
    assert all(isinstance(f, str) and f for f in verdict.feedback), verdict.feedback
    checks = sum(1 for spec in part.checks if spec.check != "manual")
    assert elapsed < checks * BUDGET + SLACK, f"{case} took {elapsed:.2f} s on {raw!r}"


@pytest.mark.parametrize("case", CASES, ids=str)
def test_the_strategies_compose_answers_the_checks_can_read(case):
    """Sanity check on the strategies: their simplest answer is read, not refused as a format problem."""
    hw, keys = homework(case.homework)
    from hypothesis import find

    simplest = find(case.answers, lambda raw: True, settings=settings(database=None, derandomize=True))
    verdict = grade_answer(assignment(hw, keys), case.part, simplest, runner=InProcess(BUDGET))
    fields_read = set(verdict.shown)
    assert fields_read, f"{case}: nothing of {simplest!r} was read: {verdict.feedback}"
