"""Property: any string given to `parse` with a CS224N A5 table yields a Value or a MathError.

Never another exception, never a hang: each example must finish in under a second. The
strings come from four sources: arbitrary Unicode, a soup of LaTeX-ish tokens, a mix of
the two, and well-formed expressions built from the part's own symbols (which reach deep
into the grammar, the builder and sympy rather than stopping at the first bad character).

CI runs a bounded number of examples (`settings` below); the whole file takes seconds.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attngrade.errors import MathError
from attngrade.mathlang import Value, parse
from attngrade.problems import load_homework

PER_EXAMPLE = 1.0  # seconds one parse may take
HARD_STOP = 10.0  # a parse that runs this long is interrupted, so a hang fails instead of hanging CI
# CI: 200 examples per property, the same ones every run (derandomize), so a failure is a
# change in attngrade, not luck. ATTNGRADE_EXPLORE=N explores N fresh random examples.
EXPLORE = int(os.environ.get("ATTNGRADE_EXPLORE", "0"))
PROPERTY = settings(max_examples=EXPLORE or 200, deadline=None, derandomize=not EXPLORE, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

A5 = load_homework("cs224n-w21-a5")
FIELDS = [(f"{p.id}:{f.name}", p.table_for(f.name)) for p in A5.parts for f in p.fields if f.kind == "math"]
_seen: set[int] = set()
TABLES = [(name, t) for name, t in FIELDS if id(t) not in _seen and not _seen.add(id(t))]
KINDS = {"scalar", "matrix", "bigO"}

TOKENS = [
    # names the tables declare, in every spelling, and names they do not
    "u_a", "u_b", "u_c", "u_d", "u_{a}", "\\mathbf{u}_a", "\\boldsymbol{u_b}", "k_a", "k_b", "k_{b}",
    "\\mu_a", "\\mu_b", "mu_a", "μ_b", "µ_a", "beta", "\\beta", "β", "I", "x_1", "x_2", "x_3", "x_{3}",
    "C", "c", "C_1", "\\lambda", "q", "v", "n", "d", "e", "\\alpha", "\\infty", "∞", "\\pi", "π",
    # digits and numbers
    "0", "1", "2", "9", "64", "65", "1.5", "10^{5}", "1e9", "3.", ".5", "999999999999999999999999999999999999999999",
    # operators and brackets
    "+", "-", "*", "/", "^", "_", "'", "(", ")", "[", "]", "{", "}", "|", "\\|", "||", ",", ".", "&",
    "\\\\", " ", "  ", "\n", "\t", "=", "<", ">", "!", ":", ";", "?", "@", "#", "%", "$", "~", "`", "\"",
    # LaTeX commands and environments
    "\\frac", "\\frac{1}{2}", "\\dfrac", "\\tfrac", "\\sqrt", "\\sqrt[3]", "\\exp", "\\log", "\\ln", "\\sin",
    "\\cos", "\\cdot", "\\times", "\\top", "^\\top", "^T", "^{T}", "^{-1}", "^{64}", "^{65}", "^{2k}",
    "\\left(", "\\right)", "\\left[", "\\right]", "\\langle", "\\rangle", "\\lVert", "\\rVert", "\\mathcal{O}",
    "O(", "\\mathbf", "\\boldsymbol", "\\text{", "\\mathrm{", "\\operatorname{", "\\begin{bmatrix}",
    "\\end{bmatrix}", "\\begin{pmatrix}", "\\end{pmatrix}", "\\begin{cases}", "\\end{cases}", "\\begin{",
    "\\end{", "\\", "\\x", "\\input{/etc/passwd}", "\\def", "\\newcommand", "\\sum_{i=1}^n", "\\prod",
    "\\int", "\\lim", "\\infty", "\\hat{", "\\vec{", "\\tilde", "\\,", "\\;", "\\!", "\\quad",
    "exp(", "sqrt(", "log(", "softmax(", "__import__", "eval(", "lambda", "os.system", "()",
    # Unicode that looks like math, and Unicode that only gets in the way
    "⊤", "ᵀ", "·", "×", "−", "–", "＋", "（", "）", "²", "³", "½", "√", "∑", "‖", "⟨", "⟩", "\u00a0",
    "\u200b", "\u202e", "\ufeff", "\x00", "\x7f", "\ud7ff", "\U0001d42e", "😀",
]

unicode_text = st.text(max_size=300)
token_soup = st.lists(st.sampled_from(TOKENS), max_size=60).map("".join)
mixed = st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=4)), max_size=40).map("".join)


def expressions(names: list[str]) -> st.SearchStrategy[str]:
    """Well-formed-looking expressions over `names` (shapes may still clash: that is a MathError)."""
    atoms = st.sampled_from([*names, "C", "2", "3", "0", "1/2", "\\frac{1}{2}", "\\beta"])

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        pair = st.tuples(inner, inner)
        return st.one_of(
            st.tuples(inner, st.sampled_from([" + ", " - ", " ", " \\cdot ", " * ", "/", ""]), inner).map("".join),
            inner.map(lambda s: f"({s})"),
            inner.map(lambda s: f"{{{s}}}"),
            st.tuples(inner, st.sampled_from(["^T", "^\\top", "'", "^2", "^{-1}", "^{64}", "^{65}", "^{\\beta}",
                                              "^{1/2}", "^{-64}", "^{T}", "^{0}"])).map("".join),
            pair.map(lambda p: f"\\frac{{{p[0]}}}{{{p[1]}}}"),
            inner.map(lambda s: f"\\sqrt{{{s}}}"),
            inner.map(lambda s: f"\\exp({s})"),
            inner.map(lambda s: f"\\log({s})"),
            inner.map(lambda s: f"\\|{s}\\|"),
            pair.map(lambda p: f"\\langle {p[0]}, {p[1]} \\rangle"),
            st.lists(inner, min_size=1, max_size=3).map(
                lambda xs: "\\begin{bmatrix} " + " \\\\ ".join(xs) + " \\end{bmatrix}"),
            st.lists(st.lists(inner, min_size=2, max_size=2), min_size=2, max_size=2).map(
                lambda rows: "\\begin{pmatrix} " + " \\\\ ".join(" & ".join(r) for r in rows) + " \\end{pmatrix}"),
            st.lists(inner, min_size=1, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
            inner.map(lambda s: f"O({s})"),
        )

    return st.recursive(atoms, extend, max_leaves=20)


# One strategy per table, built once (building a recursive strategy per example is slow).
table_and_expression = st.one_of([st.tuples(st.just(item), expressions(item[1].names())) for item in TABLES])


def _parse_bounded(text: str, table):
    """parse(text, table), stopped by SIGALRM after HARD_STOP seconds (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return parse(text, table)

    def stop(signum, frame):  # noqa: ARG001
        raise TimeoutError(f"parse ran for more than {HARD_STOP:g} s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, HARD_STOP)
    try:
        return parse(text, table)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def value_or_math_error(text: str, table) -> Value | MathError:
    start = time.perf_counter()
    try:
        outcome: Value | MathError = _parse_bounded(text, table)
    except MathError as err:
        outcome = err
    except Exception as err:  # noqa: BLE001 - the property is that nothing else escapes
        pytest.fail(f"{type(err).__name__} escaped parse({text!r}): {err}")
    elapsed = time.perf_counter() - start
    assert elapsed < PER_EXAMPLE, f"parse({text!r}) took {elapsed:.2f} s"
    if isinstance(outcome, MathError):
        shown = outcome.render(text)  # the student-facing message must render for any text
        assert isinstance(shown, str) and outcome.message in shown
        assert 0 <= outcome.start <= len(text) and outcome.end > outcome.start
    else:
        assert isinstance(outcome, Value), type(outcome)
        assert outcome.kind in KINDS
        assert outcome.text == text
        assert outcome.canonical == parse(text, table).canonical, "parsing is deterministic"
    return outcome


@PROPERTY
@given(text=unicode_text, item=st.sampled_from(TABLES))
def test_any_unicode_text(text, item):
    value_or_math_error(text, item[1])


@PROPERTY
@given(text=token_soup, item=st.sampled_from(TABLES))
def test_latex_token_soup(text, item):
    value_or_math_error(text, item[1])


@PROPERTY
@given(text=mixed, item=st.sampled_from(TABLES))
def test_tokens_mixed_with_any_text(text, item):
    value_or_math_error(text, item[1])


@PROPERTY
@given(pair=table_and_expression)
def test_expressions_built_from_the_parts_symbols(pair):
    (_, table), text = pair
    value_or_math_error(text, table)


@pytest.mark.parametrize("name,table", TABLES, ids=[name for name, _ in TABLES])
def test_the_expression_strategy_reaches_past_the_grammar(name, table):
    """A sanity check on the strategy itself: the part's plain symbols parse to Values."""
    for symbol in table.names():
        assert isinstance(parse(symbol, table), Value), symbol


@pytest.mark.parametrize("text", ["\\|O(2)\\|", "\\|O(\\beta)\\|", "{\\|O(\\sqrt{0})\\|}"])
def test_a_norm_of_an_order_of_growth_is_a_math_error(text):
    """Found by the properties above: this once escaped as a TypeError (shape_text(None) in builder.norm)."""
    table = A5.part("1e.i").table_for("c2")
    with pytest.raises(MathError):
        parse(text, table)
