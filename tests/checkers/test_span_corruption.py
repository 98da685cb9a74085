"""2e of CS224N A5: the span-corruption dataset checked by its properties, in the sandbox."""

from __future__ import annotations

import pytest

from code_fixtures import BUGS, code_submission, failing, grade_code, grader_wording, part, raw_characters

DATASET_BUGS = [name for name, bug in BUGS.items() if bug["part"] == "2e" and "fails" in bug]
ENDING_BUGS = [name for name, bug in BUGS.items() if bug["part"] == "2e" and "says" in bug]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("layout", ["src", "a5/src", "."])
def test_the_correct_dataset_gets_full_marks_in_any_layout(tmp_path, a5, a5_keys, torch, layout):
    result = grade_code(code_submission(tmp_path / "s1", layout=layout), a5, a5_keys)
    verdict = part(result, "2e")
    assert (verdict.score, verdict.status) == (10.0, "correct"), verdict.feedback
    assert not failing(verdict)
    layers = verdict.evidence["sandbox"]["layers"]
    assert layers["active"] and any("sandbox" in line for line in verdict.feedback)


@pytest.mark.parametrize("bug", DATASET_BUGS)
def test_each_bug_class_loses_points_on_the_property_it_breaks(tmp_path, a5, a5_keys, torch, bug):
    verdict = part(grade_code(code_submission(tmp_path / "s1", bug), a5, a5_keys), "2e")
    assert verdict.score < 10
    assert BUGS[bug]["fails"] in failing(verdict), verdict.feedback
    failed = [line for line in verdict.feedback if line.startswith("FAILED")]
    assert failed and all("first:" in line or "never" in line for line in failed[:1]), failed
    assert not raw_characters("".join(verdict.feedback)) and not grader_wording(verdict.feedback), verdict.feedback


@pytest.mark.parametrize("bug", ENDING_BUGS)
def test_code_that_ends_its_process_gets_zero_and_its_output_quoted(tmp_path, a5, a5_keys, torch, bug):
    verdict = part(grade_code(code_submission(tmp_path / "s1", bug), a5, a5_keys), "2e")
    assert (verdict.score, verdict.pending_points) == (0, 0), verdict.feedback
    assert any(BUGS[bug]["says"] in line for line in verdict.feedback), verdict.feedback
    printed = next(line for line in verdict.feedback if line.startswith("your code printed «"))
    assert "\\x1b]0;retitled\\x07\\x1b[2J\\x1b[31mred\\u202eevil\\u200b" in printed, printed
    assert not raw_characters("".join(verdict.feedback)) and not grader_wording(verdict.feedback), verdict.feedback


def test_a_crash_on_a_tiny_document_is_a_warning_not_a_deduction(tmp_path, a5, a5_keys, torch):
    folder = code_submission(tmp_path / "s1")
    dataset = folder / "src" / "dataset.py"
    dataset.write_text(dataset.read_text().replace(
        "        document = self.data[idx]\n",
        "        document = self.data[idx]\n        assert len(document) >= 4, 'document too short'\n"))
    verdict = part(grade_code(folder, a5, a5_keys), "2e")
    assert verdict.score == 10
    warning = next(line for line in verdict.feedback if line.startswith("warning"))
    assert "no points lost" in warning and "wiki.txt ends with an empty document" in warning


def test_two_different_files_of_one_name_are_a_clear_error(tmp_path, a5, a5_keys, torch):
    folder = code_submission(tmp_path / "s1")
    (folder / "old").mkdir()
    (folder / "old" / "dataset.py").write_text("# an older copy\n")
    verdict = part(grade_code(folder, a5, a5_keys), "2e")
    assert verdict.status == "invalid"
    assert any("two different files named dataset.py" in line for line in verdict.feedback)


def test_without_torch_code_parts_wait_for_staff_with_the_install_hint(tmp_path, a5, a5_keys, monkeypatch):
    import attngrade.sandbox

    monkeypatch.setattr(attngrade.sandbox, "torch_missing", lambda: attngrade.sandbox.TORCH_MISSING)
    result = grade_code(code_submission(tmp_path / "s1"), a5, a5_keys)
    for pid, points in (("2e", 10), ("2g.i", 4)):
        verdict = part(result, pid)
        assert verdict.pending_points >= points and verdict.score == 0, verdict
        assert any("install attngrade[torch]" in line for line in verdict.feedback)
