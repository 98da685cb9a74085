"""One check run on one answer (grading/tasks.py): what a check stopped at its time limit says."""

from __future__ import annotations

from attngrade.grading.tasks import timed_out


def test_a_check_of_code_stopped_at_its_limit_says_what_to_hand_in_not_how_to_write_a_formula():
    code = timed_out(40, "notebook_code")
    formula = timed_out(2, "equivalent")
    assert code.invalid and "hand in only the code and files the part asks for" in code.feedback[0]
    assert "products" not in code.feedback[0]
    assert formula.feedback[0] == ("checking this answer took longer than the 2 s limit; write it more simply "
                                   "(expand fewer products, use smaller powers)")
