"""The grading engine end to end on real example submissions."""

from __future__ import annotations

import pytest

from attngrade.errors import ConfigError
from attngrade.grading import Grader
from attngrade.submissions import load_submission


@pytest.fixture()
def grader(a5, a5_keys):
    return Grader(a5, a5_keys)


def by_part(result):
    return {v.part: v for v in result.parts}


def test_full_marks_example(grader, root):
    result = grader.grade(load_submission(root / "examples/cs224n-w21-a5/full-marks.yaml"))
    parts = by_part(result)
    for pid in ("1b", "1c.i", "1d.i", "1e.ii"):
        assert parts[pid].status == "correct", parts[pid].feedback
    assert parts["1e.i"].status == "manual" and parts["1e.i"].score == 2  # c2 and possible; 'why' waits
    assert parts["1a"].status == "manual"
    assert result.score == 13 and result.max_score == 61


def test_seeds_get_what_a_ta_would_give(grader, root):
    s0 = by_part(grader.grade(load_submission(root / "examples/cs224n-w21-a5/seed-000.yaml")))
    s1 = by_part(grader.grade(load_submission(root / "examples/cs224n-w21-a5/seed-001.yaml")))
    assert s0["1e.ii"].score < 4 and "c1 ≈ u_b, not u_b - u_c" in s0["1e.ii"].feedback[0]
    assert s1["1e.ii"].score < 4 and any("c2 ≈" in line for line in s1["1e.ii"].feedback)
    assert s0["1b"].status == "correct" and "read your row vector as the column vector q" in s0["1b"].feedback
    assert s0["1c.i"].status == "correct" and any("mu_a" in line for line in s0["1c.i"].feedback)


def test_invalid_is_not_incorrect(grader, root):
    parts = by_part(grader.grade(load_submission(root / "examples/cs224n-w21-a5/unreadable.yaml")))
    assert parts["1b"].status == "invalid"
    assert parts["1e.ii"].status == "invalid"
    assert "(d×1)(d×1) cannot be multiplied; did you mean u_c u_d^T? (column 5)" in parts["1e.ii"].feedback[0]
    assert parts["1e.i"].status == "invalid" and "expected yes or no, got 'maybe'" in parts["1e.i"].feedback[0]


def test_missing_parts_and_unknown_ids_are_reported(grader, root):
    result = grader.grade(load_submission(root / "examples/cs224n-w21-a5/missing-parts.yaml"))
    parts = by_part(result)
    assert parts["1a"].status == "missing"
    assert parts["1e.ii"].feedback[-1] == "Q: no answer"
    assert any("unknown part '1f'" in note for note in result.notes)


def test_multi_field_part_given_as_text_and_unknown_field(grader, data_dir):
    parts = by_part(grader.grade(load_submission(data_dir / "submissions/multi-field-as-string.yaml")))
    assert parts["1e.ii"].status == "invalid"
    assert "this part has the fields V, K, Q; write them as a mapping" in parts["1e.ii"].feedback[0]
    assert parts["1d.i"].status == "correct"
    assert "unknown field(s) q3" in parts["1d.i"].feedback[0]


def test_memo_makes_repeated_answers_free(grader, root):
    sub = load_submission(root / "examples/cs224n-w21-a5/full-marks.yaml")
    grader.grade(sub)
    checks_before = grader.stats.checks - grader.stats.check_hits
    grader.grade(sub)
    assert grader.stats.checks - grader.stats.check_hits == checks_before  # nothing recomputed


def test_same_answer_in_other_spacing_hits_the_memo(grader, a5):
    part = a5.part("1b")
    grader.grade_part(part, "C(k_a+k_b)")
    misses = grader.stats.checks - grader.stats.check_hits
    grader.grade_part(part, r"C \left( k_a + k_b \right)")
    assert grader.stats.checks - grader.stats.check_hits == misses


def test_instructor_run_without_keys_is_a_config_error(a5):
    with pytest.raises(ConfigError, match="no keys"):
        Grader(a5, keys=None)


def test_self_check_never_compares_with_keys(a5, root):
    result = Grader(a5, keys=None, self_check=True).grade(
        load_submission(root / "examples/cs224n-w21-a5/partial.yaml"))
    part = by_part(result)["1e.i"]
    assert part.status == "unchecked"
    assert part.readings["c2"] == "u_b"
    assert not any("expected" in line for line in part.feedback)
