"""What an instructor trying the workflow as a new user met in the templates and the readers:
placeholder ids, answers in the cell below the heading or in a code cell, choice options
nowhere to be seen, a LaTeX template that did not compile, and no hint about --homework."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from attngrade.cli import main
from attngrade.errors import SubmissionError
from attngrade.grading import assignment, grade_submission
from attngrade.intake.formats import PLACEHOLDER_ID, is_placeholder_id
from attngrade.intake.formats.write import STYLE, WRITERS
from attngrade.intake.submissions import load_submission
from attngrade.problems import HomeworkFolder, homework_ids, load_homework

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOKS = ROOT / "tests" / "data" / "notebooks"
SHAPES = ROOT / "tests" / "data" / "homeworks" / "shapes"
A5 = "cs224n-w21-a5"


def _grade(argv: list[str]) -> int:
    """`grade ARGV` in process; an option the parser does not know is its exit code, not a crash."""
    try:
        return main(argv)
    except SystemExit as done:
        return int(done.code or 0)


# -- template placeholders become ids -----------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["md", "ipynb"])
def test_template_placeholders_become_ids_no_more(fmt, tmp_path):
    """A template left with its placeholder id is listed under its file name, with a note that says so."""
    write, suffix = WRITERS[fmt]
    template = write(load_homework(A5), {"1b": "C(k_a + k_b)"})
    assert PLACEHOLDER_ID in template
    path = tmp_path / f"zoe{suffix}"
    path.write_text(template, encoding="utf-8")
    sub = load_submission(path)
    assert sub.student == "zoe"
    assert any("the student id '<your-id>' is the template's placeholder" in note for note in sub.notes)


@pytest.mark.parametrize("claim", ["your-id", "<your-id>", "Your ID", "  ", "<student_id>"])
def test_template_placeholders_are_recognised_old_and_new(claim, tmp_path):
    path = tmp_path / "ana.md"
    path.write_text(f"---\nhomework: {A5}\nstudent: '{claim}'\n---\n## Answer 1b\nC(k_a + k_b)\n", encoding="utf-8")
    assert load_submission(path).student == "ana"
    assert is_placeholder_id(claim) or not claim.strip()
    assert not is_placeholder_id("zoe") and not is_placeholder_id("s001")


def test_template_placeholders_become_ids_a_warning_in_run_and_check(tmp_path, capsys):
    """Eight students who left the template's id are eight students, each under a file name; `grade check`
    says why, and results.json carries the same note for staff."""
    write, _ = WRITERS["md"]
    cls = tmp_path / "class"
    cls.mkdir()
    for name in ("ana", "bo", "cy"):
        (cls / f"{name}.md").write_text(write(load_homework(A5), {"1b": "C(k_a + k_b)"}), encoding="utf-8")
    assert main(["check", str(cls / "ana.md")]) == 0
    assert "note: the student id '<your-id>' is the template's placeholder" in capsys.readouterr().out
    assert main(["run", str(cls), "-o", str(tmp_path / "out"), "--solutions", str(ROOT / "solutions"),
                 "--workers", "1"]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert sorted(r["student"] for r in results) == ["ana", "bo", "cy"]
    assert all(any("template's placeholder" in n for n in r.get("notes", [])) for r in results)


def test_template_placeholders_become_ids_no_more_in_yaml(tmp_path):
    path = tmp_path / "zoe.yaml"
    path.write_text(WRITERS["yaml"][0](load_homework(A5), {"1b": "C(k_a + k_b)"}), encoding="utf-8")
    sub = load_submission(path)
    assert sub.student == "zoe"
    assert any("template's placeholder" in note for note in sub.notes)


def test_template_placeholders_become_ids_ids_from_names_for_lms_downloads(tmp_path):
    """An LMS download names each file after its student; what the files say is then not the id."""
    cls = tmp_path / "canvas"
    cls.mkdir()
    for name in ("ana_12345_answers", "bo_67890_answers"):
        (cls / f"{name}.yaml").write_text(f"homework: {A5}\nstudent: s001\nanswers:\n  1b: C(k_a + k_b)\n")
    assert _grade(["run", str(cls), "-o", str(tmp_path / "out"), "--solutions", str(ROOT / "solutions"),
                   "--workers", "1", "--ids-from-names"]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert sorted(r["student"] for r in results) == ["ana_12345_answers", "bo_67890_answers"]


# -- notebook answers in the wrong cell are lost ----------------------------------------------------------
def test_notebook_answers_in_the_wrong_cell_are_lost_no_more():
    """An answer is every Markdown cell from its heading to the next heading."""
    sub = load_submission(NOTEBOOKS / "answers-below-headings.ipynb")
    assert sub.answers["1b"] == {"q": "C(k_a + k_b)"}  # a cell of its own under a heading cell
    assert sub.answers["1e.i"]["c2"] == "u_a" and sub.answers["1e.i"]["possible"] == "no"  # under the template's
    assert sub.answers["1e.i"]["why"].endswith("against any other input.")  # a third cell: the text goes on
    assert sub.answers["1d.i"] == {"q1": "C \\mu_a", "q2": "C \\mu_b"}
    assert any("cell 9, line 1: the text after the blank line ('A note of mine" in n for n in sub.notes)
    assert not sub.invalid
    result = grade_submission(assignment(load_homework(A5), None, self_check=True), sub)
    parts = {v.part: v for v in result.parts}
    assert parts["1b"].status == "correct" and parts["1d.i"].status in ("correct", "partial")


def test_notebook_answers_in_the_wrong_cell_a_code_cell_is_a_warning_in_check_and_run(tmp_path, capsys):
    assert main(["check", str(NOTEBOOKS / "answers-below-headings.ipynb")]) == 0
    out = capsys.readouterr().out
    assert "note: cell 8: a code cell under the heading 'Answer 1c.i' is not read" in out
    assert "change the cell to Markdown" in out
    assert main(["run", str(NOTEBOOKS / "answers-below-headings.ipynb"), "-o", str(tmp_path / "out"),
                 "--solutions", str(ROOT / "solutions"), "--workers", "1"]) == 0
    (result,) = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert any("cell 8: a code cell under the heading 'Answer 1c.i'" in n for n in result["notes"])
    # an empty code cell (cell 10) loses nothing, and is not said
    assert not any(n.startswith("cell 10") for n in result["notes"])


def test_notebook_answers_in_the_wrong_cell_stop_at_the_next_parts_statement(tmp_path):
    """The template's statement cells are headings: an answer cell never swallows the next statement."""
    text = WRITERS["ipynb"][0](load_homework(A5), {"1b": "C(k_a + k_b)", "1c.i": "C(\\mu_a + \\mu_b)"}, "sam")
    path = tmp_path / "t.ipynb"
    path.write_text(text, encoding="utf-8")
    sub = load_submission(path)
    assert sub.answers["1b"] == {"q": "C(k_a + k_b)"} and sub.answers["1c.i"] == {"q": "C(\\mu_a + \\mu_b)"}
    assert not sub.notes and not sub.invalid
    # a notebook from a template that wrote statements in bold still ends each answer there
    data = json.loads(text)
    for cell in data["cells"]:
        source = cell["source"]
        if source.startswith("### ") and "Answer" not in source.splitlines()[0]:
            head, _, rest = source.partition("\n")
            cell["source"] = f"**{head[4:].split(' ')[0]}** ({head.split('(')[1]}" + "\n" + rest
    path.write_text(json.dumps(data), encoding="utf-8")
    old = load_submission(path)
    assert old.answers == sub.answers and not old.notes


# -- choice options appear in no template and not in `grade problems` ---------------------------------
@pytest.mark.parametrize("fmt", ["yaml", "md", "ipynb", "tex"])
def test_choice_options_appear_in_every_template(fmt):
    text = WRITERS[fmt][0](HomeworkFolder(SHAPES).load_homework("shapes-quiz"))
    assert "beta (one of large, small)" in text and "type (one of hard, soft)" in text
    a5 = WRITERS[fmt][0](load_homework(A5))
    assert "possible (yes or no)" in a5


def test_choice_options_appear_in_grade_problems(capsys):
    assert main(["problems", str(SHAPES)]) == 0
    out = capsys.readouterr().out
    assert "    beta: one of large, small" in out and "small (also: tiny, \\beta \\to 0)" in out
    assert "    type: one of hard, soft" in out


# -- LaTeX: the template does not compile when a statement uses \mathbb --------------------------------
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed (texlive-latex-base)")
@pytest.mark.parametrize("homework", ["shapes", *homework_ids()])
def test_the_latex_template_compiles_when_a_statement_uses_mathbb(homework, tmp_path):
    hw = HomeworkFolder(SHAPES).load_homework("shapes-quiz") if homework == "shapes" else load_homework(homework)
    assert "amssymb" in STYLE and "amsmath" in STYLE
    if homework == "shapes":
        assert "\\mathbb" in WRITERS["tex"][0](hw)
    (tmp_path / "answers.tex").write_text(WRITERS["tex"][0](hw), encoding="utf-8")
    (tmp_path / "attngrade.sty").write_text(STYLE, encoding="utf-8")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "answers.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / "answers.pdf").stat().st_size > 1000


# -- `grade check` without --homework gives no hint --------------------------------------------------------
@pytest.mark.parametrize("fmt", ["md", "ipynb", "tex"])
def test_grade_check_without_homework_says_how_to_give_it(fmt, tmp_path, capsys):
    """The course's own homework is in no install: the student is told to name its folder."""
    write, suffix = WRITERS[fmt]
    path = tmp_path / f"answers{suffix}"
    path.write_text(write(HomeworkFolder(SHAPES).load_homework("shapes-quiz")), encoding="utf-8")
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert "unknown homework 'shapes-quiz'" in err and "name its folder" in err and "--homework DIR" in err
    assert main(["check", str(path), "--homework", str(SHAPES)]) == 0


def test_grade_check_without_homework_when_the_file_names_none(tmp_path, capsys):
    path = tmp_path / "answers.md"
    path.write_text("## Answer 1b\nC(k_a + k_b)\n", encoding="utf-8")
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert "the file does not say which homework it answers" in err
    assert "`--homework ID`" in err and "`--homework DIR`" in err
    assert main(["check", str(path), "--homework", A5]) == 0


def test_grade_check_without_homework_says_how_to_give_it_for_yaml(tmp_path):
    path = tmp_path / "answers.yaml"
    path.write_text("answers:\n  1b: C(k_a + k_b)\n", encoding="utf-8")
    with pytest.raises(SubmissionError, match="--homework"):
        load_submission(path)


def test_grade_check_of_a_yaml_file_naming_the_courses_own_homework_says_how_to_give_it(tmp_path, capsys):
    path = tmp_path / "answers.yaml"
    path.write_text(yaml.safe_dump({"homework": "shapes-quiz", "answers": {"shape": "t x n"}}), encoding="utf-8")
    assert main(["check", str(path)]) == 1
    assert "--homework DIR" in capsys.readouterr().err
