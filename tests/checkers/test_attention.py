"""attention_query and attention_qkv on the A5 parts: right, equivalent, wrong (seeds)."""

from __future__ import annotations

import pytest

from attngrade.checkers import REGISTRY, Context
from attngrade.mathlang import parse


def qkv(a5, V, K, Q):
    part = a5.part("1e.ii")
    answers = {"V": parse(V, part.table), "K": parse(K, part.table), "Q": parse(Q, part.table)}
    return REGISTRY["attention_qkv"].run(answers, Context(part=part, spec=part.checks[0]))


def query(a5, part_id, **fields):
    part = a5.part(part_id)
    answers = {name: parse(text, part.table) for name, text in fields.items()}
    return REGISTRY["attention_query"].run(answers, Context(part=part, spec=part.checks[0]))


V_RIGHT = r"\frac{1}{\beta^2}(u_b u_b^\top - u_c u_c^\top)"


@pytest.mark.parametrize(
    "V, K, Q",
    [
        (V_RIGHT, "I", "(u_d u_a^T + u_c u_d^T)/beta^2"),
        # scores grow like beta^6 here; still right
        (V_RIGHT, "u_d u_d^T + u_c u_c^T", "u_d u_a^T + u_c u_d^T"),
        # a free large constant on top of beta
        (V_RIGHT, "I", "C (u_d u_a^T + u_c u_d^T)"),
        # V that also maps x2 to u_b, with query 2 attending to itself
        (r"(u_b u_a^T + u_b u_b^T - u_c u_c^T)/beta^2", "I", "(u_a u_a^T + u_c u_d^T)/beta^2"),
        # explicit shorthand and bmatrix-free ASCII
        ("(u_b u_b' - u_c u_c')/B^2", "I", "(u_d u_a' + u_c u_d')/B^2"),
    ],
)
def test_1e_ii_correct_constructions_get_full_marks(a5, V, K, Q):
    outcome = qkv(a5, V, K, Q)
    assert outcome.earned == 4, outcome.feedback
    assert outcome.feedback == ()


def test_1e_ii_seed_000_final_q_names_c1(a5):
    outcome = qkv(a5, r"\frac{u_b u_b^T - u_c u_c^T}{\beta^2}", "I", r"\frac{u_c u_c^T + u_d u_d^T}{\beta^2}")
    assert outcome.earned == 2  # V earns its 2 points, the routing does not
    assert outcome.feedback[0] == (
        "with your Q and K, q1 = u_d, so query 1 attends to x1 and c1 ≈ u_b, not u_b - u_c"
    )
    assert "query 2 spreads its attention over x1 (0.33), x2 (0.33), x3 (0.33)" in outcome.feedback[1]
    assert "credit for V" in outcome.feedback[-1]


def test_1e_ii_seed_001_q_names_c2(a5):
    outcome = qkv(a5, r"(u_b u_b^T - u_c u_c^T)/beta^2", "I", "u_a u_a^T + u_c u_c^T")
    assert outcome.earned == 2
    assert any(line.startswith("with your Q and K, q2 = beta^2 u_a, so query 2 attends to x2 and c2 ≈ 0, not u_b")
               for line in outcome.feedback)


def test_1e_ii_seed_001_as_written_loses_the_value_points_too(a5):
    outcome = qkv(a5, r"\frac{1}{B} u_b u_b^T - \frac{1}{B} u_c u_c^T", "I", "u_a u_a^T + u_c u_c^T")
    assert outcome.earned == 0
    assert not any("credit for V" in line for line in outcome.feedback)


def test_1e_ii_right_routing_wrong_values_blames_v(a5):
    outcome = qkv(a5, "u_b u_b^T - u_c u_c^T", "I", "(u_d u_a^T + u_c u_d^T)/beta^2")
    assert outcome.earned == 2
    assert "query 1 attends to x3 as it should, but with your V, v3 = beta^2 u_b - beta^2 u_c" in outcome.feedback[0]
    assert "credit for Q and K" in outcome.feedback[-1]


def test_1e_ii_scores_that_do_not_grow_are_wrong(a5):
    # Dividing Q by beta^4 leaves every score bounded: attention never saturates.
    outcome = qkv(a5, V_RIGHT, "I", "(u_d u_a^T + u_c u_d^T)/beta^4")
    assert outcome.earned < 4


def test_1e_ii_evidence_has_the_weights(a5):
    outcome = qkv(a5, V_RIGHT, "I", "(u_d u_a^T + u_c u_d^T)/beta^2")
    weights = outcome.evidence["weights"]
    assert weights[0][2] > 0.99 and weights[1][0] > 0.99
    assert outcome.evidence["method"] == "exact limit"


@pytest.mark.parametrize("q", ["C(k_a + k_b)", r"\lambda k_a + \lambda k_b", "(k_a + k_b) c_1", "100 (k_a + k_b)"])
def test_1b_large_multiple_of_the_two_keys(a5, q):
    assert query(a5, "1b", q=q).earned == 4


def test_1b_unscaled_sum_is_partial_with_the_reason(a5):
    outcome = query(a5, "1b", q="k_a + k_b")
    assert outcome.earned == 2
    assert "(k_a: 0.29, k_b: 0.29, each other key: 0.11) (n = 6)" in outcome.feedback[0]
    assert "large constant" in outcome.feedback[1]


def test_1b_difference_of_keys_scores_zero(a5):
    outcome = query(a5, "1b", q="C(k_a - k_b)")
    assert outcome.earned == 0
    assert outcome.feedback[0].endswith("so c → v_a, not 1/2 v_a + 1/2 v_b")


def test_1b_row_vector_is_accepted_with_a_note(a5):
    outcome = query(a5, "1b", q="C(k_a^T + k_b^T)")
    assert outcome.earned == 4
    assert "read your row vector as the column vector q" in outcome.feedback


def test_1c_i_means_and_the_u_alias(a5):
    assert query(a5, "1c.i", q=r"C(\mu_a + \mu_b)").earned == 2
    part = a5.part("1c.i")
    value = parse("(u_a + u_b) C_1", part.table)
    assert any("mu_a" in note for note in value.notes)


@pytest.mark.parametrize("q1, q2, points", [("C mu_a", "C mu_b", 1), ("C mu_b", "C mu_a", 1),
                                            ("C mu_a", "C mu_a", 0), ("mu_a", "mu_b", 0)])
def test_1d_i_two_heads(a5, q1, q2, points):
    assert query(a5, "1d.i", q1=q1, q2=q2).earned == points


@pytest.mark.parametrize("V", [r"C(u_b u_b^T - u_c u_c^T)/beta^3", r"(u_b u_b^T - u_c u_c^T)/(C beta)"])
def test_free_constant_cannot_stand_in_for_beta(a5, V):
    # v1 = (C/β) u_b is u_b only when C happens to equal β: wrong for a constant that grows freely. A constant
    # only in a denominator is not read at all (which way it goes is the student's to say): never full credit.
    from attngrade.errors import MathError

    try:
        outcome = qkv(a5, V, "I", "(u_d u_a^T + u_c u_d^T)/beta^2")
    except MathError as err:
        assert "only in a denominator" in str(err)
        return
    assert outcome.earned < 4


def test_free_constant_that_only_sharpens_attention_is_fine(a5):
    assert qkv(a5, V_RIGHT, "I", "C (u_d u_a^T + u_c u_d^T)/beta^4").earned == 4


# -- a typo in one field does not cost the others their credit -----------------------------------------
def test_1e_ii_v_keeps_its_credit_when_q_is_unreadable_or_missing(a5):
    from attngrade import grading

    given = grading.assignment(a5, None, self_check=True)
    typo = grading.grade_answer(given, "1e.ii", {"V": V_RIGHT, "K": "I", "Q": "(u_d u_a^T + u_c u_d^T/beta^2"})
    assert typo.status == "invalid" and typo.score == 2
    assert any(line.startswith("credit for V") for line in typo.feedback)
    missing = grading.grade_answer(given, "1e.ii", {"V": V_RIGHT, "K": "I"})
    assert missing.score == 2 and "Q: no answer" in missing.feedback


def test_1e_ii_k_and_q_keep_the_routing_credit_when_v_is_unreadable(a5):
    from attngrade import grading

    given = grading.assignment(a5, None, self_check=True)
    verdict = grading.grade_answer(given, "1e.ii", {"V": "u_q", "K": "I", "Q": "(u_d u_a^T + u_c u_d^T)/beta^2"})
    assert verdict.status == "invalid" and verdict.score == 2
    assert any(line.startswith("credit for Q and K") for line in verdict.feedback)


def test_a_constant_query_in_the_right_direction_is_told_to_grow(a5):
    outcome = query(a5, "1d.i", q1="7 mu_a", q2="7 mu_b")
    assert outcome.earned == 0
    (message,) = outcome.feedback
    assert message.startswith("your queries have no large constant, so the heads' average weights stay at "
                              "(mu_a: 0.498185, mu_b: 0.498185)")
    assert "multiply by a constant that can grow" in message


def test_a_constant_query_in_a_wrong_direction_is_told_where_the_weights_stay(a5):
    (message,) = query(a5, "1b", q="3 k_a").feedback
    assert message.startswith("with your q, the weights stay at (k_a: 0.80, k_b: 0.04, each other key: 0.04) "
                              "(nothing in q grows)")


def test_a_scale_beyond_floating_point_still_gives_finite_evidence(a5):
    outcome = query(a5, "1b", q="e^{C^2}(k_a + k_b)")
    assert outcome.earned == 4
    assert outcome.evidence["weights"] == [0.0, 0.5, 0.0, 0.0, 0.5, 0.0]


@pytest.mark.parametrize("q", [r"C (k_a + k_b)/\log(C)", r"\log(\log(C)) (k_a + k_b)"])
def test_1b_scales_undefined_at_one_are_still_right(a5, q):
    """log C is 0 at C = 1: the finite samples beside the exact limit move on to where it is defined."""
    outcome = query(a5, "1b", q=q)
    assert outcome.earned == 4 and not outcome.failed, outcome.feedback
    assert outcome.evidence["method"] == "exact limit"


def test_1b_an_oscillating_query_is_left_to_staff_not_decided_from_samples(a5):
    """C cos C ties k_c with k_a and k_b whenever cos C is near 1, so the weights have no limit;
    samples at 1, 4, ..., 256 happened to miss those C and gave full marks."""
    outcome = query(a5, "1b", q=r"C (k_a + k_b) + C \cos(C) k_c")
    assert outcome.is_pending and outcome.earned == 0
    assert "cos(C), which keeps oscillating" in outcome.feedback[-1]


def test_1e_ii_an_oscillating_query_is_left_to_staff(a5):
    outcome = qkv(a5, V_RIGHT, "I", r"(u_d u_a^T + u_c u_d^T)/beta^2 + \cos(\beta) u_a u_a^T/beta^2")
    assert outcome.is_pending and outcome.earned == 0
    assert "cos(beta), which keeps oscillating" in outcome.feedback[-1]


def test_a_periodic_function_of_a_vanishing_argument_is_decided(a5):
    assert query(a5, "1b", q=r"C (k_a + k_b) \cos(1/C)").earned == 4


def test_1b_a_moderate_scale_shows_the_small_weights_that_still_leak(a5):
    """10(k_a + k_b) leaves 2e-05 on each other key: shown as 0.00 it contradicted 'still leaks'."""
    outcome = query(a5, "1b", q="10(k_a + k_b)")
    assert outcome.earned == 2
    assert "(k_a: 0.50, k_b: 0.50, each other key: 2.3e-05)" in outcome.feedback[0]


def test_1e_ii_wrong_along_one_way_of_growing_says_which(a5):
    """Scores like C/β: right when C outgrows β, wrong when they grow together; the weights shown
    (0.58, 0.21) hold only on the way that fails, which the feedback names."""
    outcome = qkv(a5, V_RIGHT, "I", "C (u_d u_a^T + u_c u_d^T)/beta^5")
    assert outcome.earned == 2
    assert "the limits shown are as β and C grow together" in outcome.feedback[-1]
    assert not any("limits shown" in line for line in qkv(a5, V_RIGHT, "I", "(u_d u_a^T + u_c u_d^T)/beta^4").feedback)


@pytest.mark.parametrize("q", [r"C(2 + \sin(C))(k_a + k_b)", r"C \exp(\sin(C))(k_a + k_b)",
                               r"C \cos(C)^2 (k_a + k_b) + C(k_a + k_b)", r"C(k_a + k_b) + \sin(C) k_c"])
def test_1b_a_bounded_oscillation_that_never_levels_the_keys_is_decided_exactly(a5, q):
    """sympy's limit of C (2 + sin C) is oo·sign(⟨1, 3⟩): one sign, so oo; the weights have their limit."""
    outcome = query(a5, "1b", q=q)
    assert outcome.earned == 4 and outcome.evidence["method"] == "exact limit"


def test_1e_ii_a_positive_oscillating_factor_is_decided_exactly(a5):
    outcome = qkv(a5, V_RIGHT, "I", r"(2 + \sin(\beta))(u_d u_a^T + u_c u_d^T)/beta^2")
    assert outcome.earned == 4 and outcome.evidence["method"] == "exact limit"
