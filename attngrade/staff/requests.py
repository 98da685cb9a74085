"""Regrade requests: a student asks staff to look at one part again (an LMS form, a Gradescope export).

`grade review OUT --requests FILE` takes a CSV or YAML of student, part and message into the store,
all of them or none, once each however often the file is imported. The app shows each part's queue
(the request, the answer, its grade and the grade's history); staff answer with a change of grade,
a reply, or both. `grade run` puts the reply in the student's report (`apply`), the audit log keeps
it, and `grade export` lists the answered requests.
"""

from __future__ import annotations

import csv
import io
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from ..errors import ConfigError
from ..runtime.safe_yaml import SAFE_LOADER, not_yaml
from ..runtime.text import counted
from .grades import Change, changed_in, finite
from .inputs import read_text
from .store import Conflict, audit, now, reading, writing

MESSAGE_CHARS = 10_000
REPLY_CHARS = 10_000
# The names an LMS gives the three columns (compared without case, spaces or punctuation).
STUDENT = ("student", "studentid", "sid", "id", "login", "username", "user", "email", "submitter")
PART = ("part", "question", "questionnumber", "questiontitle", "problem", "item")
MESSAGE = ("message", "request", "regraderequest", "studentcomment", "comment", "reason", "text", "body")


@dataclass(frozen=True)
class Request:
    id: int
    homework: str
    part: str
    student: str
    message: str
    fp: str | None
    received: str
    source: str
    reply: str
    version: int
    who: str | None
    at: str | None

    @property
    def answered(self) -> bool:
        return bool(self.reply) or self.who is not None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "homework": self.homework, "part": self.part, "student": self.student,
                "message": self.message, "received": self.received, "reply": self.reply, "version": self.version,
                "by": self.who, "at": self.at, "answered": self.answered}


def _key(name: Any) -> str:
    return "".join(c for c in str(name).casefold() if c.isalnum())


def read_requests(path: Path) -> list[tuple[int, dict[str, str]]]:
    """(line, {student, part, message}) for each request of a CSV or YAML file; ConfigError naming every
    row that lacks one of the three."""
    text = read_text(path, "list of regrade requests")
    rows = _yaml_rows(path, text) if path.suffix.lower() in (".yaml", ".yml") else _csv_rows(path, text)
    found, wrong = [], []
    for line, row in rows:
        keyed = {_key(k): v for k, v in row.items() if k is not None}
        picked = {name: next((str(keyed[a]).strip() for a in aliases if keyed.get(a) not in (None, "")), "")
                  for name, aliases in (("student", STUDENT), ("part", PART), ("message", MESSAGE))}
        missing = [name for name, value in picked.items() if not value]
        if missing:
            wrong.append(f"{path}, line {line}: no {' or '.join(missing)}")
        else:
            found.append((line, {**picked, "message": picked["message"][:MESSAGE_CHARS]}))
    if wrong:
        raise ConfigError("; ".join(wrong[:20]) + ("; ..." if len(wrong) > 20 else "") +
                          "; each request names the student, the part and the message (columns student, part, "
                          "message, or an LMS's names for them); nothing was imported")
    return found


def _csv_rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        return [(reader.line_num, row) for row in reader]
    except csv.Error as err:
        raise ConfigError(f"{path}: not a CSV file ({err}); save the requests as CSV or YAML") from None


def _yaml_rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    try:
        data = yaml.load(text, Loader=SAFE_LOADER)  # noqa: S506 - the safe loader
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: {not_yaml(err)}") from None
    if isinstance(data, dict):
        data = data.get("requests")
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise ConfigError(f"{path}: expected a list of requests, each with student, part and message")
    return [(i + 1, row) for i, row in enumerate(data)]


def part_named(given: str, parts: Iterable[str]) -> str | None:
    """The part id a request names: the id itself, HOMEWORK:ID, or an LMS's question title starting with
    the id ("1a: Attention", "Question 1a")."""
    known = sorted(set(parts), key=len, reverse=True)
    text = given.strip()
    for candidate in (text, text.rpartition(":")[2].strip() if ":" in text and " " not in text else None):
        if candidate in known:
            return candidate
    words = text.replace(":", " ").replace(".", ". ").split()
    for word in words[:3]:
        word = word.rstrip(".)")
        if word in known:
            return word
    return next((p for p in known if text.startswith(p + " ") or text.startswith(p + ":")), None)


def import_requests(conn: sqlite3.Connection, path: Path, answers: Mapping[tuple[str, str], tuple[str, str | None]],
                    who: str) -> list[str]:
    """Take the requests of `path` into the store, all or none; `answers`: (student, part) -> (homework,
    fingerprint of their answer) for every part the run graded. A request already there is not added again."""
    rows = read_requests(path)
    by_student: dict[str, list[str]] = {}
    for student, part in answers:
        by_student.setdefault(student, []).append(part)
    wrong, new = [], []
    for line, row in rows:
        if row["student"] not in by_student:
            wrong.append(f"line {line}: no student {row['student']!r} in this run")
            continue
        part = part_named(row["part"], by_student[row["student"]])
        if part is None:
            wrong.append(f"line {line}: {row['student']} has no part {row['part']!r} in this run")
            continue
        homework, fp = answers[(row["student"], part)]
        new.append((homework, part, row["student"], row["message"], fp))
    if wrong:
        raise ConfigError(f"{path}: " + "; ".join(wrong[:20]) + ("; ..." if len(wrong) > 20 else "") +
                          "; nothing was imported: put the ids and parts right (as grades.csv names them)")
    taken = 0
    with writing(conn):
        for homework, part, student, message, fp in new:
            cur = conn.execute("INSERT OR IGNORE INTO requests(homework, part, student, message, fp, received, source) "
                               "VALUES (?,?,?,?,?,?,?)", (homework, part, student, message, fp, now(), str(path)))
            if cur.rowcount:
                taken += 1
                audit(conn, who, "regrade request", (homework, part), f"student:{student}", None, message)
    again = len(new) - taken
    return [f"{path}: imported {counted(taken, 'regrade request')}" +
            (f"; {counted(again, 'request')} already there" if again else "")]


def _request(row: sqlite3.Row) -> Request:
    return Request(row["id"], row["homework"], row["part"], row["student"], row["message"], row["fp"],
                   row["received"], row["source"], row["reply"], row["version"], row["who"], row["at"])


def requests_of(conn: sqlite3.Connection, homework: str | None = None, part: str | None = None) -> list[Request]:
    query, args = "SELECT * FROM requests", ()
    if homework is not None:
        query, args = query + " WHERE homework = ? AND part = ?", (homework, part)
    return [_request(r) for r in conn.execute(query + " ORDER BY id", args)]


def request(conn: sqlite3.Connection, rid: int) -> Request | None:
    row = conn.execute("SELECT * FROM requests WHERE id = ?", (rid,)).fetchone()
    return _request(row) if row is not None else None


def reply(conn: sqlite3.Connection, rid: int, text: str, expected: int | None, who: str) -> Request:
    """Answer request `rid` with `text` (the student reads it in their report); Conflict if it was
    answered meanwhile (`expected`: the version seen)."""
    text = str(text)[:REPLY_CHARS]
    with writing(conn):
        before = request(conn, rid)
        if before is None:
            raise Conflict(f"no regrade request {rid}")
        if expected is not None and expected != before.version:
            raise Conflict(f"the request was answered meanwhile by {before.who}", before.to_json())
        conn.execute("UPDATE requests SET reply = ?, version = version + 1, who = ?, at = ? WHERE id = ?",
                     (text, who, now(), rid))
        audit(conn, who, "regrade reply", (before.homework, before.part), f"student:{before.student}",
              before.reply or None, text)
        found = request(conn, rid)
    assert found is not None
    return found


def regrade(conn: sqlite3.Connection, where: tuple[str, str], student: str, fp: str,
            grade: tuple[tuple[int, ...], float, int], who: str) -> None:
    """Grade one student's answer `fp` on their own (a regrade changes no one else's grade): rubric
    items and an adjustment, from the page that saw their own grade at version `grade[2]`."""
    items, adjust, expected = grade
    key = f"student:{student}"
    points = finite(adjust, "the adjustment")
    with writing(conn):
        changed_in(conn, where, {key: fp}, Change("set_items", items=tuple(items), expected={key: expected}), who)
        changed_in(conn, where, {key: fp}, Change("adjust", value=points), who)


def answered_in(path: Path, homework: str) -> list[Request]:
    """The answered requests of `homework` in the store at `path`, read without writing to OUT."""
    with reading(path) as conn:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'requests'").fetchone() is None:
            return []  # a store older than regrade requests
        return [r for r in requests_of(conn) if r.homework == homework and r.answered]


def requested(conn: sqlite3.Connection) -> set[tuple[str, str, str]]:
    """(homework, student, part) of every request: their answers are in the snapshot for staff."""
    return {(r["homework"], r["student"], r["part"]) for r in conn.execute("SELECT homework, student, part FROM "
                                                                           "requests")}
