"""Exact limits: the verdict of an attention answer comes from the expressions, not samples."""

from __future__ import annotations

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from attngrade.checkers import REGISTRY, Context, asymptotics, attention_query
from attngrade.mathlang import parse

t = asymptotics.growth()


# -- the analysis itself --------------------------------------------------------------------------------
@pytest.mark.parametrize("expr, want", [
    (3 * t**2 - 10**6 * t, sympy.oo),
    (-t / 1000 + 5, -sympy.oo),
    ((t**2 + 1) / (2 * t**2 - t), sympy.Rational(1, 2)),
    ((t + 1) / t**2, 0),
    (sympy.log(t), sympy.oo),
    (sympy.sqrt(t) - sympy.log(t) ** 3, sympy.oo),
    (sympy.Integer(7), 7),
])
def test_limits_are_exact(expr, want):
    assert asymptotics.limit(expr, t) == want


def test_an_oscillating_expression_is_undecided_not_guessed():
    with pytest.raises(asymptotics.Undecided):
        asymptotics.limit(sympy.sin(t), t)


def test_softmax_limit_shares_ties_and_weighs_finite_gaps():
    w = asymptotics.softmax_limit([t, t, 0, t - sympy.log(3)], t)
    assert w.values == (sympy.Rational(3, 7), sympy.Rational(3, 7), 0, sympy.Rational(1, 7))
    assert w.top == (0, 1, 3) and w.fast
    tiny = asymptotics.softmax_limit([t + sympy.Rational(1, 10**9) * t**2, t, 0], t)
    assert tiny.values == (1, 0, 0)  # a small coefficient still dominates in the end


# -- attention_query: no false accepts, slow scales accepted -----------------------------------------------
def query(a5, part_id, **fields):
    part = a5.part(part_id)
    answers = {name: parse(text, part.table) for name, text in fields.items()}
    return REGISTRY["attention_query"].run(answers, Context(part=part, spec=part.checks[0]))


@pytest.mark.parametrize("q", [
    r"C(k_a + k_b) + 10^{-6} C^2 k_a",  # dominates only when C is far past the old samples
    r"C(k_a + k_b) + (C-1)(C-4)(C-16)(C-64)(C-256) k_b",  # zero at every sampled C, dominant after
    r"C k_a + (C + 1) k_b",  # a finite gap: weights e/(1+e), not 1/2
])
def test_1b_terms_that_matter_in_the_limit_are_not_full_marks(a5, q):
    outcome = query(a5, "1b", q=q)
    assert outcome.earned < 4 and outcome.evidence["method"] == "exact limit"


@pytest.mark.parametrize("q", [r"\log(C)(k_a + k_b)", r"\sqrt{C}(k_a + k_b)", r"C(k_a + k_b) + \frac{1}{C} k_a",
                               r"C k_a + (C + \frac{5}{C}) k_b"])
def test_1b_slowly_growing_scales_and_vanishing_terms_are_full_marks(a5, q):
    assert query(a5, "1b", q=q).earned == 4


def test_1c_i_any_growth_rate_of_c_is_fine_once_the_variance_is_gone(a5):
    assert query(a5, "1c.i", q=r"\log(C)(\mu_a + \mu_b)").earned == 2


def test_an_answer_the_analysis_cannot_follow_is_decided_from_samples_and_says_so(a5, monkeypatch):
    def cannot(*args, **kwargs):
        raise asymptotics.Undecided("as if sympy's limit had run out of time")

    monkeypatch.setattr(attention_query, "_exact_query_weights", cannot)
    outcome = query(a5, "1b", q=r"C(k_a + k_b) + \frac{1}{C} k_c")
    assert outcome.evidence["method"] == "samples" and outcome.earned == 4
    assert any("could not work out their limit exactly" in line for line in outcome.feedback)


def test_an_oscillation_the_analysis_cannot_follow_is_not_decided_from_samples(a5):
    """sin C keeps the gap between k_a's and k_b's scores swinging: the weights have no limit."""
    outcome = query(a5, "1b", q=r"C(k_a + k_b) + \sin(C) k_a")
    assert outcome.is_pending and outcome.evidence["method"] == "undecided"


# -- attention_qkv ------------------------------------------------------------------------------------------
V = r"(u_b u_b^T - u_c u_c^T)/beta^2"
Q = r"(u_d u_a^T + u_c u_d^T)/beta^2"


def qkv(a5, v, k, q):
    part = a5.part("1e.ii")
    answers = {"V": parse(v, part.table), "K": parse(k, part.table), "Q": parse(q, part.table)}
    return REGISTRY["attention_qkv"].run(answers, Context(part=part, spec=part.checks[0]))


@pytest.mark.parametrize("v, k, q", [
    (V, "I", Q + r" + 10^{-6} u_d u_d^T"),  # beta^4 against beta^2: query 1 ends on x1
    (V + r" + 10^{-6} u_b u_b^T", "I", Q),  # v1 grows like beta^3: c2 leaves u_b
    (V, "I", Q + r" + (beta-2)(beta-4)(beta-8)(beta-16)(beta-32)(beta-64) u_d u_d^T / beta^4"),
])
def test_1e_ii_small_or_hidden_dominating_terms_are_not_full_marks(a5, v, k, q):
    outcome = qkv(a5, v, k, q)
    assert outcome.earned < 4 and outcome.evidence["method"] == "exact limit"


@pytest.mark.parametrize("v, k, q", [
    (V, r"10^{-3} I", Q),  # scores 1e-3 beta^2: still without bound
    (V, "I", Q + r" + u_b u_b^T / beta^4"),  # a term that vanishes
    (V, r"\log(C) I", Q),  # a slowly growing free constant
])
def test_1e_ii_small_scales_and_vanishing_terms_are_full_marks(a5, v, k, q):
    assert qkv(a5, v, k, q).earned == 4


# -- properties: vanishing terms keep a verdict, dominating ones change it ------------------------------------
COEFFICIENT = st.sampled_from(["10^{-9}", "10^{-6}", "\\frac{1}{1000}", "3", "10^{4}"])


@settings(max_examples=20, deadline=None, derandomize=True, database=None)
@given(c=COEFFICIENT, k=st.integers(1, 3), key=st.sampled_from(["k_a", "k_b"]))
def test_adding_a_vanishing_term_keeps_full_marks(a5, c, k, key):
    assert query(a5, "1b", q=f"C(k_a + k_b) + {c} C^{{-{k}}} {key}").earned == 4


@settings(max_examples=20, deadline=None, derandomize=True, database=None)
@given(c=COEFFICIENT, k=st.integers(1, 3), key=st.sampled_from(["k_a", "k_b"]))
def test_adding_a_dominating_term_loses_full_marks(a5, c, k, key):
    assert query(a5, "1b", q=f"C(k_a + k_b) + {c} C^{{{1 + k}}} {key}").earned < 4


def test_a_value_that_outgrows_every_polynomial_is_not_full_marks(a5):
    # exp(beta^3) u_a beats the exp(-beta^2) weight on x2: c2 leaves u_b, whatever the other credits say
    outcome = qkv(a5, V + r" + \exp(\beta^3) u_a u_a^T/\beta^2", "I", Q)
    assert outcome.earned < 4


def test_a_coefficient_that_may_be_zero_is_not_given_a_sign():
    with pytest.raises(asymptotics.Undecided):
        asymptotics.limit(t * (sympy.sqrt(3 + 2 * sympy.sqrt(2)) - 1 - sympy.sqrt(2)) + 1, t)


def test_a_gap_that_only_settles_like_1_over_t_is_not_fast():
    t = asymptotics.growth()
    assert not asymptotics.softmax_limit([t, t + 1 + 1 / t], t).fast
    assert asymptotics.softmax_limit([t, t + 1], t).fast
