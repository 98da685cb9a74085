"""Every homework's reference solution earns every machine-checked point."""

from __future__ import annotations

from pathlib import Path

import pytest

from attngrade.grading import assignment, grade_submission
from attngrade.problems.keys import load_keys
from attngrade.problems import homework_ids, load_homework
from attngrade.intake.submissions import load_submission

ROOT = Path(__file__).resolve().parent.parent


def reference_path(homework: str) -> Path:
    folder = ROOT / "solutions" / homework / "reference"
    return folder if folder.is_dir() else ROOT / "solutions" / homework / "reference.yaml"


@pytest.fixture()
def test_gold(tmp_path):
    # The real test gold is not public: the reference test files answer London throughout,
    # so a synthetic gold of London places scores them.
    path = tmp_path / "birth_test.tsv"
    path.write_text("".join(f"Where was person {i} born?\tLondon\n" for i in range(437)))
    return {"test": path}


@pytest.mark.parametrize("homework", homework_ids())
def test_reference_gets_every_machine_point(homework, test_gold):
    hw = load_homework(homework)
    given = assignment(hw, load_keys(ROOT / "solutions", hw), gold=test_gold)
    result = grade_submission(given, load_submission(reference_path(homework)))
    for verdict in result.parts:
        part = hw.part(verdict.part)
        machine = sum(c.points for c in part.checks if c.check != "manual")
        if machine == 0:
            continue
        assert verdict.score == pytest.approx(machine), (verdict.part, verdict.feedback)
        assert verdict.status in ("correct", "pending"), (verdict.part, verdict.status, verdict.feedback)


def test_every_homework_has_a_reference_keys_and_an_example_class():
    for homework in homework_ids():
        assert reference_path(homework).exists(), homework
        assert (ROOT / "solutions" / homework / "keys.yaml").is_file(), homework
        assert any((ROOT / "examples" / homework).iterdir()), homework
