"""Notebooks, Markdown and LaTeX: one answers contract, graded exactly as YAML is."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest


from attngrade.cli import main
from attngrade.errors import SubmissionError
from attngrade.intake.formats.write import STYLE, WRITERS
from attngrade.grading import assignment, grade_submission
from attngrade.problems.keys import load_keys
from attngrade.problems import homework_ids, load_homework
from attngrade.intake.submissions import load_submission
from attngrade.grading import Class, Options, grade

sys.path.insert(0, str(Path(__file__).resolve().parent))
from carriers import convert_class  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOKS = ROOT / "tests" / "data" / "notebooks"
A5 = "cs224n-w21-a5"


def verdicts(batch):
    return {(r.student, v.part): (v.score, v.status) for r in batch.results for v in r.parts}


# -- every carrier grades like the YAML it came from -------------------------------------------------
@pytest.mark.parametrize("fmt", ["md", "ipynb", "tex"])
@pytest.mark.parametrize("homework", homework_ids())
def test_a_converted_class_grades_identically(homework, fmt, tmp_path):
    yaml_class = ROOT / "examples" / homework
    converted = convert_class(yaml_class, tmp_path / homework, fmt)
    assert not list(converted.rglob("*.yaml"))  # nothing of the YAML is left to read
    want = verdicts(grade(Class([yaml_class]), Options(solutions=ROOT / "solutions")))
    got = grade(Class([converted]), Options(solutions=ROOT / "solutions"))
    assert not [r.error for r in got.results if r.error]
    assert verdicts(got) == want


# -- notebooks as people save them ---------------------------------------------------------------------
def test_a_notebook_saved_by_jupyter_with_outputs_and_images(capsys):
    path = NOTEBOOKS / "saved-by-jupyter.ipynb"
    assert path.stat().st_size > 3_000_000  # plots and all
    sub = load_submission(path)
    assert sub.homework == A5 and sub.student == "jupyter-user"  # from the notebook's metadata
    assert sub.answers["1b"] == {"q": "C(k_a + k_b)"}  # $$...$$ stripped
    assert sub.answers["1e.i"]["possible"] == "no"
    assert sub.answers["1e.i"]["why"].startswith("x_2 scores") and "\nagainst any other" in sub.answers["1e.i"]["why"]
    assert any("cell 9, line 1: the text after the blank line" in n for n in sub.notes)
    result = grade_submission(assignment(load_homework(A5), None, self_check=True), sub)
    parts = {v.part: v for v in result.parts}
    assert parts["1b"].status == parts["1e.ii"].status == "correct"


def test_a_notebook_stripped_of_metadata_takes_the_homework_from_the_command_line(capsys):
    path = NOTEBOOKS / "vscode-stripped.ipynb"
    with pytest.raises(SubmissionError, match="does not say which homework it answers; add notebook metadata"):
        load_submission(path)
    assert main(["check", str(path), "--homework", A5, "--json"]) == 0
    parts = {p["id"]: p for p in json.loads(capsys.readouterr().out)["parts"]}
    assert parts["1e.ii"]["status"] == "correct" and parts["1b"]["status"] == "correct"


def test_answers_in_a_fenced_attngrade_block():
    sub = load_submission(NOTEBOOKS / "fenced-answers.ipynb")
    assert sub.answers["1b"] == {"q": "C(k_a + k_b)"} and set(sub.answers["1e.ii"]) == {"V", "K", "Q"}


def test_a_50_mb_notebook_reads_in_under_a_second(tmp_path):
    data = json.loads((NOTEBOOKS / "saved-by-jupyter.ipynb").read_text())
    image = data["cells"][1]["outputs"][1]["data"]["image/png"]
    filler = [{"cell_type": "code", "execution_count": i, "id": f"x{i}", "metadata": {}, "source": ["plot()"],
               "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"image/png": image}}]}
              for i in range(90)]
    data["cells"] = filler + data["cells"]
    big = tmp_path / "big.ipynb"
    big.write_text(json.dumps(data))
    assert big.stat().st_size > 50_000_000
    load_submission(NOTEBOOKS / "fenced-answers.ipynb")  # imports done: the second is what is timed
    start = time.perf_counter()
    sub = load_submission(big)
    assert time.perf_counter() - start < 1.0
    assert sub.answers["1b"] == {"q": "C(k_a + k_b)"}


def test_a_notebook_that_is_not_json_says_where(tmp_path):
    bad = tmp_path / "broken.ipynb"
    bad.write_text('{"cells": [ {"cell_type": "markdown", "source": "## Answer 1b\\nC k_a"\n')
    with pytest.raises(SubmissionError, match=r"broken.ipynb: not a valid notebook: line 2, column 1"):
        load_submission(bad, homework=A5)


# -- the same rules in every carrier -------------------------------------------------------------------
MD = """---
homework: cs224n-w21-a5
student: dup
---
# Answer 1b
C(k_a + k_b)

## Answer 1b
C(k_a+k_b)

## Answer 1e.i
c2: u_a

## Answer 1e.i
c2: u_b

## Answer 1f
anything

## Answer 1c.i
q:
"""


def test_duplicates_conflicts_unknown_parts_and_empty_slots(tmp_path):
    path = tmp_path / "dup.md"
    path.write_text(MD)
    sub = load_submission(path)
    assert sub.answers["1b"] == {"q": "C(k_a + k_b)"}  # the same answer twice is fine
    assert sub.invalid["1e.i"] == ("1e.i: two different answers to field c2 of part 1e.i, at line 11, column 1 "
                                   "and at line 14, column 1; keep one of them and submit again")
    assert any("line 17, column 1: there is no part '1f'" in n and "did you mean 2f?" in n for n in sub.notes)
    assert "1c.i" not in sub.answers  # an empty slot is no answer
    result = grade_submission(assignment(load_homework(A5), None, self_check=True), sub)
    parts = {v.part: v for v in result.parts}
    assert parts["1e.i"].status == "invalid" and "two different answers" in parts["1e.i"].feedback[0]
    assert parts["1c.i"].status == "missing" and parts["1b"].status == "correct"


TEX = r"""\documentclass{article}
\usepackage{attngrade}
\attnhomework{cs224n-w21-a5}
\begin{document}
% \answer{1b}{k_a}   a comment is not an answer
\answer{1b}{$C(k_a + k_b)$}
\answer[c2]{1e.i}{u_a}
\answer[c2]{1e.i}{u_c}
\answer{1x}{u_a}
\begin{answertext}[why]{1e.i}
x_2 scores 2 beta^2 with itself; 100% sure.
\end{answertext}
\end{document}
"""


def test_latex_answers_comments_and_conflicts(tmp_path):
    path = tmp_path / "s7.tex"
    path.write_text(TEX)
    sub = load_submission(path)
    assert sub.student == "s7" and sub.answers["1b"] == {"q": "C(k_a + k_b)"}
    assert sub.answers["1e.i"]["why"] == "x_2 scores 2 beta^2 with itself; 100% sure."
    assert "at line 7, column 1 and at line 8, column 1" in sub.invalid["1e.i"]
    assert any("line 9, column 1: there is no part '1x'" in n for n in sub.notes)


def _after_1b(tmp_path, name: str, body: str):
    """A LaTeX file of A5 that answers 1b, then `body`, as loaded."""
    path = tmp_path / f"{name}.tex"
    path.write_text("\\attnhomework{cs224n-w21-a5}\n\\answer{1b}{$C(k_a + k_b)$}\n" + body + "\n")
    return load_submission(path)


@pytest.mark.parametrize("body, read", [
    ("\\iffalse \\answer{1a}{$old$} \\else \\answer{1a}{$new$} \\fi", "new"),
    ("\\iffalse \\ifx a b \\fi \\answer{1a}{$hidden$} \\fi", None),
    ("\\iftrue \\answer{1a}{$kept$} \\else \\answer{1a}{$dropped$} \\fi", "kept")])
def test_latex_conditionals_keep_the_branch_tex_keeps(tmp_path, body, read):
    """An answer in \\iffalse's \\else is the answer; one behind an \\iffalse whose inner \\ifx closes
    first is still skipped, as TeX counts conditionals in skipped text."""
    assert _after_1b(tmp_path, "s8", body).answers.get("1a") == (None if read is None else {"answer": read})


@pytest.mark.parametrize("body, read", [
    # TeX pairs no brace in what \iffalse skips: a draft left there is no error
    ("\\iffalse draft: \\answer{1a}{$\\frac{1}{2$} \\fi \\answer{1a}{$u_a$}", "u_a"),
    ("\\newif\\ifdraft \\iffalse \\ifdraft { \\fi } \\else \\answer{1a}{$u_a$} \\fi", "u_a"),
    ("\\iffalse % \\fi in a comment ends nothing\n { \\fi \\answer{1a}{$u_a$}", "u_a"),
    ("\\iffalse \\answer{1a}{$u_a$} \\filbreak { \\fi", None),  # \filbreak is not \fi
    # code in \mintinline is verbatim, whatever its delimiter
    ("\\mintinline{python}|d = {| \\answer{1a}{$u_a$}", "u_a"),
    ("\\mintinline[fontsize=\\small]{python}{x} \\answer{1a}{$u_a$}", "u_a")])
def test_latex_braces_tex_does_not_pair_are_not_paired(tmp_path, body, read):
    assert _after_1b(tmp_path, "s9", body).answers.get("1a") == (None if read is None else {"answer": read})


@pytest.mark.parametrize("body, read", [
    # a conditional named or defined is not run: the answers after it are read
    ("\\let\\ifsolutions\\iffalse\n\\ifsolutions \\answer{1a}{$old$} \\else \\answer{1a}{$u_a$} \\fi", "u_a"),
    ("\\def\\hidden{\\iffalse}\n\\answer{1a}{$u_a$}", "u_a"),
    # a \newif's branch is known: false until set
    ("\\newif\\ifdraft\n\\ifdraft \\answer{1a}{$draft$} \\else \\answer{1a}{$u_a$} \\fi", "u_a"),
    ("\\newif\\ifdraft \\drafttrue\n\\ifdraft \\answer{1a}{$u_a$} \\else \\answer{1a}{$final$} \\fi", "u_a"),
    # a switch set inside a group ends with it
    ("\\newif\\ifdraft {\\drafttrue}\n\\ifdraft \\answer{1a}{$draft$} \\else \\answer{1a}{$u_a$} \\fi", "u_a"),
    # listings' options and minted's braces
    ("\\lstinline[language=Python]|d = {}| \\answer{1a}{$u_a$}", "u_a"),
    ("\\mintinline{python}{f({1: 2})} \\answer{1a}{$u_a$}", "u_a"),
    # \\iff and etoolbox's \\iftoggle are no conditionals: nothing after them is skipped or noted
    ("\\iffalse draft: $a \\iff b$ \\fi \\answer{1a}{$u_a$}", "u_a"),
    ("\\iftoggle{sol}{x}{} \\answer{1a}{$u_a$}", "u_a"),
    # a \\let split over two lines is one \\let
    ("\\let\\ifsolutions\n\\iffalse\n\\ifsolutions \\answer{1a}{$old$} \\else \\answer{1a}{$u_a$} \\fi", "u_a")])
def test_latex_definitions_and_flags_are_read_as_tex_reads_them(tmp_path, body, read):
    sub = _after_1b(tmp_path, "s11", body)
    assert sub.answers.get("1a") == {"answer": read}
    assert not [n for n in sub.notes if "does not evaluate" in n], sub.notes


def test_latex_an_answer_under_a_condition_attngrade_does_not_evaluate_is_read_and_said(tmp_path):
    sub = _after_1b(tmp_path, "s12", "\\ifdefined\\solutions \\answer{1a}{$u_a$} \\fi")
    assert sub.answers["1a"] == {"answer": "u_a"}
    assert any(n.startswith("line 3, column 22: this answer is inside \\ifdefined … \\fi, a condition attngrade "
                            "does not evaluate") for n in sub.notes), sub.notes


def test_latex_naming_two_homeworks_is_refused_with_both(tmp_path):
    path = tmp_path / "s13.tex"
    path.write_text("\\attnhomework{cs224n-w21-a5}\n\\attnhomework{nyu-dl-transformer}\n\\answer{1b}{$x$}\n")
    with pytest.raises(SubmissionError, match=r"attnhomework names 2 homeworks \('cs224n-w21-a5', "
                                              r"'nyu-dl-transformer'\); keep the one line"):
        load_submission(path)
    path.write_text("\\attnhomework{cs224n-w21-a5}\n\\attnhomework{cs224n-w21-a5}\n\\answer{1b}{$C(k_a + k_b)$}\n")
    assert load_submission(path).homework == "cs224n-w21-a5"  # the same one twice is one


def test_latex_after_the_end_of_the_document_is_not_read_and_said(tmp_path):
    path = tmp_path / "s10.tex"
    path.write_text("\\documentclass{article}\n\\begin{document}\n\\attnhomework{cs224n-w21-a5}\n"
                    "\\answer{1b}{$C(k_a + k_b)$}\n\\end{document}\nscratch { notes\n\\answer{1a}{$u_a$}\n")
    sub = load_submission(path)
    assert set(sub.answers) == {"1b"}
    assert any(n.startswith("line 5: answers after \\end{document} were not read") for n in sub.notes)
    path.write_text(path.read_text().replace("\\answer{1a}{$u_a$}", "just notes"))
    assert not any("end{document}" in n for n in load_submission(path).notes)


# -- nothing in a class folder is skipped without a word ------------------------------------------------
def test_every_entry_of_a_class_folder_gets_a_row(tmp_path, capsys):
    cls = tmp_path / "class"
    cls.mkdir()
    shutil.copy2(ROOT / "examples" / A5 / "full-marks.yaml", cls / "full-marks.yaml")
    shutil.copy2(NOTEBOOKS / "fenced-answers.ipynb", cls / "fenced.ipynb")
    (cls / "notes.pdf").write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    (cls / "todo.txt").write_text("finish 1e.ii\n")
    (cls / "empty.yaml").write_text("")
    nb = json.loads((NOTEBOOKS / "vscode-stripped.ipynb").read_text())
    nb["cells"] = [c for c in nb["cells"] if "Answer" not in "".join(c["source"])]
    nb["metadata"] = {"attngrade": {"homework": A5}}
    (cls / "no-answers.ipynb").write_text(json.dumps(nb))
    (cls / ".DS_Store").write_bytes(b"\x00\x01")
    (cls / "submission_metadata.yml").write_text("{}\n")
    out = tmp_path / "out"
    assert main(["run", str(cls), "-o", str(out), "--workers", "1"]) == 1
    rows = {line.split(",")[0]: line for line in (out / "grades.csv").read_text().splitlines()[1:]}
    assert set(rows) == {"full-marks", "fenced", "notes", "todo", "empty", "no-answers"}
    results = {r["student"]: r for r in json.loads((out / "results.json").read_text())}
    assert "not a submission format; attngrade reads .yaml, .yml, .ipynb, .md, .tex files" in results["notes"]["error"]
    assert "notes.pdf" in results["notes"]["error"] and "todo.txt" in results["todo"]["error"]
    assert "expected a mapping" in results["empty"]["error"]
    assert "no answers were found" in results["no-answers"]["error"]
    assert results["full-marks"]["score"] == 13 and not results["fenced"].get("error")
    said = capsys.readouterr().out
    assert "not submissions, passed over:" in said and ".DS_Store" in said and "submission_metadata.yml" in said


# -- grade assign: templates without keys, that the reference fills to full marks -------------------------
def _fill(homework: str, fmt: str, folder: Path) -> Path:
    reference = ROOT / "solutions" / homework / "reference"
    answers_yaml = reference / "answers.yaml" if reference.is_dir() else ROOT / "solutions" / homework / "reference.yaml"
    sub = load_submission(answers_yaml)
    write, suffix = WRITERS[fmt]
    folder.mkdir(parents=True)
    if reference.is_dir():
        for data in reference.iterdir():
            if data.suffix not in (".yaml", ".yml"):
                shutil.copy2(data, folder / data.name)
    path = folder / f"reference{suffix}"
    path.write_text(write(load_homework(homework), sub.answers, "reference"))
    return folder


@pytest.mark.parametrize("fmt", ["yaml", "md", "ipynb", "tex"])
@pytest.mark.parametrize("homework", homework_ids())
def test_templates_hold_no_keys_and_the_reference_fills_them_to_full_marks(homework, fmt, tmp_path, capsys):
    assert main(["assign", homework, "--format", fmt, "-o", str(tmp_path / "t")]) == 0
    template = next((tmp_path / "t").glob(f"{homework}.*"))
    text = template.read_text()
    keys = load_keys(ROOT / "solutions", load_homework(homework))
    for part, fields in keys.answers.items():
        for value in fields.values():
            if len(getattr(value, "text", "") or "") > 6:
                assert value.text not in text, (part, value.text)  # no key leaks into a template
    blank = grade_submission(assignment(load_homework(homework), None, self_check=True), load_submission(template))
    assert {v.status for v in blank.parts} <= {"missing"}
    filled = _fill(homework, fmt, tmp_path / "filled")
    hw = load_homework(homework)
    test_gold = tmp_path / "birth_test.tsv"
    test_gold.write_text("".join(f"Where was person {i} born?\tLondon\n" for i in range(437)))
    result = grade_submission(assignment(hw, keys, gold={"test": test_gold}), load_submission(filled))
    for verdict in result.parts:
        machine = sum(c.points for c in hw.part(verdict.part).checks if c.check != "manual")
        if machine:
            assert verdict.score == pytest.approx(machine), (verdict.part, verdict.status, verdict.feedback)


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex is not installed (Debian: texlive-latex-base); the LaTeX template was not compiled")
@pytest.mark.parametrize("homework", homework_ids())
def test_the_latex_template_and_the_filled_reference_compile(homework, tmp_path):
    for folder in (tmp_path / "template", _fill(homework, "tex", tmp_path / "filled")):
        folder.mkdir(exist_ok=True)
        if folder.name == "template":
            (folder / "reference.tex").write_text(WRITERS["tex"][0](load_homework(homework)))
        (folder / "attngrade.sty").write_text(STYLE)
        run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "reference.tex"],
                             cwd=folder, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout[-2000:]
        assert (folder / "reference.pdf").stat().st_size > 1000


def test_grade_problems_shows_statements_and_expected_files(capsys):
    assert main(["problems", A5]) == 0
    out = capsys.readouterr().out
    assert "Give a query $q$" in out and "expects the file vanilla.pretrain.dev.predictions" in out


# -- what a fresh-eyes review found --------------------------------------------------------------------
def test_a_class_folder_with_a_loose_answers_file_and_student_folders(tmp_path):
    from attngrade.intake.submissions import discover

    cls = tmp_path / "root" / "cls"
    cls.mkdir(parents=True)
    shutil.copy2(ROOT / "examples" / A5 / "full-marks.yaml", cls)
    for who in ("Alireza1044", "PandaJunk"):
        shutil.copytree(ROOT / "examples" / A5 / who, cls / who)
    assert sorted(p.name for p in discover([cls])) == ["Alireza1044", "PandaJunk", "full-marks.yaml"]
    # Inside a class, a folder with answers of its own is one student's: the folders of answers in it
    # are not graded as classmates, and are said.
    passed_over: list[Path] = []
    assert list(discover([tmp_path / "root"], passed_over)) == [cls]
    assert passed_over == [cls / "Alireza1044" / "answers.yaml", cls / "PandaJunk" / "answers.yaml"]
    alice = tmp_path / "alice"  # one student's folder with a folder of their own files inside
    shutil.copytree(ROOT / "examples" / A5 / "Alireza1044", alice)
    (alice / "outputs").mkdir()
    (alice / "outputs" / "train.log").write_text("epoch 1\n")
    assert list(discover([alice])) == [alice]


def test_markdown_code_bold_fields_notes_in_headings_and_windows_line_ends(tmp_path):
    path = tmp_path / "w.md"
    path.write_text("---\nhomework: cs224n-w21-a5\n---\n## Answer 1a (2 points)\nIt copies.\n```python\n"
                    "# a comment, not a heading\nx = 1\n```\nThat is all.\n\n## Answer 1b\n$C(k_a+k_b)$\n\n"
                    "## Answer 1e.ii\nMy construction:\n**V:** (u_b u_b^T - u_c u_c^T)/beta^2\n**K:** I\n"
                    "**Q:** (u_d u_a^T + u_c u_d^T)/beta^2\n\n## Answer 1c.i\nq: C(\\mu_a +\r\n\t\\mu_b)\n")
    sub = load_submission(path)
    assert "# a comment, not a heading" in sub.answers["1a"]["answer"] and "That is all." in sub.answers["1a"]["answer"]
    assert sub.answers["1b"] == {"q": "C(k_a+k_b)"}
    assert sub.answers["1e.ii"]["K"] == "I"
    assert any("the text before the fields ('My construction:'" in n for n in sub.notes)
    result = grade_submission(assignment(load_homework(A5), None, self_check=True), sub)
    parts = {v.part: v for v in result.parts}
    assert parts["1c.i"].status == "correct" and parts["1e.ii"].status == "correct"


def test_latex_comment_environments_comments_in_arguments_and_nested_answers(tmp_path):
    path = tmp_path / "s.tex"
    path.write_text("\\attnhomework{cs224n-w21-a5}\n\\begin{comment}\n\\answer{1b}{k_a}\n\\end{comment}\n"
                    "\\textbf{\\answer{1b}{C(k_a + k_b)}}\n\\answer{1c.i}{C(\\mu_a % the first mean\n + \\mu_b)}\n")
    sub = load_submission(path)
    assert sub.answers["1b"] == {"q": "C(k_a + k_b)"} and not sub.invalid
    assert "%" not in sub.answers["1c.i"]["q"]
    bare = tmp_path / "t.tex"
    bare.write_text("\\attnhomework{cs224n-w21-a5}\\answer{1b}x")
    with pytest.raises(SubmissionError, match=r"write \\answer\{<part>\}\{<answer>\}"):
        load_submission(bare)


def test_commented_out_answers_are_not_answers(tmp_path):
    md = tmp_path / "c.md"
    md.write_text("---\nhomework: cs224n-w21-a5\n---\n<!--\n## Answer 1b\nk_a\n-->\n## Answer 1b\nC(k_a + k_b)\n")
    assert load_submission(md).answers["1b"] == {"q": "C(k_a + k_b)"} and not load_submission(md).invalid
    tex = tmp_path / "c.tex"
    tex.write_text("\\attnhomework{cs224n-w21-a5}\n\\iffalse\n\\answer{1b}{k_a}\n\\fi\n\\answer{1b}{C(k_a + k_b)}\n")
    sub = load_submission(tex)
    assert sub.answers["1b"] == {"q": "C(k_a + k_b)"} and not sub.invalid


@pytest.mark.parametrize("hostile", [
    "<!--" * 10_000,  # comments never closed: a lazy pattern tried each to the end
    "## Answer 1b" + " " * 400 + "x",  # a heading-like line: spaces the pattern could split many ways
    "## Answer " + "#" * 20_000 + ":x",  # hashes the part id and the closing marks could share
])
def test_hostile_markdown_is_read_in_linear_time(tmp_path, hostile):
    answers = tmp_path / "s1.md"
    answers.write_text("---\nhomework: cs224n-w21-a5\n---\n" + hostile + "\n## Answer 1b\n$C(k_a + k_b)$\n")
    start = time.perf_counter()
    sub = load_submission(answers)
    assert time.perf_counter() - start < 1.0  # seconds to hours before: no catastrophic backtracking
    assert sub.answers["1b"] == {"q": "C(k_a + k_b)"}


def test_comments_are_blanked_keeping_line_numbers_and_an_unclosed_one_hides_nothing():
    from attngrade.intake.formats.markdown import without_comments

    assert without_comments("a <!-- x\ny --> b\n<!-- c\nd") == "a \n b\n<!-- c\nd"
    assert without_comments("<!---->x<!-- a -->y") == "xy"


def test_a_notebook_of_version_3_is_read_through_nbformat():
    """Version 3 kept its cells in worksheets; nbformat converts it."""
    sub = load_submission(NOTEBOOKS / "nbformat-3.ipynb")
    assert sub.homework == "cs224n-w21-a5" and sub.answers["1b"] == {"q": "C(k_a + k_b)"}


def test_a_notebook_of_millions_of_tiny_outputs_is_refused_before_it_is_read(tmp_path):
    """13 million empty outputs in 39 MB took 6.6 GB to read; the file's size alone does not bound that."""
    data = json.loads((NOTEBOOKS / "fenced-answers.ipynb").read_text())
    data["cells"].append({"cell_type": "code", "metadata": {}, "source": [], "execution_count": 1,
                          "outputs": [{}] * 600_000})
    bomb = tmp_path / "bomb.ipynb"
    bomb.write_text(json.dumps(data))
    with pytest.raises(SubmissionError, match=r"bomb.ipynb: the notebook holds over 500,000 JSON objects and lists"):
        load_submission(bomb)
