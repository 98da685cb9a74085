"""The write stage: results.json, grades.csv and reports, each written atomically."""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from typing import Any, Iterable, Iterator, Mapping

from ..records import Homework, Result, Status, Verdict
from ..runtime.outfiles import FOLDERS_FILE as FOLDERS_FILE
from ..runtime.text import printable


def results_json(results: Iterable[Result],
                 group_of: Mapping[tuple[str, str, str], str] | None = None) -> Iterator[str]:
    """A JSON array with one student's record per line, in pieces. `group_of`: (homework, student,
    part) -> the part's answer group (the `group` of overrides.yaml), written as the part's `group`.

    One line a student keeps the file greppable and diffable, lets it be written as the
    records come (no string of the whole class in memory), and uses json's C encoder
    (an indented dump runs the pure-Python one, much the slower)."""
    yield "["
    for i, result in enumerate(results):
        record = result.to_json()
        if group_of:
            for part in record.get("parts") or ():
                gid = group_of.get((result.homework or "", result.student, part.get("id")))
                if gid is not None:
                    part["group"] = gid
        yield ("\n" if i == 0 else ",\n") + json.dumps(record, ensure_ascii=False)
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
            spreadsheet_cell(result.student), *[spreadsheet_cell(getattr(person, c, "")) for c in people],
            spreadsheet_cell(result.homework or ""),
            *[scores.get(c, "") for c in columns],
            _number(result.score), _number(result.pending_points), _number(result.max_score),
            spreadsheet_cell(result.error or ""),
        ])


def _score_cell(v: Verdict) -> str:
    """A part's score; blank while all of its points wait for course staff (pending is not 0), and said
    to be partly pending where the points of a field the machine could not read still wait."""
    if v.is_pending:
        return ""
    return f"{_number(v.score)} (partly pending)" if v.status == Status.PARTLY_PENDING else _number(v.score)


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
