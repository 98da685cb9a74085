"""A whole class of hostile submissions is graded, safely, in bounded time and memory.

`tests/data/hostile-class/` holds one file or folder per defect. The test copies it to a
temporary folder, adds what git should not hold (symbolic links, named pipes, sparse
100 MB files), runs `grade run` on the copy as a real process and checks that

- the run finishes (well inside 120 s) with peak memory under 1 GB,
- every submission has a row in grades.csv, an entry in results.json and a report,
- every bad input gets an `invalid` or `incorrect` verdict, or an error row when the
  whole file is unreadable, with a message that names the problem,
- nothing a student wrote was run, nothing outside the output folder was written, and
  no linked file (/etc/passwd, the gold file, the reference solution) leaked into any output,
- finding and reading the class is bounded: a flood of backticks, sparse 3 GiB code files, hard
  links, folders nested in a student's folder, thousands of files before src/ and a file the
  grader cannot read each cost a moment and a message, never the run.

The second half checks the time and memory limits of checks themselves: a check that
hangs (even one that ignores SIGALRM) is stopped in its worker process, also when the
batch is started from a thread other than the main one, where no signal can help.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from attngrade.checkers import REGISTRY, Check, Outcome
from attngrade.cli import main
from attngrade.outputs.layout import folder_names
from attngrade.grading.execute import GRACE
from attngrade.records import STATUSES

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "hostile-class"
SOLUTIONS = ROOT / "solutions"
GOLD = ROOT / "attngrade" / "data" / "cs224n-w21-a5" / "birth_dev.tsv"
REFERENCE_CODE = SOLUTIONS / "cs224n-w21-a5" / "reference" / "dataset.py"  # the grader's own solution
DEV = "vanilla.nopretrain.dev.predictions"
NESTED = 300  # folders of answers inside nested-submissions/
DATA_FILES = 6_000  # files beside src/ in many-files-before-src/
AS_ROOT = os.geteuid() == 0
WALL_LIMIT = 120.0  # seconds the whole hostile class may take
MEMORY_LIMIT_KIB = 1024 * 1024  # 1 GiB, as ru_maxrss (KiB on Linux)
PWNED = Path("/tmp")  # the injection strings would create /tmp/attngrade-pwned-*

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="symlinks, named pipes, sparse files and ru_maxrss in KiB: Linux")


# -- the class as it is graded ----------------------------------------------------------
def build_class(dest: Path) -> Path:
    """A copy of the corpus plus what git should not hold (links, pipes, huge files)."""
    cls = dest / "hostile-class"
    shutil.copytree(CORPUS, cls, symlinks=True)
    os.symlink("/etc/passwd", cls / "symlink-to-etc-passwd" / DEV)
    os.symlink(os.path.relpath(GOLD, cls / "symlink-to-gold"), cls / "symlink-to-gold" / DEV)
    os.symlink(f"../honest-student/{DEV}", cls / "symlink-to-other-student" / DEV)
    os.symlink("/dev/zero", cls / "symlink-to-dev-zero" / DEV)
    with open(cls / "prediction-100mb" / DEV, "wb") as handle:
        handle.truncate(100 * 1024 * 1024)  # sparse: 100 MB long, no disk used
    os.mkfifo(cls / "prediction-fifo" / DEV)
    os.mkfifo(cls / "answers-fifo" / "answers.yaml")
    os.symlink("../control-full-marks.yaml", cls / "symlink-answers-yaml" / "answers.yaml")
    with open(cls / "yaml-3mb.yaml", "wb") as handle:
        handle.write(b"homework: cs224n-w21-a5\nanswers:\n  1a: x\n")
        handle.truncate(3 * 1024 * 1024)
    _build_intake_cases(cls, dest)
    return cls


def _build_intake_cases(cls: Path, dest: Path) -> None:
    """What finding and reading submissions must survive: floods, huge files, second names, nesting."""
    (cls / "backtick-flood" / "notes.md").write_text("`" * 1_000_000, encoding="ascii")
    for rel in ("src/dataset.py", "old/dataset.py"):
        (cls / "sparse-code-files" / rel).parent.mkdir(parents=True)
        with open(cls / "sparse-code-files" / rel, "wb") as handle:
            handle.truncate(3 * 1024**3)  # sparse: 3 GiB long, no disk used
    links = cls / "hard-link-to-grader-files"
    (links / "src").mkdir()
    _hard_link(GOLD, links / DEV, dest)
    _hard_link(REFERENCE_CODE, links / "src" / "dataset.py", dest)
    os.symlink(REFERENCE_CODE.parent, cls / "symlink-src-to-solutions" / "src")
    nested = (cls / "nested-submissions" / "answers.yaml").read_text(encoding="utf-8")
    for i in range(NESTED):
        (cls / "nested-submissions" / f"attempt-{i:03d}").mkdir()
        (cls / "nested-submissions" / f"attempt-{i:03d}" / "answers.yaml").write_text(nested, encoding="utf-8")
    for i in range(DATA_FILES):
        (cls / "many-files-before-src" / f"data-{i:05d}.txt").write_text(f"{i}\n", encoding="ascii")
    unreadable = cls / "unreadable-file" / "src" / "dataset.py"
    unreadable.parent.mkdir()
    if AS_ROOT:  # root reads a file of any mode: a socket is what it cannot read
        with socket.socket(socket.AF_UNIX) as listening:
            listening.bind(str(unreadable))
    else:
        unreadable.write_text("print('never read')\n", encoding="utf-8")
        unreadable.chmod(0)


def _hard_link(target: Path, name: Path, dest: Path) -> None:
    """`name` made a hard link to a grader-side copy of `target` outside the class (in `dest`): never to the
    repository's own file, whose second link would make the grader's reference a hard link too while the test's
    folder lives (and the reference canary then refuses it)."""
    copy = dest / "grader" / target.name
    copy.parent.mkdir(exist_ok=True)
    if not copy.exists():
        shutil.copy(target, copy)
    os.link(copy, name)


# Runs `grade` as a child of a small wrapper, so that RUSAGE_CHILDREN read by the wrapper
# after the child exits is the peak of grade and its worker processes only.
_MEASURE = r"""
import json, os, resource, signal, subprocess, sys, time
cmd, wall = json.loads(sys.argv[1]), float(sys.argv[2])
start = time.monotonic()
child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
try:
    out, err = child.communicate(timeout=wall)
    timed_out = False
except subprocess.TimeoutExpired:
    os.killpg(child.pid, signal.SIGKILL)
    out, err = child.communicate()
    timed_out = True
print(json.dumps({"rc": child.returncode, "wall": time.monotonic() - start, "timed_out": timed_out,
                  "maxrss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                  "stdout": out, "stderr": err}))
"""


@dataclass
class Run:
    cls: Path
    out: Path
    rc: int
    wall: float
    maxrss_kib: int
    stdout: str
    stderr: str
    results: dict  # student -> results.json entry
    rows: dict  # student -> grades.csv row
    folders: dict  # student -> report folder
    outside_before: set
    outside_after: set


def _pwned() -> set[Path]:
    return set(PWNED.glob("attngrade-pwned*"))


def _tree(path: Path, skip: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*") if skip not in (p, *p.parents)}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Run:
    for leftover in _pwned():  # a sentinel from some earlier, broken run must not fool us
        shutil.rmtree(leftover) if leftover.is_dir() and not leftover.is_symlink() else leftover.unlink()
    tmp = tmp_path_factory.mktemp("hostile")
    cls = build_class(tmp)
    out = tmp / "out"
    before = _tree(tmp, out)
    cmd = [sys.executable, "-m", "attngrade", "run", str(cls), "-o", str(out), "--solutions", str(SOLUTIONS),
           "--workers", "2"]
    measured = subprocess.run([sys.executable, "-c", _MEASURE, json.dumps(cmd), str(WALL_LIMIT)],
                              capture_output=True, text=True, cwd=tmp, timeout=WALL_LIMIT + 30)
    assert measured.returncode == 0, measured.stderr
    m = json.loads(measured.stdout)
    assert not m["timed_out"], f"grade run did not finish in {WALL_LIMIT:g} s:\n{m['stderr'][-2000:]}"
    print(f"\nhostile class: wall {m['wall']:.1f} s, peak RSS {m['maxrss_kib'] / 1024:.0f} MiB, exit {m['rc']}")
    listed = json.loads((out / "results.json").read_text(encoding="utf-8"))
    results = {r["student"]: r for r in listed}
    assert len(results) == len(listed), "two submissions share a student id"
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open(encoding="utf-8", newline=""))}
    folders = dict(zip((r["student"] for r in listed), folder_names_of(listed)))
    return Run(cls, out, m["rc"], m["wall"], m["maxrss_kib"], m["stdout"], m["stderr"], results, rows, folders,
               before, _tree(tmp, out))


def folder_names_of(listed: list[dict]) -> list[str]:
    from attngrade.records import Result

    return folder_names([Result(student=r["student"], homework=r.get("homework"), score=0.0, max_score=0.0)
                         for r in listed])


def submissions_in(cls: Path) -> set[str]:
    """Every submission the class folder holds, by the name it is graded under."""
    names = {p.stem for p in cls.iterdir() if p.suffix == ".yaml"}
    names |= {p.name for p in cls.iterdir() if p.is_dir()}
    return names


# Student ids that differ from the file or folder name.
RENAMED = {
    "student-name-injection":
        "=HYPERLINK(\"http://example.invalid\") ../../../../tmp/attngrade-pwned-escape/<script>alert('id')</script>",
}
GOOD = {"control-full-marks", "utf16", "bom-crlf", "honest-student"}


def student(name: str) -> str:
    return RENAMED.get(name, name)


# -- the run as a whole -------------------------------------------------------------------
def test_the_run_finishes_in_time_and_memory(hostile):
    assert hostile.wall < WALL_LIMIT
    assert hostile.maxrss_kib < MEMORY_LIMIT_KIB, f"peak RSS {hostile.maxrss_kib} KiB"
    assert hostile.rc == 1, "some submissions cannot be graded at all: exit code 1"
    assert "Traceback" not in hostile.stderr
    assert "graded 2" in hostile.stdout  # "graded N of M submissions"


def test_every_submission_has_a_row_a_result_and_a_report(hostile):
    expected = {student(n) for n in submissions_in(hostile.cls)}
    assert set(hostile.results) == expected
    assert set(hostile.rows) == {s if s[:1] not in "=+-@" else "'" + s for s in expected}
    index = (hostile.out / "index.html").read_text(encoding="utf-8")
    for name, folder in hostile.folders.items():
        report = hostile.out / folder / "report.html"
        assert report.is_file(), name
        assert report.read_text(encoding="utf-8").rstrip().endswith("</html>"), name
        assert f"{folder}/report.html" in index, name


# One entry per defect. ("error", substrings): the whole file gets an error row whose
# message holds every substring. {part: (statuses, substrings)}: the part's verdict.
INVALID = {"invalid"}
# A part some of whose fields could not be read and the rest were graded: their points wait for staff.
PARTLY = {"partly pending"}
LINK = (INVALID, ["field dev: vanilla.nopretrain.dev.predictions is a link; submit the file itself"])
EXPECT: dict[str, object] = {
    "binary-garbage": ("error", ["is not UTF-8 text", "save the file as UTF-8"]),
    "latin1": ("error", ["byte 113 is not UTF-8 text", "save the file as UTF-8"]),
    "empty": ("error", ["expected a mapping with 'homework' and 'answers'"]),
    "nul-bytes": ("error", ["NUL bytes"]),
    "utf16-no-bom": ("error", ["save it as UTF-8"]),
    "utf32": ("error", []),
    "yaml-alias-bomb": ("error", ["YAML aliases (*name) are not allowed", "write each answer out in full"]),
    "yaml-python-tag": ("error", ["not valid YAML", "python/object/apply:os.system", "fix the file"]),
    "yaml-3mb": ("error", ["3145728 bytes; at most 2000000 are read"]),
    "homework-name-injection": ("error", ["unknown homework", "the bank has: cs224n-w21-a5"]),
    "answers-fifo": ("error", ["answers.yaml: is not a regular file (a folder, pipe or device)"]),
    "notebook-number-in-source": ("error", ["cell 1: its source is not text", "save it again"]),
    "notebook-lone-surrogate": {"1a": ({"pending"}, [])},  # a JSON "\ud800": kept, written as its escape
    "symlink-answers-yaml": ("error", ["answers.yaml: is a link; submit the answers file itself"]),
    "eval-injection-every-kind": {
        "1a": ({"pending"}, []),  # text is kept as text, for a person (and escaped in the report)
        "1b": (INVALID, ["1b, field q: unexpected character '_'"]),
        "1c.i": (INVALID, ["1c.i, field q: unknown symbol 'eval'"]),
        "1d.i": (INVALID, ["1d.i, field q1: unknown symbol 'exec'", "1d.i, field q2:"]),
        "1e.i": (INVALID, ["1e.i, field c2:", "1e.i, field possible: expected yes or no"]),
        "1e.ii": (INVALID, ["1e.ii, field V:", "1e.ii, field K: unexpected character '$'",
                            "1e.ii, field Q: unexpected character '`'"]),
        "2d": (PARTLY, ["2d, field accuracy: expected a number such as 5, 5% or 0.05",
                        "2d, field london: expected a number",
                        "2d, field dev: needs the file __import__", "submit a folder"]),
        "2f": (INVALID, ["2f, field accuracy: expected a number",
                         "2f, field dev: needs the file ../../../../../../etc/passwd"]),
    },
    "eval-injection-choice": {
        "1a": (INVALID, ["1a, field axis: expected one of: keys, queries"]),
        "1b": (INVALID, ["1b, field weights: expected one of: identity, uniform, random"]),
        "1c": (INVALID, ["1c, field M: no 2×2 block was found"]),
        "1d": (INVALID, ["1d, field required: expected yes or no"]),
    },
    "exponent-tower": {
        "1b": (INVALID, ["1b, field q: the exponent 65536 is too large"]),
        "1c.i": (INVALID, ["the exponent 65536 is too large"]),
        "1d.i": (INVALID, ["field q1: the exponent", "field q2: the exponent 387420489 is too large"]),
        "1e.i": (INVALID, ["field c2: the exponent", "is too large"]),
        # beta^(beta^(beta^beta)) is read; it cannot be checked in time (or is found wrong)
        "1e.ii": ({"invalid", "incorrect"}, []),
    },
    "huge-integer": {
        "1b": (INVALID, ["1b, field q:"]),  # a 4000-digit YAML int: refused as too long or too large
        "1c.i": (INVALID, ["this number has 1900 digits; at most 40 are allowed"]),
        "1d.i": (INVALID, ["field q1:", "field q2: this number has 41 digits"]),
        "2d": (INVALID, ["2d, field accuracy:", "2d, field london:", "is not a usable number"]),
        "2f": (INVALID, ["2f, field accuracy: '1000000000000000000000000' is not a usable number"]),
    },
    "nested-parens-10000": {
        "1b": (INVALID, ["1b, field q: the answer is 20003 characters long; at most 2000 are read"]),
        "1c.i": (INVALID, ["1c.i, field q:"]),
        "1d.i": (INVALID, ["1d.i, field q1:", "1d.i, field q2:"]),
        "1e.i": (INVALID, ["1e.i, field c2:"]),
    },
    "answer-1mb": {
        "1a": (INVALID, ["1a, field answer: the answer is", "characters long; at most 20000 are read"]),
        "1b": (INVALID, ["1b, field q: the answer is 60003 characters long; at most 2000 are read"]),
    },
    "numbers-1e999-nan-inf": {
        "1b": (INVALID, ["1b, field q:"]),
        "1c.i": (INVALID, ["1c.i, field q: division by zero"]),
        "1d.i": (INVALID, ["field q1: division by zero", "field q2: division by zero"]),
        "1e.i": (INVALID, ["1e.i, field c2:"]),
        "2d": (INVALID, ["2d, field accuracy: '1e999' is not a usable number",
                         "2d, field london: expected a number such as 5, 5% or 0.05; got 'nan'"]),
        "2f": (INVALID, ["2f, field accuracy: expected a number such as 5, 5% or 0.05; got 'inf'"]),
        "2g.i": (INVALID, ["2g.i, field accuracy: expected a number such as 5, 5% or 0.05; got 'nan'"]),
    },
    "file-name-traversal": {
        "2d": (PARTLY, ["2d, field dev: '../honest-student/", "2d, field test: '/etc/passwd'",
                        "is not a plain file name in your folder"]),
        "2e": (INVALID, ["2e, field code: '../../../../../../proc/self/environ' is not a plain file name"]),
        "2f": (PARTLY, ["2f, field dev: '.hidden-predictions' is not a plain file name",
                        "2f, field test:"]),
        "2g.i": (PARTLY, ["2g.i, field dev:", "2g.i, field test:", "is not a plain file name"]),
    },
    "symlink-to-etc-passwd": {"2d": LINK},
    "symlink-to-gold": {"2d": LINK},
    "symlink-to-other-student": {"2d": LINK},
    "symlink-to-dev-zero": {"2d": LINK},
    "prediction-100mb": {"2d": (INVALID, ["field dev: vanilla.nopretrain.dev.predictions is 104857600 bytes; "
                                          "at most 10000000 are read"])},
    "prediction-fifo": {"2d": (INVALID, ["2d, field dev: vanilla.nopretrain.dev.predictions"])},
    # not wrong as such: it must get a real verdict (no hang, no time-out)
    "softmax-overflow": {
        "1e.i": ({"partial", "incorrect"}, ["c2: not equivalent to the expected answer"]),
        "1e.ii": ({"correct", "partial", "incorrect"}, []),
    },
    "student-name-injection": {"1b": ({"correct"}, [])},
    # good submissions graded with the rest keep their marks
    "control-full-marks": {p: ({"correct"}, []) for p in ("1b", "1c.i", "1d.i", "1e.ii")},
    "utf16": {p: ({"correct"}, []) for p in ("1b", "1c.i", "1d.i", "1e.ii")},
    "bom-crlf": {p: ({"correct"}, []) for p in ("1b", "1c.i", "1d.i", "1e.ii")},
    "honest-student": {"2d": ({"partial"}, ["9/500 = 1.8% correct on the dev set",
                                            "accuracy 1.8%: agrees with the file"])},
    # finding and reading the submissions: their right answers are graded, what is around them said
    "backtick-flood": {"1b": ({"correct"}, [])},
    "foreign-student-answers": {"1b": ({"correct"}, [])},
    "nested-submissions": {"1b": ({"correct"}, [])},
    # found and run (pending where this machine cannot run code: see the test of its own below)
    "many-files-before-src": {"2e": ({"correct", "pending"}, [])},
    "sparse-code-files": {"2e": (INVALID, ["2e, field code: src/dataset.py is 3221225472 bytes; "
                                           "at most 10000000 are read"])},
    "hard-link-to-grader-files": {
        "2d": (INVALID, ["2d, field dev: vanilla.nopretrain.dev.predictions is a hard link",
                         "submit a copy of the file itself"]),
        "2e": (INVALID, ["2e, field code: src/dataset.py is a hard link"]),
    },
    "symlink-src-to-solutions": {
        "2e": (INVALID, ["2e, field code: src/dataset.py is reached through a link (src); submit the folder itself"]),
        # its other fields unanswered: the part waits for staff in part where a class run says so
        "2g.i": (INVALID | {"partly pending"}, ["2g.i, field attention: src/attention.py is reached through a link",
                                               "2g.i, field model: src/model.py is reached through a link"]),
    },
    "unreadable-file": {"2e": (INVALID, ["2e, field code: src/dataset.py is not a regular file (a folder, pipe or "
                                         "device)"] if AS_ROOT else
                               ["2e, field code: src/dataset.py cannot be read: the grader has no permission to open "
                                "it; course staff can make it readable (chmod a+r)"])},
}
# What a part of a bad submission may be: nothing in it earns a point.
UNGRADED = {"invalid", "incorrect", "missing", "pending"} | ({"partly pending"} & set(STATUSES))
# Submissions whose answers are right: the defect lies around them (their folder), not in them.
SOUND = {"backtick-flood", "foreign-student-answers", "nested-submissions", "many-files-before-src"}


def test_the_corpus_and_the_expectations_match(hostile):
    assert set(EXPECT) == submissions_in(hostile.cls)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_each_defect_gets_its_verdict_and_message(hostile, name):
    result = hostile.results[student(name)]
    row = hostile.rows[next(k for k in hostile.rows if k.lstrip("'") == student(name))]
    expected = EXPECT[name]
    if isinstance(expected, tuple):
        _, substrings = expected
        assert result.get("error"), f"{name}: expected an error row, got {result}"
        assert result.get("parts", []) == []
        assert row["error"] == result["error"]
        for text in substrings:
            assert text in result["error"], f"{name}: {text!r} not in {result['error']!r}"
        if name != "homework-name-injection":  # that message names the homework instead
            assert name in result["error"], "the message names the file it is about"
        report = (hostile.out / hostile.folders[student(name)] / "report.html").read_text(encoding="utf-8")
        assert "could not be graded" in report
        return
    assert not result.get("error"), f"{name}: {result.get('error')}"
    parts = {p["id"]: p for p in result["parts"]}
    for pid, (statuses, substrings) in expected.items():
        verdict = parts[pid]
        feedback = "\n".join(verdict["feedback"])
        assert verdict["status"] in statuses, f"{name} {pid}: {verdict['status']}\n{feedback}"
        assert 0 <= verdict["score"] <= verdict["max_score"]
        if verdict["status"] in ("invalid", "incorrect"):
            assert verdict["score"] == 0
        for text in substrings:
            assert text in feedback, f"{name} {pid}: {text!r} not in\n{feedback}"
        # the class mixes homeworks, so grades.csv names its columns "homework:part"; a part whose
        # points all wait for staff is blank there (pending is not 0), others show two decimals
        cell = row[f"{result['homework']}:{pid}"]
        waiting = verdict["score"] == 0 and verdict["pending_points"] and verdict["pending_points"] >= verdict["max_score"] - 1e-9
        shown = f"{round(verdict['score'], 2):g}" + (" (partly pending)" if verdict["status"] == "partly pending" else "")
        assert cell == ("" if waiting else shown)
    if name not in GOOD | SOUND | {"softmax-overflow", "student-name-injection"}:
        # every other part that was answered is invalid or incorrect (text parts wait for a person)
        for pid, verdict in parts.items():
            assert verdict["status"] in UNGRADED, (name, pid, verdict)
            if verdict["status"] == "invalid":
                assert verdict["feedback"], (name, pid)
                # A class run leaves an unreadable answer to staff: its points wait, the reader's message
                # follows the line that says so.
                assert verdict["feedback"][0].startswith("could not read this answer"), (name, pid)
                assert verdict["pending_points"] == verdict["max_score"] - verdict["score"], (name, pid)
                first = verdict["feedback"][1]
                assert first.startswith(f"{pid}, field ") or "took longer than" in first, (name, pid, first)
        assert result["score"] == 0


def test_a_timed_out_check_says_what_to_do(hostile):
    tower = {p["id"]: p for p in hostile.results["exponent-tower"]["parts"]}["1e.ii"]
    if tower["status"] == "invalid":
        assert any("took longer than the 2 s limit; write it more simply" in f for f in tower["feedback"])


def test_softmax_overflow_gets_a_real_verdict_not_a_time_out(hostile):
    for part in hostile.results["softmax-overflow"]["parts"]:
        assert not any("took longer" in f for f in part["feedback"]), part


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_a_students_self_check_of_each_defect_answers_too(hostile, name, capsys):
    """`grade check --json` on the same inputs: a JSON answer and exit 0 or 1, never a crash."""
    path = next(p for p in hostile.cls.iterdir() if (p.stem if p.suffix == ".yaml" else p.name) == name)
    code = main(["check", "--json", str(path)])
    shown = json.loads(capsys.readouterr().out)
    assert code in (0, 1)
    assert (code == 1) == bool(shown.get("error")), shown.get("error")
    assert (code == 1) == isinstance(EXPECT[name], tuple), "the same inputs are whole-file errors as in a run"
    for part in shown["parts"]:
        assert part["status"] in STATUSES, part
        assert 0 <= part["score"] <= part["max_score"]


# -- safety -------------------------------------------------------------------------------
def test_no_injected_code_ran(hostile):
    assert _pwned() == set()


def test_nothing_was_written_outside_the_output_folder(hostile):
    assert hostile.outside_after == hostile.outside_before
    assert all(hostile.out in (hostile.out / f).resolve().parents for f in hostile.folders.values())


def test_student_text_is_escaped_in_every_report(hostile):
    pages = [hostile.out / "index.html", *(hostile.out / f / "report.html" for f in hostile.folders.values())]
    for page in pages:
        html = page.read_text(encoding="utf-8")
        for raw in ("<script>alert", "<img src=x"):  # live tags, not their escaped text
            assert raw not in html, f"{page}: {raw}"
    report = (hostile.out / "eval-injection-every-kind" / "report.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(&#39;1a&#39;)&lt;/script&gt;" in report
    assert "{{ 7*7 }}" in report  # shown as written, never rendered as a template


def test_a_formula_as_student_id_is_defused_in_the_csv(hostile):
    raw = student("student-name-injection")
    assert "'" + raw in hostile.rows and raw not in hostile.rows
    with (hostile.out / "grades.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.reader(handle):
            assert row[0][:1] not in ("=", "+", "-", "@"), row[0]


def test_linked_files_never_reach_any_output(hostile):
    secrets = [line for line in Path("/etc/passwd").read_text().splitlines() if line.strip()][:3]
    gold = [line for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()][:5]
    outputs = [p for p in hostile.out.rglob("*") if p.is_file()]
    for path in outputs:
        text = path.read_text(encoding="utf-8", errors="replace")
        for line in secrets + gold + _reference_only(hostile.cls):
            assert line not in text, f"{path} holds {line!r}"


def _reference_only(cls: Path) -> list[str]:
    """Lines of the reference solution's dataset.py that no student's own file in the class holds."""
    students = set()
    for path in cls.rglob("*.py"):
        if path.is_file() and not path.is_symlink() and os.stat(path).st_nlink == 1 and os.access(path, os.R_OK) \
                and os.path.getsize(path) < 1_000_000:
            students |= {line.strip() for line in path.read_text(encoding="utf-8").splitlines()}
    own = [line.strip() for line in REFERENCE_CODE.read_text(encoding="utf-8").splitlines()]
    return [line for line in own if len(line) > 20 and line not in students][:5]


def test_one_folder_is_one_students_submission_and_what_is_nested_in_it_is_said(hostile):
    assert "zoe" not in hostile.results  # the answers in foreign-student-answers/zoe/ make no row for a zoe
    assert not any(name.startswith("attempt-") for name in hostile.results)
    foreign = hostile.results["foreign-student-answers"]["notes"]
    assert any(note.startswith("zoe/answers.yaml: answers inside this folder, not graded") for note in foreign), foreign
    nested = hostile.results["nested-submissions"]["notes"]
    assert any(f"attempt-004/answers.yaml and {NESTED - 5} more: answers inside this folder" in n for n in nested)
    passed_over = next(line for line in hostile.stdout.splitlines() if line.startswith("not submissions, passed over"))
    assert str(hostile.cls / "foreign-student-answers" / "zoe" / "answers.yaml") in passed_over
    assert str(hostile.cls / "nested-submissions" / f"attempt-{NESTED - 1:03d}" / "answers.yaml") in passed_over


def test_code_in_src_is_found_beside_thousands_of_files(hostile):
    code = {p["id"]: p for p in hostile.results["many-files-before-src"]["parts"]}["2e"]
    if code["status"] == "pending":  # no student's code runs where the reference solution's cannot
        assert "reference solution" in " ".join(code["feedback"]), code["feedback"]
        return
    assert code["status"] == "correct" and code["score"] == 10, code


def test_a_hard_link_to_the_graders_solution_earns_nothing(hostile):
    parts = {p["id"]: p for p in hostile.results["hard-link-to-grader-files"]["parts"]}
    assert parts["2e"]["score"] == 0 and parts["2e"]["status"] == "invalid"


def test_good_submissions_are_graded_as_if_alone(hostile):
    full = hostile.results["control-full-marks"]["score"]
    assert hostile.results["utf16"]["score"] == hostile.results["bom-crlf"]["score"] == full == 13
    assert hostile.rows["control-full-marks"]["total"] == "13"


# -- messages that once were wrong or gave no advice ----------------------------------------
def test_a_too_long_text_answer_is_reported_with_its_real_length(hostile):
    verdict = {p["id"]: p for p in hostile.results["answer-1mb"]["parts"]}["1a"]
    assert any("the answer is 1048576 characters long" in f for f in verdict["feedback"]), verdict["feedback"]


@pytest.mark.parametrize("name", ["utf16-no-bom", "utf32", "nul-bytes"])
def test_encoding_errors_say_save_as_utf8(hostile, name):
    assert "UTF-8" in hostile.results[name]["error"]


def test_a_fifo_prediction_file_is_called_what_it_is(hostile):
    verdict = {p["id"]: p for p in hostile.results["prediction-fifo"]["parts"]}["2d"]
    assert not any("is not in your submission folder" in f for f in verdict["feedback"])


def test_a_linked_answers_file_says_it_is_a_link(hostile):
    assert "is a link" in hostile.results["symlink-answers-yaml"]["error"]


def test_a_huge_yaml_integer_is_explained_to_a_student(tmp_path):
    rc, run = _run_class(tmp_path, {"yaml-int-5000-digits.yaml":
                                    "homework: cs224n-w21-a5\nanswers:\n  1b: " + "9" * 5000 + "\n"})
    error = run["results"]["yaml-int-5000-digits"]["error"]
    assert "sys.set_int_max_str_digits" not in error, error


# -- regressions: inputs that once crashed the whole run or escaped the class -------------
def _write(cls: Path, name: str, text: str) -> None:
    (cls / name).write_text(text, encoding="utf-8")


def _run_class(tmp_path: Path, files: dict[str, str | bytes], *extra: str) -> tuple[int, dict]:
    cls = tmp_path / "cls"
    cls.mkdir()
    for name, text in files.items():
        (cls / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    shutil.copy(CORPUS / "control-full-marks.yaml", cls)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "attngrade", "run", str(cls), "-o", str(out),
                           "--solutions", str(SOLUTIONS), "--workers", "0", *extra],
                          capture_output=True, text=True, timeout=120)
    results = {}
    if (out / "results.json").exists():
        results = {r["student"]: r for r in json.loads((out / "results.json").read_text(encoding="utf-8"))}
    return proc.returncode, {"results": results, "stderr": proc.stderr}


def test_an_integer_over_4300_digits_is_an_error_row_not_a_crash(tmp_path):
    rc, run = _run_class(tmp_path, {"yaml-int-5000-digits.yaml":
                                    "homework: cs224n-w21-a5\nanswers:\n  1b: " + "9" * 5000 + "\n"})
    assert "Traceback" not in run["stderr"]
    assert rc == 1 and run["results"]["control-full-marks"]["score"] == 13
    assert run["results"]["yaml-int-5000-digits"]["error"]


def test_deeply_nested_yaml_is_an_error_row_not_a_crash(tmp_path):
    rc, run = _run_class(tmp_path, {"yaml-nested-1000.yaml":
                                    "homework: cs224n-w21-a5\nanswers:\n  1b: " + "[" * 1000 + "]" * 1000 + "\n"})
    assert "Traceback" not in run["stderr"]
    assert run["results"]["control-full-marks"]["score"] == 13
    nested = run["results"]["yaml-nested-1000"]
    # libyaml reads it (a list in a list ...), the pure-Python loader gives up: either way it is
    # this submission's own error row or its own invalid part, never a crash of the batch.
    if not nested.get("error"):
        part = next(p for p in nested["parts"] if p["id"] == "1b")
        assert part["status"] == "invalid" and "expected math as text, got a list" in part["feedback"][0]


def test_a_huge_hex_integer_makes_one_part_invalid(tmp_path):
    rc, run = _run_class(tmp_path, {"yaml-hex-5000-digits.yaml":
                                    "homework: cs224n-w21-a5\nanswers:\n  1b: 0x" + "f" * 5000 +
                                    "\n  1c.i: C(\\mu_a + \\mu_b)\n"})
    result = run["results"]["yaml-hex-5000-digits"]
    assert not result.get("error"), result.get("error")
    parts = {p["id"]: p for p in result["parts"]}
    assert parts["1b"]["status"] == "invalid" and parts["1c.i"]["status"] == "correct"


def test_a_linked_submission_folder_is_refused(tmp_path):
    cls = tmp_path / "cls"
    shutil.copytree(CORPUS / "honest-student", cls / "honest-student")
    os.symlink("honest-student", cls / "symlink-folder-to-other-student")
    out = tmp_path / "out"
    main(["run", str(cls), "-o", str(out), "--solutions", str(SOLUTIONS), "--workers", "0"])
    results = {r["student"]: r for r in json.loads((out / "results.json").read_text(encoding="utf-8"))}
    linked = results["symlink-folder-to-other-student"]
    assert linked.get("error") and "is a link" in linked["error"]


# -- time and memory limits of checks -----------------------------------------------------
STOP = threading.Event()  # lets an in-process stubborn check end once a test has seen enough
PARENT = os.getpid()


def _stubborn(answers, ctx):
    """A check that hangs and ignores SIGALRM: only killing its process stops it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not STOP.is_set():
        time.sleep(0.05)
    return Outcome(0.0, ("the stubborn check finished",))


def _slow(answers, ctx):
    """A check that hangs but can be interrupted (sympy stuck in Python code, say)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not STOP.is_set():
        time.sleep(0.05)
    return Outcome(0.0, ("the slow check finished",))


def _memory_hog(answers, ctx):
    """A check that wants 3 GiB: refused by the worker's address-space limit (2 GiB)."""
    if os.getpid() == PARENT:  # never in the test process itself, which has no limit
        return Outcome(0.0, ("ran in the parent process",))
    hog = bytearray(3 * 1024**3)
    return Outcome(0.0, (f"allocated {len(hog)} bytes",))


def _dies(answers, ctx):
    """A check whose process is killed (the OOM killer, a segfault in a C extension)."""
    if os.getpid() == PARENT:
        return Outcome(0.0, ("ran in the parent process",))
    os.kill(os.getpid(), signal.SIGKILL)
    return Outcome(0.0)


@pytest.fixture
def stop_event():
    STOP.clear()
    yield STOP
    STOP.set()


def _small_class(tmp_path: Path, *names: str) -> Path:
    """A class with several distinct 1e.ii answers (and other parts): the pool is used."""
    cls = tmp_path / "cls"
    cls.mkdir()
    for name in names:
        shutil.copy(CORPUS / name, cls / name)
    return cls


def _faked(run) -> Check:
    """attention_qkv with another function: the same params, so that a homework first loaded while
    it is in the registry loads as it would with the real one, whichever test runs first."""
    return replace(REGISTRY["attention_qkv"], run=run)


def _qkv_verdicts(out: Path) -> dict[str, dict]:
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return {r["student"]: {p["id"]: p for p in r["parts"]}["1e.ii"] for r in results if not r.get("error")}


@pytest.mark.parametrize("check", [_stubborn, _slow], ids=["ignores-SIGALRM", "interruptible"])
def test_a_hanging_check_is_stopped_in_its_worker(tmp_path, monkeypatch, stop_event, check):
    monkeypatch.setitem(REGISTRY, "attention_qkv", _faked(check))  # workers are forked: inherited
    cls = _small_class(tmp_path, "control-full-marks.yaml", "softmax-overflow.yaml")
    out = tmp_path / "out"
    budget = 1.0
    start = time.monotonic()
    code = main(["run", str(cls), "-o", str(out), "--solutions", str(SOLUTIONS), "--workers", "2",
                 "--budget", str(budget)])
    elapsed = time.monotonic() - start
    assert code == 0
    verdicts = _qkv_verdicts(out)
    assert set(verdicts) == {"control-full-marks", "softmax-overflow"}
    for verdict in verdicts.values():
        assert verdict["status"] == "invalid" and verdict["score"] == 0
        assert any("took longer than the 1 s limit" in f for f in verdict["feedback"]), verdict
    assert elapsed < budget + GRACE + 6, f"took {elapsed:.1f} s"


def test_grading_from_a_thread_still_stops_a_hanging_check(tmp_path, monkeypatch, stop_event):
    """No SIGALRM reaches a thread other than the main one; the worker pool's timeout does."""
    monkeypatch.setitem(REGISTRY, "attention_qkv", _faked(_stubborn))
    cls = _small_class(tmp_path, "control-full-marks.yaml", "softmax-overflow.yaml")
    out = tmp_path / "out"
    codes: list[int] = []
    args = ["run", str(cls), "-o", str(out), "--solutions", str(SOLUTIONS), "--workers", "2", "--budget", "1"]
    start = time.monotonic()
    worker = threading.Thread(target=lambda: codes.append(main(args)), daemon=True)
    worker.start()
    worker.join(timeout=30)
    elapsed = time.monotonic() - start
    assert not worker.is_alive(), "the batch hung off the main thread"
    assert codes == [0]
    assert elapsed < 1 + GRACE + 6
    for verdict in _qkv_verdicts(out).values():
        assert verdict["status"] == "invalid"
        assert any("took longer than the 1 s limit" in f for f in verdict["feedback"])
    assert (out / "grades.csv").is_file() and (out / "index.html").is_file()


@pytest.mark.parametrize("workers", ["2", "1"])
def test_grading_one_task_from_a_thread_still_stops_a_hanging_check(tmp_path, monkeypatch, stop_event, workers):
    monkeypatch.setitem(REGISTRY, "attention_qkv", _faked(_stubborn))
    cls = tmp_path / "cls"
    cls.mkdir()
    _write(cls, "only-1e-ii.yaml", "homework: cs224n-w21-a5\nanswers:\n  1e.ii:\n    V: I\n    K: I\n    Q: I\n")
    out = tmp_path / "out"
    args = ["run", str(cls), "-o", str(out), "--solutions", str(SOLUTIONS), "--workers", workers, "--budget", "1"]
    worker = threading.Thread(target=lambda: main(args), daemon=True)
    worker.start()
    worker.join(timeout=1 + GRACE + 2.5)
    hung = worker.is_alive()
    stop_event.set()  # let the in-process check end either way
    worker.join(timeout=10)
    assert not hung, "the check ran past its budget: nothing stopped it"


def test_a_check_that_wants_too_much_memory_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setitem(REGISTRY, "attention_qkv", _faked(_memory_hog))
    cls = _small_class(tmp_path, "control-full-marks.yaml", "softmax-overflow.yaml")
    out = tmp_path / "out"
    assert main(["run", str(cls), "-o", str(out), "--solutions", str(SOLUTIONS), "--workers", "2"]) == 0
    for verdict in _qkv_verdicts(out).values():
        assert verdict["status"] == "invalid", verdict
        assert any("memory" in f for f in verdict["feedback"]), verdict


def test_a_worker_that_dies_costs_one_verdict_not_the_batch(tmp_path, monkeypatch):
    monkeypatch.setitem(REGISTRY, "attention_qkv", _faked(_dies))
    cls = _small_class(tmp_path, "control-full-marks.yaml", "softmax-overflow.yaml")
    out = tmp_path / "out"
    assert main(["run", str(cls), "-o", str(out), "--solutions", str(SOLUTIONS), "--workers", "2"]) == 0
    results = {r["student"]: r for r in json.loads((out / "results.json").read_text(encoding="utf-8"))}
    full = {p["id"]: p for p in results["control-full-marks"]["parts"]}
    assert full["1e.ii"]["status"] == "invalid"
    assert full["1b"]["status"] == "correct"  # the other checks of the batch still ran
