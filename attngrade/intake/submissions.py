"""The load stage: find submissions on disk and read them safely.

A submission is an answers file (YAML, notebook, Markdown or LaTeX; see `formats/`),
or a folder holding one answers file plus the files its parts name. YAML is read with
a safe loader that also refuses aliases (the "billion laughs" bomb) and is
size-limited before it is parsed. Nothing found in a class folder is skipped without
a word: every entry becomes a submission or an error row, and files that are clearly
not a student's (hidden files, a Gradescope export's metadata) are listed as such.

Every file of a student's is read through `runtime.files.read_bounded` (a regular file of its
own, its size checked on the open file before it is read), and every folder is looked through
within a budget (`walk`): what was not looked at is said, never taken for "not there".
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import logging
import os
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Collection, Iterator

import yaml

from ..errors import ConfigError, SubmissionError
from ..records import Listing, Result, Submission
from ..runtime.deadline import BudgetExceeded, time_limit
from ..runtime.files import LINK, NOT_REGULAR, TOO_LARGE, NotRead, check_readable, read_bounded, within
from ..runtime.outfiles import FOLDERS_FILE as FOLDERS_FILE
from ..runtime.outfiles import beside
from ..runtime.safe_yaml import Loader, not_yaml, yaml_problem
from ..runtime.text import safe_text
from .formats import (
    MAX_BYTES,
    READ,
    WITH_HOMEWORK,
    is_answers_format,
    is_placeholder_id,
    placeholder_note,
    read_carrier,
)
from .look import MAX_YAML_BYTES
from .look import looks_like_answers as looks_like_answers
from .walk import (MAX_LISTED, MAX_SUBMISSION_ENTRIES, NESTED_SECONDS, SKIPPED_FOLDERS, Budget, code_files,
                   is_nested_answers, listing, nested_answers, walk)
from .walk import find_code as find_code

log = logging.getLogger(__name__)

# Seconds to read one submission (it is read in the grading process, before any check's
# budget): the readers are linear, and this bounds what a hostile file could still find.
READ_BUDGET = 30.0
YAML_SUFFIXES = (".yaml", ".yml")


def _refuse_aliases(text: str) -> None:
    """Answers never need anchors or aliases, and aliases are how YAML bombs explode."""
    if "&" not in text:
        return  # no anchor, so no alias can expand (one that names no anchor is a parse error)
    for event in yaml.parse(text, Loader=Loader):
        if isinstance(event, yaml.AliasEvent):
            raise SubmissionError(
                f"line {event.start_mark.line + 1}: YAML aliases (*name) are not allowed in submissions; "
                "write each answer out in full"
            )


def _decode(data: bytes, path: Path) -> str:
    for bom, codec in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            return data.decode(codec)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SubmissionError(
            f"byte {err.start} is not UTF-8 text; save the file as UTF-8 and submit it again", path=str(path)
        ) from None


def read_yaml(path: Path) -> Any:
    """Parse one YAML file of untrusted origin."""
    text = _read_text(path)
    try:
        _refuse_aliases(text)
        return yaml.load(text, Loader=Loader)  # noqa: S506 - the safe loader (C or Python)
    except SubmissionError as err:
        raise SubmissionError(str(err), path=str(path)) from None
    except ValueError:  # an integer literal too long for Python to convert
        raise SubmissionError("a number in the file is too long to read (over 4300 digits); "
                              "shorten it, or put it in quotes", path=str(path)) from None
    except RecursionError:
        raise SubmissionError("the file is nested too deeply", path=str(path)) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = text.splitlines()[mark.line] if mark and mark.line < len(text.splitlines()) else ""
        raise SubmissionError(f"{not_yaml(err)}{_yaml_hint(yaml_problem(err), line)}; fix the file and "
                              "submit it again", path=str(path)) from None


def parse_yaml_text(text: str, place: str) -> Any:
    """YAML embedded in another file (front matter, an attngrade block), read as safely as a YAML file."""
    try:
        _refuse_aliases(text)
        return yaml.load(text, Loader=Loader)  # noqa: S506 - the safe loader (C or Python)
    except SubmissionError as err:
        raise SubmissionError(f"{place}: {err}") from None
    except (ValueError, RecursionError):
        raise SubmissionError(f"{place}: the YAML holds a number too long or nesting too deep to read") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f", line {mark.line + 1}" if mark else ""
        raise SubmissionError(f"{place}{where}: not valid YAML ({getattr(err, 'problem', None) or err})") from None


def _yaml_hint(problem: str, line: str) -> str:
    """What usually causes this YAML error in an answers file (`line`: the line it points at)."""
    if "escape" in problem:
        return (": LaTeX in double quotes is read as escapes (\\b, \\f, ...); put it in single quotes "
                "('\\frac{1}{\\beta}') or leave out the quotes")
    if "\t" in line[: len(line) - len(line.lstrip())] or "\t" in problem:
        return ": the line is indented with a tab; indent with spaces"
    return ""


def load_submission(path: Path, homework: str | None = None, bank: Any = None,
                    ids_from_names: bool = False) -> Submission:
    """One submission from an answers file or a submission folder, read within `READ_BUDGET`.

    `homework` is the homework id for files that do not name one (a notebook without
    attngrade metadata, `--homework` on the command line); `bank` where homeworks are looked up;
    `ids_from_names`: the student id is the file or folder name whatever the file says (an
    LMS download names each file after its student).
    """
    try:
        with time_limit(READ_BUDGET):  # (over it, even with the alarm unheard: see deadline)
            submission = _load_submission(path, homework, bank)
        return _named_by_its_place(submission, path) if ids_from_names else submission
    except BudgetExceeded:
        pass
    raise SubmissionError(f"reading this submission took over {READ_BUDGET:g} s, so it was not graded (one "
                          "written by hand reads in well under a second); send course staff the file", path=str(path))


def load_or_error(path: Path, homework: str | None = None, bank: Any = None,
                  ids_from_names: bool = False) -> Submission | Result:
    """`load_submission`, or the error row of a submission that cannot be loaded: one file
    attngrade cannot read never stops a class."""
    try:
        return load_submission(path, homework=homework, bank=bank, ids_from_names=ids_from_names)
    except SubmissionError as err:
        return error_result(path, None, str(err))
    except Exception as err:  # noqa: BLE001 - one file attngrade cannot read must not stop a class
        log.debug("internal error loading %s", path, exc_info=True)
        return error_result(path, None, f"{path}: attngrade failed to read this submission "
                                        f"({type(err).__name__}: {safe_text(str(err), 300)}); "
                                        "course staff will grade it by hand")


def error_result(path: Path, homework: str | None, message: str, student: str | None = None) -> Result:
    """The row of a submission that was not graded, with why."""
    return Result(student=student or named(path), homework=homework, score=0.0, max_score=0.0, error=message,
                  source=str(path))


def _named_by_its_place(submission: Submission, path: Path) -> Submission:
    own = named(path)
    if submission.student == own:
        return submission
    note = f"listed as '{own}', its file or folder name (--ids-from-names); the file says '{submission.student}'"
    return replace(submission, student=own, notes=submission.notes + (note,))


def named(path: Path) -> str:
    """The id a submission at `path` goes by when it claims none: a file's stem, a folder's name."""
    return path.stem if path.is_file() else path.name


def _load_submission(path: Path, homework: str | None, bank: Any) -> Submission:
    if path.is_symlink():
        raise SubmissionError("is a link; submit the file or folder itself", path=str(path))
    folder = path.is_dir()
    file, listed = _chosen(path) if folder else (path, ())
    if bank is None and is_answers_format(file) and file.suffix.lower() not in YAML_SUFFIXES:
        from ..problems import BUNDLED as bank
    if not folder:
        return _read_answers(file, path.stem, homework, bank)
    submission = _read_answers(file, path.name, homework, bank)
    if file.suffix.lower() not in YAML_SUFFIXES and submission.student == file.stem:
        submission = replace(submission, student=path.name)  # a carrier names no one: the folder does
    notes, listing = _looked_through(path, file)
    return replace(submission, folder=path, listing=listing, notes=submission.notes + listed + notes)


def _read_answers(file: Path, default_student: str, homework: str | None, bank: Any) -> Submission:
    """The answers file `file` read (`default_student`: the id when it claims none)."""
    if not is_answers_format(file):
        raise SubmissionError(f"not a submission format; attngrade reads {READ} files", path=str(file))
    if file.suffix.lower() not in YAML_SUFFIXES:
        return read_carrier(file, _read_text(file), homework=homework, bank=bank, parse_yaml=parse_yaml_text)
    data = read_yaml(file)
    if not isinstance(data, dict):
        raise SubmissionError("expected a mapping with 'homework' and 'answers'", path=str(file))
    unknown = sorted(set(map(safe_text, data)) - {"homework", "student", "answers"})
    named = data.get("homework", homework)
    if not isinstance(named, str) or not named.strip():
        raise SubmissionError("the file does not say which homework it answers; add 'homework: <id>' at the top, "
                              f"or name it on the command line: {WITH_HOMEWORK}", path=str(file))
    answers = data.get("answers")
    if answers is None:
        answers = {}
    if not isinstance(answers, dict):
        raise SubmissionError("'answers' must be a mapping from part id to answer", path=str(file))
    student, said = _student_id(data.get("student"), default_student)
    notes = tuple(f"unknown top-level key '{k}' was ignored" for k in unknown) + said
    answers = {safe_text(k, 200): v for k, v in answers.items()}
    return Submission(student=student, homework=named.strip(), answers=answers, path=file, notes=notes)


def _student_id(claim: Any, default: str) -> tuple[str, tuple[str, ...]]:
    """The id a file's 'student' gives (a name or a number), else `default` (the file or folder
    name), with a note when the claim was there but could not be an id (a list, a mapping)."""
    if claim is None or isinstance(claim, (str, int, float)) and not isinstance(claim, bool):
        text = "" if claim is None else safe_text(claim, 200).strip()
        if text and is_placeholder_id(text):
            return default, (placeholder_note(text),)
        return text or default, ()
    return default, (f"'student' is not a name or a number; the submission is listed as '{default}'",)


def _read_text(path: Path) -> str:
    """An answers file as text: a regular file of its own (not a link, not a second name), of at most its
    format's size, decoded as UTF-8 (or by its BOM)."""
    limit = MAX_BYTES.get(path.suffix.lower(), MAX_YAML_BYTES)
    try:
        data = read_bounded(path, limit)
    except NotRead as err:
        raise SubmissionError(_answers_file_reason(err), path=str(path)) from None
    text = _decode(data, path)
    if "\x00" in text:
        raise SubmissionError("the file contains NUL bytes: it is binary, or text saved as UTF-16/UTF-32 "
                              "without a byte-order mark; save it as UTF-8 and submit it again", path=str(path))
    return text


def _answers_file_reason(err: NotRead) -> str:
    """Why an answers file was not read, said of the answers file (`read_bounded` speaks of any file)."""
    if err.kind == LINK:
        return "is a link; submit the answers file itself"
    if err.kind == NOT_REGULAR:
        return "is not a regular file (a folder, pipe or device); submit the answers file itself"
    return f"the file {err.reason}" if err.kind == TOO_LARGE else err.reason


# -- one submission folder --------------------------------------------------------------------------
# Entries of a submission folder's own level listed to find its answers file (a dataset of files
# beside it is listed too); what lies below is looked through within `MAX_SUBMISSION_ENTRIES`.
MAX_FOLDER_ENTRIES = 200_000


def answers_file(folder: Path) -> Path:
    """The one answers file of a submission folder."""
    return _chosen(folder)[0]


def _chosen(folder: Path) -> tuple[Path, tuple[str, ...]]:
    """The one answers file of a submission folder, with a note when its listing was cut short."""
    budget = Budget(MAX_FOLDER_ENTRIES)
    found = _answers_files(folder, budget)
    if budget.closed:
        raise SubmissionError("the grader may not open this folder; course staff can make it readable (chmod a+rx) "
                              "and grade it again", path=str(folder))
    if len(found) > 1:
        found = [p for p in found if looks_like_answers(p)] or found
    cut = (f"this folder holds over {MAX_FOLDER_ENTRIES:,} files and folders; only the first "
           f"{MAX_FOLDER_ENTRIES:,} were looked at for the answers file") if budget.over else ""
    if len(found) != 1:
        names = ", ".join(p.name for p in found)
        raise SubmissionError(f"a submission folder holds exactly one answers file ({READ}); found {len(found)}"
                              + (f": {names}" if names else "") + (f" ({cut})" if cut else ""), path=str(folder))
    return found[0], (cut,) if cut else ()


def _answers_files(folder: Path, budget: Budget | None = None) -> list[Path]:
    return [p for p in _entries(folder, budget) if is_answers_format(p) and _a_file(p)]


def _a_file(path: Path) -> bool:
    """Anything but a folder (a link or a pipe too: reading it says what it is), by one lstat."""
    try:
        return not stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return False


def _looked_through(folder: Path, file: Path) -> tuple[tuple[str, ...], Listing | None]:
    """A submission folder looked through once: its files (for the note on those no part reads), and
    what its row says of it: answers nested in it (another attempt, another student's folder), which
    are not graded, and how far it was looked through. No listing of a folder of more than
    `MAX_LISTED` files is kept."""
    budget = Budget(MAX_SUBMISSION_ENTRIES, NESTED_SECONDS)
    files, nested, links = [], [], []
    for path, depth in walk(folder, budget, links=links):
        files.append(path.relative_to(folder).as_posix())
        if is_nested_answers(path, depth):
            nested.append(path)
    notes = []
    if nested:
        notes.append(f"{_some(nested, folder)}: answers inside this folder, not graded: a folder is one student's "
                     f"submission, graded from {file.name}; each student hands in a folder of their own")
    if budget.short:
        notes.append(f"this folder was not looked through to the end: {budget.shortfall()}; answers files and code "
                     "files there were not found; course staff can look at the rest")
    linked = tuple(link.relative_to(folder).as_posix() for link in links)
    return tuple(notes), Listing(tuple(files), budget.shortfall(), linked) if len(files) <= MAX_LISTED else None


def _some(paths: list[Path], folder: Path, shown: int = 5) -> str:
    """A few of `paths`, relative to `folder`, and how many more."""
    names = ", ".join(p.relative_to(folder).as_posix() for p in paths[:shown])
    return names + (f" and {len(paths) - shown} more" if len(paths) > shown else "")


# Files a course tool writes next to the submissions, never a student's answers.
NOT_SUBMISSIONS = {"submission_metadata.yml", "submission_metadata.yaml", "submission_metadata.json"}


def _not_a_submission(path: Path) -> bool:
    """Hidden files, an export's metadata, a README without answers: listed in the summary, not graded."""
    if path.name.startswith(".") or path.name in NOT_SUBMISSIONS:
        return True
    return path.name.lower().startswith("readme") and not (is_answers_format(path) and looks_like_answers(path))


def _entries(folder: Path, budget: Budget | None = None) -> list[Path]:
    """`folder`'s entries that may be a student's, sorted, listed within `budget`."""
    listed = listing(folder, budget if budget is not None else Budget(MAX_FOLDER_ENTRIES))
    return [p for p in (folder / entry.name for entry in listed) if not _not_a_submission(p)]


def _own_answers(entries: list[Path]) -> list[Path]:
    """The files among `entries` that look like answers."""
    return [p for p in entries if is_answers_format(p) and looks_like_answers(p)]


def _subfolders(entries: list[Path]) -> list[Path]:
    return [p for p in entries if p.name not in SKIPPED_FOLDERS and p.is_dir() and not p.is_symlink()]


# -- finding a class's submissions ------------------------------------------------------------------
MAX_CLASS_DEPTH = 8  # class folders inside class folders read as such; deeper, a folder is one submission
MAX_HELD_DEPTH = 3  # levels below a folder looked into for answers, to tell a class from a student's folder
# What finding a class's submissions may look at (files and folders listed, seconds): a class of
# 100,000 students' folders is well inside it; past it, each folder left is taken as one submission.
MAX_FOUND_ENTRIES = 2_000_000
FIND_SECONDS = 120.0


@dataclass
class _Finding:
    """What one `discover` is given to fill in, and its budget (see `discover`)."""

    passed_over: list[Path] | None
    nested: dict[Path, int] | None
    classes: Collection[str]
    outputs: Path | None
    mixed: list[Path] | None
    budget: Budget = field(default_factory=lambda: Budget(MAX_FOUND_ENTRIES, FIND_SECONDS))
    unexamined: Path | None = None  # the first folder taken as a submission unlooked-at, the budget spent
    unlisted: list[tuple[Path, bool]] = field(default_factory=list)  # class folders not listed whole (closed?)

    def pass_over(self, paths: Iterator[Path] | list[Path]) -> None:
        if self.passed_over is not None:
            self.passed_over.extend(paths)


def discover(paths: list[Path], passed_over: list[Path] | None = None, depth: int = 0,
             nested: dict[Path, int] | None = None, classes: Collection[str] = (),
             outputs: Path | None = None, mixed: list[Path] | None = None) -> Iterator[Path]:
    """Every submission under `paths`: files, submission folders, and class folders.

    A folder named in `paths` is one submission when it holds exactly one file with answers in it
    and no folders with answers; otherwise every file and sub-folder in it is one (a file that is
    not an answers file becomes an error row that says so). Inside a class, a folder with one file
    of answers of its own is one student's: answers nested deeper in it (an old attempt, another
    student's folder) are that student's files, not submissions (they go to `passed_over` and the
    submission's notes); a folder with several, or with none but folders of answers, is a class
    read as one (sections of a course, `grade run examples/`). Hidden files and a Gradescope
    export's metadata go to `passed_over`, for the run summary. `nested` is given the class depth
    of each submission found inside a class folder inside a folder of `paths` (1 and more; the
    rest are 0). A folder of `classes` (resolved paths: those the run before into the same OUT
    graded as classes) is read as one even when a single file in it still looks like answers: a
    class of two where one left, or whose other files broke, is not one student's folder.
    `outputs` (the run's OUT, `grade run . -o out`) is no submission, nor what the run keeps beside
    it (its lock, an interrupted run's folders), nor a folder OUT is in further down: OUT and that
    folder go to `passed_over`, the rest is left out. `mixed` is given each folder of `paths` read
    as several submissions though it holds one answers file of its own.

    The search is bounded (`MAX_FOUND_ENTRIES` files and folders, `FIND_SECONDS`); past it, each
    folder left is taken as one submission without a look inside, and the run's output says so.
    """
    finding = _Finding(passed_over, nested, classes, outputs, mixed)
    yield from _discover(paths, depth, finding)
    for folder, closed in finding.unlisted:
        if closed:
            log.warning("%s: the grader may not open this folder, so nothing in it was graded; make it readable "
                        "(chmod a+rx) and run again", folder)
        else:
            log.warning("%s holds over %s files and folders: only the first %s (by the disk's order) were graded; "
                        "split it into smaller class folders", folder, f"{MAX_FOUND_ENTRIES:,}",
                        f"{MAX_FOUND_ENTRIES:,}")
    if finding.unexamined is not None:
        log.warning("finding the submissions stopped looking inside folders at %s (%s): each folder from there on "
                    "was taken as one submission; grade a large class folder by folder to have each looked "
                    "through", finding.unexamined, finding.budget.shortfall())


def _discover(paths: list[Path], depth: int, finding: _Finding) -> Iterator[Path]:
    for path in paths:
        if not path.exists() and not path.is_symlink():
            raise SubmissionError("no such file or folder", path=str(path))
        if not path.is_dir() or path.is_symlink():
            _note_depth(finding, path, depth)
            yield path
            continue
        if depth == 0 and not _known_class(path, finding.classes) and _is_submission(path, finding.budget):
            finding.pass_over(_beside_the_answers(path))  # the other answers-format files: said, not skipped
            finding.pass_over(_nested_in(path, finding.budget))
            yield path
            continue
        if depth == 0 and finding.mixed is not None and _has_answers_of_its_own(path):
            finding.mixed.append(path)
        yield from _class(path, depth, finding)


def _note_depth(finding: _Finding, path: Path, depth: int) -> None:
    if finding.nested is not None and depth:
        finding.nested[path] = depth


def _class(path: Path, depth: int, finding: _Finding) -> Iterator[Path]:
    """The submissions of the class folder `path` (`depth`: how many classes it is inside)."""
    entries = _class_listing(path, finding)
    outputs = finding.outputs
    if outputs is not None and os.path.realpath(path) in {os.path.realpath(outputs.parent),
                                                           os.path.dirname(os.path.realpath(outputs))}:
        entries = _without_outputs(entries, outputs, finding.passed_over)
    elif outputs is not None:
        entries = _without_the_way_to(outputs, path, entries, finding.passed_over)
    hidden = {p for p in entries if _not_a_submission(p) or _a_runs_outputs(p)}  # sets: a MOOC's class folder has 100,000 entries
    visible = [p for p in entries if p not in hidden]
    finding.pass_over(p for p in entries if p in hidden)
    folders = {p for p in visible if p.is_dir() and not p.is_symlink()}
    files = [p for p in visible if p not in folders]
    for found in [*files, *sorted(folders)]:  # files first, then folders, each sorted
        if found in folders:
            yield from _folder_in_class(found, depth, finding)
            continue
        _note_depth(finding, found, depth)
        yield found


def _class_listing(path: Path, finding: _Finding) -> list[Path]:
    """A class folder's entries, sorted: listed whole even when the search's budget is spent (a class
    is never cut short of its students), up to `MAX_FOUND_ENTRIES` (past it, said)."""
    cap = Budget(MAX_FOUND_ENTRIES)
    entries = [path / entry.name for entry in listing(path, cap)]
    finding.budget.take(cap.spent)
    if cap.short:
        finding.unlisted.append((path, bool(cap.closed)))
    return entries


def _folder_in_class(found: Path, depth: int, finding: _Finding) -> Iterator[Path]:
    """A folder inside a class: a class of its own (its submissions), or one submission; once the
    search's budget is spent, one submission without a look inside (said)."""
    budget = finding.budget
    if depth < MAX_CLASS_DEPTH and (_known_class(found, finding.classes)
                                    or not budget.over and _is_class(found, budget) and not budget.over):
        yield from _class(found, depth + 1, finding)
        return
    if budget.over:
        finding.unexamined = finding.unexamined or found
    elif finding.passed_over is not None:
        finding.passed_over.extend(_nested_in(found, budget))
    _note_depth(finding, found, depth)
    yield found


def _nested_in(folder: Path, budget: Budget) -> list[Path]:
    """Answers nested in the submission folder `folder`, within what is left of `budget`."""
    share = budget.share(MAX_SUBMISSION_ENTRIES, NESTED_SECONDS)
    found = nested_answers(folder, share)
    budget.spend(share)
    return found


def _is_submission(folder: Path, budget: Budget) -> bool:
    """A folder named to be graded is one student's when it holds exactly one file with answers in
    it and no folders with answers (those make it a class). A folder with no file that looks like
    answers but exactly one answers-format file is one too: loading it then says what is wrong."""
    entries = _entries(folder, Budget(MAX_FOUND_ENTRIES))  # (its listing as a class is what counts)
    answers = _own_answers(entries)
    if len(answers) > 1 or any(_holds_answers(d, budget, 1) for d in _subfolders(entries)):
        return False
    return bool(answers) or _one_answers_format_file(entries)


def _is_class(folder: Path, budget: Budget) -> bool:
    """A folder inside a class is a class too when it holds two files with answers or more, or none
    but folders with answers in them (a section's students). One file of answers of its own makes
    it one student's folder, whatever lies deeper."""
    entries = _entries(folder, budget)
    answers = _own_answers(entries)
    if answers:
        return len(answers) > 1
    return any(_holds_answers(d, budget, 1) for d in _subfolders(entries))


def _holds_answers(folder: Path, budget: Budget, depth: int) -> bool:
    """Whether `folder`, or a folder in it down to `MAX_HELD_DEPTH` levels, holds a submission: a file
    with answers, or a single answers-format file."""
    if budget.over:
        return False
    entries = _entries(folder, budget)
    if _own_answers(entries) or _one_answers_format_file(entries):
        return True
    return depth < MAX_HELD_DEPTH and any(_holds_answers(d, budget, depth + 1) for d in _subfolders(entries))


def _one_answers_format_file(entries: list[Path]) -> bool:
    return sum(1 for p in entries if is_answers_format(p) and _a_file(p)) == 1


def _has_answers_of_its_own(folder: Path) -> bool:
    """One file of answers beside folders of answers: one student's folder, or a class of them?"""
    return len(_own_answers(_entries(folder, Budget(MAX_FOUND_ENTRIES)))) == 1


def _a_runs_outputs(path: Path) -> bool:
    """An OUT some grade run wrote into the class (`-o out` once, `-o out2` now): no student's folder.
    (A folder the grader may not open is none: loading it says so.)"""
    try:
        return stat.S_ISREG(os.stat(path / FOLDERS_FILE).st_mode)
    except OSError:
        return False


def _without_the_way_to(out: Path, folder: Path, entries: list[Path], passed_over: list[Path] | None) -> list[Path]:
    """`entries` of `folder`, less the folder OUT is in, deeper down (`-o class/results/run1`): it
    holds runs' outputs, not a student's answers (said)."""
    real, inside = os.path.realpath(out), os.path.realpath(folder)
    if not within(real, inside):
        return entries
    way = Path(inside, os.path.relpath(real, inside).split(os.sep)[0])
    gone = [p for p in entries if p.name == way.name and os.path.realpath(p) == str(way)]
    if passed_over is not None:
        passed_over.extend(gone)
    return [p for p in entries if p not in gone]


def _without_outputs(entries: list[Path], out: Path, passed_over: list[Path] | None) -> list[Path]:
    """`entries` of OUT's folder, less OUT (said; by its name or, through a link, where it leads)
    and the files a run keeps beside it (`runfolder`)."""
    kept_beside = beside(out.name)
    real = os.path.realpath(out)
    names = {out.name, os.path.basename(real)}
    ours = [p for p in entries if p.name in names and os.path.realpath(p) == real]
    if passed_over is not None:
        passed_over.extend(ours)
    return [p for p in entries if p not in ours and not kept_beside.fullmatch(p.name)]


def _known_class(folder: Path, classes: Collection[str]) -> bool:
    return bool(classes) and os.path.realpath(folder) in classes


def _beside_the_answers(folder: Path) -> list[Path]:
    """Answers-format files of a submission folder other than its answers file (a second
    student's file without a homework line, in what was meant as a class of two)."""
    try:
        chosen = answers_file(folder)
    except SubmissionError:
        return []  # loading it will say what is wrong
    return [p for p in _answers_files(folder) if p != chosen]


# -- the files a part names ---------------------------------------------------------------------
CODE_SUFFIXES = (".py",)
MAX_CODE_BYTES = 10_000_000  # a copy of a code file read to tell it from another of its name


def is_code(name: str | None) -> bool:
    """A source file a part names (dataset.py): found at any depth of the submission folder."""
    return bool(name) and name.endswith(CODE_SUFFIXES)


def code_folder(folder: Path | None, name: str | None, raw: Any = None, listing: Listing | None = None) -> Path | None:
    """The folder that holds the file `name` a part names, once the file there is known to be one
    attngrade reads (`runtime.files`): a regular file of its own that the grader may open. Else a
    SubmissionError that names the file and what to do (that field's problem, not the submission's).

    A code file is looked for where courses put it first (the folder itself, src/), then at any
    depth (the course's src/ or a5/src/ layout is fine; in intake's `listing` of the folder, where
    there is one); two different files of that name are an error, one beside the answers included. The submission folder itself when the file is not there at all (reading it then says
    it is missing), unless the search was cut short, which is said.
    """
    if isinstance(raw, str) and raw.strip():
        name = raw  # the student named the file in the answers
    if folder is None or not name or "/" in name or "\\" in name or name.startswith(".") or "\x00" in name:
        return folder  # reading it says what is wrong with the name
    if not is_code(name):
        _vet(folder / name, folder, name)
        return folder
    budget = Budget(MAX_SUBMISSION_ENTRIES)
    found = find_code(folder, name, listing) if listing is not None and not listing.shortfall else (
        code_files(folder, name, budget))
    if not found:
        if budget.short:
            raise SubmissionError(f"{name} was not found, and your folder was not looked through to the end: "
                                  f"{budget.shortfall()}; put {name} in src/ or next to your answers file and "
                                  "submit again")
        return folder
    if len(found) > 1:
        _one_content(folder, name, found)
    _vet(found[0], folder, found[0].relative_to(folder).as_posix())
    return found[0].parent


def found_where_read(folder: Path, name: str) -> bool:
    """Whether grading finds the file `name` a part names, given the submission folder `folder`: beside
    the answers file, or for a code file anywhere below it (`code_folder`)."""
    if _a_file(folder / name):
        return True
    return is_code(name) and bool(code_files(folder, name, Budget(MAX_SUBMISSION_ENTRIES)))


def _vet(path: Path, folder: Path, shown: str) -> None:
    """Nothing, if `path` (in the submission `folder`) is absent or a file attngrade may read; else
    why not, as a SubmissionError."""
    try:
        check_readable(path, below=folder)
    except NotRead as err:
        if not err.absent:
            raise SubmissionError(f"{shown} {err.reason}") from None


def _one_content(folder: Path, name: str, found: list[Path]) -> None:
    """Copies of a code file at several places must be one file: each read within bounds, compared."""
    contents: dict[str, Path] = {}
    for path in found:
        shown = path.relative_to(folder).as_posix()
        try:
            digest = hashlib.sha256(read_bounded(path, MAX_CODE_BYTES, below=folder)).hexdigest()
        except NotRead as err:
            if err.absent:
                continue  # gone since it was found
            raise SubmissionError(f"{shown} {err.reason} (every file named {name} in your folder is read to tell "
                                  "which one to grade)") from None
        contents.setdefault(digest, path)
    if len(contents) > 1:
        first, second = list(contents.values())[:2]
        raise SubmissionError(f"two different files named {name}: {first.relative_to(folder)} and "
                              f"{second.relative_to(folder)}; hand in one of them")


def apart(paths: list[Path], out: Path, said: list[str]) -> list[Path]:
    """What is graded, which must lie outside OUT (each run replaces it): OUT itself among the
    paths is passed over, said (`grade run class/* -o class/out`: the shell names it too); a
    path inside OUT is refused. (OUT inside a class is left out of it: `submissions.discover`.)"""
    real_out = os.path.realpath(out)
    kept = []
    for path in paths:
        real = os.path.realpath(path)
        if within(real, real_out):
            raise ConfigError(f"-o {out}: {path} is inside the outputs folder, which each run replaces; name an "
                              "outputs folder outside what is graded")
        if real != real_out:
            kept.append(path)
    if len(kept) < len(paths):
        if not kept:
            raise ConfigError(f"-o {out}: the outputs folder is all that was given to grade; name the submissions")
        said.append(f"not submissions, passed over: {out} (the outputs folder)")
    return kept


def place_key(path: Path | str) -> str:
    """How a submission's place is written down: its folder resolved (a class reached through a
    link, or /tmp as /private/tmp, is one place), its own name not (a linked file is its own)."""
    absolute = os.path.abspath(path)
    return os.path.join(_real_folder(os.path.dirname(absolute)), os.path.basename(absolute))


_real_folder = functools.lru_cache(maxsize=4096)(os.path.realpath)  # a class is in a few folders
