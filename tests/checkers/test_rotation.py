"""shift_block: the block that advances (sin ωt, cos ωt) by one step, checked for every t."""

from __future__ import annotations

import pytest

from attngrade.checkers import REGISTRY, Context
from attngrade.errors import MathError
from attngrade.mathlang import parse
from attngrade.problems import load_homework

PART = load_homework("eecs182-fa22-hw8").part("1c")


def check(text: str):
    value = parse(text, PART.table)
    return REGISTRY["shift_block"].run({"block": value}, Context(part=PART, spec=PART.checks[0]))


@pytest.mark.parametrize("text", [
    r"\begin{bmatrix} \cos\omega & \sin\omega \\ -\sin\omega & \cos\omega \end{bmatrix}",
    "[[cos(w), sin(w)], [-sin(w), cos(w)]]",
    r"\begin{pmatrix} \cos(\omega_k) & \sin(\omega_k) \\ -\sin(\omega_k) & \cos(\omega_k) \end{pmatrix}",
    # the same block written through a double-angle identity
    "[[1 - 2 sin(omega/2)^2, sin(omega)], [-sin(omega), 2 cos(omega/2)^2 - 1]]",
])
def test_right_blocks_in_any_notation(text):
    assert check(text).earned == PART.checks[0].points


def test_transpose_is_named():
    outcome = check("[[cos(omega), -sin(omega)], [sin(omega), cos(omega)]]")
    assert outcome.earned == 0
    assert "transpose of the block that works" in outcome.feedback[0]


def test_wrong_block_says_where_it_fails():
    outcome = check("[[cos(omega), sin(omega)], [sin(omega), cos(omega)]]")
    assert outcome.earned == 0
    assert "your block sends the encoding at t to" in outcome.feedback[0]


def test_a_block_that_depends_on_t_is_refused():
    outcome = check("[[cos(omega t), sin(omega)], [-sin(omega), cos(omega)]]")
    assert outcome.earned == 0 and "not on t" in outcome.feedback[0]


def test_wrong_size_and_malformed():
    assert "expected a 2×2 block" in check("[[1, 0, 0], [0, 1, 0], [0, 0, 1]]").feedback[0]
    with pytest.raises(MathError):
        parse("[[cos(omega), sin(omega)], [-sin(omega)]]", PART.table)
