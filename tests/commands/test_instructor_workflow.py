"""What an instructor trying the workflow as a new user met in `grade validate`, `grade new-homework`
and `grade autograder`: wrong keys that passed, a bare keys file, and no word on who grades what."""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

import pytest
import yaml

from attngrade.cli import main
from attngrade.commands import validate
from attngrade.errors import ConfigError
from attngrade.grading import assignment, grade_answer
from attngrade.problems import HomeworkFolder
from attngrade.problems.keys import load_keys

ROOT = Path(__file__).resolve().parents[2]
TWO_HEADS = ROOT / "tests" / "data" / "homeworks" / "two-heads"
SHAPES = ROOT / "tests" / "data" / "homeworks" / "shapes"
PROBLEM = "problems/averaging-and-cost.yaml"


def _copy(tmp_path: Path, source: Path = TWO_HEADS) -> Path:
    folder = tmp_path / source.name
    shutil.copytree(source, folder)
    return folder


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _validate(folder: Path, show_keys: bool = False) -> None:
    validate.main(argparse.Namespace(bank=folder, solutions=None, show_keys=show_keys))


# -- `grade validate` passes wrong keys ------------------------------------------------------------------
def test_grade_validate_passes_wrong_keys_no_more_a_key_typo_read_as_a_square(tmp_path, capsys):
    """`O(T S hh)`: read as S T h^2, every right answer would be 'too small'; validate refuses it."""
    folder = _copy(tmp_path)
    _edit(folder / "keys.yaml", "cost: O(T S h)", "cost: O(T S hh)")
    homework = HomeworkFolder(folder).load_homework("two-heads-quiz")
    right = grade_answer(assignment(homework, load_keys(folder, homework)), "cost", "O(T S h)")
    assert right.status == "incorrect"  # what a class would get: the bug this refusal prevents
    assert main(["validate", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"{folder / 'keys.yaml'}:3: part cost, field 'cost': 'hh' reads as the product h h" in err
    assert "the key reads as O(S T h^2)" in err and "if that is a typo, fix it" in err


def test_grade_validate_passes_wrong_keys_no_more_a_key_its_own_check_does_not_give_full_marks(tmp_path,
                                                                                                capsys):
    folder = _copy(tmp_path)
    _edit(folder / PROBLEM, "- {check: bigO, fields: [cost], points: 2}",
          "- {check: bigO, fields: [cost], points: 2, params: {untidy_points: 1}}")
    _edit(folder / "keys.yaml", "cost: O(T S h)", "cost: O(2 T S h)")
    assert main(["validate", str(folder)]) == 2
    err = capsys.readouterr().err
    assert (f"{folder / 'keys.yaml'}:3: part cost, field cost: its bigO check gives the key 1 of 2 points, so a "
            "student who writes the key would not get full marks (cost read as O(2 S T h))") in err
    assert "the check saw: cost: the right order, but constant factors do not belong inside O(...)" in err
    _edit(folder / "keys.yaml", "cost: O(2 T S h)", "cost: O(T S h)")
    assert main(["validate", str(folder)]) == 0


def test_grade_validate_passes_wrong_keys_no_more_a_symbol_declared_but_missing_from_positions(tmp_path, capsys):
    folder = _copy(tmp_path)
    _edit(folder / PROBLEM, "      k_r: {kind: vector, shape: [n, 1], family: k}\n",
          "      k_r: {kind: vector, shape: [n, 1], family: k}\n      k_s: {kind: vector, shape: [n, 1], family: k}\n")
    homework = HomeworkFolder(folder).load_homework("two-heads-quiz")
    verdict = grade_answer(assignment(homework, load_keys(folder, homework)), "avg", "C(k_p + k_r) + k_s")
    assert verdict.score == 0  # what a class would get: every answer that names k_s
    assert main(["validate", str(folder)]) == 2
    err = capsys.readouterr().err
    line = next(i for i, text in enumerate((folder / PROBLEM).read_text().splitlines(), 1) if "positions:" in text)
    assert (f"{folder / PROBLEM}:{line}: part avg, check attention_query: the part declares k_s but positions gives "
            "it no place among the keys, so every answer using it would get 0; add 'k_s: <1..n>' under "
            "positions") in err


def test_grade_validate_passes_wrong_keys_no_more_untidy_points_larger_than_the_checks_points(tmp_path, capsys):
    folder = _copy(tmp_path)
    _edit(folder / PROBLEM, "- {check: bigO, fields: [cost], points: 2}",
          "- {check: bigO, fields: [cost], points: 2, params: {untidy_points: 3}}")
    assert main(["validate", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "part cost, check bigO: untidy_points is 3, but the check is worth 2 points; give at most 2" in err
    assert re.search(rf"{re.escape(str(folder / PROBLEM))}:\d+: part cost", err)


def test_grade_validate_passes_wrong_keys_no_more_every_mistake_at_once(tmp_path, capsys):
    folder = _copy(tmp_path)
    _edit(folder / PROBLEM, "- {check: bigO, fields: [cost], points: 2}",
          "- {check: bigO, fields: [cost], points: 2, params: {loose_points: 5}}")
    _edit(folder / "keys.yaml", "cost: O(T S h)", "cost: O(T SS h)")
    assert main(["validate", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "loose_points is 5" in err and "'SS' reads as the product S S" in err


def test_the_bundled_keys_each_earn_full_marks_from_their_own_checks(capsys):
    assert main(["validate", "--solutions", str(ROOT / "solutions")]) == 0
    assert capsys.readouterr().out.count(": ok (") == 5


def test_there_is_a_way_to_see_how_keys_were_read(tmp_path, capsys):
    folder = _copy(tmp_path, SHAPES)
    _validate(folder, show_keys=True)
    out = capsys.readouterr().out
    assert "shapes-quiz: the keys as read" in out
    assert "  shape    shape: t \\times n  ->  read as: t \\times n" in out
    assert "beta: small  ->  read as: small" in out


def test_there_is_a_way_to_see_how_keys_were_read_on_the_command_line(tmp_path, capsys):
    try:
        code = main(["validate", str(TWO_HEADS), "--show-keys"])
    except SystemExit as done:
        code = done.code
    assert code == 0 and "cost: O(T S h)  ->  read as: O(S T h)" in capsys.readouterr().out


# -- the wheel's `new-homework` writes `keys: {}` --------------------------------------------------------
def test_the_wheels_new_homework_writes_a_documented_keys_file(tmp_path, capsys):
    """Installed from a wheel there is no solutions/ folder: the keys file says, part by part, what to write."""
    out = tmp_path / "dl-hw3"
    assert main(["new-homework", "nyu-dl-transformer", "-o", str(out), "--solutions", str(tmp_path / "none")]) == 0
    said = capsys.readouterr().out
    assert "keys.yaml says, part by part, what to write" in said and "handout/nyu-dl-transformer/" in said
    text = (out / "keys.yaml").read_text(encoding="utf-8")
    assert "keys: {}" not in text
    for documented in ("# explain:", "# rubrics:", "--show-keys", "#   beta: large", "one of large, small",
                       "# 1.1a (1 point): Write the output $H$", "#   shape: m \\times d"):
        assert documented in text, documented
    assert yaml.safe_load(text) == {"homework": "nyu-dl-transformer", "keys": None}
    assert main(["validate", str(out)]) == 2
    err = capsys.readouterr().err
    # every part that lacks a key, in one run: not one rerun per missing key
    for lacking in ("part 1.1a, fields H, shape (its equivalent and dimensions checks compare with one)",
                    "part 1.1b, field beta", "part 1.1c, fields beta, type", "part 1.1d, fields beta, type"):
        assert lacking in err, lacking
    # the instructor fills in the examples: uncommented, the file validates
    filled = text.replace("  # 1.1a:", "  1.1a:").replace("  #   H: ...", "    H: V softargmax_beta(K^T Q)")
    filled = filled.replace("  #   shape: m \\times d", "    shape: t \\times n")
    for part, beta, kind in (("1.1c", "large", "hard"), ("1.1d", "small", "soft")):
        block = filled[filled.index(f"  # {part}:"):]
        block = block[:block.index("# choice: one of hard, soft") + len("# choice: one of hard, soft")]
        filled = filled.replace(block, f"  {part}:\n    beta: {beta}\n    type: {kind}")
    filled = filled.replace("  # 1.1b:", "  1.1b:").replace("  #   beta: ...", "    beta: 1/\\sqrt{d}")
    (out / "keys.yaml").write_text(filled, encoding="utf-8")
    assert main(["validate", str(out)]) == 0


def test_the_wheels_new_homework_writes_a_keyless_copy_for_students(tmp_path, capsys):
    out = tmp_path / "dl-hw3"
    assert main(["new-homework", "nyu-dl-transformer", "-o", str(out), "--solutions", str(ROOT / "solutions")]) == 0
    copy = out / "handout" / "nyu-dl-transformer"
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file()) == [
        "homework.yaml", "problems/nyu-attention-theory.yaml"]
    keys = (out / "keys.yaml").read_text(encoding="utf-8")
    assert keys.startswith("# The keys of nyu-dl-transformer") and "V softargmax_beta(K^T Q)" in keys
    assert main(["check", str(ROOT / "solutions" / "nyu-dl-transformer" / "reference.yaml"),
                 "--homework", str(copy)]) == 0
    assert "unchecked" in capsys.readouterr().out  # the copy has no keys: key parts are only read


def test_keys_yaml_is_documented():
    text = (ROOT / "docs" / "reference" / "keys.md").read_text(encoding="utf-8")
    for topic in ("explain:", "rubrics:", "--show-keys", "homework:", "keys:", "single quotes"):
        assert topic in text, topic


def test_grade_assign_of_an_own_homework_writes_the_template_and_the_homework_without_keys(tmp_path, capsys):
    assert main(["assign", str(SHAPES), "--format", "md", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "students self-check with: grade check shapes-quiz.md --homework shapes-quiz" in out
    copy = tmp_path / "shapes-quiz"
    assert (copy / "homework.yaml").is_file() and not (copy / "keys.yaml").exists()
    template = tmp_path / "shapes-quiz.md"
    _edit(template, "beta:", "beta: small")
    assert main(["check", str(template), "--homework", str(tmp_path / "shapes-quiz")]) == 0


# -- `grade autograder` does not say how many points are machine-graded -----------------------------------
def test_grade_autograder_says_how_many_points_are_machine_graded_and_how_many_wait_for_staff(tmp_path, capsys):
    assert main(["autograder", str(SHAPES), "-o", str(tmp_path / "a.zip")]) == 0
    out = capsys.readouterr().out
    assert ("of 4 points, 3 are graded by the autograder (0 shown to students at once, 3 once you publish grades) "
            "and 1 wait for course staff") in out
    assert "1 for written answers: grade them with Gradescope's manual grading" in out


def test_grade_autograder_says_which_points_wait_for_gold_it_was_not_given(tmp_path, capsys):
    assert main(["autograder", "cs224n-w21-a5", "-o", str(tmp_path / "a.zip"), "--solutions",
                 str(ROOT / "solutions")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"of 61 points, \d+ are graded by the autograder", out)
    assert "scored against gold the zip does not hold: pass it with --gold NAME=FILE" in out


def test_a_config_error_lists_every_mistake_with_its_file_and_line(tmp_path):
    folder = _copy(tmp_path)
    _edit(folder / PROBLEM, "- {check: bigO, fields: [cost], points: 2}",
          "- {check: bigO, fields: [cost], points: 2, params: {untidy_points: 3}}")
    with pytest.raises(ConfigError) as err:
        _validate(folder)
    assert str(err.value).count(str(folder / PROBLEM)) == 1
