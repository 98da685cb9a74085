"""notebook_code: the definitions of a Jupyter notebook, read without a kernel and checked by their
properties in the sandbox (EECS182 Fa22 HW8, part 1.code).

The class under tests/data/notebooks/fa22-code/class/ (see mistakes.yaml beside it) holds the reference
notebook, a right notebook written differently, and one notebook per real mistake class; each
mistake must lose exactly the properties it breaks."""

from __future__ import annotations

import importlib.abc
import json
import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml

from attngrade import sandbox
from attngrade.checkers import REGISTRY, Context
from attngrade.checkers.notebook_cells import NotebookError, extract
from attngrade.checkers.notebook_contracts import CONTRACTS
from attngrade.cli import main
from attngrade.errors import ConfigError
from attngrade.grading import InProcess, assignment, grade_submission
from attngrade.intake.submissions import load_submission
from attngrade.problems import load_homework, prepare_check
from attngrade.reading import read_field

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "notebooks" / "fa22-code"
CLASS = DATA / "class"
MISTAKES = yaml.safe_load((DATA / "mistakes.yaml").read_text(encoding="utf-8"))
REFERENCE = ROOT / "solutions" / "eecs182-fa22-hw8" / "reference" / "Summarization.ipynb"
HW = load_homework("eecs182-fa22-hw8")
PART = HW.part("1.code")
PROPERTIES = ["attention.rows", "attention.masked", "attention.output", "attention.scale", "causal_mask",
              "padding_mask", "positional_encoding.values", "positional_encoding.shift", "random_features.norm",
              "random_features.kernel"]
KERNEL_MODULES = ("ipykernel", "jupyter_client", "nbclient", "nbconvert", "IPython", "jupyter_core")


def notebook(*sources: str | tuple[str, list[str]]) -> str:
    """A notebook's JSON with one code cell per source (a (source, tags) pair for a tagged cell)."""
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "# a notebook"}]
    for item in sources:
        source, tags = item if isinstance(item, tuple) else (item, [])
        cells.append({"cell_type": "code", "metadata": {"tags": tags} if tags else {}, "outputs": [],
                      "execution_count": None, "source": source.splitlines(keepends=True)})
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})


def failed(feedback: list[str]) -> set[str]:
    """The properties a verdict's feedback says failed (`FAILED: name: ...`)."""
    return {line.split(":")[1].strip() for line in feedback if line.startswith("FAILED: ")}


def passed(feedback: list[str]) -> set[str]:
    return {line.split(":")[1].strip() for line in feedback if line.startswith("ok: ")}


# -- reading the cells: no kernel, one rule ----------------------------------------------------------
def test_the_reference_keeps_its_definitions_and_leaves_out_plots_training_and_shell_lines():
    read = extract(REFERENCE.read_text(encoding="utf-8"))
    assert {"attention", "causal_mask", "padding_mask", "positional_encoding", "random_features", "Summarizer",
            "math", "torch", "F", "device", "PAD_ID", "D_MODEL"} <= set(read.defined)
    assert "tokenizer" in read.dropped_names and "model" in read.dropped_names  # calls: left out, and said
    why = read.left_out
    assert why["shell or magic lines (! or %)"] == [2, 3] and "a cell magic (%%)" not in why
    # cell 18 is %%time over Python: read as Python, its loop left out as any top-level loop
    assert why["top-level code that runs (calls, loops, plots, training)"] == [6, 11, 13, 15, 18]
    assert "plt.show" not in read.source and "optimizer.step" not in read.source and "!pip" not in read.source
    # a kept statement keeps its place: the attention cell is cell 5, its def on line 1
    chunk = read.defined["attention"]
    assert (chunk.cell, chunk.line) == (5, 1)
    assert read.place(chunk.first + 3) == "cell 5, line 4"


def test_statements_are_kept_by_what_they_do():
    read = extract(notebook(
        "import os; os.system('rm -rf /')\nD = 64\nscale = D ** -0.5\ncausal = lambda n: torch.ones(n, n).tril()\n",
        "if torch.cuda.is_available():\n    DEVICE = 'cuda'\nelse:\n    DEVICE = 'cpu'\n",
        "try:\n    import seaborn\nexcept ImportError:\n    seaborn = None\n",
        "if __name__ == '__main__':\n    main()\n",
        "history = fit(model)\nfor epoch in range(3):\n    step()\nwith open('x') as f:\n    data = f.read()\n",
        "torch.manual_seed(0)\nprint('hello')\nmodel\n",
        "torch.softmax?\ndef f(x):\n    return x\n",
        "def broken(:\n    pass\n",
    ))
    assert {"os", "D", "scale", "causal", "DEVICE", "seaborn", "f"} <= set(read.defined)
    assert "os.system" not in read.source and "main()" not in read.source and "fit(" not in read.source
    assert "torch.manual_seed(0)" in read.source and "print(" not in read.source
    assert read.left_out["not Python"] == [9]
    assert read.left_out["top-level code that runs (calls, loops, plots, training)"] == [2, 5, 6, 7]
    assert read.dropped_names["history"] == 6


def test_what_students_really_write_around_their_code_is_read_as_ipython_reads_it():
    """A Colab setup cell's indented !pip, a formatter's `!=` at a line's start, %%time and %%capture over
    definitions, a form feed or a pasted U+2028 in the code: each was a cell or a definition lost."""
    read = extract(notebook(
        "import sys\nif 'google.colab' in sys.modules:\n    !pip install -q einops\nimport math\n",
        "def keep(tokens, pad_id):\n    return (\n        tokens\n        != pad_id\n    )\n",
        "%%time\ndef timed(x):\n    return x\n",
        "%%capture\nN = 3\n",
        "%%bash\necho hi\n",
        "import os  # \x0c\ndef after_form_feed():\n    \"a pasted\u2028line\"\n    return 1\n",
        "%matplotlib inline\nx = 7 % 3\n",
    ))
    assert {"sys", "math", "keep", "timed", "N", "os", "after_form_feed", "x"} <= set(read.defined)
    assert "!= pad_id" in read.source and "pip" not in read.source and "echo" not in read.source
    assert read.left_out["a cell magic (%%)"] == [6]
    assert "not Python" not in read.left_out
    chunk = read.defined["after_form_feed"]
    assert (chunk.cell, chunk.line) == (7, 2) and read.place(chunk.first + 2) == "cell 7, line 4"


def test_a_cell_of_many_help_lines_is_parsed_twice_at_most():
    """Each `obj?` once cost a parse of the whole cell: 200 kB cells of them held the grader for minutes."""
    import time

    cell = "x = 1\n" * 20_000 + "torch.softmax?\n" * 40 + "def broken(:\n"
    started = time.process_time()
    read = extract(notebook(*[cell] * 4))
    assert read.left_out["not Python"] == [2, 3, 4, 5]
    assert time.process_time() - started < 5  # (forty parses a cell took seconds each)


def test_cell_tags_and_the_homeworks_patterns_override_the_rule():
    text = notebook(("vocab = build_vocab(corpus)\n", []), ("train(model)\n", ["attngrade-keep"]),
                    ("def helper():\n    return 1\n", ["attngrade-drop"]), "import matplotlib.pyplot as plt\n",
                    "TABLE = make_table()\n")
    default = extract(text)
    assert "vocab" not in default.defined and "train(model)" in default.source and "helper" not in default.defined
    custom = extract(text, keep=["build_vocab", "make_*"], drop=["matplotlib*"])
    assert {"vocab", "TABLE"} <= set(custom.defined) and "plt" not in custom.defined


def test_what_cannot_be_read_is_said_and_bounded():
    with pytest.raises(NotebookError, match="not a valid notebook: line 1"):
        extract("{not json")
    with pytest.raises(NotebookError, match="no list of cells"):
        extract(json.dumps({"nbformat": 4, "cells": "none"}))
    with pytest.raises(NotebookError, match="JSON objects and lists"):
        extract("[" * 600_000)
    with pytest.raises(NotebookError, match="its source is not text"):
        extract(json.dumps({"nbformat": 4, "cells": [{"cell_type": "code", "source": [1, 2]}]}))
    odd = extract(notebook("x = '\ud800'\n", "w = 3\n"))  # a JSON escape with no UTF-8 form
    assert "x" not in odd.defined and "w" in odd.defined and odd.left_out == {
        "not text (an unpaired surrogate escape)": [2]}
    huge = extract(notebook("x = 1\n" * 40_000, "y = 2\n"))
    assert "y" in huge.defined and "x" not in huge.defined
    assert list(huge.left_out) == ["longer than 200,000 characters"]
    deep = extract(notebook("x = " + "(" * 5000 + ")" * 5000 + "\n", "z = 1\n"))
    assert deep.left_out["not Python"] == [2] and "z" in deep.defined


def test_an_old_notebook_is_read_in_version_4s_layout():
    read = extract((ROOT / "tests" / "data" / "notebooks" / "nbformat-3.ipynb").read_text(encoding="utf-8"))
    assert read.cells == 1 and read.left_out == {"top-level code that runs (calls, loops, plots, training)": [3]}


def test_reading_runs_nothing_and_needs_no_kernel(tmp_path):
    marker = tmp_path / "ran.txt"
    text = notebook(f"open({str(marker)!r}, 'w').write('ran')\n",
                    (f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n", ["attngrade-keep"]))
    read = extract(text)
    assert "write_text" in read.source and not marker.exists()
    assert not any(name.split(".")[0] in KERNEL_MODULES for name in sys.modules)


# -- the check's params ------------------------------------------------------------------------------
def test_the_params_are_checked_when_the_bank_loads():
    spec = PART.checks[0]
    for params, words in (({"definitions": {"attention": "softmax"}}, "unknown contract 'softmax'"),
                          ({"definitions": {"2d": None}}, "not a Python name"),
                          ({"definitions": {"f": None}, "weights": {"g.defined": 1}}, "unknown properties"),
                          ({"definitions": {"f": {"signature": "x, y"}}}, "parameters in parentheses"),
                          ({"definitions": {"f": None}, "notebook": "*.py"}, "does not match the notebook pattern")):
        with pytest.raises(ConfigError, match=words):
            prepare_check(PART, replace(spec, params=params), "1.code")
    assert set(spec.prepared["weights"]) == set(PROPERTIES)


# -- graded in the sandbox ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


class NoKernel(importlib.abc.MetaPathFinder):
    """Refuses, and counts, any import of a Jupyter kernel or client while grading."""

    def __init__(self):
        self.tried: list[str] = []

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in KERNEL_MODULES:
            self.tried.append(name)
            raise ImportError(f"{name}: no kernel while grading")
        return None


def kernel_processes() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if entry.name.isdigit() and any(word in line for word in ("ipykernel", "jupyter", "kernel_launcher")):
            found.append(line)
    return found


@pytest.fixture(scope="module")
def graded_class(torch, tmp_path_factory):
    """The whole class through `grade run`, with a guard that refuses any kernel import."""
    out = tmp_path_factory.mktemp("fa22") / "out"
    guard = NoKernel()
    sys.meta_path.insert(0, guard)
    try:
        code = main(["run", str(CLASS), "-o", str(out), "--workers", "1"])
        processes = kernel_processes()
    finally:
        sys.meta_path.remove(guard)
    assert code == 0
    results = {r["student"]: r for r in json.loads((out / "results.json").read_text())}
    return results, guard.tried, processes, out


def code_part(result: dict) -> dict:
    return next(p for p in result["parts"] if p["id"] == "1.code")


@pytest.mark.parametrize("student", ["reference", "alternative"])
def test_right_notebooks_get_full_code_marks(graded_class, student):
    verdict = code_part(graded_class[0][student])
    assert verdict["score"] == 10 and verdict["status"] == "correct", verdict["feedback"]
    assert passed(verdict["feedback"]) == set(PROPERTIES)


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_each_mistake_loses_exactly_the_properties_it_breaks(graded_class, mistake):
    verdict = code_part(graded_class[0][mistake])
    broken = set(MISTAKES[mistake]["fails"])
    assert failed(verdict["feedback"]) == broken, verdict["feedback"]
    assert passed(verdict["feedback"]) == set(PROPERTIES) - broken
    assert verdict["score"] == 10 - len(broken) and verdict["pending_points"] == 0


def test_no_kernel_is_started_or_imported(graded_class):
    _, tried, processes, _ = graded_class
    assert tried == [] and processes == []
    assert not any(name.split(".")[0] in KERNEL_MODULES for name in sys.modules)


def test_the_feedback_says_what_was_read_and_names_cells(graded_class):
    results, _, _, out = graded_class
    feedback = code_part(results["reference"])["feedback"]
    assert any(line.startswith("Summarization.ipynb: read 12 code cells without running them") for line in feedback)
    assert "cell 3, line 4: your code raised «ModuleNotFoundError: No module named 'matplotlib'»; the rest of the " \
           "notebook's code was loaded without it" in feedback
    scale = next(line for line in code_part(results["wrong-scale"])["feedback"] if "attention.scale" in line)
    assert "scaled by 1/d = 0.0625; the scale is 1/√d = 0.25" in scale
    report = (out / "wrong-scale" / "report.html").read_text(encoding="utf-8")
    assert "attention.scale" in report and "1/√d" in report


def test_grade_check_of_a_fa22_notebook_shows_the_code_verdicts(torch, capsys):
    assert main(["check", str(CLASS / "triu-causal-mask")]) == 0
    shown = capsys.readouterr().out
    assert "1.code   partial    9/10" in shown
    assert "FAILED: causal_mask: causal_mask(4) is True where j ≥ i (torch.triu" in shown
    assert "ok: attention.scale: the scores are scaled by 1/√d" in shown


def test_grade_check_of_the_notebook_alone_grades_its_code(torch, tmp_path, capsys):
    """The notebook itself, handed in without an answers file: the part that names it grades it."""
    shutil.copy2(CLASS / "wrong-scale" / "Summarization.ipynb", tmp_path / "Summarization.ipynb")
    assert main(["check", str(tmp_path / "Summarization.ipynb"), "--homework", HW.id]) == 0
    shown = capsys.readouterr().out
    assert "no answers were found in Summarization.ipynb; it is graded as the file part 1.code reads" in shown
    assert "1.code   partial    9/10" in shown
    assert "FAILED: attention.scale: the scores are scaled by 1/d = 0.0625" in shown


def test_the_notebook_alone_in_a_class_folder_reads_only_itself(torch, tmp_path):
    """A class folder's top-level Summarization.ipynb is one student's notebook: nothing beside it
    (other students' files and folders) is read for it, listed in its report or taken for its code."""
    cls = tmp_path / "class"
    cls.mkdir()
    shutil.copy2(CLASS / "wrong-scale" / "Summarization.ipynb", cls / "Summarization.ipynb")
    shutil.copy2(ROOT / "examples" / HW.id / "seed-003.yaml", cls / "alice_smith_12345.yaml")
    shutil.copytree(CLASS / "reference", cls / "bob")
    out = tmp_path / "out"
    assert main(["run", str(cls), "-o", str(out), "--homework", HW.id, "--workers", "1"]) == 0
    lone = next(r for r in json.loads((out / "results.json").read_text()) if r["student"] == "Summarization")
    said = json.dumps(lone)
    assert "alice_smith" not in said and "bob" not in said, said[:2000]
    assert code_part(lone)["score"] == 9 and "attention.scale" in failed(code_part(lone)["feedback"])


def test_a_notebook_no_part_names_and_without_answers_is_still_refused(tmp_path, capsys):
    shutil.copy2(CLASS / "wrong-scale" / "Summarization.ipynb", tmp_path / "mine.ipynb")
    assert main(["check", str(tmp_path / "mine.ipynb"), "--homework", HW.id]) != 0
    assert "no answers were found: an answer is a heading '## Answer <part id>'" in capsys.readouterr().err


# -- the template: stubs to fill ---------------------------------------------------------------------
def reference_definitions() -> dict[str, str]:
    import ast

    found = {}
    for cell in json.loads(REFERENCE.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and source.startswith("def "):
            for node in ast.parse(source).body:
                found[node.name] = ast.get_source_segment(source, node) + "\n"
    return found


def test_the_template_holds_stubs_that_the_reference_fills_to_full_marks(torch, tmp_path, capsys):
    assert main(["assign", "eecs182-fa22-hw8", "--format", "ipynb", "-o", str(tmp_path / "t")]) == 0
    template = tmp_path / "t" / "eecs182-fa22-hw8.ipynb"
    data = json.loads(template.read_text(encoding="utf-8"))
    stubs = {c["metadata"]["attngrade"]["definition"]: c for c in data["cells"]
             if c["cell_type"] == "code" and "definition" in c["metadata"].get("attngrade", {})}
    assert list(stubs) == ["attention", "causal_mask", "padding_mask", "positional_encoding", "random_features"]
    assert stubs["attention"]["source"].startswith("def attention(Q, K, V, mask=None):")
    # as handed out, the part is unanswered
    blank = grade_submission(assignment(HW, None, self_check=True), load_submission(template))
    assert next(v for v in blank.parts if v.part == "1.code").status == "missing"
    # stubs left as they are, the notebook named: every property says the stub raised, in its cell
    stubbed = tmp_path / "stubbed"
    stubbed.mkdir()
    answer = next(c for c in data["cells"] if c["metadata"].get("attngrade", {}).get("part") == "1.code"
                  and c["cell_type"] == "markdown" and "Answer" in c["source"])
    answer["source"] = answer["source"].replace("notebook:", "notebook: hw8.ipynb")
    (stubbed / "hw8.ipynb").write_text(json.dumps(data), encoding="utf-8")
    assert main(["check", str(stubbed)]) == 0
    shown = capsys.readouterr().out
    assert ("FAILED: attention.rows: calling it, your code raised «NotImplementedError: attention: write it here "
            "(cell 5, line 3)»") in shown
    # filled with the reference's definitions: full marks
    for name, source in reference_definitions().items():
        if name in stubs:
            stubs[name]["source"] = source
    (stubbed / "hw8.ipynb").write_text(json.dumps(data), encoding="utf-8")
    result = grade_submission(assignment(HW, None, self_check=True), load_submission(stubbed))
    verdict = next(v for v in result.parts if v.part == "1.code")
    assert verdict.score == 10, verdict.feedback


def _filled_template(tmp_path: Path, line: str) -> dict:
    """The template with the reference's definitions in its stubs and `line` on its `notebook:` line."""
    assert main(["assign", "eecs182-fa22-hw8", "--format", "ipynb", "-o", str(tmp_path / "t")]) == 0
    data = json.loads((tmp_path / "t" / "eecs182-fa22-hw8.ipynb").read_text(encoding="utf-8"))
    for cell in data["cells"]:
        meta = cell["metadata"].get("attngrade", {})
        if cell["cell_type"] == "code" and meta.get("definition") in reference_definitions():
            cell["source"] = reference_definitions()[meta["definition"]]
        elif cell["cell_type"] == "markdown" and meta.get("part") == "1.code" and "Answer" in cell["source"]:
            cell["source"] = cell["source"].replace("notebook:", f"notebook: {line}".rstrip())
    return data


@pytest.mark.parametrize("line", ["alice.ipynb", "eecs182-fa22-hw8.ipynb", ""])
def test_a_notebook_handed_in_alone_is_graded_for_its_own_code(torch, tmp_path, capsys, line):
    """One notebook, in a class folder of lone notebooks or checked by itself, whose `notebook:` line names it
    (as saved, or by the template's name an LMS download renamed) or is empty while its cells hold the
    code: its code is graded, as it is from a folder and on Gradescope; nothing beside it is read."""
    data = _filled_template(tmp_path, line)
    cls = tmp_path / "class"
    cls.mkdir()
    for student in ("alice", "bob"):
        (cls / f"{student}.ipynb").write_text(json.dumps(data).replace("alice.ipynb", f"{student}.ipynb"),
                                              encoding="utf-8")
    shutil.copy2(CLASS / "wrong-scale" / "Summarization.ipynb", cls / "Summarization.ipynb")  # another student's
    capsys.readouterr()
    assert main(["check", str(cls / "alice.ipynb"), "--json"]) == 0
    checked = json.loads(capsys.readouterr().out)
    assert code_part(checked)["score"] == 10, code_part(checked)["feedback"]
    assert main(["run", str(cls), "-o", str(tmp_path / "out"), "--workers", "1"]) in (0, 1)
    capsys.readouterr()
    rows = {r["student"]: r for r in json.loads((tmp_path / "out" / "results.json").read_text())}
    for student in ("alice", "bob"):
        assert code_part(rows[student])["score"] == 10 and code_part(rows[student])["status"] == "correct"
        said = [n for n in rows[student].get("notes", []) if "`notebook:` line is empty" in n]
        assert len(said) == (1 if not line else 0)


def test_an_empty_notebook_line_over_the_template_s_stubs_stays_unanswered(tmp_path):
    assert main(["assign", "eecs182-fa22-hw8", "--format", "ipynb", "-o", str(tmp_path / "t")]) == 0
    result = grade_submission(assignment(HW, None, self_check=True),
                              load_submission(tmp_path / "t" / "eecs182-fa22-hw8.ipynb"))
    assert next(v for v in result.parts if v.part == "1.code").status == "missing"


# -- without PyTorch, without definitions ------------------------------------------------------------
def run_check(folder: Path):
    reading = read_field(PART, PART.fields[0], None, folder)
    return REGISTRY["notebook_code"].run({"notebook": reading}, Context(part=PART, spec=PART.checks[0]))


def test_without_pytorch_the_points_wait_for_staff(tmp_path, monkeypatch):
    shutil.copy(REFERENCE, tmp_path / "Summarization.ipynb")
    monkeypatch.setattr(sandbox, "torch_missing", lambda: sandbox.TORCH_MISSING)
    outcome = run_check(tmp_path)
    assert outcome.is_pending and outcome.earned == 0
    assert outcome.feedback[0].startswith("Summarization.ipynb: read 12 code cells")
    assert sandbox.TORCH_MISSING in outcome.feedback


def test_a_notebook_without_the_definitions_is_told_where_they_went(tmp_path, monkeypatch):
    (tmp_path / "Summarization.ipynb").write_text(notebook(
        "attention = make_attention()\n", "import torch\nprint(torch.__version__)\n"), encoding="utf-8")
    monkeypatch.setattr(sandbox, "run", lambda *a, **k: pytest.fail("nothing to run, nothing is run"))
    outcome = run_check(tmp_path)
    assert outcome.earned == 0 and not outcome.is_pending
    assert ("FAILED: attention.rows: attention is bound only by a top-level statement that runs code (cell 2), "
            "which is left out: define it with def") in outcome.feedback
    assert "FAILED: causal_mask: causal_mask is not defined in the notebook's code cells" in outcome.feedback


def test_a_broken_notebook_file_is_unreadable_not_wrong(tmp_path):
    (tmp_path / "Summarization.ipynb").write_text('{"cells": [', encoding="utf-8")
    outcome = run_check(tmp_path)
    assert outcome.invalid and "not a valid notebook" in outcome.feedback[0]


# -- the judges on numbers: tolerances are the inputs', never the student's ---------------------------
def test_an_output_cannot_widen_its_own_tolerance():
    rng = np.random.default_rng(0)
    calls, inputs = CONTRACTS["attention"].probes("attention", rng)
    q, k, v = inputs["Q"], inputs["K"], inputs["V"]
    scores = q @ k.transpose(0, 2, 1) / 4
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    out = w @ v
    out[0, 0, 0] += 1e-2  # off in one entry
    out[1, 0, 0] = 1e12  # and huge in another: a tolerance scaled by the output would take both
    sent = {"outputs": [{"shape": list(out.shape), "values": out.ravel().tolist()},
                        {"shape": list(w.shape), "values": w.ravel().tolist()}], "count": 2}
    data = {"attention.plain": sent, "attention.masked": sent}
    weights = {f"attention.{p}": 1.0 for p in ("rows", "masked", "output", "scale")}
    found = {p.name: p for p in CONTRACTS["attention"].judge("attention", data, inputs, weights)}
    assert not found["attention.output"].ok and found["attention.rows"].ok and found["attention.scale"].ok
    nan = w.copy()
    nan[0, 0, 0] = np.nan
    data["attention.plain"] = {**sent, "outputs": [sent["outputs"][0], {"shape": list(w.shape),
                                                                        "values": nan.ravel().tolist()}]}
    again = {p.name: p for p in CONTRACTS["attention"].judge("attention", data, inputs, weights)}
    assert not again["attention.rows"].ok and not again["attention.scale"].ok  # NaN is never a pass


def test_one_huge_column_cannot_make_any_encoding_shift_by_a_fixed_matrix():
    rng = np.random.default_rng(1)
    noise = rng.normal(size=(50, 16))
    noise[:, 0] = 1e6  # a relative leftover measured by the student's own size would call this shifted
    data = {f"sinusoidal_encoding.{n}x{d}": {"outputs": [{"shape": [n, d], "values": (
        noise if (n, d) == (50, 16) else rng.normal(size=(n, d))).ravel().tolist()}], "count": 1}
        for n, d in ((50, 16), (9, 6))}
    weights = {"sinusoidal_encoding.values": 1.0, "sinusoidal_encoding.shift": 1.0}
    found = {p.name: p for p in CONTRACTS["sinusoidal_encoding"].judge("sinusoidal_encoding", data, {}, weights)}
    assert not found["sinusoidal_encoding.shift"].ok


# -- on Gradescope, and in an instructor's own homework ----------------------------------------------
def test_the_gradescope_run_grades_the_notebook_and_shows_it_at_once(torch, tmp_path):
    import contextlib
    import io

    from attngrade.gradescope.manifest import Manifest
    from attngrade.gradescope.run import run_gradescope

    root = tmp_path / "gs"
    shutil.copytree(ROOT / "solutions" / "eecs182-fa22-hw8", root / "source" / "solutions" / "eecs182-fa22-hw8")
    (root / "source" / "attngrade-autograder.json").write_text(
        Manifest(homework="eecs182-fa22-hw8", attngrade="test", wheel="wheels/none.whl").to_json(), encoding="utf-8")
    shutil.copytree(CLASS / "phi-with-the-wrong-variance", root / "submission" / "code")  # any depth of the zip
    with contextlib.redirect_stdout(io.StringIO()):
        assert run_gradescope(root) == 0
    data = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    test = next(t for t in data["tests"] if t["name"].startswith("1.code"))
    assert test["score"] == 9 and test["max_score"] == 10 and test["visibility"] == "visible"
    assert "random_features.kernel" in test["output"] and "W/σ" in test["output"]


def test_a_new_homework_from_fa22_carries_its_reference_where_the_autograder_finds_it(tmp_path, capsys):
    from attngrade.grading.assignment import reference_of

    out = tmp_path / "my-hw"
    assert main(["new-homework", "eecs182-fa22-hw8", "-o", str(out), "--solutions", str(ROOT / "solutions")]) == 0
    found = reference_of(out, "eecs182-fa22-hw8")
    assert found is not None and (found / "Summarization.ipynb").read_bytes() == REFERENCE.read_bytes()
    assert main(["validate", str(out)]) == 0


def test_a_file_named_on_the_answer_line_must_be_a_notebook(tmp_path):
    (tmp_path / "summary.py").write_text("def attention(Q, K, V, mask=None):\n    pass\n", encoding="utf-8")
    reading = read_field(PART, PART.fields[0], "summary.py", tmp_path)
    outcome = REGISTRY["notebook_code"].run({"notebook": reading}, Context(part=PART, spec=PART.checks[0]))
    assert outcome.earned == 0 and outcome.feedback == (
        "summary.py is not the notebook this part reads (a file named like '*.ipynb'); hand in the notebook itself",)


def sent(values: np.ndarray, dtype: str = "float32") -> dict:
    """One call's result as the sandbox's driver sends it back."""
    flat = values.ravel().tolist()
    return {"count": 1, "outputs": [{"shape": list(values.shape), "dtype": dtype, "values": flat}]}


def test_a_mask_or_an_encoding_with_leading_axes_of_one_is_judged_by_its_values():
    from attngrade.checkers.notebook_contracts import ENCODINGS, paper_encoding

    causal = {f"causal_mask.{n}": sent(np.tril(np.ones((1, 1, n, n), dtype=bool)), "bool") for n in (1, 4, 7)}
    (ok,) = CONTRACTS["causal_mask"].judge("causal_mask", causal, {}, {"causal_mask": 1.0})
    assert ok.ok, ok.message
    batch = {f"pe.{n}x{d}": sent(paper_encoding(n, d)[None]) for n, d in ENCODINGS}
    weights = {"pe.values": 1.0, "pe.shift": 1.0}
    assert all(p.ok for p in CONTRACTS["sinusoidal_encoding"].judge("pe", batch, {}, weights))
    halves = {f"pe.{n}x{d}": sent(paper_encoding(n, d, layout="halves")) for n, d in ENCODINGS}
    values, shift = CONTRACTS["sinusoidal_encoding"].judge("pe", halves, {}, weights)
    assert not values.ok and "the sines in the first half and the cosines in the second" in values.message
    assert shift.ok  # another layout, the same rotation from one position to the next


def test_a_form_feed_in_the_code_moves_no_line_in_the_sandbox(torch, tmp_path):
    """The grader and the sandbox's child count a notebook's lines alike: a form feed or a pasted U+2028
    before the definitions once shifted every later chunk in the child."""
    data = json.loads(REFERENCE.read_text(encoding="utf-8"))
    for cell in data["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and source.startswith("def attention"):
            cell["source"] = "# \x0c page break\n" + source.replace('"""Scaled', '"""pasted\u2028Scaled', 1)
    (tmp_path / "Summarization.ipynb").write_text(json.dumps(data), encoding="utf-8")
    outcome = run_check(tmp_path)
    assert outcome.earned == 10 and not failed(outcome.feedback), outcome.feedback


@pytest.mark.parametrize("constant, kept", [("torch.finfo(torch.float32).min", True), ("lowest()", False)])
def test_a_constant_bound_by_a_call_is_kept_when_cheap_and_else_named_where_it_fails(torch, tmp_path, constant, kept):
    """`NEG_INF = torch.finfo(...).min` beside the definitions is kept (a cheap constructor); one bound by a
    call of the student's own is left out, and the NameError it causes names the cell that binds it."""
    data = json.loads(REFERENCE.read_text(encoding="utf-8"))
    for number, cell in enumerate(data["cells"], start=1):
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and source.startswith("def attention"):
            cell["source"] = ("def lowest():\n    return -1e9\n\n" f"NEG_INF = {constant}\n\n"
                              + source.replace('float("-inf")', "NEG_INF"))
            at = number
    (tmp_path / "Summarization.ipynb").write_text(json.dumps(data), encoding="utf-8")
    outcome = run_check(tmp_path)
    if kept:
        assert outcome.earned == 10 and not failed(outcome.feedback), outcome.feedback
    else:
        assert "attention.masked" in failed(outcome.feedback)
        assert any(line.startswith(f"NEG_INF is bound only in cell {at}, by a top-level statement that runs code")
                   for line in outcome.feedback), outcome.feedback


@pytest.mark.parametrize("case", ["empty line, the course's notebook beside", "the line names a file beside"])
def test_a_notebook_named_or_beside_the_answers_is_read_before_the_answers_notebook_itself(torch, tmp_path, case):
    """The answers notebook stands in for the file its part reads only where that file is not there: the
    course's Summarization.ipynb beside a template with one function written, or a notebook named on the
    line, is the one graded (each was once replaced by the template's stubs, 1/10 and 0/10)."""
    folder = tmp_path / "ann"
    folder.mkdir()
    data = _filled_template(tmp_path, "" if case.startswith("empty") else "eecs182-fa22-hw8.ipynb")
    for cell in data["cells"]:
        meta = cell["metadata"].get("attngrade", {})
        if cell["cell_type"] == "code" and meta.get("definition") not in (None, "causal_mask"):
            cell["source"] = f'def {meta["definition"]}(*args):\n    raise NotImplementedError("not yet")\n'
    (folder / "answers.ipynb").write_text(json.dumps(data), encoding="utf-8")
    beside = "Summarization.ipynb" if case.startswith("empty") else "eecs182-fa22-hw8.ipynb"
    shutil.copy2(REFERENCE, folder / beside)
    result = grade_submission(assignment(HW, None, self_check=True), load_submission(folder))
    verdict = next(v for v in result.parts if v.part == "1.code")
    assert verdict.score == 10, verdict.feedback
    assert not [n for n in result.notes if "`notebook:` line" in n]


def test_a_timeit_cell_defines_nothing():
    """%%timeit runs its cell inside a timing function, so Jupyter keeps none of its definitions (one there
    once replaced a wrong attention that the notebook really has)."""
    read = extract(notebook("%%timeit -n1 -r1\ndef attention(Q, K, V, mask=None):\n    return V, None\n"))
    assert "attention" not in read.defined and read.left_out["a cell magic (%%)"] == [2]
