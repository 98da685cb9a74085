"""Class rosters and grade exports for learning-management systems.

A roster is the course's CSV of students: an id column (the id submissions carry:
`id`, `student`, `student_id`, `login` or `username`), and optionally `name`, `email`
and `sid`. `grade run --roster FILE` joins it into grades.csv; `grade export` turns a
run's results.json into the columns Canvas's and Gradescope's grade imports read.

Points still waiting for course staff are not in the exported score; the export says
how many students have some, so nobody uploads a total that looks final by mistake.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import ConfigError
from ..runtime.text import counted
from .tables import spreadsheet_cell

ID_COLUMNS = ("id", "student", "student_id", "login", "username")


@dataclass(frozen=True)
class Person:
    id: str
    name: str = ""
    email: str = ""
    sid: str = ""


def read_roster(path: Path) -> dict[str, Person]:
    """id -> Person from a roster CSV; every problem names the file and the line."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # a spreadsheet's BOM is not part of the header
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"--roster {path}: cannot be read ({err})") from None
    reader = csv.DictReader(io.StringIO(text))
    header = {(name or "").strip().lower(): name for name in reader.fieldnames or ()}
    id_column = next((header[c] for c in ID_COLUMNS if c in header), None)
    if id_column is None:
        raise ConfigError(f"--roster {path}:1: no student id column; name one of: {', '.join(ID_COLUMNS)} "
                          f"(the header is: {', '.join(reader.fieldnames or ()) or 'empty'})")
    column = {key: header.get(key) for key in ("name", "email", "sid")}
    people: dict[str, Person] = {}
    for row in reader:
        line = reader.line_num  # the row's last line: quoted fields may span lines
        if not any((value or "").strip() for value in row.values() if isinstance(value, str)):
            continue  # a spreadsheet's empty row (",,,")
        sid = (row.get(id_column) or "").strip()
        if not sid:
            raise ConfigError(f"--roster {path}:{line}: no student id in this row")
        if sid in people:
            raise ConfigError(f"--roster {path}:{line}: student id {sid!r} is listed twice")
        people[sid] = Person(sid, *((row.get(column[k]) or "").strip() if column[k] else "" for k in
                                    ("name", "email", "sid")))
    return people


def unmatched(students: Iterable[str], roster: Mapping[str, Person]) -> list[str]:
    """Messages for submissions nobody on the roster made, and roster students with none."""
    graded = set(students)
    said = []
    strangers = sorted(graded - set(roster))
    if strangers:
        said.append(f"not on the roster ({len(strangers)}): {', '.join(strangers[:10])}"
                    f"{' ...' if len(strangers) > 10 else ''}")
    absent = sorted(set(roster) - graded)
    if absent:
        said.append(f"on the roster without a submission ({len(absent)}): {', '.join(absent[:10])}"
                    f"{' ...' if len(absent) > 10 else ''}")
    return said


FORMATS = ("canvas", "gradescope")


def export(results: list[Mapping[str, Any]], roster: Mapping[str, Person], fmt: str,
           assignment: str | None = None, homework: str | None = None) -> tuple[str, list[str]]:
    """(CSV text, messages) of `results` (results.json's objects) in an LMS's import format: one
    homework's scores (`homework`, or the only one the results hold), and the rows that name none
    (submissions that could not be read), blank."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt}: use one of {', '.join(FORMATS)}")
    graded = sorted({r["homework"] for r in results if r.get("homework") and not r.get("error")})
    # A homework no submission names is a typo, unless nothing was graded (then every row is blank).
    named = {r["homework"] for r in results if r.get("homework")}  # every submission of it may have failed
    if homework is not None and homework not in named and graded:
        raise ConfigError(f"--homework {homework}: this run graded {', '.join(graded) or 'no homework'}")
    homework = homework or _only_homework(graded)
    # A submission that could not be graded for another homework this run graded is that one's;
    # one that names no homework graded here (or none) is in every export, blank.
    results = [r for r in results
               if r.get("homework") == homework or r.get("error") and r.get("homework") not in graded]
    name = assignment or homework
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    if fmt == "canvas":
        # Canvas's gradebook import: these five columns first, then one per assignment.
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", name])
        writer.writerow(["Points Possible", "", "", "", "", _points(_max(results))])
    else:
        # Gradescope's score import matches students by email or SID.
        writer.writerow(["Name", "SID", "Email", "Total Score"])
    for result in results:
        person = roster.get(result["student"], Person(result["student"]))
        score = "" if result.get("error") else _points(result.get("score", 0))
        # Student ids come from the submissions: a cell must never start a spreadsheet formula.
        if fmt == "canvas":
            writer.writerow([spreadsheet_cell(person.name or person.id), "", spreadsheet_cell(person.sid),
                             spreadsheet_cell(person.id), "", score])
        else:
            writer.writerow([spreadsheet_cell(person.name or person.id), spreadsheet_cell(person.sid),
                             spreadsheet_cell(person.email), score])
    if fmt == "gradescope" and not roster:
        said_first = ["no --roster: the export has no SID or email, which Gradescope matches students by"]
    elif fmt == "gradescope" and not any(p.sid or p.email for p in roster.values()):
        said_first = ["the roster has no sid or email column: the export has neither, and Gradescope matches "
                      "students by one of them"]
    else:
        said_first = []
    pending_students = [r["student"] for r in results if r.get("pending_points")]
    said = unmatched([r["student"] for r in results], roster) if roster else []
    if pending_students:
        said.append(f"{counted(len(pending_students), 'student')} {'has' if len(pending_students) == 1 else 'have'} points still to be graded by course staff; their exported "
                    "scores are what is decided so far (rerun grade export after the overrides)")
    failed = [r["student"] for r in results if r.get("error")]
    if failed:
        said.append(f"{counted(len(failed), 'submission')} could not be graded; their score is left blank: "
                    f"{', '.join(failed[:10])}")
    return buffer.getvalue(), [f"{counted(len(results), 'student')}, {name}", *said_first, *said]


def _only_homework(homeworks: list[str]) -> str:
    """The one homework the run graded: an assignment column holds one homework's scores."""
    if not homeworks:
        raise ConfigError("no submission of this run could be graded; name the homework to export with "
                          "--homework ID (its rows are exported blank)")
    if len(homeworks) != 1:
        raise ConfigError("these results hold several homeworks "
                          f"({', '.join(homeworks) or 'none'}), and one column holds one homework's scores; "
                          "name the one to export with --homework ID (once per homework)")
    return homeworks[0]


def _max(results: list[Mapping[str, Any]]) -> float:
    return max((r.get("max_score") or 0 for r in results), default=0)


def _points(value: float) -> str:
    return f"{round(float(value), 2):g}"
