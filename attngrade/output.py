"""The write stage: results.json, grades.csv and reports, each written atomically."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from .lastrun import FILE as FOLDERS_FILE
from .lastrun import numbered
from .rawtext import UNENCODABLE, printable
from .records import Homework, Result


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Write via a temporary file in the same folder and rename: never a torn file.

    `text` may be an iterable of pieces, written as they come (never joined in memory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="", errors=UNENCODABLE) as handle:
            _put(handle, text)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; outputs are ordinary files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_new(path: Path, text: str | Iterable[str]) -> None:
    """Write a file that no one can be reading yet: one in a staged OUT (`runfolder.staged`), whose
    whole folder is switched in at the end. No temporary file and rename, which would cost a
    report two more file-system calls than it needs; its folder is made if it is not there."""
    try:
        handle = open(path, "x", encoding="utf-8", newline="", errors=UNENCODABLE)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "x", encoding="utf-8", newline="", errors=UNENCODABLE)
    with handle:
        _put(handle, text)


def _put(handle: Any, text: str | Iterable[str]) -> None:
    if isinstance(text, str):
        handle.write(text)
    else:
        handle.writelines(text)


_UMASK = os.umask(0)
os.umask(_UMASK)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

# The files a run writes at the top of OUT, beside the students' folders (and what a run reads
# back from there: see runfolder).
OUTPUT_FILES = frozenset({"results.json", "grades.csv", "index.html", "overrides.yaml", "overrides.new.yaml",
                          ".overrides.sha256", FOLDERS_FILE})


def folder_names(results: Sequence[Result], wanted: Sequence[str | None] | None = None,
                 held: Iterable[str] = ()) -> list[str]:
    """A safe folder name per result, unique even where a file system ignores case (student
    ids are untrusted text: 'a b', 'a_b' and 'a_b-2' must not share a folder, and so a report),
    and never the name of a file the run writes beside the folders (a student 'index.html').

    A result gets the folder it `wanted` (the one its submission had in the run before, see
    `lastrun`) if that is still free and one of the names its id gives: a newcomer 'Bob' sorted
    before 'bob' does not move bob's report to bob-2, away from the notes kept beside it (which
    would then sit beside Bob's report). `held`: folders nobody may have (a person's)."""
    taken = {name.lower() for name in (*OUTPUT_FILES, *held)}  # and names so far, lower-cased
    bases = [_folder_base(result.student) for result in results]
    names: list[str | None] = [None] * len(bases)
    for i, before in enumerate(wanted or ()):
        if before is not None and _gives(results[i].student, bases[i], before) and before.lower() not in taken:
            names[i] = before
            taken.add(before.lower())
    for i, base in enumerate(bases):
        if names[i] is not None:
            continue
        name, n = base, 1
        while name.lower() in taken:
            n += 1
            name = f"{base}-{n}"
        taken.add(name.lower())
        names[i] = name
    return names  # type: ignore[return-value]  # every slot is filled


def _folder_base(student: str) -> str:
    return (_UNSAFE.sub("_", student).strip("._") or "student")[:80]


def gives_folder(student: str, folder: str) -> bool:
    """Whether `folder` is one of the folders `folder_names` may give the id `student`."""
    return _gives(student, _folder_base(student), folder)


def _gives(student: str, base: str, folder: str) -> bool:
    """Whether `folder` is one the id `student` gives, or the id it was made from (`zoe` of
    `zoe-3`: a submission listed as zoe-3 when a namesake joined keeps its folder zoe)."""
    claim = numbered(student)
    return _of_base(folder, base) or (claim is not None and _of_base(folder, _folder_base(claim)))


def _of_base(folder: str, base: str) -> bool:
    """Whether `folder` is one of the names `folder_names` gives an id whose base is `base`."""
    suffix = folder[len(base) + 1:]
    return folder == base or (folder.startswith(base + "-") and 0 < len(suffix) <= 7 and suffix.isascii()
                              and suffix.isdigit() and suffix[0] != "0" and int(suffix) >= 2)


def results_json(results: Iterable[Result]) -> Iterator[str]:
    """A JSON array with one student's record per line, in pieces.

    One line a student keeps the file greppable and diffable, lets it be written as the
    records come (no string of the whole class in memory), and uses json's C encoder
    (an indented dump runs the pure-Python one: half of the write stage at 1,000 students)."""
    yield "["
    for i, result in enumerate(results):
        yield ("\n" if i == 0 else ",\n") + json.dumps(result.to_json(), ensure_ascii=False)
    yield "\n]\n"


def grades_csv(results: list[Result], homeworks: dict[str, Homework],
               roster: Mapping[str, Any] | None = None) -> Iterator[str]:
    """One row per student: id, one column per part, total (parts of every homework seen).

    With a roster (`lms.read_roster`), each row also has the student's name, email and SID.
    The rows come one at a time, to be written as they come (never the class as one string)."""
    # One homework: columns are part ids. Several: "homework:part", so that the 1b of one
    # homework never shares a column with the 1b of another.
    seen = list(dict.fromkeys(r.homework for r in results if r.homework in homeworks))
    prefix = len(seen) > 1
    columns: list[str] = []
    for hid in seen:
        columns.extend(f"{hid}:{p.id}" if prefix else p.id for p in homeworks[hid].parts)
    line = io.StringIO()
    writer = csv.writer(line)

    def row(cells: list[str]) -> str:
        line.seek(0)
        line.truncate()
        writer.writerow(cells)
        return line.getvalue()

    people = ["name", "email", "sid"] if roster is not None else []
    yield row(["student", *people, "homework", *columns, "total", "pending", "max_score", "error"])
    for result in results:
        scores = {(f"{result.homework}:{v.part}" if prefix else v.part): _score_cell(v) for v in result.parts}
        person = (roster or {}).get(result.student)
        yield row([
            spreadsheet_cell(result.student), *[spreadsheet_cell(getattr(person, c, "")) for c in people], spreadsheet_cell(result.homework or ""),
            *[scores.get(c, "") for c in columns],
            _number(result.score), _number(result.pending_points), _number(result.max_score),
            spreadsheet_cell(result.error or ""),
        ])


def _score_cell(v: Any) -> str:
    """A part's score; blank while all of its points wait for course staff (pending is not 0)."""
    return "" if v.waiting else _number(v.score)


def _number(x: float) -> str:
    """Two decimals at most, as people read scores (results.json keeps them exact)."""
    return f"{round(x, 2):g}"


def spreadsheet_cell(text: str) -> str:
    """`text`, defused if a spreadsheet could take it for a formula (see `_defused`), with what a
    terminal would act on shown as its escape (the CSV is printed, `cat grades.csv`)."""
    return printable(_defused(text))


def _defused(text: str) -> str:
    """`text`, or `'text` if it starts with a tab or CR, or its first visible character (after
    spaces, a BOM, zero-width and other invisible characters, which some programs skip) is
    = + - @ or a look-alike of one (full-width, small)."""
    if text[:1] in ("\t", "\r"):
        return "'" + text
    if text[:1].isascii() and text[:1].isalnum():
        return text  # most cells: an id, a homework
    for char in text:
        if unicodedata.category(char) in _INVISIBLE:
            continue
        return "'" + text if unicodedata.normalize("NFKC", char)[:1] in _FORMULA_STARTS else text
    return text


_FORMULA_STARTS = frozenset("=+-@")
_INVISIBLE = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp", "Mn"})  # controls, formats, spaces, separators, combining marks
