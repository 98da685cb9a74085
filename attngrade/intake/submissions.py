"""The load stage: find submissions on disk and read them safely.

A submission is an answers file (YAML, notebook, Markdown or LaTeX; see `formats/`),
or a folder holding one answers file plus the files its parts name. YAML is read with
a safe loader that also refuses aliases (the "billion laughs" bomb) and is
size-limited before it is parsed. Nothing found in a class folder is skipped without
a word: every entry becomes a submission or an error row, and files that are clearly
not a student's (hidden files, a Gradescope export's metadata) are listed as such.
"""

from __future__ import annotations

import codecs
import functools
import logging
import os
import re
import stat
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Collection, Iterator

import yaml

from ..errors import ConfigError, SubmissionError
from ..records import Result, Submission
from ..runtime.deadline import BudgetExceeded, time_limit
from ..runtime.files import within
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

log = logging.getLogger(__name__)

MAX_YAML_BYTES = 2_000_000
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
    folder = None
    if path.is_symlink():
        raise SubmissionError("is a link; submit the file or folder itself", path=str(path))
    if path.is_dir():
        folder, file = path, answers_file(path)
        default_student = path.name
    else:
        file, default_student = path, path.stem
    if not is_answers_format(file):
        raise SubmissionError(f"not a submission format; attngrade reads {READ} files", path=str(file))
    if file.suffix.lower() not in YAML_SUFFIXES:
        if bank is None:
            from ..problems import BUNDLED as bank
        submission = read_carrier(file, _read_text(file), homework=homework, bank=bank, parse_yaml=parse_yaml_text)
        if folder is not None:
            student = submission.student if submission.student != file.stem else default_student
            submission = Submission(student=student, homework=submission.homework, answers=submission.answers,
                                    path=submission.path, folder=folder, notes=submission.notes,
                                    invalid=submission.invalid)
        return submission
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
    return Submission(
        student=student,
        homework=named.strip(),
        answers={safe_text(k, 200): v for k, v in answers.items()},
        path=file,
        folder=folder,
        notes=notes,
    )


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
    """An answers file as text: a regular file (not a link), size-limited, decoded as UTF-8 (or by its BOM)."""
    if path.is_symlink():
        raise SubmissionError("is a link; submit the answers file itself", path=str(path))
    if not path.is_file():
        raise SubmissionError("is not a regular file (a folder, pipe or device); submit the answers file itself",
                              path=str(path))
    size = path.stat().st_size
    limit = MAX_BYTES.get(path.suffix.lower(), MAX_YAML_BYTES)
    if size > limit:
        raise SubmissionError(f"the file is {size} bytes; at most {limit} are read", path=str(path))
    text = _decode(path.read_bytes(), path)
    if "\x00" in text:
        raise SubmissionError("the file contains NUL bytes: it is binary, or text saved as UTF-16/UTF-32 "
                              "without a byte-order mark; save it as UTF-8 and submit it again", path=str(path))
    return text


_LOOKS = {
    "yaml": re.compile(r"""(?m)^["']?homework["']?[ \t]*:"""),
    "heading": re.compile(r"(?im)(^|\\n|\")[ ]{0,3}#{1,6}[ \t]+answer[ \t]+\S|```+[ \t]*attngrade"),
    "latex": re.compile(r"\\answer\b|\\attnhomework\b"),
}


def looks_like_answers(path: Path) -> bool:
    """Whether a file of an answers format has answers in it (a cheap look, no parsing).

    Only a regular file is opened: a named pipe would block, a device never end. Finding a
    class's submissions asks about a file more than once: each file is read once.
    """
    try:
        if path.is_symlink():
            return False
        info = path.stat()
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode):
        return False
    return _sniff(str(path), info.st_mtime_ns, info.st_size)


@lru_cache(maxsize=4096)
def _sniff(path: str, mtime_ns: int, size: int) -> bool:  # noqa: ARG001 - mtime and size key the cache
    suffix = Path(path).suffix.lower()
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES.get(suffix, MAX_YAML_BYTES))
    except OSError:
        return False
    text = data.decode("utf-8", errors="replace")
    kind = "yaml" if suffix in YAML_SUFFIXES else "latex" if suffix == ".tex" else "heading"
    return _LOOKS[kind].search(text) is not None


def answers_file(folder: Path) -> Path:
    """The one answers file of a submission folder."""
    found = _answers_files(folder)
    if len(found) > 1:
        found = [p for p in found if looks_like_answers(p)] or found
    if len(found) != 1:
        names = ", ".join(p.name for p in found)
        raise SubmissionError(f"a submission folder holds exactly one answers file ({READ}); found {len(found)}"
                              + (f": {names}" if names else ""), path=str(folder))
    return found[0]


def _answers_files(folder: Path) -> list[Path]:
    return [p for p in _entries(folder) if is_answers_format(p) and not p.is_dir()]


# Files a course tool writes next to the submissions, never a student's answers.
NOT_SUBMISSIONS = {"submission_metadata.yml", "submission_metadata.yaml", "submission_metadata.json"}


def _not_a_submission(path: Path) -> bool:
    """Hidden files, an export's metadata, a README without answers: listed in the summary, not graded."""
    if path.name.startswith(".") or path.name in NOT_SUBMISSIONS:
        return True
    return path.name.lower().startswith("readme") and not (is_answers_format(path) and looks_like_answers(path))


def _entries(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if not _not_a_submission(p))
    except OSError:
        return []


def _is_submission(folder: Path, depth: int = 0) -> bool:
    """One student's folder: exactly one file with answers in it, and no sub-folder that is a
    submission of its own (its other sub-folders are that student's files). A folder with no
    file that looks like answers but exactly one answers-format file is one too: loading it
    then says what is wrong.
    """
    entries = _entries(folder)
    answers = [p for p in entries if is_answers_format(p) and looks_like_answers(p)]
    subdirs = [p for p in entries if p.is_dir() and not p.is_symlink()]
    if len(answers) > 1 or (depth < 3 and any(_is_submission(d, depth + 1) for d in subdirs)):
        return False  # several answers files, or students' folders inside: a class
    if answers:
        return True
    return len(_answers_files(folder)) == 1


def _is_class(folder: Path, depth: int = 0) -> bool:
    """Several submissions: two files with answers or more, or a sub-folder that is a submission or a class."""
    if depth > 3 or _is_submission(folder, depth):
        return False
    entries = _entries(folder)
    if sum(1 for p in entries if is_answers_format(p) and looks_like_answers(p)) >= 2:
        return True
    return any(p.is_dir() and not p.is_symlink() and (_is_submission(p, depth + 1) or _is_class(p, depth + 1))
               for p in entries)


MAX_CLASS_DEPTH = 8  # class folders inside class folders read as such; deeper, a folder is one submission


def discover(paths: list[Path], passed_over: list[Path] | None = None, depth: int = 0,
             nested: dict[Path, int] | None = None, classes: Collection[str] = (),
             outputs: Path | None = None, mixed: list[Path] | None = None) -> Iterator[Path]:
    """Every submission under `paths`: files, submission folders, and class folders.

    A folder is one submission when it holds exactly one file with answers in it (its
    sub-folders are that student's own files); otherwise every file and sub-folder in it is
    one (a file that is not an answers file becomes an error row that says so), and a
    sub-folder that is itself a class folder is read as one. Hidden files and a Gradescope export's metadata
    go to `passed_over`, for the run summary. `nested` is given the class depth of each
    submission found inside a class folder inside a folder of `paths` (1 and more; the rest are 0).
    A folder of `classes` (resolved paths: those the run before into the same OUT graded as
    classes) is read as one even when a single file in it still looks like answers: a class of
    two where one left, or whose other files broke, is not one student's folder. `outputs`
    (the run's OUT, `grade run . -o out`) is no submission, nor what the run keeps beside it
    (its lock, an interrupted run's folders), nor a folder OUT is in further down: OUT and that
    folder go to `passed_over`, the rest is left out.
    `mixed` is given each folder inside a class read as several submissions though it holds one
    answers file of its own (one student's folder with an old attempt inside reads so): said.
    """
    for path in paths:
        if not path.exists() and not path.is_symlink():
            raise SubmissionError("no such file or folder", path=str(path))
        if not path.is_dir() or path.is_symlink():
            if nested is not None and depth:
                nested[path] = depth
            yield path
            continue
        entries = sorted(path.iterdir())
        if outputs is not None and os.path.realpath(path) in {os.path.realpath(outputs.parent),
                                                               os.path.dirname(os.path.realpath(outputs))}:
            entries = _without_outputs(entries, outputs, passed_over)
        elif outputs is not None:
            entries = _without_the_way_to(outputs, path, entries, passed_over)
        hidden = {p for p in entries if _not_a_submission(p) or _a_runs_outputs(p)}  # sets: a MOOC's class folder has 100,000 entries
        visible = [p for p in entries if p not in hidden]
        if passed_over is not None:
            passed_over.extend(p for p in entries if p in hidden)
        subdirs = [p for p in visible if p.is_dir() and not p.is_symlink()]
        if not _known_class(path, classes) and _is_submission(path):
            if passed_over is not None:  # the other answers-format files beside the one read: said, not skipped
                passed_over.extend(_beside_the_answers(path))
            if nested is not None and depth:
                nested[path] = depth
            yield path
            continue
        folders = set(subdirs)
        for found in [*(p for p in visible if p not in folders), *subdirs]:  # files first, then folders, each sorted
            if found in folders and depth < MAX_CLASS_DEPTH and (_known_class(found, classes) or _is_class(found)):
                if mixed is not None and _has_answers_of_its_own(found):
                    mixed.append(found)
                # `grade run examples/`: each homework's folder a class of its own
                yield from discover([found], passed_over, depth + 1, nested, classes, outputs, mixed)
                continue
            if nested is not None and depth:
                nested[found] = depth
            yield found


def _has_answers_of_its_own(folder: Path) -> bool:
    """One file of answers beside folders of answers: one student's folder, or a class of them?"""
    return sum(1 for p in _entries(folder) if is_answers_format(p) and not p.is_dir() and looks_like_answers(p)) == 1


def _a_runs_outputs(path: Path) -> bool:
    """An OUT some grade run wrote into the class (`-o out` once, `-o out2` now): no student's folder."""
    return (path / FOLDERS_FILE).is_file()


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


# -- code files at any depth -----------------------------------------------------------------------
CODE_SUFFIXES = (".py",)
MAX_CODE_DEPTH = 6
MAX_CODE_ENTRIES = 5_000


def is_code(name: str | None) -> bool:
    """A source file a part names (dataset.py): found at any depth of the submission folder."""
    return bool(name) and name.endswith(CODE_SUFFIXES)


def find_code(folder: Path, name: str) -> list[Path]:
    """Every regular file called `name` under `folder` (hidden folders, caches and links skipped), shallowest first."""
    found: list[Path] = []
    seen = 0
    level = [folder]
    for _ in range(MAX_CODE_DEPTH + 1):
        below: list[Path] = []
        for current in level:
            try:  # scandir: an entry's type comes with its name, not from a stat of its own
                with os.scandir(current) as listing:
                    entries = sorted(listing, key=lambda entry: entry.name)
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if seen > MAX_CODE_ENTRIES or entry.name.startswith(".") or entry.is_symlink():
                    continue
                if entry.name == name and entry.is_file(follow_symlinks=False):
                    found.append(current / entry.name)
                elif entry.is_dir(follow_symlinks=False) and entry.name not in ("__pycache__", "node_modules"):
                    below.append(current / entry.name)
        level = below
    return found


def code_folder(folder: Path | None, name: str | None, raw: Any = None) -> Path | None:
    """The folder that holds the code file `name` (the course's src/ or a5/src/ layout is fine).

    The submission folder itself when the file is at its top, or not there at all (reading
    it then says it is missing). Two different files of that name are a SubmissionError.
    """
    if isinstance(raw, str) and raw.strip():
        name = raw  # the student named the file in the answers
    if folder is None or not is_code(name) or "/" in name or "\\" in name or (folder / name).exists():
        return folder
    found = find_code(folder, name)
    contents = {}
    for path in found:
        try:
            contents.setdefault(path.read_bytes(), path)
        except OSError:
            continue
    if len(contents) > 1:
        first, second = list(contents.values())[:2]
        raise SubmissionError(f"two different files named {name}: {first.relative_to(folder)} and "
                              f"{second.relative_to(folder)}; hand in one of them")
    return found[0].parent if found else folder


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
