"""`grade gradescope` in process: broken submissions, broken autograders, crashes, who submitted.

results.json must be written whatever happens, with a visible test a student can act on
and a hidden one with the details for course staff.
"""

from __future__ import annotations

import html
import json
import shutil

import pytest

from attngrade.cli import main
from attngrade.gradescope import run_gradescope
from attngrade.gradescope import run as gs_run
from gradescope_helpers import EXAMPLES, REFERENCE, parts_by_number, visible_text


def _visible_and_hidden(data):
    visible = [t for t in data["tests"] if t["visibility"] == "visible"]
    hidden = [t for t in data["tests"] if t["visibility"] == "hidden"]
    assert len(visible) == 1 and len(hidden) == 1, data["tests"]
    return html.unescape(visible[0]["output"]), html.unescape(hidden[0]["output"])


def test_cli_gradescope_grades_and_returns_0(gradescope, autograder_zip):
    root = gradescope.root(autograder_zip, {"answers.yaml": EXAMPLES / "partial.yaml"})
    assert main(["gradescope", "--root", str(root)]) == 0
    assert parts_by_number(gradescope.results(root))["1e.ii"]["score"] == 2


def test_internal_error_is_reported_without_its_details_to_the_student(gradescope, autograder_zip, monkeypatch):
    def broken(graded, submission):
        raise RuntimeError("checker exploded near the key u_a")

    monkeypatch.setattr(gs_run, "grade_both", broken)
    root = gradescope.root(autograder_zip, {"answers.yaml": EXAMPLES / "partial.yaml"})
    assert run_gradescope(root) == 1
    data = gradescope.results(root)
    shown, details = _visible_and_hidden(data)
    assert data["score"] == 0
    assert "attngrade failed while grading your submission" in shown
    assert "exploded" not in visible_text(data) and "u_a" not in visible_text(data)
    assert "Traceback" in details and "RuntimeError: checker exploded near the key u_a" in details


def test_broken_autograder_is_staffs_problem_not_the_students(gradescope, autograder_zip):
    root = gradescope.root(autograder_zip, {"answers.yaml": EXAMPLES / "partial.yaml"})
    shutil.rmtree(root / "source" / "solutions")  # keys lost: a part needs them
    assert run_gradescope(root) == 2
    shown, details = _visible_and_hidden(gradescope.results(root))
    assert "not set up right" in shown and "not a problem with your answers" in shown
    assert "configuration error" in details and "keys.yaml" in details


def test_missing_manifest(gradescope, autograder_zip):
    root = gradescope.root(autograder_zip, {"answers.yaml": EXAMPLES / "partial.yaml"})
    (root / "source" / "attngrade-autograder.json").unlink()
    assert run_gradescope(root) == 2
    shown, details = _visible_and_hidden(gradescope.results(root))
    assert "not set up right" in shown
    assert "attngrade-autograder.json is missing" in details


def test_answers_for_another_homework(gradescope, autograder_zip):
    root = gradescope.root(autograder_zip, {"hw.yaml": "homework: eecs182-fa22-hw8\nanswers: {}\n"})
    assert run_gradescope(root) == 1
    shown, _ = _visible_and_hidden(gradescope.results(root))
    assert "hw.yaml: the file answers homework 'eecs182-fa22-hw8', but this assignment is cs224n-w21-a5" in shown


@pytest.mark.parametrize("files, says", [
    ({"a.yaml": "homework: cs224n-w21-a5\n", "b/c.yml": "homework: cs224n-w21-a5\n"},
     "your submission has 2 answers files (a.yaml, b/c.yml); submit exactly one"),
    ({"a.yaml": "answers: {}\n", "b.yaml": "x: 1\n"},
     "none of the files in your submission (a.yaml, b.yaml) holds answers attngrade can find"),
    ({"answers.txt": "homework: cs224n-w21-a5\n"}, "your submission has no answers file"),
    ({"answers.ipynb": "{not json"}, "answers.ipynb: not a valid notebook: line 1, column 2"),
    ({"answers.yaml": b"\xff\xfehomework"}, "answers.yaml: "),
])
def test_submissions_that_cannot_be_read_say_what_to_do(gradescope, autograder_zip, files, says):
    root = gradescope.root(autograder_zip, files)
    assert run_gradescope(root) == 1
    shown, details = _visible_and_hidden(gradescope.results(root))
    assert says in shown
    assert str(root) not in shown
    for name in files:
        assert name in details  # staff see what was uploaded


def test_macos_litter_and_hidden_files_are_not_answers(gradescope, autograder_zip):
    root = gradescope.root(autograder_zip, {
        "a5/answers.yaml": EXAMPLES / "partial.yaml",
        "__MACOSX/a5/._answers.yaml": b"\x00\x05\x16\x07homework: junk",
        "a5/.answers.yaml.swp": "homework: cs224n-w21-a5\n",
    })
    assert run_gradescope(root) == 0
    assert gradescope.results(root)["score"] == 5


def test_prediction_files_away_from_the_answers_file_are_pointed_out(gradescope, autograder_zip):
    root = gradescope.root(autograder_zip, {
        "answers.yaml": REFERENCE / "answers.yaml",
        "preds/vanilla.pretrain.dev.predictions": REFERENCE / "vanilla.pretrain.dev.predictions",
    })
    assert run_gradescope(root) == 0
    data = gradescope.results(root)
    assert ("2f: vanilla.pretrain.dev.predictions was found at preds/vanilla.pretrain.dev.predictions, but files "
            "are read only from the folder of your answers file (answers.yaml)") in visible_text(data)
    assert parts_by_number(data)["2f"]["status"] == "failed"


CODE = EXAMPLES.parent / "cs224n-w21-a5-code"


def test_code_read_from_src_is_graded_and_never_told_to_move(gradescope, autograder_zip):
    """src/dataset.py is where grading reads a code file from: graded 10/10, no note tells the student
    to move it; a prediction file away from the answers file (read only beside it) still is told."""
    pytest.importorskip("torch")
    root = gradescope.root(autograder_zip, {
        "answers.yaml": CODE / "ada" / "answers.yaml", "src/dataset.py": CODE / "ada" / "src" / "dataset.py",
        "preds/vanilla.pretrain.dev.predictions": REFERENCE / "vanilla.pretrain.dev.predictions",
    })
    assert run_gradescope(root) == 0
    data = gradescope.results(root)
    shown = visible_text(data)
    assert parts_by_number(data)["2e"]["score"] == 10
    assert "dataset.py was found" not in shown and "move it" in shown
    assert "2f: vanilla.pretrain.dev.predictions was found at preds/vanilla.pretrain.dev.predictions" in shown


def test_code_outside_the_answers_folder_is_told_where_it_is_read_from(gradescope, autograder_zip):
    # hw/answers.yaml and code/dataset.py: code is read from hw/ and the folders inside it, not from code/.
    root = gradescope.root(autograder_zip, {"hw/answers.yaml": CODE / "ada" / "answers.yaml",
                                            "code/dataset.py": CODE / "ada" / "src" / "dataset.py"})
    assert run_gradescope(root) == 0
    shown = visible_text(gradescope.results(root))
    assert ("2e: dataset.py was found at code/dataset.py, but code files are read only from the folder of your "
            "answers file (hw/answers.yaml) and the folders inside it (src/, say); move it there") in shown


def test_a_submission_of_many_files_is_looked_through_within_bounds_and_says_so(gradescope, autograder_zip):
    files = {"answers.yaml": EXAMPLES / "partial.yaml"}
    files.update({f"data/{i:05d}.txt": "x" for i in range(gs_run.MAX_FILES + 10)})
    root = gradescope.root(autograder_zip, files)
    assert run_gradescope(root) == 0
    data = gradescope.results(root)
    assert data["score"] == 5  # the answers were found and graded
    assert (f"your submission was not looked through to the end: only the first {gs_run.MAX_FILES:,} files and "
            "folders were looked at (it stopped at data)" in visible_text(data))


@pytest.mark.parametrize("metadata, student", [
    (None, "reference"),  # no metadata: the answers file's own student
    ({"id": 123456, "users": []}, "submission-123456"),
    ({"id": 1, "users": [{"email": "a@x.edu", "name": "A"}, {"name": "B", "email": ""}]}, "a@x.edu, B"),
    ("not json", "reference"),
])
def test_student_comes_from_submission_metadata(gradescope, autograder_zip, metadata, student):
    # One answer, no code: the student's name is what is tested, not the grading of the whole homework.
    answers = "homework: cs224n-w21-a5\nstudent: reference\nanswers:\n  1b: C (k_a + k_b)\n"
    root = gradescope.root(autograder_zip, {"answers.yaml": answers},
                           metadata=metadata if isinstance(metadata, dict) else None)
    if metadata == "not json":
        (root / "submission_metadata.json").write_text("{oops")
    assert run_gradescope(root) == 0
    data = gradescope.results(root)
    assert data["extra_data"]["student"] == student
    assert f"for {student} (" in html.unescape(data["output"])


def test_student_text_never_renders_as_html(gradescope, autograder_zip):
    answers = ("homework: cs224n-w21-a5\nanswers:\n  1b: '<b>C</b> (k_a + k_b)'\n"
               "  1e.i:\n    c2: u_a\n    possible: no\n    why: '<img src=x onerror=alert(1)>'\n")
    root = gradescope.root(autograder_zip, {"answers.yaml": answers})
    assert run_gradescope(root) == 0
    data = gradescope.results(root)
    everything = data["output"] + "".join(t.get("output", "") for t in data["tests"])
    assert "<img" not in everything and "<b>C" not in everything
    assert "&lt;img src=x onerror=alert(1)&gt;" in data["output"]  # 1e.i as read, before publishing


def test_visibility_comes_from_the_manifest(gradescope, autograder_zip):
    root = gradescope.root(autograder_zip, {"answers.yaml": EXAMPLES / "partial.yaml"})
    manifest = root / "source" / "attngrade-autograder.json"
    data = json.loads(manifest.read_text())
    data["visibility"] = {"property": "after_due_date", "key": "hidden"}
    manifest.write_text(json.dumps(data))
    assert run_gradescope(root) == 0
    tests = parts_by_number(gradescope.results(root))
    assert tests["1e.ii"]["visibility"] == "after_due_date" and tests["1e.i"]["visibility"] == "hidden"
    data["visibility"] = {"flags": "visible"}  # integrity flags are always for staff only
    manifest.write_text(json.dumps(data))
    assert run_gradescope(root) == 2


def test_a_yaml_file_without_a_homework_line_answers_this_assignment(gradescope, autograder_zip):
    root = gradescope.root(autograder_zip, {"answers.yaml": "answers:\n  1b: C(k_a + k_b)\n"})
    assert run_gradescope(root) == 0
    assert parts_by_number(gradescope.results(root))["1b"]["score"] == 4


@pytest.mark.parametrize("fmt", ["md", "ipynb", "tex"])
def test_every_carrier_is_found_and_graded(gradescope, autograder_zip, tmp_path, fmt):
    from attngrade.intake.formats.write import WRITERS
    from attngrade.problems import load_homework

    write, suffix = WRITERS[fmt]
    text = write(load_homework("cs224n-w21-a5"), {"1b": "C(k_a + k_b)", "1e.i": {"c2": "u_a", "possible": False}})
    root = gradescope.root(autograder_zip, {f"work/hw5{suffix}": text, "notes.txt": "scratch"})
    assert run_gradescope(root) == 0
    tests = parts_by_number(gradescope.results(root))
    assert tests["1b"]["score"] == 4


def test_integrity_flags_quoting_student_text_are_escaped_for_staff():
    # A flag quotes what the student wrote (a file name, a reported accuracy); staff read it as text.
    from attngrade.gradescope.results import FLAGS_TEST, Context, results
    from attngrade.problems import load_homework
    from attngrade.records import Result, Verdict

    homework = load_homework("cs224n-w21-a5")
    hostile = "2g.i: <img src=x onerror=alert(1)> scores as well as the vanilla model"
    verdict = Verdict("2g.i", 0.0, 2.0, "correct", (), evidence={"flags": [hostile]})
    result = Result(student="mallory", homework=homework.id, score=0.0, max_score=2.0, parts=(verdict,))
    (flags,) = [t for t in results(result, result, Context(homework))["tests"] if t["name"] == FLAGS_TEST]
    assert "<img" not in flags["output"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in flags["output"]
