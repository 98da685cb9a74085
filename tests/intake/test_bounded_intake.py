"""Finding and reading a class within bounds: what a careless or hostile class folder holds.

Every file of a student's is looked at with lstat first and read only as a regular file of its
own, within its size; every folder is looked through within a budget, and what was not looked
at is said (in the run's output and the submission's row), never taken for "no answer given".
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import attngrade.intake.submissions as submissions
import attngrade.intake.walk as walk
from attngrade.errors import SubmissionError
from attngrade.intake.formats.latex import MAX_LATEX_BYTES
from attngrade.mathlang.macros import find_definitions
from attngrade.intake.submissions import code_folder, discover, find_code, load_submission
from attngrade.runtime.files import LINK, NOT_REGULAR, SECOND_NAME, TOO_LARGE, NotRead, read_bounded

ROOT = Path(__file__).resolve().parents[2]
CODE = ROOT / "examples" / "cs224n-w21-a5-code"
GOOD = ROOT / "examples" / "cs224n-w21-a5" / "full-marks.yaml"
ANONYMOUS = GOOD.read_text(encoding="utf-8").replace("student: full-marks\n", "")
AS_ROOT = os.geteuid() == 0

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipes, sockets and uids as on Linux")


def _student(folder: Path, text: str = ANONYMOUS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "answers.yaml").write_text(text, encoding="utf-8")
    return folder


# -- reading one file ---------------------------------------------------------------------------------
def test_a_regular_file_of_its_own_is_read_whole(tmp_path):
    path = tmp_path / "dev.predictions"
    path.write_bytes(b"Paris\n" * 1000)
    assert read_bounded(path, 6000) == b"Paris\n" * 1000
    with pytest.raises(NotRead) as err:
        read_bounded(path, 5999)
    assert err.value.kind == TOO_LARGE and err.value.reason == "is 6000 bytes; at most 5999 are read"


@linux
def test_links_pipes_sockets_devices_and_second_names_are_never_read(tmp_path):
    (tmp_path / "own").write_text("mine\n")
    os.symlink("/etc/passwd", tmp_path / "link")
    os.mkfifo(tmp_path / "pipe")
    os.link(tmp_path / "own", tmp_path / "second-name")
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(tmp_path / "socket"))
        kinds = {}
        for name in ("link", "pipe", "second-name", "socket", "own"):
            try:
                read_bounded(tmp_path / name, 1000)  # a pipe would block here, were it opened
            except NotRead as err:
                kinds[name] = err.kind
    assert kinds == {"link": LINK, "pipe": NOT_REGULAR, "second-name": SECOND_NAME, "socket": NOT_REGULAR,
                     "own": SECOND_NAME}  # both names of a hard-linked file are refused
    with pytest.raises(NotRead) as err:
        read_bounded("/dev/zero", 1000)
    assert err.value.kind == NOT_REGULAR


@pytest.mark.parametrize("piece", ["`", "\\", "#", "[", "_", " "])
def test_a_latex_flood_without_answers_is_said_in_a_moment(tmp_path, piece):
    """pylatexenc takes seconds on a few hundred kilobytes of some characters: a file without a word of
    an answer is not parsed."""
    path = tmp_path / "notes.tex"
    path.write_text(piece * (MAX_LATEX_BYTES - 1))
    start = time.process_time()
    with pytest.raises(SubmissionError, match=r"no answers were found: write \\answer\{1a\}"):
        load_submission(path, homework="cs224n-w21-a5")
    assert time.process_time() - start < 2.0


OPEN = {"optional arguments": "\\answer{1a}{$" + "\\sqrt[" * 30 + "x$}\n",
        "mandatory arguments": "\\answer{1a}{$" + "\\frac{" * 30 + "x$}\n",
        "a flood of brackets": "\\answer{1a}{$x$}\n" + "[" * 200_000,
        "a flood of braces": "\\answer{1a}{$x$}\n" + "{" * 200_000,
        "math shifts in arguments": "\\answer{1a}{$x$}\n" + "\\frac{$}{$}" * 30,
        "environments in arguments": "\\answer{1a}{$x$}\n" + "\\frac{\\begin{x}}{\\end{x}}" * 30,
        "a listing left open": "\\answer{1a}{$x$}\n\\begin{verbatim}" + "\\frac{" * 30}


@pytest.mark.parametrize("case", OPEN)
def test_latex_arguments_left_open_are_read_or_refused_in_a_moment(tmp_path, case):
    """pylatexenc's tolerant parser backtracks over every argument left open, doubling its time with
    each one: thirty would take days. An unpaired brace is refused where it is, an unpaired bracket is
    text, as LaTeX has them."""
    path = tmp_path / "s1.tex"
    path.write_text("\\attnhomework{cs224n-w21-a5}\n" + OPEN[case])
    start = time.process_time()
    try:
        sub = load_submission(path)
    except SubmissionError as err:  # each where LaTeX itself stops
        assert "brackets" not in case and "optional" not in case, err
        assert re.search(r"line [23], column \d+: (this `{` is never closed|the LaTeX cannot be read here)",
                         str(err)), err
    else:
        assert "brackets" in case or "optional" in case
        assert "1a" in sub.answers
    assert time.process_time() - start < 10.0


def test_a_bracket_latex_takes_as_text_leaves_the_answers_as_written(tmp_path):
    path = tmp_path / "s2.tex"
    path.write_text("\\attnhomework{cs224n-w21-a5}\n"
                    "\\answer{1a}{$i \\in [1, n)$, \\sqrt[3]{x}}\n\\answer{1b}{$C(k_a + k_b)$}\n")
    sub = load_submission(path)
    assert sub.answers["1a"] == {"answer": "$i \\in [1, n)$, \\sqrt[3]{x}"}
    assert sub.answers["1b"] == {"q": "C(k_a + k_b)"}


def test_braces_in_code_listings_and_verb_are_text_as_latex_has_them(tmp_path):
    """A student's code in a listing may open a brace it never closes; LaTeX compiles it, and so the
    answers around it are read."""
    path = tmp_path / "s3.tex"
    path.write_text("\\attnhomework{cs224n-w21-a5}\n\\answer{1a}{$x$}\n"
                    "\\begin{lstlisting}\nscores = {\n\\end{lstlisting}\n"
                    "\\begin{minted}{python}\nprint('}')\n\\end{minted}\n"
                    "\\begin{verbatim} d = { \\end{verbatim} and \\verb|{| too\n"
                    "\\answer{1b}{$C(k_a + k_b)$}\n")
    sub = load_submission(path)
    assert sub.answers["1b"] == {"q": "C(k_a + k_b)"} and "1a" in sub.answers


@pytest.mark.parametrize("middle", ["\\begin{lstlisting}x = {\\end{lstlisting}", "\\url{http://a/b%20c}",
                                    "\\lstinline|d = {|", "\\verb |{|", "\\begin{Verbatim}}\\end{Verbatim}",
                                    "\\href{http://x.com/a%20b}{link}", "\\begin {verbatim}}\\end{verbatim}"])
def test_a_listing_ends_at_its_own_end_and_the_answer_after_it_is_read(tmp_path, middle):
    """A code listing ends at its own \\end (not a later \\end{verbatim}), and what LaTeX takes as
    written (a URL's %, a brace in inline code) is text: the answer after it is read."""
    path = tmp_path / "s4.tex"
    path.write_text("\\attnhomework{cs224n-w21-a5}\n\\answer{1a}{$x$}\n" + middle + "\n\\answer{1b}{$C(k_a + k_b)$}\n"
                    "\\begin{verbatim}q\\end{verbatim}\n")
    assert load_submission(path).answers["1b"] == {"q": "C(k_a + k_b)"}


@pytest.mark.parametrize("end", ["\\verb", "\\verb ", "\\verb\n"])
def test_a_file_ending_in_a_bare_verb_is_refused_with_a_message(tmp_path, end):
    path = tmp_path / "s6.tex"
    path.write_text("\\attnhomework{cs224n-w21-a5}\n\\answer{1a}{$x$}\n" + end)
    with pytest.raises(SubmissionError, match="the LaTeX cannot be read"):
        load_submission(path)


def test_many_definitions_at_the_end_of_a_long_line_are_found_in_a_moment(tmp_path):
    """Whether a definition is commented out was decided by walking its whole line in Python, once per
    definition: hundreds of `\\def` after a line of 300 kB took seconds."""
    path = tmp_path / "s7.tex"
    path.write_text("\\attnhomework{cs224n-w21-a5}\n\\answer{1a}{$x$}\n" + "a" * 290_000 + "\\def" * 800)
    start = time.process_time()
    find_definitions(path.read_text())
    assert time.process_time() - start < 1.0


def test_an_answer_inside_a_code_listing_is_not_an_answer(tmp_path):
    path = tmp_path / "s5.tex"
    path.write_text("\\attnhomework{cs224n-w21-a5}\n\\answer{1a}{$x$}\n"
                    "\\begin{lstlisting}\n\\answer{1b}{example}\n\\end{lstlisting}\n")
    assert "1b" not in load_submission(path).answers


# -- the files a part names --------------------------------------------------------------------------
def _huge(path: Path, size: int = 3 * 1024**3) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(size)  # sparse: no disk used


@linux
def test_huge_copies_of_a_code_file_are_refused_without_being_read(tmp_path):
    """Two sparse 3 GiB dataset.py: every copy was read whole to compare them (gigabytes of memory)."""
    folder = _student(tmp_path / "ann")
    _huge(folder / "src" / "dataset.py")
    _huge(folder / "old" / "dataset.py")
    script = ("import resource, sys\nfrom pathlib import Path\nfrom attngrade.errors import SubmissionError\n"
              "from attngrade.intake.submissions import code_folder\n"
              "try:\n    code_folder(Path(sys.argv[1]), 'dataset.py')\nexcept SubmissionError as err:\n"
              "    print(err)\n"
              # VmHWM: this process's own peak since its exec (ru_maxrss would start at the forking test's size)
              "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')))\n")
    shown = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, text=True, timeout=120)
    message, peak_kib = shown.stdout.splitlines()
    assert message == "src/dataset.py is 3221225472 bytes; at most 10000000 are read (every file named dataset.py in " \
                      "your folder is read to tell which one to grade)"
    assert int(peak_kib) < 300 * 1024, shown.stdout  # the interpreter and attngrade, no file


def test_two_different_copies_of_a_code_file_are_said_and_one_copy_twice_is_fine(tmp_path):
    folder = _student(tmp_path / "ann")
    for place in ("src", "a5/src"):
        (folder / place).mkdir(parents=True)
        shutil.copy(CODE / "ada" / "src" / "dataset.py", folder / place / "dataset.py")
    assert code_folder(folder, "dataset.py") == folder / "src"
    (folder / "a5" / "src" / "dataset.py").write_text("# another one\n")
    with pytest.raises(SubmissionError, match=r"two different files named dataset.py: src/dataset.py and "
                                              r"a5/src/dataset.py; hand in one of them"):
        code_folder(folder, "dataset.py")


def test_a_code_file_beside_the_answers_and_another_below_are_two_answers_not_one(tmp_path):
    """An old attempt beside the answers and the real one in src/: which to grade is the student's to say
    (it was the old one, without a word); the same file twice is one file."""
    folder = _student(tmp_path / "ann")
    (folder / "src").mkdir()
    shutil.copy(CODE / "ada" / "src" / "dataset.py", folder / "src" / "dataset.py")
    shutil.copy(CODE / "ada" / "src" / "dataset.py", folder / "dataset.py")
    listing = load_submission(folder).listing
    assert code_folder(folder, "dataset.py") == code_folder(folder, "dataset.py", None, listing) == folder
    (folder / "dataset.py").write_text("raise SystemExit('old attempt')\n")
    for given in (None, listing):
        with pytest.raises(SubmissionError, match=r"two different files named dataset.py: dataset.py and "
                                                  r"src/dataset.py; hand in one of them"):
            code_folder(folder, "dataset.py", None, given)


def test_code_in_src_is_found_beside_thousands_of_files(tmp_path):
    """6,000 data files in the folder itself: the search once gave up before it reached src/."""
    folder = _student(tmp_path / "ann")
    for i in range(6_000):
        (folder / f"data-{i:05d}.txt").write_text("x")
    (folder / "src").mkdir()
    shutil.copy(CODE / "ada" / "src" / "dataset.py", folder / "src" / "dataset.py")
    assert find_code(folder, "dataset.py") == [folder / "src" / "dataset.py"]
    assert code_folder(folder, "dataset.py") == folder / "src"
    (folder / "src" / "dataset.py").rename(folder / "a5-dataset.py")
    (folder / "a5" / "src").mkdir(parents=True)  # the a5/src/ layout: found by the search itself
    (folder / "a5-dataset.py").rename(folder / "a5" / "src" / "dataset.py")
    assert code_folder(folder, "dataset.py") == folder / "a5" / "src"


def test_code_is_found_in_intake_s_listing_as_in_the_folder(tmp_path):
    """The plan looks for code files in the listing intake made of the folder: the same places, in the
    same order, as a search of the folder; a listing cut short is not trusted (the folder is searched)."""
    from dataclasses import replace

    folder = _student(tmp_path / "ann")
    for place in ("a5/src", "src", "notes/old"):
        (folder / place).mkdir(parents=True)
        (folder / place / "dataset.py").write_text(f"# {place}\n")
    listing = load_submission(folder).listing
    for name in ("dataset.py", "absent.py", "answers.yaml"):
        assert find_code(folder, name, listing) == find_code(folder, name)
    assert find_code(folder, "dataset.py", listing)[0] == folder / "src" / "dataset.py"
    cut = replace(listing, files=(), shortfall="only the first 100 files and folders were looked at")
    assert find_code(folder, "dataset.py", cut) == find_code(folder, "dataset.py")


def test_a_search_cut_short_is_said_by_the_field_never_no_answer_given(tmp_path, monkeypatch):
    monkeypatch.setattr(walk, "MAX_SUBMISSION_ENTRIES", 100)
    monkeypatch.setattr(submissions, "MAX_SUBMISSION_ENTRIES", 100)
    folder = _student(tmp_path / "ann")
    for i in range(150):
        (folder / f"data-{i:03d}.txt").write_text("x")
    (folder / "deep" / "code").mkdir(parents=True)
    (folder / "deep" / "code" / "dataset.py").write_text("x = 1\n")
    # The plan counts a code field as answered when find_code names a place: reading it says why.
    assert find_code(folder, "dataset.py") == [folder / "dataset.py"]
    with pytest.raises(SubmissionError, match=r"^dataset.py was not found, and your folder was not looked through to "
                                              r"the end: only the first 100 files and folders were looked at \(it "
                                              r"stopped at \.\); put dataset.py in src/"):
        code_folder(folder, "dataset.py")
    assert find_code(folder, "absent.py") == [folder / "absent.py"]
    monkeypatch.undo()
    assert find_code(folder, "absent.py") == []  # looked everywhere: not there
    assert code_folder(folder, "dataset.py") == folder / "deep" / "code"


@linux
def test_a_second_name_of_a_graders_file_is_that_fields_problem(tmp_path):
    grader = tmp_path / "grader" / "birth_dev.tsv"
    grader.parent.mkdir()
    grader.write_text("Where was Ann born?\tParis\n")
    folder = _student(tmp_path / "ann")
    os.link(grader, folder / "dev.predictions")
    with pytest.raises(SubmissionError, match=r"^dev.predictions is a hard link \(one file under 2 names on the "
                                              r"grader's disk\), so it was not read; submit a copy"):
        code_folder(folder, "dev.predictions")


def test_a_folder_on_the_way_that_is_a_link_leads_nowhere(tmp_path):
    """src/ a link to the grader's solutions: its dataset.py is the reference solution, never read as the
    student's (O_NOFOLLOW guards the last name only: each folder on the way is opened the same way)."""
    folder = _student(tmp_path / "ann")
    os.symlink(ROOT / "solutions" / "cs224n-w21-a5" / "reference", folder / "src")
    with pytest.raises(SubmissionError, match=r"^src/dataset.py is reached through a link \(src\); submit the "
                                              r"folder itself"):
        code_folder(folder, "dataset.py")
    with pytest.raises(NotRead) as err:
        read_bounded(folder / "src" / "dataset.py", 10**6, below=folder)
    assert err.value.kind == LINK


# -- a file the grader may not open ---------------------------------------------------------------------
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _as_a_user(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """`command` as the user it is (a user), or as nobody when the tests run as root (root opens any file)."""
    prefix = AS_NOBODY if AS_ROOT else []
    return subprocess.run(prefix + command, capture_output=True, text=True, timeout=300, cwd=cwd,
                          env={**os.environ, "HOME": str(cwd)})


def _can_drop_root() -> bool:
    if not AS_ROOT:
        return True
    if shutil.which("setpriv") is None:
        return False
    return subprocess.run([*AS_NOBODY, sys.executable, "-c", "import attngrade"], capture_output=True).returncode == 0


@linux
@pytest.mark.skipif(not _can_drop_root(), reason="as root, needs setpriv and a Python that nobody may run")
def test_a_file_the_grader_may_not_open_is_that_fields_problem_not_attngrade_failing():
    """Mode 000 as a user: the whole submission was "attngrade failed" (a PermissionError)."""
    base = Path(tempfile.mkdtemp(prefix="attngrade-unreadable-"))  # not under root's own 0700 tmp
    try:
        base.chmod(0o777)
        cls = base / "class"
        dev = _student(cls / "ann", ANONYMOUS + "  2d:\n    accuracy: 1.8%\n") / "vanilla.nopretrain.dev.predictions"
        dev.write_text("Paris\n")
        _student(cls / "bob")
        code = _student(cls / "cy") / "src"  # a folder it may not open: what it holds is unknown, not missing
        code.mkdir()
        shutil.copy(CODE / "ada" / "src" / "dataset.py", code / "dataset.py")
        _student(cls / "dee")
        for path in [cls, *cls.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        dev.chmod(0)
        (cls / "bob" / "answers.yaml").chmod(0)
        code.chmod(0)
        (cls / "dee").chmod(0)
        out = base / "out"
        ran = _as_a_user([sys.executable, "-m", "attngrade", "run", str(cls), "-o", str(out), "--solutions",
                          str(ROOT / "solutions"), "--workers", "0"], base)
        assert "attngrade failed" not in ran.stdout + ran.stderr, ran.stderr
        assert (out / "results.json").is_file(), ran.stdout + ran.stderr
        results = {r["student"]: r for r in json.loads((out / "results.json").read_text(encoding="utf-8"))}
        part = {p["id"]: p for p in results["ann"]["parts"]}["2d"]
        assert part["status"] == "invalid", part
        assert ("2d, field dev: vanilla.nopretrain.dev.predictions cannot be read: the grader has no permission to "
                "open it; course staff can make it readable (chmod a+r) and grade it again") in part["feedback"]
        assert results["bob"]["error"].endswith("bob/answers.yaml: cannot be read: the grader has no permission to "
                                                "open it; course staff can make it readable (chmod a+r) and grade "
                                                "it again")
        code_part = {p["id"]: p for p in results["cy"]["parts"]}["2e"]
        assert code_part["status"] == "invalid", code_part
        assert ("2e, field code: dataset.py was not found, and your folder was not looked through to the end: the "
                "grader may not open src; put dataset.py in src/") in "\n".join(code_part["feedback"])
        assert results["dee"]["error"].endswith("dee: the grader may not open this folder; course staff can make it "
                                                "readable (chmod a+rx) and grade it again")
    finally:
        for path in base.rglob("*"):
            if not path.is_symlink():
                path.chmod(0o700)
        shutil.rmtree(base)


# -- one folder, one submission -------------------------------------------------------------------------
def test_a_classmates_answers_inside_a_students_folder_make_no_row(tmp_path):
    """amy/zoe/answers.yaml made a row for a zoe who handed nothing in; it is amy's folder's, said."""
    cls = tmp_path / "class"
    amy = _student(cls / "amy")
    _student(amy / "zoe", ANONYMOUS.replace("answers:", "student: zoe\nanswers:"))
    _student(cls / "bob")
    passed_over: list[Path] = []
    assert list(discover([cls], passed_over)) == [amy, cls / "bob"]
    assert passed_over == [amy / "zoe" / "answers.yaml"]
    submission = load_submission(amy)
    assert submission.student == "amy" and submission.path == amy / "answers.yaml"
    assert ("zoe/answers.yaml: answers inside this folder, not graded: a folder is one student's submission, graded "
            "from answers.yaml; each student hands in a folder of their own") in submission.notes


def test_a_folder_of_many_attempts_is_one_submission(tmp_path):
    cls = tmp_path / "class"
    amy = _student(cls / "amy")
    for i in range(40):
        _student(amy / f"attempt-{i:02d}")
    assert list(discover([cls])) == [amy]
    notes = load_submission(amy).notes
    assert any(note.startswith("attempt-00/answers.yaml, attempt-01/answers.yaml, attempt-02/answers.yaml, "
                               "attempt-03/answers.yaml, attempt-04/answers.yaml and 35 more: answers inside") for note
               in notes), notes


def test_the_layouts_of_classes_still_read_as_classes(tmp_path):
    # Sections of students' folders; a flat folder of answers files inside a class; a folder named to
    # be graded that holds an answers file and folders of answers (each graded, and said).
    cls = tmp_path / "course"
    ann, bob = _student(cls / "sec1" / "ann"), _student(cls / "sec2" / "bob")
    (cls / "flat").mkdir()
    for name in ("cy", "di"):
        (cls / "flat" / f"{name}.yaml").write_text(ANONYMOUS)
    assert list(discover([cls])) == [cls / "flat" / "cy.yaml", cls / "flat" / "di.yaml", ann, bob]
    named = _student(tmp_path / "named")
    _student(named / "eve")
    mixed: list[Path] = []
    assert list(discover([named], mixed=mixed)) == [named / "answers.yaml", named / "eve"]
    assert mixed == [named]


def test_finding_a_class_past_its_budget_takes_each_folder_as_one_submission_and_says_so(tmp_path, monkeypatch,
                                                                                          caplog):
    monkeypatch.setattr(submissions, "MAX_FOUND_ENTRIES", 30)
    cls = tmp_path / "class"
    folders = [_student(cls / f"s{i:02d}") for i in range(20)]
    for folder in folders:
        for j in range(3):
            (folder / f"notes-{j}.txt").write_text("x")
    with caplog.at_level("WARNING"):
        found = list(discover([cls]))
    assert found == folders  # every student still has a row
    said = " ".join(record.getMessage() for record in caplog.records)
    assert "finding the submissions stopped looking inside folders at" in said
    assert "each folder from there on was taken as one submission" in said


def test_a_deep_or_wide_folder_is_looked_through_within_bounds_and_said(tmp_path, monkeypatch):
    monkeypatch.setattr(submissions, "MAX_SUBMISSION_ENTRIES", 50)
    amy = _student(tmp_path / "amy")
    for i in range(80):
        (amy / f"data-{i:02d}.txt").write_text("x")
    notes = load_submission(amy).notes
    assert ("this folder was not looked through to the end: only the first 50 files and folders were looked at (it "
            "stopped at .); answers files and code files there were not found; course staff can look at the rest") \
        in notes
    bob = _student(tmp_path / "bob")
    (bob / "a" / "b" / "c" / "d" / "e" / "f" / "g").mkdir(parents=True)
    notes = load_submission(bob).notes
    assert any("it was looked through 6 folders deep, not below a/b/c/d/e/f/g;" in n for n in notes), notes


def test_a_stale_copy_in_a_build_or_a_virtualenv_is_not_a_second_answer(tmp_path):
    """A zipped folder's build/lib/ and venv/…/site-packages/ hold copies of the student's files, or other
    packages' model.py: not looked into, so the one beside the answers is graded."""
    folder = _student(tmp_path / "ann")
    shutil.copy(CODE / "ada" / "src" / "dataset.py", folder / "dataset.py")
    for place in ("build/lib", "venv/lib/python3.11/site-packages/pkg"):
        (folder / place).mkdir(parents=True)
        (folder / place / "dataset.py").write_text("# another one\n")
    assert code_folder(folder, "dataset.py") == folder
    assert code_folder(folder, "dataset.py", None, load_submission(folder).listing) == folder
