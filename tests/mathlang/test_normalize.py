"""The normalization stage, one test per row of docs/normalization.md (`ROWS`).

Each test reads answers written the way students write them and checks what they read as
(against the same answer written plainly, or against the grade it earns), and that a
change which alters what a reader might take the answer to be is said in a note.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
import sympy

from attngrade.errors import MathError
from attngrade.grading import assignment, grade_answer
from attngrade.mathlang import parse
from attngrade.mathlang.chain import same_meaning
from attngrade.mathlang.normalize import ROWS, normalize, table_markdown
from attngrade.problems import load_homework
from attngrade.problems.keys import load_keys
from attngrade.reading import FieldError, UnclearAnswer, read_field, read_number

ROOT = Path(__file__).resolve().parents[2]
A5, SP23, FA22, NYU = "cs224n-w21-a5", "eecs182-sp23-transformers", "eecs182-fa22-hw8", "nyu-dl-transformer"
MIMUW = "mimuw-2022-p4"
V_RIGHT = r"(u_b u_b^T - u_c u_c^T)/\beta^2"


@cache
def _assignment(homework: str):
    hw = load_homework(homework)
    return assignment(hw, load_keys(ROOT / "solutions", hw))


def graded(homework: str, part: str, answer):
    return grade_answer(_assignment(homework), part, answer)


def table(homework: str, part: str, field: str | None = None):
    p = load_homework(homework).part(part)
    return p.table_for(field or p.fields[0].name)


def read(homework: str, part: str, text: str, field: str | None = None):
    p = load_homework(homework).part(part)
    return parse(text, p.table_for(field or p.fields[0].name), name=field or p.fields[0].name)


def same(homework: str, part: str, written: str, plain: str, field: str | None = None) -> None:
    got, want = read(homework, part, written, field), read(homework, part, plain, field)
    assert (got.expr, got.kind, got.shape) == (want.expr, want.kind, want.shape), (written, got.expr, want.expr)


def noted(value, words: str) -> bool:
    return any(words in note for note in value.notes)


# -- the table itself ------------------------------------------------------------------------
def test_every_row_has_its_test_and_the_docs_hold_the_table():
    names = [row.name for row in ROWS]
    assert len(names) == len(set(names))
    missing = [n for n in names if f"test_{n}" not in globals()]
    assert missing == []
    docs = (ROOT / "docs" / "normalization.md").read_text(encoding="utf-8")
    assert table_markdown() in docs, "docs/normalization.md: paste the output of normalize.table_markdown()"


# The field each row's example in the table is read with (rows read in words are tested below).
EXAMPLE_FIELDS = {
    "final_period": (A5, "1b", "q"), "unicode_symbols": (NYU, "1.1b", "beta"), "unicode_powers": (A5, "1e.ii", "V"), "micro_sign": (A5, "1c.i", "q"),
    "unicode_transpose": (A5, "1e.ii", "V"), "sizing_macros": (A5, "1b", "q"), "spacing_macros": (A5, "1b", "q"),
    "conditions_large": (A5, "1b", "q"), "words_after": (SP23, "c.ii", "count"), "conditions_small": (A5, "1b", "q"), "definition_name": (A5, "1b", "q"),
    "definition_function": (SP23, "b", "concatenated"), "definition_field_name": (SP23, "f", "encoder"),
    "equality_chain": (A5, "1e.ii", "V"), "chain_label": (A5, "1e.i", "c2"), "text_macros": (NYU, "1.1a", "H"),
    "label_superscripts": (SP23, "c.i", "pi"), "decorated_constant": (A5, "1b", "q"),
    "starred_constant": (A5, "1b", "q"), "python_spellings": (NYU, "1.1a", "H"), "bigo_spellings": (SP23, "f", "encoder"),
    "bigo_brackets": (SP23, "f", "encoder"), "brace_brackets": (SP23, "e", "k"), "function_brackets": (FA22, "3a.i", "sim"),
    "two_norm": (FA22, "3a.i", "sim"), "norm_bars": (FA22, "3a.i", "sim"), "identity": (A5, "1e.ii", "K"),
    "shape_after_value": (NYU, "1.1a", "H"), "slash_binding": (SP23, "c.ii", "count"), "tight_runs": (A5, "1e.ii", "V"),
    "outer_product": (A5, "1e.ii", "V"), "max_min": (FA22, "3a.ii", "cost"),
    "student_macros": (A5, "1b", "q"), "display_environments": (A5, "1e.ii", "V"),
    "matrix_environments": (SP23, "b", "concatenated"), "typesetting_wrappers": (A5, "1b", "q"),
    "unicode_subscripts": (NYU, "1.1b", "beta"), "unicode_accents": (A5, "1b", "q"), "unicode_relations": (A5, "1e.i", "c2"),
    "table_matrices": (SP23, "b", "concatenated"), "growth_words": (FA22, "3b", "cost"), "inline_math": (A5, "1c.i", "q"),
    "leading_words": (A5, "1e.i", "c2"), "remarks_after": (SP23, "e", "k"), "bare_labels": (SP23, "c.i", "pi"),
    "respelled_names": (SP23, "f", "cross"), "sums": (SP23, "b", "concatenated"),
    "block_matrices": (SP23, "b", "concatenated"),
}


@pytest.mark.parametrize("row", [r for r in ROWS if r.name in EXAMPLE_FIELDS], ids=lambda r: r.name)
def test_the_tables_examples_read_as_it_says(row):
    from attngrade.reading import describe

    homework, part, field = EXAMPLE_FIELDS[row.name]
    assert describe(read(homework, part, row.written, field)) == row.read


# -- one test per row ------------------------------------------------------------------------
def test_final_period():
    same(A5, "1b", "q = C(k_a + k_b).", "C(k_a + k_b)")
    same(SP23, "e", "2^n.", "2^n", "one")
    assert normalize("C k_a...").text == "C k_a..."  # an ellipsis is not a sentence's end


def test_unicode_symbols():
    same(NYU, "1.1b", "1/√d", r"1/\sqrt{d}")
    same(NYU, "1.1b", "1/√(d)", r"1/\sqrt{d}")
    same(A5, "1b", "C(k_a + k_b), C → ∞", "C(k_a + k_b)")
    same(A5, "1e.ii", "u_b ⊗ u_b ÷ β^2", r"u_b u_b^T / \beta^2", "V")


def test_unicode_powers():
    value = read(A5, "1e.ii", "β⁻²(u_b u_b^T - u_c u_c^T)", "V")
    assert value.expr == read(A5, "1e.ii", V_RIGHT, "V").expr
    assert noted(value, "read ⁻² as a power")
    same(SP23, "e", "3ⁿ", "3^n", "two")


def test_micro_sign():
    value = read(A5, "1c.i", r"q = \micro_{a} + \micro_{b}")
    assert value.expr == read(A5, "1c.i", r"\mu_a + \mu_b").expr and noted(value, r"read \micro as \mu")
    assert normalize(r"\microsecond").text == r"\microsecond"  # only the command itself


def test_unicode_transpose():
    value = read(A5, "1e.ii", "u_b u_bᵀ", "V")
    assert value.expr == read(A5, "1e.ii", "u_b u_b^T", "V").expr and noted(value, "read ᵀ as ^T")


@pytest.mark.parametrize("written", [r"\Big(k_a + k_b\Big)", r"\bigl[k_a + k_b\bigr]", r"\left(k_a + k_b\right)",
                                     r"\biggl(k_a + k_b\biggr)", r"\left.(k_a + k_b)\right."])
def test_sizing_macros(written):
    same(A5, "1b", f"C{written}", "C(k_a + k_b)")


def test_sizing_macros_keep_errors_on_what_was_written():
    with pytest.raises(MathError) as err:
        read(A5, "1b", r"C \Big(k_a + k_b")
    assert err.value.message == r"'\Big(' is never closed" and (err.value.start, err.value.end) == (2, 7)


def test_spacing_macros():
    same(A5, "1b", r"\displaystyle C\,(k_a\!+\;k_b)\quad", "C(k_a + k_b)")
    assert normalize(r"\begin{bmatrix} 1 \\ 0 \end{bmatrix}").text == r"\begin{bmatrix} 1 \\ 0 \end{bmatrix}"


@pytest.mark.parametrize("condition", [r", C \to \infty", r"\quad (C \gg 1)", r", \text{where } C \text{ is large}",
                                       r"\quad\text{for large } C", r", C \to +\infty.", ", C → ∞", "(C large)",
                                       r", C \to \infty, \beta \gg 1", "  for some large constant C",
                                       r", where $C$ is a large constant", "，其中 C 是一个较大的正数"])
def test_conditions_large(condition):
    value = read(A5, "1b", "C(k_a + k_b)" + condition)
    assert value.expr == read(A5, "1b", "C(k_a + k_b)").expr
    assert noted(value, "as saying your constant is large")


def test_conditions_small():
    verdict = graded(A5, "1b", r"\frac{1}{\lambda}(k_a + k_b), \lambda \to 0^+")
    assert verdict.status == "correct", verdict.feedback
    assert any("1/lambda is your large constant" in line for line in verdict.feedback)
    assert graded(A5, "1b", r"\lambda(k_a + k_b), \lambda \to 0^{+}").status != "correct"  # λ shrinks: no large factor
    with pytest.raises(MathError, match="tends to 0, but it is not a constant of your own"):
        read(A5, "1e.ii", r"\beta^{-2} u_b u_b^T, \beta \to 0", "V")


@pytest.mark.parametrize("written", [r"m(2T - 1) \text{ parameters}", "m(2T - 1) extra parameters.",
                                     r"(2T - 1) m \textrm{ learned biases}"])
def test_words_after(written):
    value = read(SP23, "c.ii", written)
    assert value.expr == read(SP23, "c.ii", "m(2T - 1)").expr and noted(value, "read the answer without the words")


def test_words_after_that_name_a_symbol_stay():
    assert read(A5, "1b", "(k_a + k_b) beta").expr == read(A5, "1b", "beta (k_a + k_b)").expr
    with pytest.raises(MathError, match="unknown symbol 'parameters'"):
        read(SP23, "c.ii", "parameters")  # nothing is left before it: not words after an answer


@pytest.mark.parametrize("written", [r"\alpha_{i,j} = C(k_a + k_b)", "q' = C(k_a + k_b)", "q_1 := C(k_a + k_b)",
                                     r"\mathbf{q} \approx C(k_a + k_b)", r"\hat{q}^{(1)} = C(k_a + k_b)"])
def test_definition_name(written):
    value = read(A5, "1b", written)
    assert value.expr == read(A5, "1b", "C(k_a + k_b)").expr
    assert noted(value, "read the answer after '" + written.split("C(")[0].strip() + "'")


def test_definition_function():
    value = read(SP23, "b", "f(x, y) = x_1^T x_2 + p_1^T p_2", "concatenated")
    assert value.expr == read(SP23, "b", "x_1^T x_2 + p_1^T p_2", "concatenated").expr and noted(value, "after 'f(x, y) ='")
    same(FA22, "3a.i", r"\text{sim}(q, k) = \exp(\|q\|^2/(2\sigma^2)) K_Gauss(q, k) \exp(\|k\|^2/(2\sigma^2))",
         r"\exp(\|q\|^2/(2\sigma^2)) K_Gauss(q, k) \exp(\|k\|^2/(2\sigma^2))")
    # m is declared: m(2T - 1) is a product, so the two sides are a chain and must agree
    same(SP23, "c.ii", "m(2T - 1) = 2mT - m", "2mT - m")
    with pytest.raises(MathError, match="equals your answer, but it does not"):
        read(SP23, "c.ii", "m(2T - 1) = 2mT")


def test_definition_field_name():
    verdict = graded(SP23, "f", {"encoder": "encoder: O(M^2 k)", "cross": "Cross: O(MNk)", "decoder": "decoder = O(N^2 k)"})
    assert verdict.status == "correct", verdict.feedback
    assert any("read the answer after 'encoder:'" in line for line in verdict.feedback)


def test_equality_chain():
    written = r"V = \frac{1}{\beta^2}(u_b u_b^T - u_c u_c^T) = \beta^{-2}u_b u_b^T - \beta^{-2}u_c u_c^T"
    verdict = graded(A5, "1e.ii", {"V": written, "K": "I", "Q": r"(u_d u_a^T + u_c u_d^T)/\beta^2"})
    assert verdict.status == "correct", verdict.feedback
    assert any("read the last member of the chain" in line for line in verdict.feedback)
    # members are compared by meaning under the part's assumptions: u_b^T u_b is beta^2
    same(A5, "1e.ii", r"V = \frac{u_b u_b^T}{u_b^T u_b} = u_b u_b^T / \beta^2", r"u_b u_b^T / \beta^2", "V")
    with pytest.raises(MathError, match=r"your chain of equalities says '\\frac\{1\}\{\\beta\}u_b u_b\^T' equals"):
        read(A5, "1e.ii", r"V = \frac{1}{\beta}u_b u_b^T = \beta^{-2}u_b u_b^T", "V")
    # orders of growth: the bigO check compares the members by their order
    assert graded(SP23, "f", {"encoder": "O(M^2 k + M^2) = O(M^2 k)", "cross": "O(MNk)",
                              "decoder": "O(N^2 k)"}).status == "correct"
    assert graded(SP23, "f", {"encoder": "O(M^2) = O(M^2 k)", "cross": "O(MNk)",
                              "decoder": "O(N^2 k)"}).status == "invalid"
    # `\approx` compares to a few digits
    d = sympy.Symbol("d", positive=True)
    assert same_meaning(1 / sympy.sqrt(2), sympy.Rational(7071, 10000), table(NYU, "1.1b"), rtol=1e-2)
    assert not same_meaning(1 / sympy.sqrt(2), sympy.Rational(7071, 10000), table(NYU, "1.1b"))
    assert same_meaning(d ** sympy.Rational(-1, 2), 1 / sympy.sqrt(d), table(NYU, "1.1b"))


def test_equality_chain_members_are_bounded():
    with pytest.raises(MathError, match="more than 8 members"):
        read(A5, "1b", " = ".join(["C(k_a + k_b)"] * 12))


def test_chain_label():
    value = read(A5, "1e.i", "c_{2} = v_{2} = u_{a}", "c2")
    assert value.expr == read(A5, "1e.i", "u_a", "c2").expr and noted(value, "read 'v_{2}' as a name for your answer")
    with pytest.raises(MathError, match="equals your answer, but it does not"):
        read(A5, "1e.i", "c_2 = u_b = u_a", "c2")


@pytest.mark.parametrize("written", [r"V \mathrm{softargmax}_\beta(K^T Q)", r"V \operatorname{softmax}(\beta K^T Q)",
                                     r"V \text{ softmax }(\beta K^T Q)", r"V \operatorname*{softmax}(\beta K^T Q)"])
def test_text_macros(written):
    same(NYU, "1.1a", written, r"V softargmax_\beta(K^T Q)" if "softargmax" in written else r"V softmax(\beta K^T Q)", "H")


def test_text_macros_around_a_subscripted_name():
    same(FA22, "3a.i", r"\exp(\|q\|^2/(2\sigma^2)) \mathrm{K_{Gauss}}(q, k) \exp(\|k\|^2/(2\sigma^2))",
         r"\exp(\|q\|^2/(2\sigma^2)) K_Gauss(q, k) \exp(\|k\|^2/(2\sigma^2))")


@pytest.mark.parametrize("written", [r"q_i^{(\text{pos})\top} k_j^{(\text{pos})}", r"q_i^{(\text{pos})^\top} k_j^{(pos)}",
                                     r"q_i^{\text{pos}} \cdot k_j^{\mathrm{pos}}", r"q_i^{( pos )T} k_j^{(pos)}"])
def test_label_superscripts(written):
    same(SP23, "c.i", written, "qpos_i^T kpos_j")


def test_decorated_constant():
    value = read(A5, "1b", r"\hat{c}(k_a + k_b)")
    assert value.expr == read(A5, "1b", "c(k_a + k_b)").expr and noted(value, r"read \hat{c} as c")


def test_starred_constant():
    value = read(A5, "1b", "C^{*}(k_a + k_b)")
    assert value.expr == read(A5, "1b", "C(k_a + k_b)").expr and noted(value, "read C^{*} as C")


def test_python_spellings():
    value = read(NYU, "1.1a", "V @ softargmax_beta(K.T @ Q)", "H")
    assert value.expr == read(NYU, "1.1a", "V softargmax_beta(K^T Q)", "H").expr
    assert noted(value, "read @ as a matrix product") and noted(value, "read .T as ^T")
    same(SP23, "e", "(k+1)**n", "(k+1)^n", "k")


@pytest.mark.parametrize("written", [r"\mathcal O(M^2 k)", r"\mathcal{O}(M^2 k)", r"{\mathcal O}(M^2 k)",
                                     r"\operatorname{O}(M^2 k)", r"\mathrm{O}(M^2k)", r"\cal O(M^2 k)"])
def test_bigo_spellings(written):
    value = read(SP23, "f", written, "encoder")
    assert value.kind == "bigO" and value.expr == read(SP23, "f", "O(M^2 k)", "encoder").expr


@pytest.mark.parametrize("written", [r"\Theta(M^2 k)", r"Θ[M^2 k]", r"\Omega\{M^2 k\}"])
def test_bigo_spellings_theta_and_omega_say_so(written):
    value = read(SP23, "f", written, "encoder")
    assert value.kind == "bigO" and noted(value, "as O(...): the question asks for an order of growth")


@pytest.mark.parametrize("written", ["O[M^2 k]", r"O\{M^2 k\}", "O{M^2 k}", r"\mathcal{O}\left(M^2 k\right)",
                                     r"O\big(M^2 k\big)", r"O\left[M (M k)\right]"])
def test_bigo_brackets(written):
    value = read(SP23, "f", written, "encoder")
    assert value.kind == "bigO" and sympy.expand(value.expr) == read(SP23, "f", "O(M^2 k)", "encoder").expr


def test_brace_brackets():
    same(SP23, "e", r"\{k + 1\}^n", "(k + 1)^n", "k")
    same(SP23, "e", r"\left\{k + 1\right\}^n", "(k + 1)^n", "k")


def test_function_brackets():
    same(FA22, "3a.i", r"\exp(\|q\|^2/(2\sigma^2)) K_Gauss[q, k] \exp(\|k\|^2/(2\sigma^2))",
         r"\exp(\|q\|^2/(2\sigma^2)) K_Gauss(q, k) \exp(\|k\|^2/(2\sigma^2))")
    same(NYU, "1.1a", r"V softargmax_\beta[K^T Q]", r"V softargmax_\beta(K^T Q)", "H")
    same(FA22, "3a.i", r"\exp[q^T k / \sigma^2]", r"\exp(q^T k / \sigma^2)")
    same(A5, "1b", "C[k_a + k_b]", "C(k_a + k_b)")  # after anything else, a bracket is a factor


def test_two_norm():
    same(FA22, "3a.i", r"\exp(\|q\|_2^2/(2\sigma^2))", r"\exp(q^T q/(2\sigma^2))")
    same(FA22, "3a.i", r"\exp(|q|^2_2/(2\sigma^2))", r"\exp(q^T q/(2\sigma^2))")


@pytest.mark.parametrize("written", ["|q|", r"\lvert q \rvert", r"\vert q \vert", r"\Vert q \Vert", "‖q‖", r"\left|q\right|",
                                     r"\left\lVert q \right\rVert"])
def test_norm_bars(written):
    same(FA22, "3a.i", f"\\exp({written})", r"\exp(\sqrt{q^T q})")


def test_norm_bars_of_a_scalar_are_its_absolute_value():
    assert read(FA22, "3a.i", "|D - 1|").expr == sympy.Abs(read(FA22, "3a.i", "D - 1").expr)


@pytest.mark.parametrize("written, size", [(r"\mathbb{I}", False), (r"\mathbf{I}_d", True), (r"I_{d \times d}", True),
                                           (r"\mathrm{Id}", False), (r"\boldsymbol{I}", False), ("I_{d_k}", True)])
def test_identity(written, size):
    value = read(A5, "1e.ii", written, "K")
    assert value.expr == read(A5, "1e.ii", "I", "K").expr
    assert noted(value, "as the identity I") == size


def test_shape_after_value():
    same(NYU, "1.1a", r"V softargmax_\beta(K^T Q) \in \mathbb{R}^{t \times n}", r"V softargmax_\beta(K^T Q)", "H")
    same(NYU, "1.1a", r"V softargmax_\beta(K^T Q) ∈ ℝ^{t \times n}", r"V softargmax_\beta(K^T Q)", "H")


def test_slash_binding():
    value = read(FA22, "3a.i", r"\exp(\|q\|^2/2\sigma^2)")
    assert value.expr == read(FA22, "3a.i", r"\exp(\|q\|^2/(2\sigma^2))").expr and noted(value, r"read /2\sigma^2")


def test_tight_runs():
    same(A5, "1e.ii", r"u_bu_b^\top - u_cu_c^\top", r"u_b u_b^T - u_c u_c^T", "V")
    same(SP23, "b", "x_1^Tx_2 + p_1^Tp_2", "x_1^T x_2 + p_1^T p_2", "concatenated")
    same(A5, "1b", "Ck_a + Ck_b", "C k_a + C k_b")


def test_outer_product():
    verdict = graded(A5, "1e.ii", {"V": r"\frac{1}{\beta^2}(u_b \otimes u_b - u_c \otimes u_c)", "K": "I",
                                   "Q": r"(u_d \otimes u_a + u_c \otimes u_d)/\beta^2"})
    assert verdict.status == "correct", verdict.feedback
    with pytest.raises(MathError, match="outer product of two vectors"):
        read(A5, "1e.ii", r"\beta \otimes u_b", "V")


def test_max_min():
    value = read(FA22, "3a.ii", r"O(N D_r \max\{D, M\})", "cost")
    assert value.expr == read(FA22, "3a.ii", "O(N D_r max(D, M))", "cost").expr
    answer = {"sim": r"\exp(\|q\|^2/(2\sigma^2)) \phi(q)^T \phi(k) \exp(\|k\|^2/(2\sigma^2))",
              "cost": r"O(N D_r \max(D, M))"}
    assert graded(FA22, "3a.ii", answer).status == "correct"  # max(D, M) grows like D + M
    answer["cost"] = r"O(N D_r \min[D, M])"
    assert graded(FA22, "3a.ii", answer).status != "correct"


def test_choice_words():
    assert graded(FA22, "1a", "Along the keys dimension (each row sums to 1)").status == "correct"
    assert graded(FA22, "1a", "over the keys, not the queries").status == "correct"
    verdict = graded(SP23, "i", {"summarize": "an encoder-decoder network", "sentiment": "an encoder-only network",
                                 "retrieval": "Encoder only.", "translate": "seq2seq (encoder–decoder)"})
    assert verdict.status == "correct", verdict.feedback
    verdict = graded(NYU, "1.1c", {"beta": "beta->infinity", "type": "hard (argmax)", "why": "-"})
    assert verdict.shown["beta"] == "large" and verdict.shown["type"] == "hard"
    assert graded(NYU, "1.1d", {"beta": "tiny", "type": "soft", "why": "-"}).shown["beta"] == "small"
    part = load_homework(FA22).part("1b")
    assert read_field(part, part.field("weights"), "almost the identity") == "identity"
    with pytest.raises(UnclearAnswer, match="could not read one option .* it names keys and queries"):
        read_field(load_homework(FA22).part("1a"), load_homework(FA22).part("1a").field("axis"), "keys or queries")
    with pytest.raises(UnclearAnswer, match="only says what the answer is not"):
        read_field(part, part.field("weights"), "not uniform")


def test_yes_no_words():
    part = load_homework(FA22).part("1d")
    field = part.field("required")
    for written, said in [("No — it can't.", False), ("not required", False), ("Yes, they must.", True),
                          ("It is not necessary.", False), ("No, they can differ.", False)]:
        assert read_field(part, field, written) is said, written
    assert graded(A5, "1e.i", {"c2": "u_a", "possible": "No — it can't.", "why": "x"}).shown["possible"] == "no"
    with pytest.raises(UnclearAnswer, match="says both yes and no"):
        read_field(part, field, "yes it is not required")
    with pytest.raises(FieldError, match="expected yes or no"):
        read_field(part, field, "maybe")


def test_number_annotations():
    part = load_homework(A5).part("2f")
    field = part.field("accuracy")
    reading = read_number(part, field, "12.0% (60/500)")
    assert (reading.value, reading.percent_sign, reading.text) == (12.0, True, "12.0%")
    assert read_number(part, field, "60 out of 500 (12%)").value == pytest.approx(0.12)
    with pytest.raises(FieldError, match="disagree: 12.0% is not 61/500"):
        read_number(part, field, "12.0% (61/500)")
    with pytest.raises(FieldError, match="expected a number"):
        read_number(part, field, "12% because 60 were right")


@pytest.mark.parametrize("written", ["t-by-n (one column per query)", r"t \times n, since V is t \times m", "(t, n)",
                                     "t × n — each column is an output", r"$t \times n$"])
def test_shape_forms(written):
    verdict = graded(NYU, "1.1a", {"H": r"V softargmax_\beta(K^T Q)", "shape": written})
    assert verdict.status == "correct", verdict.feedback


def test_a_shape_written_alone_stays_as_written():
    verdict = graded(NYU, "1.1a", {"H": r"V softargmax_\beta(K^T Q)", "shape": "t x n"})
    assert verdict.shown["shape"] == "t x n"


def test_normalizing_is_linear_in_the_length():
    import time

    start = time.process_time()
    for text in ["q = " + "k_a + " * 330 + "k_b", "(" * 40 + "x" + ")" * 40 + " , C" * 100, " ," * 1000,
                 "O[" * 30 + "n" + "]" * 30, r"\left(" * 200]:
        normalize(text[:2000])
    assert time.process_time() - start < 2.0


def test_every_rewrite_keeps_the_map_back():
    written = r"q_1 = \Big(\hat{c}\,k_a + k_b\Big), C \to \infty."
    done = normalize(written)
    assert done.text == "(c k_a + k_b)"
    assert written[done.where(0):].startswith(r"\Big(") and written[done.where(1):].startswith(r"\hat{c}")
    assert re.search("C .to .infty", done.notes[0])


# -- the LaTeX and Unicode front end (tests/mathlang/test_frontend.py reads real files of each class) ---------
def test_student_macros():
    from attngrade.mathlang.macros import find_definitions
    from attngrade.records import Written

    value = read(A5, "1b", r"\newcommand{\vk}{\mathbf{k}} C(\vk_a + \vk_b)")
    assert value.expr == read(A5, "1b", "C(k_a + k_b)").expr and noted(value, r"read your macro \vk as you defined it")
    part = load_homework(A5).part("1e.ii")
    defined = find_definitions(r"\newcommand{\outer}[2]{#1 #2^\top} \def\B{\beta}")
    written = Written(r"\frac{\outer{u_b}{u_b} - \outer{u_c}{u_c}}{\B^2}", defined)
    assert read_field(part, part.field("V"), written).expr == read(A5, "1e.ii", V_RIGHT, "V").expr
    with pytest.raises(FieldError, match=r"unknown symbol '\\vk_a'"):
        read_field(load_homework(A5).part("1b"), load_homework(A5).part("1b").field("q"), r"C(\vk_a + \vk_b)")


def test_display_environments():
    same(A5, "1e.ii", r"\begin{align*} V &= \frac{u_b u_b^T - u_c u_c^T}{\beta^2} \end{align*}", V_RIGHT, "V")
    same(A5, "1e.ii", r"\begin{aligned} V &= \beta^{-2} u_b u_b^T \\ &\quad - \beta^{-2} u_c u_c^T \end{aligned}",
         r"\beta^{-2} u_b u_b^T - \beta^{-2} u_c u_c^T", "V")  # a line that goes on with an operator continues
    with pytest.raises(MathError, match="does not go on with '='"):
        read(A5, "1e.ii", r"\begin{gather} V = u_b u_b^T \\ u_c u_c^T \end{gather}", "V")


def test_matrix_environments():
    same(SP23, "b", r"\left[\begin{array}{c} x_1 \\ p_1 \end{array}\right]^T \left[\begin{array}{c} x_2 \\ p_2 "
         r"\end{array}\right]", "x_1^T x_2 + p_1^T p_2", "concatenated")
    same(SP23, "e", r"\begin{bmatrix*}[r] 2^n & 3^n \end{bmatrix*}", r"\begin{bmatrix} 2^n & 3^n \end{bmatrix}", "one")
    with pytest.raises(MathError, match="case distinction"):
        read(SP23, "e", r"\begin{cases} 2^n \end{cases}", "one")


def test_typesetting_wrappers():
    same(A5, "1b", r"\boxed{q = C(k_a + k_b)} \tag{1}", "C(k_a + k_b)")
    same(A5, "1b", r"\textcolor{red}{C(k_a + k_b)} \label{eq:q} \nonumber", "C(k_a + k_b)")


def test_unicode_subscripts():
    same(NYU, "1.1b", "1/√dₖ", r"1/\sqrt{d_k}")
    same(SP23, "b", "x₁ᵀx₂ + p₁ᵀp₂", "x_1^T x_2 + p_1^T p_2", "concatenated")


def test_unicode_accents():
    same(A5, "1b", "ĉ(k_a + k_b)", "c(k_a + k_b)")
    value = read(A5, "1b", "q\u0302 = c\u0302(k_a + k_b)")
    assert value.expr == read(A5, "1b", "c(k_a + k_b)").expr and noted(value, r"read \hat{c} as c")


def test_unicode_relations():
    same(A5, "1e.i", "c₂ ≈ x₂ = u_a", "u_a", "c2")
    same(A5, "1b", "C\u2009(k_a\u202f+ k_b)", "C(k_a + k_b)")


def test_table_matrices():
    same(SP23, "b", r"[x_1; p_1]^T [x_2; p_2]", "x_1^T x_2 + p_1^T p_2", "concatenated")
    value = read(SP23, "e", "| 2^n |\n|---|\n| 3^n |", "one")
    assert value.kind == "matrix" and noted(value, "read the table as a matrix")


def test_growth_words():
    value = read(FA22, "3b", "linear in the sequence length N", "cost")
    assert value.kind == "bigO" and noted(value, "as O(N)")
    for unsure in ("linear in N and D", "not linear in N", "roughly linear, maybe quadratic in N"):
        with pytest.raises(MathError):
            read(FA22, "3b", unsure, "cost")


def test_inline_math():
    value = read(A5, "1c.i", r"Set $q = \lambda(\mu_a + \mu_b)$ for a large $\lambda$.")
    assert value.expr == read(A5, "1c.i", r"\lambda(\mu_a + \mu_b)").expr and noted(value, "read the formula after 'Set'")
    same(A5, "1e.i", "$c_2 = x_2 = u_a$ (by the softmax weights 0, 1, 0)", "u_a", "c2")
    for unsure in (r"not $C(k_a + k_b)$", r"half of $C(k_a + k_b)$", r"$C(k_a + k_b)$ or $C k_a$",
                   r"$C(k_a + k_b)$, but only if $C$ is small"):
        with pytest.raises(MathError):
            read(A5, "1b", unsure)


def test_leading_words():
    value = read(A5, "1e.i", r"\text{So } c_2 = x_2 = u_a", "c2")
    assert value.expr == read(A5, "1e.i", "u_a", "c2").expr and noted(value, "read the formula after")
    same(A5, "1b", "so we get q = C(k_a + k_b)", "C(k_a + k_b)")
    with pytest.raises(MathError):
        read(SP23, "e", r"\text{half of } 2^n", "one")


def test_remarks_after():
    value = read(SP23, "e", r"(k+1)^n \text{ (k heads plus the residual)}", "k")
    assert value.expr == read(SP23, "e", "(k+1)^n", "k").expr and noted(value, "without the remark")
    with pytest.raises(MathError):
        read(SP23, "e", r"2^n \text{ (or 3^n)}", "one")


def test_bare_labels():
    for spelled in ("q_i^(pos) k_j^(pos)", "q^{(pos)}_i k^{(pos)}_j"):
        same(SP23, "c.i", spelled, "q_i^{(pos)} k_j^{(pos)}")
    same(NYU, "1.1a", r"V[\text{soft}]\text{argmax}_\beta(K^T Q)", r"V \text{softargmax}_\beta(K^T Q)", "H")


def test_respelled_names():
    value = read(SP23, "f", "O(mnk)", "cross")
    assert value.expr == read(SP23, "f", "O(M N k)", "cross").expr and noted(value, "read m as M")
    same(MIMUW, "1b", r"(\kappa_a + \kappa_b) c_1, c_1 \gg 1", "c_1 (k_a + k_b)")
    # where a constant of the student's own may be meant, a letter is that constant, never a declared name
    assert read(A5, "1e.ii", "b u_b u_b^T", "V").expr != read(A5, "1e.ii", r"\beta u_b u_b^T", "V").expr


def test_sums():
    same(SP23, "c.ii", r"\sum_{h=1}^{m} (2T-1)", "(2T - 1) m")
    same(SP23, "b", r"\sum_{k=1}^{d} x_{1,k} x_{2,k} + \sum_{k=1}^{d} p_{1,k} p_{2,k}", "x_1^T x_2 + p_1^T p_2",
         "concatenated")
    with pytest.raises(MathError, match="have d entries"):
        read(SP23, "b", r"\sum_{k=1}^{n} x_{1,k} x_{2,k}", "concatenated")


def test_block_matrices():
    same(SP23, "b", r"[x_1, p_1] \cdot [x_2, p_2]", "x_1^T x_2 + p_1^T p_2", "concatenated")
    value = read(A5, "1e.ii", r"\begin{bmatrix} I & 0 \\ 0 & I \end{bmatrix}", "K")
    assert value.expr == read(A5, "1e.ii", "I", "K").expr and noted(value, "as the identity I")
    with pytest.raises(MathError, match="only 0 blocks"):
        read(A5, "1e.ii", r"\begin{bmatrix} I & 0 \\ 0 & 0 \end{bmatrix}", "K")


def test_divided_constant():
    with pytest.raises(MathError, match="appears only in a denominator"):
        read(A5, "1c.i", r"\alpha^{-1/4}(\mu_a + \mu_b)")
    assert graded(A5, "1b", r"\frac{1}{\lambda}(k_a + k_b), \lambda \to 0^+").status == "correct"


def test_number_spellings():
    part = load_homework(A5).part("2d")
    field = part.field("accuracy")
    for written in ("Correct: 9.0 out of 500.0: 1.7999999999999998%", "9 right of 500 = 1.8%", r"1.8\,\%",
                    "1.8 per cent"):
        assert read_number(part, field, written).fractions()[0] == pytest.approx(0.018), written
    with pytest.raises(FieldError, match="disagree"):
        read_number(part, field, "Correct: 9.0 out of 500.0: 2.5%")


def test_referent_words():
    part = load_homework(SP23).part("h")
    assert read_field(part, part.field("useful"), "The second student is wrong; pretraining on novels is useful.")
    with pytest.raises(UnclearAnswer, match="says someone or something is wrong"):
        read_field(load_homework(FA22).part("1d"), load_homework(FA22).part("1d").field("required"),
                   "The decoder is wrong here.")
