"""Hostile code in a notebook's cells (tests/data/code/hostile/) is contained as it is in a .py file.

Each case is put, as it is, into a code cell of the reference Summarization.ipynb tagged
`attngrade-keep` (so that it runs when the notebook's code is loaded; left to the default rule,
its top-level code would be left out, which a second test shows). Whatever it does, the part gets
a verdict on the code within its time budget (never points left pending because the code said
attngrade failed), nothing outside the job's folder changes or is reached, no secret reaches an
output, and nothing of the job (process, IPC object, folder) outlives it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sandbox"))
from hostile_cases import HOSTILE, INTERNAL, IPC_KEY, SECRET, Outside, ipc_keys  # noqa: E402

from attngrade import sandbox  # noqa: E402
from attngrade.checkers.notebook_cells import extract  # noqa: E402
from attngrade.grading import InProcess, assignment, grade_submission  # noqa: E402
from attngrade.intake.submissions import load_submission  # noqa: E402
from attngrade.problems import load_homework, prepare_check  # noqa: E402
from attngrade.sandbox import ENV_SOCKET  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "solutions" / "eecs182-fa22-hw8" / "reference" / "Summarization.ipynb"
TIMEOUT = 4.0  # the part's timeout here (10 s in the bank): an endless cell ends by it
SLACK = 8.0  # starting the sandbox's zygote on a loaded machine
MAX_OUTPUT = 5 * 1024**2
POINTS = 10.0
# case -> (words one feedback line holds, the code part's score): a cell that only raises costs nothing
# (the reference's definitions still load), one that never ends or ends the process costs everything.
CASES = {
    "infinite_loop": (("still running after",), 0.0),
    "fork_bomb": (("still running after",), 0.0),
    "huge_allocation": (("MemoryError",), POINTS),
    "read_secrets": (("ok: attention.rows",), POINTS),
    "write_outside": (("SystemExit",), POINTS),
    "claims_setup_error": (("something malformed", "exit code 0"), 0.0),
}


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.fixture(scope="module")
def quick():
    """Fa22 HW8 with the code part's timeout at TIMEOUT."""
    hw = load_homework("eecs182-fa22-hw8")
    part = hw.part("1.code")
    spec = part.checks[0]
    fast = replace(part, checks=(prepare_check(part, replace(spec, params={**spec.params, "timeout": TIMEOUT}),
                                               part.id),))
    problems = tuple(replace(p, parts=tuple(fast if q.id == part.id else q for q in p.parts)) for p in hw.problems)
    return replace(hw, problems=problems)


def hostile_notebook(folder: Path, case: str, fill: dict[str, str], tags: list[str]) -> Path:
    """A submission folder: the reference notebook with the case's file as one more code cell."""
    folder.mkdir(parents=True)
    text = (HOSTILE / f"{case}.py").read_text(encoding="utf-8")
    for name, value in fill.items():
        text = text.replace(f"__{name}__", value)
    notebook = json.loads(REFERENCE.read_text(encoding="utf-8"))
    notebook["cells"].insert(5, {"cell_type": "code", "execution_count": None, "outputs": [], "id": "hostile",
                                 "metadata": {"tags": tags}, "source": text.splitlines(keepends=True)})
    (folder / "Summarization.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    (folder / "answers.yaml").write_text(f"homework: eecs182-fa22-hw8\nstudent: {case}\nanswers: {{}}\n",
                                         encoding="utf-8")
    return folder


SHARED_TMP = Path("/tmp/attngrade-escaped.txt")  # where write_outside tries the machine's shared /tmp


def _state(path: Path) -> tuple | None:
    """A file's identity and last change, or None: unchanged means nothing wrote it (another run's may be there)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size)


def code_verdict(result):
    return next(v for v in result.parts if v.part == "1.code")


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_cells_are_contained_as_a_py_file_is(torch, quick, tmp_path, case):
    outside = Outside()
    sandbox.prestart()
    fill = {**outside.fill(), "ZYGOTE": os.environ.get(ENV_SOCKET, "")}
    folder = hostile_notebook(tmp_path / "student", case, fill, ["attngrade-keep"])
    ipc_before, shared_before = ipc_keys(), _state(SHARED_TMP)
    try:
        started = time.monotonic()
        result = grade_submission(assignment(quick, None, self_check=True), load_submission(folder),
                                  InProcess(budget=0))
        elapsed = time.monotonic() - started
        reached, untouched = outside.reached(), outside.untouched()
    finally:
        outside.close()
    verdict = code_verdict(result)
    words, score = CASES[case]
    assert elapsed < 2 * TIMEOUT + SLACK
    assert verdict.score == score and verdict.pending_points == 0, verdict.feedback
    assert any(word in line for line in verdict.feedback for word in words), verdict.feedback
    assert not any(text in line for line in verdict.feedback for text in INTERNAL), verdict.feedback
    # nothing outside the job's folder changed or was reached; no secret reached the results
    assert untouched and not reached
    assert not (folder / "escaped.txt").exists() and _state(SHARED_TMP) == shared_before
    report = json.dumps(result.to_json(), default=str)
    assert SECRET not in report and len(report) < MAX_OUTPUT
    # nothing of the job outlived it
    assert IPC_KEY not in ipc_keys() - ipc_before
    zygote_folder = Path(os.environ[ENV_SOCKET]).parent.parent
    assert not list(zygote_folder.glob("attngrade-job-*"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_left_to_the_default_rule_hostile_top_level_code_is_not_even_loaded(case, tmp_path):
    """Without the tag, a cell's loops, calls and `raise` are top-level code that runs: left out (the
    definitions and imports in it, read_secrets' class, would still be loaded)."""
    folder = hostile_notebook(tmp_path / "student", case, {"TARGET": str(tmp_path / "t"), "SECRET": "",
                                                           "PORT": "1", "SOCKETS": "", "ZYGOTE": ""}, [])
    read = extract((folder / "Summarization.ipynb").read_text(encoding="utf-8"))
    kept = read.source
    for text in ("while True", "os.fork()", "bytearray(", "os.walk(", "raise SystemExit", "os._exit("):
        assert text not in kept
    assert 6 in read.left_out["top-level code that runs (calls, loops, plots, training)"]


def test_the_cases_are_the_corpus(torch):
    assert all((HOSTILE / f"{case}.py").is_file() for case in CASES)
    assert shutil.which("true") is not None  # the corpus's files are read as they are, placeholders filled
