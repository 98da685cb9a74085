"""The reader's LaTeX and Unicode front end, one test per class of what students write.

Where a format is involved (a macro defined in a LaTeX preamble, a notebook's Markdown cell or a
Markdown file; an answer inside a sentence of a Markdown file; a matrix as a Markdown table) the
answers are real submission files under tests/data/frontend/class, graded as `grade run` grades a
class folder. Each class is tested on right answers, the same answer in another notation, and
wrong or unsure answers, which must never earn the points.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
import sympy

from attngrade.errors import MathError
from attngrade.grading import Class, Options, grade
from attngrade.mathlang import parse
from attngrade.problems import load_homework
from attngrade.reading import FieldError, UnclearAnswer, read_field, read_number
from attngrade.records import Status

ROOT = Path(__file__).resolve().parents[2]
CLASS = ROOT / "tests/data/frontend/class"
A5, SP23, FA22, NYU, MIMUW = ("cs224n-w21-a5", "eecs182-sp23-transformers", "eecs182-fa22-hw8", "nyu-dl-transformer",
                              "mimuw-2022-p4")


@pytest.fixture(scope="module")
def graded():
    run = grade(Class([CLASS]), Options(solutions=ROOT / "solutions", workers=1, ids_from_names=True))
    return {result.student: {v.part: v for v in result.parts} for result in run.results}


@cache
def _part(homework: str, part: str):
    return load_homework(homework).part(part)


def read(homework: str, part: str, text: str, field: str | None = None):
    p = _part(homework, part)
    name = field or p.fields[0].name
    return read_field(p, p.field(name), text)


def same(homework: str, part: str, written: str, plain: str, field: str | None = None) -> None:
    got, want = read(homework, part, written, field), read(homework, part, plain, field)
    assert (got.expr, got.kind, got.shape) == (want.expr, want.kind, want.shape), (written, got.expr, want.expr)


def equal(homework: str, part: str, written: str, plain: str, field: str | None = None) -> None:
    """The two read as the same value (worked out at random instances, as a chain's members are)."""
    from attngrade.mathlang.chain import same_meaning

    got, want = read(homework, part, written, field), read(homework, part, plain, field)
    table = _part(homework, part).table_for(field or _part(homework, part).fields[0].name)
    assert same_meaning(got.expr, want.expr, table) is True, (written, got.expr, want.expr)


def unread(homework: str, part: str, text: str, field: str | None = None, match: str = "") -> str:
    with pytest.raises(FieldError, match=match or None) as err:
        read(homework, part, text, field)
    return str(err.value)


def test_macros(graded):
    preamble, notebook, markdown = graded["macros-preamble"], graded["macros-notebook"], graded["macros-operator"]
    assert preamble["1b"].status == preamble["1e.ii"].status == Status.CORRECT, preamble["1e.ii"].feedback
    assert any("read your macros \\B, \\outer as you defined them" in line for line in preamble["1e.ii"].feedback)
    assert notebook["1c.i"].status == notebook["1d.i"].status == Status.CORRECT  # defined in another cell
    assert markdown["1.1a"].status == Status.CORRECT  # \DeclareMathOperator in a `$...$` of the text
    assert graded["macros-wrong"]["1e.ii"].score < 4  # the macros of a wrong answer expand to a wrong answer
    commented = graded["macros-commented"]["1b"]  # a definition commented out defines nothing
    assert commented.status == Status.INVALID and commented.pending_points == 4
    assert "unknown symbol '\\vk_a'" in commented.feedback[1]


def test_macros_are_bounded():
    from attngrade.mathlang.macros import find_definitions
    from attngrade.records import Written

    part = _part(A5, "1b")
    looping = Written(r"\x k_a", find_definitions(r"\newcommand{\x}{\x\x}"))
    with pytest.raises(FieldError, match="call each other more than 8 deep"):
        read_field(part, part.field("q"), looping)
    wide = find_definitions("".join(rf"\newcommand{{\m{c}}}{{{(chr(92) + 'm' + chr(ord(c) + 1) + ' ') * 12}}}"
                                    for c in "abcdef") + r"\newcommand{\mg}{k_a}")
    with pytest.raises(FieldError, match="more than 400 calls|more than 2000 characters"):
        read_field(part, part.field("q"), Written(r"\ma", wide))
    same(A5, "1b", r"\newcommand{\vk}{\mathbf{k}} C(\vk_a + \vk_b)", "C(k_a + k_b)")  # defined in the answer


def test_environments(graded):
    parts = graded["environments"]
    assert parts["1e.ii"].status == Status.CORRECT, parts["1e.ii"].feedback  # aligned chain, I in blocks, gather
    same(FA22, "3a.i", r"\begin{aligned} \text{sim}_{\text{softmax}}(q, k) &= \exp(\frac{q^T k}{\sqrt{D}}) \\ &= "
         r"\exp(\frac{\|q\|^2}{2\sigma^2}) K_{Gauss}(q, k) \exp(\frac{\|k\|^2}{2\sigma^2}) \end{aligned}",
         r"\exp(\frac{\|q\|^2}{2\sigma^2}) K_{Gauss}(q, k) \exp(\frac{\|k\|^2}{2\sigma^2})")
    matrix = r"\begin{bmatrix} x_1 \\ p_1 \end{bmatrix}^\top \begin{bmatrix} x_2 \\ p_2 \end{bmatrix}"
    for spelled in (r"\left[\begin{array}{c} x_1 \\ p_1 \end{array}\right]^\top \left[\begin{array}{c} x_2 \\ p_2 "
                    r"\end{array}\right]", matrix.replace("bmatrix", "bmatrix*").replace(r"*} x", r"*}[r] x"),
                    matrix.replace("bmatrix", "smallmatrix")):
        same(SP23, "b", spelled, matrix, "concatenated")
    unread(A5, "1e.ii", r"\begin{aligned} V &= u_b u_b^T \\ &= u_c u_c^T \end{aligned}", "V",
           "says 'u_b u_b\\^T' equals your answer, but it does not")
    unread(A5, "1e.ii", r"\begin{gather} V = u_b u_b^T \\ K = I \end{gather}", "V", "does not go on with '='")
    unread(SP23, "e", r"\begin{cases} 2^n & n > 0 \\ 1 & n = 0 \end{cases}", "one", "case distinction")


def test_spacing():
    for spaced in (r"C\,(k_a + k_b)", r"C\;(k_a\!+\!k_b)", r"C\quad(k_a + k_b)", "C\u2009(k_a + k_b)",
                   r"C~(k_a\ +\ k_b)", r"\displaystyle C\qquad(k_a + k_b)"):
        same(A5, "1b", spaced, "C(k_a + k_b)")
    same(NYU, "1.1b", r"\beta = 1/\!\sqrt{d_k}", r"1/\sqrt{d_k}")
    assert read_number(_part(A5, "2f"), _part(A5, "2f").field("accuracy"), r"26.6\,\%").value == 26.6
    assert read(SP23, "c.ii", r"2T\,-\,1").expr != read(SP23, "c.ii", "(2T - 1) m").expr  # spacing changes nothing


def test_sums():
    same(SP23, "c.ii", r"\sum_{h=1}^{m} (2T-1)", "(2T - 1) m")
    equal(SP23, "b", r"\sum_{k=1}^{d} (x_{1,k} + p_{1,k})(x_{2,k} + p_{2,k})", "(x_1 + p_1)^T (x_2 + p_2)", "added")
    same(SP23, "b", r"\sum_{k=1}^{d} x_{1,k} x_{2,k} + \sum_{k=1}^{d} p_{1,k} p_{2,k}", "x_1^T x_2 + p_1^T p_2",
         "concatenated")
    equal(SP23, "c.ii", r"\sum^{m}_{i=1} i", "m (m + 1) / 2")
    # a sum in the student's own notation is a step of a chain: the last member is the answer
    value = read(A5, "1e.i", r"c_2 = \sum_{j=1}^3 \alpha_{2j} x_j \approx x_2 = u_a", "c2")
    assert value.expr == read(A5, "1e.i", "u_a", "c2").expr
    assert any("a step in your own notation" in note for note in value.notes)
    unread(SP23, "b", r"\sum_{k=1}^{n} x_{1,k} x_{2,k}", "concatenated", "have d entries")  # limits off the length
    unread(SP23, "b", r"\sum_{k=1}^{d} x_{1,k}", "concatenated", "not an inner product")
    unread(A5, "1e.i", r"\sum_{j=1}^3 \alpha_{2j} x_j", "c2", "unknown symbol")  # as the answer: not sure
    assert read(SP23, "b", r"\sum_{k=1}^{d} x_{1,k} p_{2,k}", "concatenated").expr != \
        read(SP23, "b", "x_1^T x_2 + p_1^T p_2", "concatenated").expr


def test_unicode(graded):
    parts = graded["unicode"]
    assert parts["b"].status == parts["f"].status == Status.CORRECT, parts["b"].feedback
    same(MIMUW, "1d.i", "q₁ = β μ_a", r"\beta \mu_a", "q1")
    same(NYU, "1.1b", "1/√dₖ", r"1/\sqrt{d_k}")
    same(FA22, "3a.ii", "exp(∥q∥²/(2σ²)) φ(q)ᵀφ(k) exp(∥k∥²/(2σ²))",
         r"\exp(\|q\|^2/(2\sigma^2)) \phi(q)^T \phi(k) \exp(\|k\|^2/(2\sigma^2))", "sim")
    same(FA22, "3b", "V′ᵢ = φ(Qᵢ)ᵀSᵢ / (φ(Qᵢ)ᵀZᵢ)", r"\phi(Q_i)^T S_i / (\phi(Q_i)^T Z_i)", "output")
    # a product after a slash is the denominator in Greek letters too, as in the homeworks
    same(FA22, "3a.i", "exp(∥q∥²/2σ²) K_gauss(q,k) exp(∥k∥²/2σ²)",
         r"\exp(\|q\|^2/(2\sigma^2)) K_{Gauss}(q, k) \exp(\|k\|^2/(2\sigma^2))")
    same(A5, "1b", "q = ĉ(k_a + k_b), ĉ ≫ 1", "c(k_a + k_b)")  # a precomposed accent and ≫
    same(A5, "1e.i", "c₂ ≈ x₂ = u_a", "u_a", "c2")
    unread(A5, "1b", "C(k_a + k_b) \U0001d400", match="unexpected character")  # pasted junk stays unread


def test_names():
    same(MIMUW, "1b", r"q = (\kappa_a^T + \kappa_b^T) \cdot c_1, \quad c_1 \gg 0", "c_1 (k_a^T + k_b^T)")
    same(SP23, "f", "O(m^2 k)", "O(M^2 k)", "encoder")
    same(SP23, "f", "O(mnk)", "O(M N k)", "cross")
    same(SP23, "c.i", "q_i^(pos) k_j^(pos)", "q_i^{(pos)} k_j^{(pos)}")
    same(SP23, "c.i", "q^{(pos)}_i k^{(pos)}_j", "q_i^{(pos)} k_j^{(pos)}")
    same(NYU, "1.1a", r"\mathbf{H} = \mathbf{VA} = \mathbf{V}[\text{soft}]\text{argmax}_\beta(\mathbf{K}^\top "
         r"\mathbf{Q})", r"V \text{softargmax}_\beta(K^T Q)", "H")
    same(A5, "1d.i", r"q_1 = c^{\otimes} u_a \quad c^{\otimes} \gg 0", r"c \mu_a", "q1")
    # where the part allows a constant of the student's own, a letter in the other case may be it
    assert read(A5, "1b", "b(k_a + k_b)").expr != read(A5, "1b", r"\beta(k_a + k_b)").expr
    unread(A5, "1b", r"\kappa_c + k_b", match="cannot add a scalar")  # k_c is no declared name: kappa_c is not a key


def test_matrices(graded):
    assert graded["block-table"]["1c"].status == Status.CORRECT, graded["block-table"]["1c"].feedback
    assert graded["block-table-transposed"]["1c"].score == 0  # the transpose, as a table: refused
    same(SP23, "b", r"[x_1, p_1] \cdot [x_2, p_2]", "x_1^T x_2 + p_1^T p_2", "concatenated")
    crossed = read(SP23, "b", r"\begin{bmatrix} x_1 \\ p_1 \end{bmatrix}^\top \begin{bmatrix} p_2 \\ x_2 "
                   r"\end{bmatrix}", "concatenated")
    assert crossed.expr == read(SP23, "b", "x_1^T p_2 + p_1^T x_2", "concatenated").expr
    value = read(A5, "1e.ii", r"K = \begin{bmatrix} I & 0 \\ 0 & I \end{bmatrix}", "K")
    assert value.expr == sympy.Identity(sympy.Symbol("d", integer=True, positive=True))
    unread(A5, "1e.ii", r"\begin{bmatrix} I & 0 \\ 0 & 0 \end{bmatrix}", "K", "only 0 blocks")
    unread(A5, "1e.ii", r"\begin{bmatrix} u_a & 2 \end{bmatrix}", "K", "a matrix entry must be a scalar")


def test_prose(graded):
    sure, unsure = graded["prose"], graded["prose-unsure"]
    assert sure["1b"].status == Status.CORRECT and sure["1e.i"].score == 2, sure["1e.i"].feedback
    assert any("read the formula after 'Set'" in line for line in sure["1b"].feedback)
    assert unsure["1b"].status == Status.INVALID and unsure["1b"].score == 0  # "half of" may change it
    # "(or maybe u_b)" asserts a second answer: c2 waits for staff, the yes/no is graded
    assert unsure["1e.i"].status == Status.PARTLY_PENDING and unsure["1e.i"].score == 1
    assert unsure["1e.i"].feedback[0].startswith("partly pending")
    same(A5, "1b", r"$q=C(k_a+k_b)$, where $C>0$ is large", "C(k_a + k_b)")
    same(A5, "1b", r"$\boxed{q=\lambda(k_a+k_b)}$ 其中 $\lambda>0$ 是一个足够大的数", r"\lambda(k_a + k_b)")
    same(SP23, "c.ii", "$(2T-1)m$ extra parameters in total", "(2T - 1) m")
    same(SP23, "e", r"\text{a branching factor of 3, so } 3^n", "3^n", "two")
    same(SP23, "e", r"(k+1)^n \text{ (k heads plus the residual)}", "(k + 1)^n", "k")
    same(SP23, "f", r"(1) $\mathcal{O}(M^2k)$", "O(M^2 k)", "encoder")
    same(FA22, "3b", "linear in the sequence length N", "O(N)", "cost")
    unread(SP23, "e", r"\text{twice } 2^n", "one")  # arithmetic in words is not framing
    unread(SP23, "e", r"2^n \text{ (plus 1 for the root)}", "one")
    unread(FA22, "3b", "linear in N and D", "cost")  # which one the order is in is not sure
    # a constant that appears only divided makes the answer large only as it tends to 0: which way is not ours
    unread(A5, "1c.i", r"\boxed{q=\alpha^{-1/4}(\mu_a+\mu_b)}", match="appears only in a denominator")
    said = read(A5, "1c.i", r"q = \alpha^{-1/4}(\mu_a+\mu_b), \alpha \to 0")
    assert any("1/alpha is your large constant" in note for note in said.notes)


def test_words():
    sentiment = _part(SP23, "i").field("sentiment")
    useful = _part(SP23, "h")
    for text, said in [("The second student is wrong; pretraining on novels is useful.", True),
                       ("I agree with the student: it is useless.", False)]:
        assert read_field(useful, useful.field("useful"), text) is said, text
    for text in ("The student is right; pretraining on novels is useful.", "Yes and no."):
        with pytest.raises(UnclearAnswer):
            read_field(useful, useful.field("useful"), text)
    required = _part(FA22, "1d").field("required")
    with pytest.raises(UnclearAnswer, match="says someone or something is wrong"):  # no referent declared here
        read_field(_part(FA22, "1d"), required, "The encoder is wrong; they may differ.")
    assert read(SP23, "i", "encoder, not encoder-decoder", "sentiment") == "encoder"
    for text in ("encoder, not encoder", "not only an encoder but an encoder-decoder", "encoder, but also seq2seq",
                 "encoder or encoder-decoder", "encoder is wrong"):
        with pytest.raises(UnclearAnswer):
            read_field(_part(SP23, "i"), sentiment, text)


def test_numbers():
    part = _part(A5, "2d")
    accuracy, london = part.field("accuracy"), part.field("london")
    for text, value in [("Correct: 9.0 out of 500.0: 1.7999999999999998%", 9 / 500), ("9 right of 500 = 1.8%", 9 / 500),
                        (r"1.8\,\%", 1.8), ("1.8 per cent", 1.8), ("I got a 1.8% accuracy on the dev set", 1.8),
                        (r"\text{Correct: 133.0 out of 500.0: } 26.6\%", 133 / 500)]:
        assert read_number(part, accuracy, text).value == pytest.approx(value), text
    assert read_number(part, london, "correct:25.0, total:500.0: percentage:0.05").value == pytest.approx(0.05)
    for text in ("not 1.8%", "at least 1.8%", "Correct: 9.0 out of 500.0: 2.5%"):
        with pytest.raises(FieldError):
            read_number(part, accuracy, text)


def test_a_reading_error_still_points_at_what_was_written():
    with pytest.raises(MathError) as err:
        parse(r"Set $q = \lambda(k_a + k_b$ for a large $\lambda$", _part(A5, "1b").table)
    assert err.value.start >= 0
