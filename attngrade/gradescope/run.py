"""`grade gradescope`: grade the one submission in a Gradescope container.

Reads ROOT/source (the unpacked autograder zip: manifest, keys, gold),
ROOT/submission (the student's files, any folder nesting) and
ROOT/submission_metadata.json (who submitted), and always writes
ROOT/results/results.json, also when the submission or attngrade itself is broken.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import EXIT_OK, EXIT_SUBMISSION_FAILED, EXIT_USAGE, ConfigError, SubmissionError
from ..grading import Assignment, InProcess, Options, assignment, grade
from ..intake.formats import READ, is_answers_format
from ..intake.submissions import found_where_read, is_code, load_submission, looks_like_answers
from ..intake.walk import Budget, walk
from ..problems import BUNDLED, HomeworkFolder
from ..problems.keys import load_keys
from ..records import Homework, Result, Submission, Unreadable
from ..runtime.files import NotRead, read_bounded, write_atomic
from . import results as gs
from .manifest import read_manifest

log = logging.getLogger(__name__)

MAX_FILES = 5_000  # files and folders looked at in a submission
LISTED = 200  # files named in the listing staff see when a submission cannot be graded
MAX_METADATA_BYTES = 1_000_000  # submission_metadata.json: who submitted, a few hundred bytes


def run_gradescope(root: Path) -> int:
    """Grade ROOT/submission and write ROOT/results/results.json; returns an exit code."""
    root = Path(root)
    started = time.monotonic()
    try:
        data, code = _grade(root, started)
    except SubmissionError as err:
        data, code = gs.error_results(_for_student(err, root), gs.details_of(err, _listing(root)),
                                      execution_time=time.monotonic() - started), EXIT_SUBMISSION_FAILED
    except ConfigError as err:
        data, code = gs.error_results(
            "The autograder is not set up right, so your submission was not graded. This is not a problem "
            "with your answers: course staff can see what went wrong and will grade your submission.",
            gs.details_of(err, "configuration error: " + str(err)),
            execution_time=time.monotonic() - started), EXIT_USAGE
    except Exception as err:  # noqa: BLE001 - whatever happens, Gradescope gets a result
        data, code = gs.error_results(
            "attngrade failed while grading your submission, so it was not graded. This is not something "
            "you can fix in your answers: course staff can see what went wrong and will grade your "
            "submission.",
            gs.details_of(err, _listing(root)),
            execution_time=time.monotonic() - started), EXIT_SUBMISSION_FAILED
    target = root / "results" / "results.json"
    try:
        text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    except (TypeError, ValueError) as err:
        text = json.dumps(gs.error_results("attngrade failed while writing your results; course staff will "
                                           "grade your submission.", gs.details_of(err)), indent=2) + "\n"
        code = EXIT_SUBMISSION_FAILED
    write_atomic(target, text)
    print(f"attngrade: wrote {target} (score {data.get('score', 0):g}, exit status {code})")
    return code


def _grade(root: Path, started: float) -> tuple[dict[str, Any], int]:
    source = root / "source"
    manifest = read_manifest(source)
    # An instructor's own homework is in the zip, not in the installed bank: every reader
    # (YAML, notebook, Markdown, LaTeX) must find the folder's problems, not look up the id.
    bank = HomeworkFolder(source / manifest.homework_folder) if manifest.homework_folder else BUNDLED
    homework = bank.load_homework(manifest.homework)
    solutions = source / manifest.solutions
    keys = load_keys(solutions, homework)
    gold = {name: source / rel for name, rel in manifest.gold.items()}
    for name, path in gold.items():
        if not path.is_file():
            raise ConfigError(f"gold {name}: {path} is missing from the autograder")
    # Before the deadline the student can still fix an answer the reader cannot read: it says why, with 0.
    graded = assignment(homework, keys, gold=gold, solutions=solutions, unreadable=Unreadable.ZERO)

    folder = root / "submission"
    files = Files.of(folder)
    answers = find_answers(folder, files)
    submission = load_submission(answers, homework=homework.id, bank=ThisAssignment(homework, answers))
    if submission.homework != homework.id:
        raise SubmissionError(another_homework(submission.homework, homework.id), path=str(answers))
    student = student_from_metadata(root / "submission_metadata.json") or submission.student
    submission = dataclasses.replace(submission, folder=answers.parent, student=student)
    result, selfcheck = grade_both(graded, submission)
    ctx = gs.Context(
        homework=homework, gold=tuple(gold), visibility=manifest.visibility, student=student,
        answers_file=_relative(answers, folder), notes=tuple(misplaced_files(homework, answers, folder, files)),
    )
    return gs.results(result, selfcheck, ctx, time.monotonic() - started), EXIT_OK


def another_homework(named: str, wanted: str) -> str:
    """What a student reads when the answers file names another homework than the autograder's."""
    return (f"the file answers homework '{named}', but this assignment is {wanted}; write "
            f"'homework: {wanted}' at the top (in a notebook, its attngrade metadata; in LaTeX, "
            f"\\attnhomework{{{wanted}}}) and submit it again")


class ThisAssignment:
    """The bank a submission is read against on Gradescope: the autograder's one homework.

    A notebook, Markdown or LaTeX file is read against its homework's parts; one that names
    another homework is the student's to fix, said as for a YAML file."""

    def __init__(self, homework: Homework, answers: Path):
        self.homework = homework
        self.answers = answers

    def homework_ids(self) -> list[str]:
        return [self.homework.id]

    def load_homework(self, homework_id: str) -> Homework:
        if homework_id != self.homework.id:
            raise SubmissionError(another_homework(homework_id, self.homework.id), path=str(self.answers))
        return self.homework


def grade_both(graded: Assignment, submission: Submission) -> tuple[Result, Result]:
    """The submission graded with keys and gold, and as its student's self-check sees it.

    The self-check is its own assignment (no keys, no gold), so none of its outcomes
    may come from the graded run: a check against the test gold says more than the
    student may see before grades are published.
    """
    checked = assignment(graded.homework, None, self_check=True)
    graded = dataclasses.replace(graded, salt=os.urandom(32))  # each container's own: nothing carries it over
    with_keys = grade([submission], Options(assignments={graded.id: graded}, runner=InProcess()))
    self_checked = grade([submission], Options(assignments={checked.id: checked}, runner=InProcess()))
    return with_keys.results[0], self_checked.results[0]


# -- the submission folder ----------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Files:
    """The submission's regular files in order (hidden files, links and macOS litter left out), as
    far as `MAX_FILES` files and folders go."""

    paths: tuple[Path, ...]
    shortfall: str = ""  # what was not seen (`walk.Budget.shortfall`), if anything

    @classmethod
    def of(cls, folder: Path) -> "Files":
        budget = Budget(MAX_FILES)
        found = sorted((path for path, _ in walk(folder, budget)), key=lambda p: p.relative_to(folder).parts)
        return cls(tuple(found), budget.shortfall())

    def note(self) -> str:
        """What a student reads when the look stopped short."""
        if not self.shortfall:
            return ""
        return (f"your submission was not looked through to the end: {self.shortfall}; files there were not "
                "seen: upload your answers and the files the parts name, without the rest")


def find_answers(folder: Path, files: Files | None = None) -> Path:
    """The one answers file in the submission (YAML, notebook, Markdown or LaTeX), however deep."""
    if not folder.is_dir():
        raise SubmissionError("no submission was found; upload your answers file and submit again")
    files = files if files is not None else Files.of(folder)
    candidates = [p for p in files.paths if is_answers_format(p)]
    cut = f" ({files.note()})" if files.shortfall else ""
    if not candidates:
        raise SubmissionError(
            f"your submission has no answers file ({READ}): a YAML file with 'homework: <id>' and 'answers:', "
            "or the notebook, Markdown or LaTeX template your course handed out, filled in; upload it, together "
            f"with any files the parts name, and submit again{cut}")
    answers = [p for p in candidates if looks_like_answers(p)]
    if len(answers) == 1:
        return answers[0]
    if len(answers) > 1:
        names = ", ".join(_relative(p, folder) for p in answers)
        raise SubmissionError(f"your submission has {len(answers)} answers files ({names}); submit exactly one")
    if len(candidates) == 1:
        return candidates[0]  # loading it says what is missing
    names = ", ".join(_relative(p, folder) for p in candidates)
    raise SubmissionError(f"none of the files in your submission ({names}) holds answers attngrade can find "
                          "(a YAML file with 'homework: <id>', a notebook or Markdown file with '## Answer <part>' "
                          "headings, a LaTeX file with \\answer{...}{...}); fix the answers file and submit again"
                          + cut)


def misplaced_files(homework: Any, answers: Path, folder: Path, files: Files | None = None) -> list[str]:
    """Files the parts name that grading does not find where it looks for them (beside the answers
    file; a code file, anywhere below it) but that sit elsewhere in the submission; and how far the
    submission was looked through, when not to the end."""
    notes = []
    here = answers.parent
    files = files if files is not None else Files.of(folder)
    others: dict[str, list[Path]] = {}
    for path in files.paths:
        others.setdefault(path.name, []).append(path)
    for part in homework.parts:
        for f in part.fields:
            if f.kind != "file" or not f.filename or found_where_read(here, f.filename):
                continue
            elsewhere = [p for p in others.get(f.filename, []) if p.parent != here]
            if elsewhere:
                notes.append(_move_it(part.id, f.filename, _relative(elsewhere[0], folder), _relative(answers, folder),
                                      is_code(f.filename)))
    return notes + ([files.note()] if files.shortfall else [])


def _move_it(part: str, name: str, where: str, beside: str, code: bool) -> str:
    if code:
        return (f"{part}: {name} was found at {where}, but code files are read only from the folder of your "
                f"answers file ({beside}) and the folders inside it (src/, say); move it there and submit again")
    return (f"{part}: {name} was found at {where}, but files are read only from the folder of your answers file "
            f"({beside}); move it there and submit again")


def _relative(path: Path, folder: Path) -> str:
    try:
        return path.relative_to(folder).as_posix()
    except ValueError:
        return path.name


def _for_student(err: SubmissionError, root: Path) -> str:
    """The error in the student's terms: paths relative to what they uploaded."""
    message = str(err)
    for prefix in (str((root / "submission").resolve()), str(root / "submission")):
        message = message.replace(prefix + "/", "").replace(prefix, "your submission")
    return f"Your submission could not be graded: {message}"


def _listing(root: Path) -> str:
    """The submission's files for staff, as far as `Files` looks (sizes by lstat: nothing is opened)."""
    folder = root / "submission"
    if not folder.is_dir():
        return f"{folder} does not exist"
    files = Files.of(folder)
    lines = [f"files in {folder}:"]
    for path in files.paths[:LISTED]:
        try:
            lines.append(f"  {_relative(path, folder)} ({os.lstat(path).st_size} bytes)")
        except OSError as err:
            lines.append(f"  {_relative(path, folder)} (could not look at it: {err.strerror})")
    if len(files.paths) > LISTED:
        lines.append(f"  and {len(files.paths) - LISTED} more")
    if files.shortfall:
        lines.append(f"  (not looked through to the end: {files.shortfall})")
    return "\n".join(lines) if len(lines) > 1 else f"{folder} is empty"


# -- who submitted ----------------------------------------------------------------------------
def student_from_metadata(path: Path) -> str | None:
    """The submitters' emails (or names) from Gradescope's metadata, else the submission id."""
    try:
        data = json.loads(read_bounded(path, MAX_METADATA_BYTES).decode("utf-8"))
    except (NotRead, ValueError):  # (UnicodeDecodeError is a ValueError)
        return None
    if not isinstance(data, dict):
        return None
    people = []
    for user in data.get("users") or []:
        if isinstance(user, dict):
            who = user.get("email") or user.get("name")
            if isinstance(who, str) and who.strip():
                people.append(who.strip())
    if people:
        return ", ".join(people)
    if data.get("id") not in (None, ""):
        return f"submission-{data['id']}"
    return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run_gradescope(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/autograder")))
