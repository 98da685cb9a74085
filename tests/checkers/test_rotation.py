"""shift_block: the matrix M with p_{t+1} = M p_t for a sinusoidal encoding (EECS182 Fa22 HW8 1c).

M is block-diagonal with one rotation block per pair (sin ω_k t, cos ω_k t); an answer gives the
whole matrix (diag(...), \\bigoplus, words, or written out with dots) with a general k-th block,
or a single 2×2 block where the part accepts one."""

from __future__ import annotations

from dataclasses import replace

import pytest

from attngrade.checkers import REGISTRY, Context
from attngrade.mathlang import parse
from attngrade.problems import load_homework, prepare_check, prepare_part
from attngrade.reading import read_field
from attngrade.records import CheckSpec, Field, Part

PART = load_homework("eecs182-fa22-hw8").part("1c")
BLOCK_K = r"\begin{bmatrix} \cos\omega_k & \sin\omega_k \\ -\sin\omega_k & \cos\omega_k \end{bmatrix}"


def check(text: str, part: Part = PART):
    value = read_field(part, part.fields[0], text)
    return REGISTRY["shift_block"].run({part.fields[0].name: value}, Context(part=part, spec=part.checks[0]))


def full_marks(outcome) -> bool:
    return outcome.earned == PART.points and not outcome.is_pending and not outcome.invalid


@pytest.mark.parametrize("text", [
    r"\begin{bmatrix} \cos\omega & \sin\omega \\ -\sin\omega & \cos\omega \end{bmatrix}",
    "[[cos(w), sin(w)], [-sin(w), cos(w)]]",
    r"$\begin{pmatrix} \cos(\omega_k) & \sin(\omega_k) \\ -\sin(\omega_k) & \cos(\omega_k) \end{pmatrix}$",
    # the same block written through a double-angle identity
    "[[1 - 2 sin(omega/2)^2, sin(omega)], [-sin(omega), 2 cos(omega/2)^2 - 1]]",
    # the general block written with k and d, the frequency spelled out
    r"\begin{bmatrix} \cos(10000^{-2k/d}) & \sin(10000^{-2k/d}) \\ -\sin(10000^{-2k/d}) & \cos(10000^{-2k/d})"
    r" \end{bmatrix}",
])
def test_a_single_right_block_in_any_notation_earns_the_points_where_the_part_says_so(text):
    assert full_marks(check(text)), check(text)


@pytest.mark.parametrize("text", [
    # diag(...) with the general block defined after it, in omega_k
    rf"M = \operatorname{{diag}}(M_0, M_1, \ldots, M_{{d/2-1}}), \quad M_k = {BLOCK_K}",
    # blockdiag with the frequency spelled out and the block inline
    r"M = blockdiag_k [[cos(1/10000^(2k/d)), sin(1/10000^(2k/d))], [-sin(1/10000^(2k/d)), cos(1/10000^(2k/d))]]",
    # a direct sum over k with its range
    r"M = \bigoplus_{k=0}^{d/2-1} \begin{pmatrix} \cos(\frac{1}{10000^{2k/d}}) & \sin(\frac{1}{10000^{2k/d}}) \\"
    r" -\sin(\frac{1}{10000^{2k/d}}) & \cos(\frac{1}{10000^{2k/d}}) \end{pmatrix}",
    # in words, as the posted solution puts it, with the block named m_k and indexed by i
    r"m_i = [[cos(omega_i), sin(omega_i)], [-sin(omega_i), cos(omega_i)]]; M is the block diagonal matrix "
    r"whose i-th block is m_i",
    # the whole matrix written out with dots: its first and last blocks
    r"""\begin{bmatrix}
    \cos\omega_0 & \sin\omega_0 & \cdots & 0 & 0 \\
    -\sin\omega_0 & \cos\omega_0 & \cdots & 0 & 0 \\
    \vdots & \vdots & \ddots & \vdots & \vdots \\
    0 & 0 & \cdots & \cos\omega_{d/2-1} & \sin\omega_{d/2-1} \\
    0 & 0 & \cdots & -\sin\omega_{d/2-1} & \cos\omega_{d/2-1}
    \end{bmatrix}""",
    # the same with the frequencies written as 1/10000^{2k/d} at k = 0 and k = d/2 - 1
    r"""\begin{pmatrix} \cos 1 & \sin 1 & & \\ -\sin 1 & \cos 1 & & \\ & & \ddots & \\
    & & & \cos(10000^{-(d-2)/d}) & \sin(10000^{-(d-2)/d}) \\ & & & -\sin(10000^{-(d-2)/d}) & \cos(10000^{-(d-2)/d})
    \end{pmatrix}""",
])
def test_the_whole_block_diagonal_matrix_is_accepted(text):
    outcome = check(text)
    assert full_marks(outcome), outcome


def test_blocks_numbered_from_one_go_to_course_staff():
    outcome = check(rf"M = \mathrm{{diag}}(M_1, \ldots, M_{{d/2}}), M_k = {BLOCK_K}")
    assert outcome.is_pending and outcome.earned == 0
    assert "run from k = 1 to d/2" in outcome.feedback[0]


def test_too_few_blocks_are_wrong():
    outcome = check(rf"M = \mathrm{{diag}}(M_0, \ldots, M_{{d/4}}), M_k = {BLOCK_K}")
    assert outcome.earned == 0 and not outcome.is_pending
    assert "one block for each of the 32 pairs" in outcome.feedback[0]


def test_a_general_block_at_the_wrong_frequency_says_which_pair_fails():
    outcome = check(r"M = diag(M_k), M_k = [[cos(10000^(-k/d)), sin(10000^(-k/d))], "
                    r"[-sin(10000^(-k/d)), cos(10000^(-k/d))]]")
    assert outcome.earned == 0
    assert "for the pair k = " in outcome.feedback[0] and "your block sends the encoding's pair" in outcome.feedback[0]


def test_a_wrong_last_block_in_a_matrix_with_dots_is_found():
    outcome = check(r"""\begin{bmatrix} \cos\omega_0 & \sin\omega_0 & & \\ -\sin\omega_0 & \cos\omega_0 & & \\
    & & \ddots & \\ & & & \cos\omega_{d/2-1} & -\sin\omega_{d/2-1} \\ & & & \sin\omega_{d/2-1} & \cos\omega_{d/2-1}
    \end{bmatrix}""")
    assert outcome.earned == 0 and "transpose of the block that works" in outcome.feedback[0]


def test_transpose_is_named():
    outcome = check("[[cos(omega), -sin(omega)], [sin(omega), cos(omega)]]")
    assert outcome.earned == 0
    assert "transpose of the block that works" in outcome.feedback[0]


def test_wrong_block_says_where_it_fails():
    outcome = check("[[cos(omega), sin(omega)], [sin(omega), cos(omega)]]")
    assert outcome.earned == 0
    assert "your block sends the encoding's pair at t to" in outcome.feedback[0]


def test_a_block_that_depends_on_t_is_refused():
    outcome = check("[[cos(omega t), sin(omega)], [-sin(omega), cos(omega)]]")
    assert outcome.earned == 0 and "not on t" in outcome.feedback[0]


def test_wrong_size():
    assert "expected a 2×2 block" in check("[[1, 0, 0], [0, 1, 0], [0, 0, 1]]").feedback[0]


@pytest.mark.parametrize("text, words", [
    ("[[cos(omega), sin(omega)], [-sin(omega)]]", "could not be read"),
    (r"M = \mathrm{diag}(M_0, \ldots, M_{d/2-1})", "no 2×2 block was found"),
    ("[[cos(omega_0), sin(omega_1)], [-sin(omega_0), cos(omega_0)]]", "mixes the frequencies"),
    (r"\begin{bmatrix} \cos\omega_0 & \sin\omega_0 & \cdots \\ \vdots & \ddots & \vdots \\ 0 & \cdots & "
     r"\cos\omega_1 \end{bmatrix}", "do not form 2×2 blocks"),
    ("[[cos(omega), sin(omega)], [-sin(omega), cos(omega)]", "never closed"),
])
def test_what_cannot_be_read_says_what_to_write_and_is_no_verdict(text, words):
    outcome = check(text)
    assert outcome.invalid and outcome.earned == 0
    assert words in outcome.feedback[0], outcome.feedback


def test_a_single_block_where_the_part_asks_for_m_earns_its_share_and_says_why():
    spec = PART.checks[0]
    strict = replace(PART, checks=(prepare_check(PART, replace(spec, params={**spec.params, "single_block": 0.5}),
                                                 "1c"),))
    outcome = check(BLOCK_K, strict)
    assert outcome.earned == pytest.approx(1.0)
    assert "the answer is the whole d×d matrix M" in outcome.feedback[0]
    assert full_marks(check(rf"M = \mathrm{{diag}}(M_0, \ldots, M_{{d/2-1}}), M_k = {BLOCK_K}", strict))


def test_a_math_field_holding_the_block_is_still_checked():
    spec = CheckSpec("shift_block", ("block",), 2.0, {"frequency": "omega", "time": "t", "order": "sin-cos"})
    part = prepare_part(Part("x", 2.0, "", (Field("block", "math", expect="matrix", shape=(2, 2)),), (spec,),
                             PART.table, problem="test"))
    run = REGISTRY["shift_block"].run
    right = parse("[[cos(omega), sin(omega)], [-sin(omega), cos(omega)]]", PART.table)
    wrong = parse("[[cos(omega), -sin(omega)], [sin(omega), cos(omega)]]", PART.table)
    assert run({"block": right}, Context(part=part, spec=part.checks[0])).earned == 2.0
    assert "transpose" in run({"block": wrong}, Context(part=part, spec=part.checks[0])).feedback[0]
