"""An instructor's own homework folder, anywhere on disk (issue: the instructor's workflow).

tests/data/homeworks/two-heads is written from scratch (an attention_query part and a
bigO part, its own keys); nothing of it is in the bundled bank.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from attngrade.cli import main

DATA = Path(__file__).parents[1] / "data" / "homeworks"
HOMEWORK = DATA / "two-heads"
CLASS = DATA / "two-heads-class"


@pytest.fixture
def homework(tmp_path) -> Path:
    """A copy to edit (the misspelling tests break it on purpose)."""
    return Path(shutil.copytree(HOMEWORK, tmp_path / "two-heads"))


def test_validate_loads_the_folder_with_its_keys(capsys):
    assert main(["validate", str(HOMEWORK)]) == 0
    assert f"two-heads-quiz: ok (2 parts, 2 checks, keys from {HOMEWORK / 'keys.yaml'})" in capsys.readouterr().out


def test_run_grades_a_class_with_the_folder(tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(CLASS), "-o", str(out), "--homework", str(HOMEWORK), "--workers", "1"]) == 0
    rows = (out / "grades.csv").read_text().splitlines()
    assert rows == ["student,homework,avg,cost,total,pending,max_score,error",
                    "ana,two-heads-quiz,3,2,5,0,5,", "bo,two-heads-quiz,0,0,0,0,5,"]
    bo = next(r for r in json.loads((out / "results.json").read_text()) if r["student"] == "bo")
    feedback = {p["id"]: " ".join(p["feedback"]) for p in bo["parts"]}
    assert ("your q has no large constant, so the weights stay at (k_p: 0.322202, k_r: 0.322202)"
            in feedback["avg"]) and "multiply by a constant that can grow" in feedback["avg"]
    assert (out / "bo" / "report.html").is_file()


def test_the_homework_file_itself_names_the_folder_too(tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(CLASS / "ana.yaml"), "-o", str(out), "--homework", str(HOMEWORK / "homework.yaml"),
                 "--workers", "1"]) == 0


def test_self_check_and_template_from_the_folder_show_no_key(tmp_path, capsys):
    assert main(["check", str(CLASS / "bo.yaml"), "--homework", str(HOMEWORK), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    cost = next(p for p in result["parts"] if p["id"] == "cost")
    assert "T S h" not in json.dumps(cost)  # the key stays with the instructor
    assert main(["assign", str(HOMEWORK), "--format", "md", "-o", str(tmp_path)]) == 0
    template = (tmp_path / "two-heads-quiz.md").read_text()
    assert "cross-attention of $T$ queries" in template and "O(T S h)" not in template


def test_autograder_from_the_folder_grades_in_a_gradescope_root(tmp_path):
    from attngrade.gradescope import run_gradescope

    zip_path = tmp_path / "autograder.zip"
    assert main(["autograder", str(HOMEWORK), "-o", str(zip_path)]) == 0
    names = zipfile.ZipFile(zip_path).namelist()
    assert {"homework/homework.yaml", "homework/problems/averaging-and-cost.yaml",
            "solutions/two-heads-quiz/keys.yaml"} <= set(names)
    root = tmp_path / "autograder"
    zipfile.ZipFile(zip_path).extractall(root / "source")
    (root / "submission").mkdir()
    shutil.copy(CLASS / "ana.yaml", root / "submission" / "answers.yaml")
    run_gradescope(root)
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 5


@pytest.mark.parametrize("edit, says", [
    (("problems/averaging-and-cost.yaml", "positions:", "positons:"),
     "problems/averaging-and-cost.yaml:26, part avg, check attention_query: unknown parameter 'positons' "
     "(did you mean 'positions'?)"),
    (("keys.yaml", "  cost:", "  cots:"),
     "keys.yaml:3: key for unknown part 'cots' (did you mean 'cost'?); the parts are: avg, cost"),
    (("keys.yaml", "  cost: O(T S h)", "  cost: {costt: O(T S h)}"),
     "keys.yaml:3: part cost has no field 'costt' (did you mean 'cost'?)"),
    # a typo crashed the run (KeyError: 'points') or was dropped without a word (statment)
    (("problems/averaging-and-cost.yaml", "    points: 3\n    statement:", "    pionts: 3\n    statement:"),
     "problems/averaging-and-cost.yaml:10, part avg: unknown key 'pionts' in a part (did you mean 'points'?)"),
    (("problems/averaging-and-cost.yaml", "    statement: >\n      Give", "    statment: >\n      Give"),
     "problems/averaging-and-cost.yaml:11, part avg: unknown key 'statment' in a part (did you mean 'statement'?)"),
    (("problems/averaging-and-cost.yaml", "    points: 3\n    statement:", "    points: three\n    statement:"),
     "problems/averaging-and-cost.yaml:10, part avg: points must be a number, not 'three'"),
    (("homework.yaml", "  - averaging-and-cost", "  - {id: averaging-and-cost, points: {avg: 3, agv: 2}}"),
     "homework.yaml: problem averaging-and-cost has no parts ['agv'] to give points to"),
    (("homework.yaml", "  - averaging-and-cost", "  - averaging-and-cots"),
     "homework.yaml:7: no problem 'averaging-and-cots' (did you mean 'averaging-and-cost'?)"),
    (("keys.yaml", "  cost: O(T S h)", "  cost: O(T S w)"),
     "keys.yaml:3: part cost, field 'cost': the key does not read: unknown symbol 'w'"),
    (("problems/averaging-and-cost.yaml", "  - id: cost", "  - id: avg"),
     "problems/averaging-and-cost.yaml: part ids repeat: avg; give each part an id of its own"),
])
def test_a_misspelling_fails_validate_with_file_and_line(homework, edit, says, capsys):
    name, old, new = edit
    path = homework / name
    path.write_text(path.read_text().replace(old, new, 1))
    assert main(["validate", str(homework)]) == 2
    assert f"{homework}/{says}" in capsys.readouterr().err


def test_new_homework_starts_a_folder_from_a_bundled_one(tmp_path, capsys):
    folder = tmp_path / "my-nyu"
    root = Path(__file__).resolve().parents[2]
    assert main(["new-homework", "nyu-dl-transformer", "-o", str(folder),
                 "--solutions", str(root / "solutions")]) == 0
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "README.md", "handout/nyu-dl-transformer/homework.yaml",
        "handout/nyu-dl-transformer/problems/nyu-attention-theory.yaml", "homework.yaml", "keys.yaml",
        "problems/nyu-attention-theory.yaml"]
    assert main(["validate", str(folder)]) == 0
    capsys.readouterr()
    assert main(["new-homework", "nyu-dl-transformer", "-o", str(folder)]) == 2
    assert "already exists" in capsys.readouterr().err


def test_a_path_that_is_no_homework_folder_is_a_clear_error(tmp_path, capsys):
    assert main(["run", str(CLASS), "-o", str(tmp_path / "out"), "--homework", str(tmp_path)]) == 2
    assert f"{tmp_path}: not a homework folder (no homework.yaml in it)" in capsys.readouterr().err


def test_a_broken_others_note_fails_when_the_bank_loads(homework, capsys):
    path = homework / "problems" / "averaging-and-cost.yaml"
    path.write_text(path.read_text().replace("family: k}", 'family: k, others: "read {name} as k_{i}"}', 1))
    assert main(["validate", str(homework)]) == 2
    assert "'others' may use only {name}" in capsys.readouterr().err


def test_an_empty_gold_file_fails_validate_not_every_student(tmp_path, capsys, root):
    """Against an empty gold every prediction file is 'too long': all students had 0, the run exit 0.
    Only the gold the checks read is read: notes beside it are no one's business."""
    folder = tmp_path / "a5"
    assert main(["new-homework", "cs224n-w21-a5", "-o", str(folder)]) == 0
    shutil.copy(root / "solutions" / "cs224n-w21-a5" / "keys.yaml", folder / "keys.yaml")
    (folder / "gold").mkdir()
    (folder / "gold" / "README.md").write_text("dev.tsv is this term's dev set\n")
    (folder / "gold" / ".DS_Store").write_bytes(b"\xff\x00")
    (folder / "gold" / "dev.tsv").write_text("")
    capsys.readouterr()
    assert main(["validate", str(folder)]) == 2
    assert f"{folder / 'gold' / 'dev.tsv'}: the gold file is empty" in capsys.readouterr().err
    shutil.copy(root / "attngrade" / "data" / "cs224n-w21-a5" / "birth_dev.tsv", folder / "gold" / "dev.tsv")
    assert main(["validate", str(folder)]) == 0


def test_a_functions_impl_params_are_read_when_the_homework_loads(tmp_path, capsys):
    """`scale: betta` passed validate, then every run crashed mid-way (unknown symbol)."""
    folder = tmp_path / "nyu"
    assert main(["new-homework", "nyu-dl-transformer", "-o", str(folder)]) == 0
    problem = folder / "problems" / "nyu-attention-theory.yaml"
    problem.write_text(problem.read_text().replace("impl_params: {scale: beta}", "impl_params: {scale: betta}"))
    capsys.readouterr()
    assert main(["validate", str(folder)]) == 2
    assert "function softargmax_beta: impl_params scale cannot be read (unknown symbol 'betta'" in capsys.readouterr().err


def test_a_gold_the_folder_does_not_have_fails_validate(tmp_path, capsys, root):
    folder = tmp_path / "a5"
    assert main(["new-homework", "cs224n-w21-a5", "-o", str(folder)]) == 0
    shutil.copy(root / "solutions" / "cs224n-w21-a5" / "keys.yaml", folder / "keys.yaml")
    problem = folder / "problems" / "cs224n-pretraining-knowledge.yaml"
    problem.write_text(problem.read_text().replace("gold: dev, file: dev", "gold: devset, file: dev", 1))
    capsys.readouterr()
    assert main(["validate", str(folder)]) == 2
    assert "gold 'devset' was not supplied" in capsys.readouterr().err
    (folder / "gold").mkdir()
    shutil.copy(root / "attngrade" / "data" / "cs224n-w21-a5" / "birth_dev.tsv", folder / "gold" / "devset.tsv")
    assert main(["validate", str(folder)]) == 0
