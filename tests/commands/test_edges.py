"""The edges an instructor or a student meets first, each with the message it now gets."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from attngrade import __version__
from attngrade.cli import main
from attngrade.errors import SubmissionError
from attngrade.grading import assignment, grade_answer
from attngrade.problems.keys import load_keys
from attngrade.problems import load_homework
from attngrade.intake.submissions import load_submission

ROOT = Path(__file__).resolve().parents[2]


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"attngrade {__version__}"


def test_gradescope_outside_a_container_writes_nothing(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert main(["gradescope"]) == 2
    assert "this is not a Gradescope container" in capsys.readouterr().err


def test_a_path_that_does_not_exist_is_a_usage_error(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope"), "-o", str(tmp_path / "out")]) == 2
    assert f"no such file or folder: {tmp_path / 'nope'}; nothing was graded" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_misspelled_gold_name_is_refused_with_a_suggestion(tmp_path, capsys):
    gold = tmp_path / "birth_test.tsv"
    gold.write_text("x\tLondon\n")
    code = main(["run", str(ROOT / "examples" / "cs224n-w21-a5"), "-o", str(tmp_path / "out"),
                 "--gold", f"tset={gold}", "--workers", "1"])
    assert code == 2
    assert "--gold tset: no check of the homeworks graded here reads a gold named 'tset'; did you mean 'test'?" \
        in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_folder_of_class_folders_grades_every_class(tmp_path, capsys):
    assert main(["run", str(ROOT / "examples"), "-o", str(tmp_path / "out"), "--workers", "1"]) == 0
    rows = list(csv.DictReader((tmp_path / "out" / "grades.csv").open()))
    assert not [r for r in rows if r["error"]]
    # every class folder is graded (the A5 class with code folders answers the same homework as A5)
    assert {r["homework"] for r in rows} == {p.name.removesuffix("-code") for p in (ROOT / "examples").iterdir()}


def test_a_field_name_in_the_wrong_case_gets_did_you_mean():
    hw = load_homework("cs224n-w21-a5")
    verdict = grade_answer(assignment(hw, load_keys(ROOT / "solutions", hw)), "1e.ii",
                           {"v": "(u_b u_b^T - u_c u_c^T)/beta^2", "K": "I", "Q": "(u_d u_a^T + u_c u_d^T)/beta^2"})
    assert ("1e.ii: unknown field 'v' (did you mean V?); this part's fields are: V, K, Q "
            "(names are case-sensitive)") in verdict.feedback


@pytest.mark.parametrize("text, hint", [
    ('homework: cs224n-w21-a5\nanswers:\n  1b: "\\sigma(k_a + k_b)"\n', "put it in single quotes"),
    ("homework: cs224n-w21-a5\nanswers:\n\t1b: C k_a\n", "indent with spaces"),
])
def test_the_commonest_yaml_slips_say_what_to_do(tmp_path, text, hint):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(SubmissionError, match=hint):
        load_submission(path)


def test_latex_whose_backslashes_yaml_ate_says_so(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text('homework: cs224n-w21-a5\nanswers:\n  1b: "\\frac{C}{2}(k_a + k_b)"\n')  # \f: a form feed
    hw = load_homework("cs224n-w21-a5")
    sub = load_submission(path)
    verdict = grade_answer(assignment(hw, None, self_check=True), "1b", sub.answers["1b"])
    assert verdict.status == "invalid" and "your LaTeX lost backslashes" in verdict.feedback[0]
    assert "put the answer in single quotes" in verdict.feedback[0]


@pytest.mark.parametrize("written, reading, note", [
    ({"V": "(u_b @ u_b.T - u_c @ u_c.T)/beta**2", "K": "I", "Q": "(u_d u_a^T + u_c u_d^T)/beta^2"},
     "(u_b u_b^T - u_c u_c^T)/beta^2", "read @ as a matrix product"),
    ({"V": "(u_b u_bᵀ - u_c u_cᵀ)/β²", "K": "I", "Q": "(u_d u_a^T + u_c u_d^T)/beta^2"},
     "(u_b u_b^T - u_c u_c^T)/beta^2", "read ᵀ as ^T (a transpose)"),
])
def test_python_and_unicode_spellings_are_read_with_a_note(written, reading, note):
    hw = load_homework("cs224n-w21-a5")
    verdict = grade_answer(assignment(hw, load_keys(ROOT / "solutions", hw)), "1e.ii", written)
    assert verdict.shown["V"] == reading and note in verdict.feedback and verdict.status == "correct"


def test_a_missing_file_says_what_is_there_and_what_to_do(tmp_path):
    folder = tmp_path / "s1"
    shutil.copytree(ROOT / "examples" / "cs224n-w21-a5" / "parachutel", folder)
    (folder / "vanilla.nopretrain.dev.predictions").rename(folder / "vanilla.nopretrain.dev.prediction")
    hw = load_homework("cs224n-w21-a5")
    sub = load_submission(folder)
    verdict = grade_answer(assignment(hw, None, self_check=True), "2d", {"dev": "vanilla.nopretrain.dev.predictions"},
                           folder=sub.folder)
    assert ("vanilla.nopretrain.dev.predictions is not in your submission folder (did you mean "
            "vanilla.nopretrain.dev.prediction?); put it next to your answers file") in "\n".join(verdict.feedback)


def test_an_outputs_folder_of_someone_elses_is_refused_untouched(tmp_path, capsys):
    site = tmp_path / "site"
    (site / "blog").mkdir(parents=True)
    (site / "index.html").write_text("mine", encoding="utf-8")
    (site / "blog" / "report.html").write_text("my post", encoding="utf-8")
    assert main(["run", str(ROOT / "examples" / "cs224n-w21-a5"), "-o", str(site), "--workers", "1"]) == 2
    assert "holds files no grade run wrote (blog, index.html)" in capsys.readouterr().err
    assert (site / "index.html").read_text(encoding="utf-8") == "mine"
    assert (site / "blog" / "report.html").read_text(encoding="utf-8") == "my post"


def test_an_outputs_folder_holding_only_a_decisions_file_is_a_first_runs(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "overrides.yaml").write_text("students: []\n", encoding="utf-8")
    assert main(["run", str(ROOT / "examples" / "cs224n-w21-a5"), "-o", str(out), "--workers", "1"]) == 0
    assert (out / "results.json").is_file()


def test_what_is_graded_must_lie_outside_the_outputs_folder(tmp_path, capsys):
    cls = tmp_path / "class"
    shutil.copytree(ROOT / "examples" / "cs224n-w21-a5", cls)
    assert main(["run", str(cls), "-o", str(cls), "--workers", "1"]) == 2
    assert f"-o {cls}: the outputs folder is all that was given to grade" in capsys.readouterr().err
    assert main(["run", str(cls / "full-marks.yaml"), "-o", str(tmp_path / "out"), "--workers", "1"]) == 0
    assert main(["run", str(tmp_path / "out" / "full-marks"), "-o", str(tmp_path / "out"), "--workers", "1"]) == 2
    assert "is inside the outputs folder, which each run replaces" in capsys.readouterr().err


def test_an_outputs_folder_inside_the_class_is_not_graded_as_a_student(tmp_path, capsys):
    cls = tmp_path / "class"
    shutil.copytree(ROOT / "examples" / "cs224n-w21-a5", cls)
    for _ in range(2):  # the second run finds OUT (and the lock beside it) among the class's folders
        assert main(["run", str(cls), "-o", str(cls / "out"), "--workers", "1"]) == 0
        rows = list(csv.DictReader((cls / "out" / "grades.csv").open()))
        assert len(rows) == 16 and "out" not in {r["student"] for r in rows}
    assert f"passed over: {cls / 'out'}" in capsys.readouterr().out
    assert not (cls / "out" / "out").exists()


def test_an_earlier_runs_outputs_inside_the_class_are_not_a_student(tmp_path, capsys):
    cls = tmp_path / "class"
    shutil.copytree(ROOT / "examples" / "cs224n-w21-a5", cls)
    assert main(["run", str(cls), "-o", str(cls / "out"), "--workers", "1"]) == 0
    assert main(["run", str(cls), "-o", str(cls / "out2"), "--workers", "1"]) == 0
    assert f"passed over: {cls / 'out'}" in capsys.readouterr().out
    assert len(list(csv.DictReader((cls / "out2" / "grades.csv").open()))) == 16


def test_an_outputs_folder_named_among_the_submissions_is_passed_over(tmp_path, capsys):
    # `grade run class/* -o class/out`: from the second run on, the shell names OUT too.
    cls = tmp_path / "class"
    shutil.copytree(ROOT / "examples" / "cs224n-w21-a5", cls)
    for _ in range(2):
        everything = [str(p) for p in sorted(cls.iterdir())]
        assert main(["run", *everything, "-o", str(cls / "out"), "--workers", "1"]) == 0
    assert f"passed over: {cls / 'out'} (the outputs folder)" in capsys.readouterr().out
    assert len(list(csv.DictReader((cls / "out" / "grades.csv").open()))) == 16


def test_an_outputs_folder_reached_through_a_link_into_the_class_is_not_graded(tmp_path, capsys):
    cls = tmp_path / "class"
    shutil.copytree(ROOT / "examples" / "cs224n-w21-a5", cls)
    (cls / "out").mkdir()
    (tmp_path / "link").symlink_to(cls / "out")
    for _ in range(2):
        assert main(["run", str(cls), "-o", str(tmp_path / "link"), "--workers", "1"]) == 0
        rows = list(csv.DictReader((cls / "out" / "grades.csv").open()))
        assert len(rows) == 16 and "out" not in {r["student"] for r in rows}


def test_the_root_of_a_file_system_is_an_empty_outputs_folder(tmp_path):
    out = tmp_path / "disk"
    (out / "lost+found").mkdir(parents=True)  # what mkfs leaves at the root of a disk mounted as OUT
    assert main(["run", str(ROOT / "examples" / "cs224n-w21-a5"), "-o", str(out), "--workers", "1"]) == 0


def test_an_empty_outputs_name_is_not_the_current_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(["run", str(ROOT / "examples" / "cs224n-w21-a5"), "-o", ""])
    assert done.value.code == 2 and "an empty name; name the folder" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_outputs_that_cannot_be_written_are_said_without_a_traceback(tmp_path, capsys):
    (tmp_path / "afile").write_text("not a folder", encoding="utf-8")
    out = tmp_path / "afile" / "out"
    assert main(["run", str(ROOT / "examples" / "cs224n-w21-a5"), "-o", str(out), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert f"grade: -o {out}: could not write the outputs: " in err and "name another -o folder" in err


def test_terminal_escapes_in_a_students_files_are_shown_not_acted_on(tmp_path, capsys, root):
    """An ESC in a file name or a homework id recoloured, retitled or erased the instructor's screen."""
    cls = tmp_path / "class"
    cls.mkdir()
    (cls / "hwesc.yaml").write_text('homework: "\\e[32mGREEN\\e]0;TITLE\\a\\u202e"\nanswers: {}\n')
    (cls / "esc\x1b[2Jwiped.pdf").write_text("")
    shutil.copy(root / "examples/cs224n-w21-a5/seed-000.yaml", cls)
    assert main(["run", str(cls), "-o", str(tmp_path / "out"), "--solutions", str(root / "solutions")]) == 1
    run = capsys.readouterr()
    assert main(["check", str(cls / "hwesc.yaml")]) == 1
    check = capsys.readouterr()
    shown = run.out + run.err + check.out + check.err
    grades = (tmp_path / "out" / "grades.csv").read_text()
    for text in (shown, grades):
        assert not any(c in text for c in "\x1b\x07\u202e")
    assert "esc\\x1b[2Jwiped.pdf" in run.err and "\\x1b[32mGREEN\\x1b]0;TITLE\\x07\\u202e" in check.err
    assert "esc\\x1b[2Jwiped" in grades


def test_a_students_folder_with_an_attempt_inside_is_one_submission_and_said(tmp_path, capsys, root):
    """alice/answers.yaml beside alice/dave/answers.yaml: one folder, one submission. No row for
    dave, who never handed in; alice is graded from her own answers file, and dave/answers.yaml is
    passed over, said in the run's output and in alice's row."""
    seed = (root / "examples/cs224n-w21-a5/seed-000.yaml").read_text().replace("student: seed-000\n", "")
    for folder in ("class/alice", "class/alice/dave", "class/bob"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "answers.yaml").write_text(seed)
    assert main(["run", str(tmp_path / "class"), "-o", str(tmp_path / "out"), "--solutions",
                 str(root / "solutions")]) == 0
    out = capsys.readouterr().out
    assert f"not submissions, passed over: {tmp_path / 'class' / 'alice' / 'dave' / 'answers.yaml'}" in out
    assert "graded 2 of 2 submissions" in out and "holds an answers file and folders of answers" not in out
    with open(tmp_path / "out" / "grades.csv", newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert sorted(rows) == ["alice", "bob"] and rows["alice"]["total"] == rows["bob"]["total"]
    results = {r["student"]: r for r in json.loads((tmp_path / "out" / "results.json").read_text())}
    assert any(note.startswith("dave/answers.yaml: answers inside this folder, not graded")
               for note in results["alice"]["notes"])
    assert not any("answers inside this folder" in note for note in results["bob"].get("notes", []))
