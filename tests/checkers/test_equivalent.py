"""equivalent and choice against the A5 key, and the manual check."""

from __future__ import annotations

import pytest

from attngrade.checkers import REGISTRY, Context
from attngrade.mathlang import parse


def run(a5, a5_keys, part_id, index, **answers):
    part = a5.part(part_id)
    spec = part.checks[index]
    return REGISTRY[spec.check].run(answers, Context(part=part, spec=spec, key=a5_keys.answers[part_id],
                                                     explain=a5_keys.explain.get(part_id, {})))


@pytest.mark.parametrize("c2", ["u_a", "x_2", r"\mathbf{u}_a", "u_a^T", r"\frac{\beta^2 u_a}{\beta^2}",
                                "u_a + u_b - u_b", "(u_a u_a^T / beta^2) u_a"])
def test_c2_equivalent_forms(a5, a5_keys, c2):
    value = parse(c2, a5.part("1e.i").table)
    assert run(a5, a5_keys, "1e.i", 0, c2=value).earned == 1


@pytest.mark.parametrize("c2", ["u_b", "x_1", "2 u_a", "u_a/beta", "(u_a u_a^T) u_a"])
def test_c2_wrong_forms(a5, a5_keys, c2):
    outcome = run(a5, a5_keys, "1e.i", 0, c2=parse(c2, a5.part("1e.i").table))
    assert outcome.earned == 0
    assert outcome.feedback[0] == "c2: not equivalent to the expected answer"


def test_possible_yes_is_wrong_with_the_explanation(a5, a5_keys):
    outcome = run(a5, a5_keys, "1e.i", 1, possible=True)
    assert outcome.earned == 0
    assert outcome.feedback[0] == "possible: you answered yes; the expected answer is no"
    assert "2 beta^2" in outcome.feedback[1]
    assert run(a5, a5_keys, "1e.i", 1, possible=False).earned == 1


def test_manual_is_pending_and_shows_the_rubric(a5, a5_keys):
    part = a5.part("1a")
    outcome = REGISTRY["manual"].run({"answer": "anything"},
                                     Context(part=part, spec=part.checks[0], rubric=a5_keys.rubrics["1a"]))
    assert outcome.pending and outcome.earned == 0
    assert "k_j^T q" in outcome.evidence["rubric"]
