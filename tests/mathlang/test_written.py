"""Answers as students write them, each class of notation read as a TA reads it.

Every row: the part, what was written, how it must be read (the reading the student is
shown), the status it then earns, and the note that says what was read leniently.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attngrade.grading import assignment, grade_answer
from attngrade.problems.keys import load_keys
from attngrade.mathlang.normalize import normalize as rewrite
from attngrade.problems import load_homework

ROOT = Path(__file__).resolve().parents[2]
A5, SP23, FA22, NYU = "cs224n-w21-a5", "eecs182-sp23-transformers", "eecs182-fa22-hw8", "nyu-dl-transformer"
V_RIGHT = r"(u_b u_b^T - u_c u_c^T)/beta^2"
Q_RIGHT = r"(u_d u_a^T + u_c u_d^T)/beta^2"


def graded(homework, part, answer):
    hw = load_homework(homework)
    return grade_answer(assignment(hw, load_keys(ROOT / "solutions", hw)), part, answer)


CASES = [
    # a leading name = (or ≈) naming the field answered
    (A5, "1b", "q = C(k_a + k_b)", {"q": "C (k_a + k_b)"}, "correct", "read the answer after 'q ='"),
    (A5, "1b", r"\mathbf{q} \approx C(k_a + k_b)", {"q": "C (k_a + k_b)"}, "correct",
     r"read the answer after '\mathbf{q} \approx'"),
    (A5, "1d.i", {"q1": r"\mathbf{q}_1 = C\mu_a", "q2": r"q_2 := C\mu_b"}, {"q1": "C mu_a", "q2": "C mu_b"},
     "correct", r"read the answer after '\mathbf{q}_1 ='"),
    # \text, \mathrm, \operatorname and \mathcal around names, subscripts and superscripts
    (SP23, "c.i", r"q_i^{(\text{pos})} \cdot k_j^{(\text{pos})}", {"pi": "qpos_i^T kpos_j"}, "correct", None),
    (SP23, "c.i", r"q_i^{(\mathrm{pos})} \cdot k_j^{(\mathrm{pos})}", {"pi": "qpos_i^T kpos_j"}, "correct", None),
    (FA22, "3a.i", r"\exp(\|q\|^2/(2\sigma^2)) K_{\text{Gauss}}(q, k) \exp(\|k\|^2/(2\sigma^2))",
     {"sim": "exp(k^T k/(2 sqrt(D))) exp(q^T q/(2 sqrt(D))) K_Gauss(q, k)"}, "correct", None),
    (FA22, "3a.i", r"\exp(\|q\|^2/(2\sigma^2)) \mathcal{K}_{Gauss}(q, k) \exp(\|k\|^2/(2\sigma^2))",
     {"sim": "exp(k^T k/(2 sqrt(D))) exp(q^T q/(2 sqrt(D))) K_Gauss(q, k)"}, "correct", None),
    (NYU, "1.1a", {"H": r"V \operatorname{softmax}(\beta K^T Q)", "shape": "t x n"},
     {"H": "V softmax(beta K^T Q)", "shape": "t x n"}, "correct", None),
    # tight runs: names written without spaces, the identity with its size
    (A5, "1e.ii", {"V": r"(u_bu_b^\top - u_cu_c^\top)/\beta^2", "K": "I_d", "Q": r"(u_du_a^\top + u_cu_d^\top)/\beta^2"},
     {"V": "(u_b u_b^T - u_c u_c^T)/beta^2", "K": "I", "Q": "(u_c u_d^T + u_d u_a^T)/beta^2"}, "correct",
     "read I_d as the identity I"),
    (A5, "1b", "Ck_a + Ck_b", {"q": "C k_a + C k_b"}, "correct", None),
    (SP23, "b", {"added": r"x_1^Tx_2 + x_1^Tp_2 + p_1^Tx_2 + p_1^Tp_2",
                 "concatenated": r"x_1^T x_2 + p_1^T p_2"}, None, "correct", None),
    # a condition on the constant after the answer, and a chain of equalities
    (A5, "1b", r"\mathbf{q}=\beta(\mathbf{k}_a + \mathbf{k}_b),\quad\text{where } \beta \gg 0",
     {"q": "beta (k_a + k_b)"}, "correct", r"read '\text{where } \beta \gg 0' as saying your constant is large"),
    (A5, "1c.i", r"q=t(\mu_a+\mu_b),\ t\gg0", {"q": "t (mu_a + mu_b)"}, "correct", r"read 't\gg0' as saying"),
    (A5, "1b", "q = C(k_a + k_b) for C >> 1", {"q": "C (k_a + k_b)"}, "correct", "read 'for C >> 1' as saying"),
    (A5, "1e.i", {"c2": "c_2 = x_2 = u_a", "possible": "no", "why": "x"}, {"c2": "u_a"}, "pending",
     "read the last member of the chain 'c_2 = x_2 = u_a'"),
    # yes/no answered in words
    (A5, "1e.i", {"c2": "u_a", "possible": "Impossible.", "why": "x"}, {"possible": "no"}, "pending", None),
    (A5, "1e.i", {"c2": "u_a", "possible": "不能", "why": "x"}, {"possible": "no"}, "pending", None),
    (A5, "1e.i", {"c2": "u_a", "possible": "it is possible", "why": "x"}, {"possible": "yes"}, None, None),
    # ⊙ with a scalar as a product; the 2-norm's subscript
    (A5, "1e.ii", {"V": r"(u_bu_b^T - u_cu_c^T)\odot \dfrac{1}{\beta^2}", "K": "I",
                   "Q": r"u_du_a^T \odot \dfrac{1}{\lVert u_a\rVert^2_2} + u_cu_d^T \odot \dfrac{1}{\|u_d\|_2^2}"},
     {"V": "(u_b u_b^T - u_c u_c^T)/beta^2"}, "correct", "read ⊙ with a scalar as an ordinary product"),
    # other keys and indices a TA reads as more of the problem's keys
    (A5, "1b", "C(k_a + k_b) + k_c", {"q": "C (k_a + k_b) + k_c"}, "correct",
     "read k_c as one of the other keys (not k_a or k_b)"),
    (A5, "1b", "C(k_a + k_b + k_c)", {"q": "C (k_a + k_b + k_c)"}, "incorrect",
     "so c → 1/3 v_c + 1/3 v_a + 1/3 v_b, not 1/2 v_a + 1/2 v_b"),
    (A5, "1b", "C(k_i + k_j)", {"q": "C (k_i + k_j)"}, "incorrect", "read k_j as one of the other keys"),
    (A5, "1c.i", r"C(\mu_a + \mu_b) - \mu_e", {"q": "-mu_e + C (mu_a + mu_b)"}, "correct",
     "read mu_e as the mean of one of the other keys"),
    (A5, "1d.i", {"q1": "C mu_a + k_c", "q2": "C mu_b"}, {"q1": "C mu_a + k_c"}, "correct",
     "read k_c as the mean of one of the other keys"),
    # decorated free constants
    (A5, "1b", r"\hat{c}(k_a + k_b)", {"q": "c (k_a + k_b)"}, "correct", r"read \hat{c} as c"),
    (A5, "1b", r"\tilde{C}(k_a + k_b)", {"q": "C (k_a + k_b)"}, "correct", r"read \tilde{C} as C"),
    (A5, "1b", r"C^*(k_a + k_b)", {"q": "C (k_a + k_b)"}, "correct", "read C^* as C"),
    (A5, "1b", r"c_1 (k_a + k_b)", {"q": "c_1 (k_a + k_b)"}, "correct", None),
    (A5, "1b", r"\gamma (k_a + k_b)", {"q": "gamma (k_a + k_b)"}, "correct", None),
    # orders: Θ and Ω read as O with a note; a bare cost read as its order
    (SP23, "f", {"encoder": r"\Theta(k M^2)", "cross": r"\Omega(M N k)", "decoder": "k N^2"},
     {"encoder": "O(k M^2)", "cross": "O(M N k)", "decoder": "k N^2"}, "correct",
     "read \\Theta(...) as O(...): the question asks for an order of growth"),
    # a slash as mathematicians write it: juxtaposition binds tighter
    (FA22, "3a.i", r"\exp(\|q\|^2/2\sigma^2) K_Gauss(q, k) \exp(\|k\|^2/2\sigma^2)",
     {"sim": "exp(k^T k/(2 sqrt(D))) exp(q^T q/(2 sqrt(D))) K_Gauss(q, k)"}, "correct",
     r"read /2\sigma^2 as /(2\sigma^2)"),
    # a membership statement answers the value and the shape
    (NYU, "1.1a", {"H": r"H = V softargmax_\beta(K^T Q) \in \mathbb{R}^{t \times n}",
                   "shape": r"H \in \mathbb{R}^{t \times n}"},
     {"H": "V softargmax_beta(K^T Q)"}, "correct", None),
    # choices: case, punctuation, phrases that mean an option
    (NYU, "1.1c", {"beta": "Large.", "type": "Hard", "why": "-"}, {"beta": "large", "type": "hard"}, "pending", None),
    (NYU, "1.1c", {"beta": r"$\beta \to \infty$", "type": "hard attention,", "why": "-"},
     {"beta": "large", "type": "hard"}, "pending", None),
    (NYU, "1.1d", {"beta": "β → 0", "type": "Soft!", "why": "-"}, {"beta": "small", "type": "soft"}, "pending", None),
    (FA22, "1a", "over the keys", {"axis": "keys"}, "correct", None),
    (SP23, "i", {"summarize": "Sequence to sequence", "sentiment": "encoder only", "retrieval": "Encoder.",
                 "translate": "seq2seq"}, None, None, None),
    (A5, "1e.i", {"c2": "u_a", "possible": "No.", "why": "x"}, {"c2": "u_a", "possible": "no"}, "pending", None),
]


@pytest.mark.parametrize("homework, part, answer, readings, status, note", CASES,
                         ids=[f"{c[1]}:{str(c[2])[:30]}" for c in CASES])
def test_written_notation_reads_as_a_ta_reads_it(homework, part, answer, readings, status, note):
    verdict = graded(homework, part, answer)
    for name, reading in (readings or {}).items():
        assert verdict.shown.get(name) == reading, (name, verdict.shown, verdict.feedback)
    if status:
        assert verdict.status == status, verdict.feedback
    if note:
        assert any(note in line for line in verdict.feedback), verdict.feedback
    assert not any("unknown symbol" in line or "cannot appear" in line for line in verdict.feedback)


def test_more_other_keys_than_the_problem_has_is_a_clear_error():
    verdict = graded(A5, "1b", "C(k_a + k_b) + k_c + k_d + k_e + k_f + k_g")
    assert verdict.status == "invalid"
    assert "names 5 other keys (k_c, k_d, k_e, k_f, k_g), but there are only n = 6 keys" in " ".join(verdict.feedback)


@pytest.mark.parametrize("answer, message", [
    ("q = k_a = C(k_a + k_b)", "your chain of equalities says 'k_a' equals your answer, but it does not"),
    (r"C(k_a + k_b), C \to 1", "',' cannot appear here"),  # a condition that is not "large" or "small" stays
    ("C(k_a + k_b), C > 0", "',' cannot appear here"),
])
def test_what_is_not_a_harmless_condition_or_chain_is_not_dropped(answer, message):
    verdict = graded(A5, "1b", answer)
    assert verdict.status == "invalid" and any(message in line for line in verdict.feedback), verdict.feedback


def test_long_runs_of_spaces_are_read_at_once():
    # A guard against catastrophic backtracking in the rewrite rules (one answer must never hang a class).
    import time

    start = time.process_time()
    rewrite("q = k_a" + " " * 2000 + "+ k_b")
    rewrite("a" + " " * 2000 + "x")
    assert time.process_time() - start < 5.0


def test_an_elementwise_product_of_two_matrices_is_refused_with_a_reason():
    verdict = graded(A5, "1e.ii", {"V": r"u_b u_b^T \odot u_c u_c^T", "K": "I", "Q": "I"})
    assert verdict.status == "invalid"
    assert any("an elementwise product (⊙) of two matrices is not read here" in line for line in verdict.feedback)


def test_an_unmatched_choice_lists_the_options():
    verdict = graded(FA22, "1a", "Yes.")
    assert verdict.status == "invalid"
    assert any("expected one of: keys, queries; got 'Yes.'" in line for line in verdict.feedback), verdict.feedback


@pytest.mark.parametrize("text, start, end, message", [
    (r"\text{pos} + k_a", 0, 10, "unknown symbol 'pos'"),  # the caret spans what the student wrote
    (r"q = C(k_a + k_b", 5, 6, "'(' is never closed"),  # after `q =` was set aside
    (r"\hat{c}(k_a + \tilde{k}_b $)", 26, 27, "unexpected character '$'"),
])
def test_errors_after_a_rewrite_point_at_what_was_written(text, start, end, message):
    from attngrade.errors import MathError
    from attngrade.mathlang import parse

    table = load_homework(A5).part("1b").table
    with pytest.raises(MathError) as err:
        parse(text, table)
    assert (err.value.start, err.value.end) == (start, end) and err.value.message.startswith(message)


def test_the_rewrite_map_points_back_into_the_original():
    done = rewrite(r"q = \hat{c}(k_a+k_b)")
    assert done.text == "c(k_a+k_b)"
    assert done.where(0) == r"q = \hat{c}(k_a+k_b)".index("\\hat")
    assert done.where(len(done.text)) == len(r"q = \hat{c}(k_a+k_b)")


def test_softmax_in_nyu_1_1_is_the_plain_softmax():
    # softmax(beta K^T Q) is softargmax_beta(K^T Q); softmax(K^T Q) is not (beta is not 1)
    assert graded(NYU, "1.1a", {"H": r"V softmax(\beta K^T Q)", "shape": "t x n"}).status == "correct"
    assert graded(NYU, "1.1a", {"H": r"V softmax(K^T Q)", "shape": "t x n"}).status == "partial"


def test_a_vector_squared_is_read_as_its_squared_norm():
    from attngrade.mathlang import parse

    table = load_homework(FA22).part("3a.i").table
    value = parse(r"\exp(q^2/(2\sigma^2))", table)
    assert value.kind == "scalar" and r"read q^2 as the squared norm \|q\|^2" in value.notes
    assert value.expr == parse(r"\exp(\|q\|^2/(2\sigma^2))", table).expr


@pytest.mark.parametrize("part, written, reading", [
    ("1c.i", r"1/2C\mu_a + 1/2C\mu_b", "C mu_a/2 + C mu_b/2"),  # a slash never swallows a vector
    ("1b", r"C/2k_a + C/2 k_b", "C k_a/2 + C k_b/2"),
    ("1b", r"C^* k_a + C^* k_b", "C k_a + C k_b"),
])
def test_rewrites_leave_alone_what_they_should(part, written, reading):
    hw = load_homework(A5)
    verdict = grade_answer(assignment(hw, None, self_check=True), part, written)
    assert verdict.shown[hw.part(part).fields[0].name] == reading, verdict.feedback


def test_powers_written_with_stars_count_against_the_limits():
    from attngrade.errors import MathError
    from attngrade.mathlang import parse

    with pytest.raises(MathError, match="powers; at most"):
        parse("x" + "**x" * 101, load_homework(A5).part("1b").table)


@pytest.mark.parametrize("written, suggestion", [
    (r"K_Gaus(q, k)", "did you mean K_Gauss?"),  # one letter off
    (r"\exp(q^T k / sigmaa^2)", "did you mean sigma?"),
    (r"Q^T k", "did you mean q?"),  # another case
])
def test_a_typo_of_a_declared_name_gets_did_you_mean(written, suggestion):
    from attngrade.errors import MathError
    from attngrade.mathlang import parse

    with pytest.raises(MathError) as err:
        parse(written, load_homework(FA22).part("3a.i").table)
    assert suggestion in err.value.message
