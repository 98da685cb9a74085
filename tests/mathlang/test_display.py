"""The "read as" line: what a student is shown must be what was read.

Each answer is parsed, printed back in the students' notation, and that text parsed again:
the two readings must be the same expression (a dropped pair of parentheses changes it).
"""

from __future__ import annotations

import pytest

from attngrade.mathlang import parse
from attngrade.mathlang.display import reading
from attngrade.problems import load_homework

# The symbols of CS224N A5 1e.ii (u_a..u_d, x_1..x_3, beta, I), where such answers are written.
UF = next(p for p in load_homework("cs224n-w21-a5").parts if p.id == "1e.ii").table

ANSWERS = [
    "(u_b u_b^T - u_c u_c^T)/beta^2",
    "((u_b + u_d) u_b^T - u_c u_c^T)/beta^2",  # a sum whose first term opens with "("
    "(x_1 x_1^T - x_3 x_3^T)/beta^2",
    "((u_b + u_c) u_a^T + u_d (u_a + u_b)^T)/beta",
    "(u_d u_a^T + u_c u_d^T)/beta^2 + I/beta",
    "u_b u_b^T/beta^2",
    "-(u_b u_b^T - u_c u_c^T)/beta^2",
    "2 (u_b u_b^T - u_c u_c^T)/beta^2",
]


@pytest.mark.parametrize("text", ANSWERS)
def test_what_is_shown_reads_back_as_the_same_answer(text):
    value = parse(text, UF)
    shown = reading(value.expr)
    assert parse(shown, UF).expr == value.expr, f"{text!r} is shown as {shown!r}"


def test_a_sum_opening_with_a_parenthesis_keeps_its_own_around_it():
    shown = reading(parse("((u_b + u_d) u_b^T - u_c u_c^T)/beta^2", UF).expr)
    assert shown == "((u_b + u_d) u_b^T - u_c u_c^T)/beta^2"
