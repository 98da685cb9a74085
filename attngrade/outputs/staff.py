"""Staff grades: the SQLite store in OUT that `grade review` writes, and applying it to a run's results.

The store (`OUT/staff.sqlite`, WAL) keys every grade by part and by the answer's fingerprint (its
readings, text normalized for case, spacing, punctuation and LaTeX spacing), so a rerun of
`grade run` keeps each grade whose answer did not change, gives it to a newcomer who wrote the
same answer, and leaves a changed answer ungraded, marked "needs another look". A grade is a set
of rubric items (points ±, text) plus an adjustment and a comment: the points come from the items
each time they are read, so changing an item's points regrades everyone graded with it.

Every write is one transaction (`BEGIN IMMEDIATE`) that bumps a row's `version` and adds what it
changed to the audit log (who, when, before, after); a comment or an adjustment written from a
stale page is refused (`Conflict`), so two people grading at once lose nothing. Connections are
opened per use and never create the file behind a caller's back: a run switching OUT in moves the
file, and each write is checkpointed, so the file alone always holds every committed grade.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import time
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import yaml

from ..errors import ConfigError
from ..records import STAFF_GRADED, STAFF_MARK, WAITING, Homework, Result, Status, Verdict
from ..runtime.text import counted
from .history import Renamed

STORE = "staff.sqlite"  # the store's name in OUT
MARK = STAFF_MARK  # every feedback line `apply` adds starts with this
KEYED_WAITING = STAFF_GRADED  # WAITING as answers' fingerprints have always held it
SCHEMA = 1

_TABLES = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS parts(homework TEXT, part TEXT, kinds TEXT NOT NULL, written REAL NOT NULL,
    max REAL NOT NULL, statement TEXT NOT NULL DEFAULT '', PRIMARY KEY(homework, part));
CREATE TABLE IF NOT EXISTS answers(homework TEXT, part TEXT, student TEXT, fp TEXT NOT NULL, answer TEXT NOT NULL,
    status TEXT NOT NULL, machine REAL NOT NULL, cap REAL NOT NULL, max REAL NOT NULL, vgroup TEXT,
    graded_fp TEXT, PRIMARY KEY(homework, part, student));
CREATE TABLE IF NOT EXISTS grades(homework TEXT, part TEXT, key TEXT, fp TEXT, items TEXT NOT NULL DEFAULT '[]',
    adjust REAL NOT NULL DEFAULT 0, comment TEXT NOT NULL DEFAULT '', graded INTEGER NOT NULL DEFAULT 0,
    version INTEGER NOT NULL DEFAULT 0, who TEXT, at TEXT, PRIMARY KEY(homework, part, key));
CREATE TABLE IF NOT EXISTS rubric(id INTEGER PRIMARY KEY AUTOINCREMENT, homework TEXT NOT NULL, part TEXT NOT NULL,
    points REAL NOT NULL, text TEXT NOT NULL, position INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0,
    version INTEGER NOT NULL DEFAULT 1);
CREATE TABLE IF NOT EXISTS comments(homework TEXT, part TEXT, student TEXT, comment TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 1, who TEXT, at TEXT, PRIMARY KEY(homework, part, student));
CREATE TABLE IF NOT EXISTS placements(homework TEXT, part TEXT, key TEXT, label TEXT NOT NULL, fp TEXT,
    PRIMARY KEY(homework, part, key));
CREATE TABLE IF NOT EXISTS settings(homework TEXT, part TEXT, name TEXT, value TEXT NOT NULL,
    PRIMARY KEY(homework, part, name));
CREATE TABLE IF NOT EXISTS audit(id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, who TEXT NOT NULL,
    action TEXT NOT NULL, homework TEXT, part TEXT, target TEXT, before TEXT, after TEXT);
CREATE INDEX IF NOT EXISTS answers_fp ON answers(homework, part, fp);
"""


class Conflict(Exception):
    """A write made from a stale view: someone changed the row since it was read."""

    def __init__(self, message: str, current: Any = None):
        super().__init__(message)
        self.current = current


# ---------------------------------------------------------------- connections


def open_store(path: Path, create: bool = False) -> sqlite3.Connection:
    """A connection to the store at `path`; the file is made (with its tables) only when `create`."""
    path = Path(path)
    mode = "rwc" if create else "rw"
    try:
        conn = sqlite3.connect(f"file:{_quoted(path.absolute())}?mode={mode}", uri=True, timeout=10.0,
                               isolation_level=None, check_same_thread=False)
    except sqlite3.OperationalError as err:
        raise ConfigError(f"{path}: cannot open the staff store ({err})") from None
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 10000")
    if create:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.executescript(_TABLES)
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA),))
    return conn


def _quoted(path: Path) -> str:
    return str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")


@contextmanager
def store(path: Path, create: bool = False) -> Iterator[sqlite3.Connection]:
    conn = open_store(path, create)
    try:
        yield conn
    finally:
        conn.close()


@contextmanager
def writing(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken at once (so two writers queue instead of failing halfway)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    # The file alone then holds every committed grade: a run that moves OUT's files one by one
    # can never part the store from a write-ahead log that still holds some of them.
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def audit(conn: sqlite3.Connection, who: str, action: str, where: tuple[str, str], target: str,
          before: Any, after: Any) -> None:
    conn.execute("INSERT INTO audit(at, who, action, homework, part, target, before, after) VALUES (?,?,?,?,?,?,?,?)",
                 (now(), who, action, where[0], where[1], target, _dumps(before), _dumps(after)))


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


# ---------------------------------------------------------------- answers and fingerprints

_LATEX_SPACE = re.compile(r"\\(?:[,;:! ]|quad|qquad|thinspace|medspace|thickspace|enspace)|~")
_PUNCTUATION = re.compile(r"[.,;:!?\"'`\u2018\u2019\u201c\u201d]+")
_DOLLARS = re.compile(r"\$+")


def normalized(text: str) -> str:
    """Free text as staff compare it: case, spacing, sentence punctuation and LaTeX spacing do not count."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _DOLLARS.sub(" ", _LATEX_SPACE.sub(" ", text))
    text = _PUNCTUATION.sub(" ", text)
    return " ".join(text.split())


def fingerprint(readings: Mapping[str, str], said: Iterable[str] = ()) -> str:
    """An answer's key in the store: its readings up to spacing (LaTeX spacing and $ too), and `said`,
    what the checks said of it (two different typos are two answers). Case and punctuation count here
    (`K` and `k` are two matrices); answers that differ only by them share a group all the same."""
    pieces = {name: _spaced(str(value)) for name, value in readings.items()}
    body = json.dumps([sorted(pieces.items()), list(said)], ensure_ascii=False)
    return hashlib.sha256(body.encode()).hexdigest()[:24]


def _spaced(text: str) -> str:
    return " ".join(_DOLLARS.sub(" ", _LATEX_SPACE.sub(" ", unicodedata.normalize("NFKC", text))).split())


@dataclass(frozen=True)
class Answer:
    """One student's answer to one part waiting for (or decided by) staff, as the machine left it."""

    homework: str
    part: str
    student: str
    fp: str
    answer: Mapping[str, str]  # field -> how it was read
    status: str
    machine: float  # the points the machine gave
    cap: float  # the points staff decide: what waits, or what an unreadable answer did not get
    max: float
    vgroup: str | None = None  # its exact-value answer group (grading/groups.py), where known
    decided: bool = False  # read from results a run wrote with staff grades applied: its machine values are not here


def answer_of(homework: str, student: str, part: Mapping[str, Any], vgroup: str | None = None) -> Answer | None:
    """The Answer of one part of results.json (or `Verdict.to_json()`), if staff have something to decide."""
    said = list(part.get("feedback", ()))
    decided = any(line.startswith(MARK) for line in said)  # graded by staff in the run that wrote it
    # What the machine said: replaced by staff's lines in a decided part, and kept as `overruled`.
    feedback = [line for line in list(part.get("overruled") or ()) + said if not line.startswith(MARK)]
    pending = float(part.get("pending_points") or 0.0)
    status, score, top = str(part.get("status", "")), float(part.get("score") or 0.0), float(part.get("max_score") or 0.0)
    if decided:
        cap = 0.0  # its machine values are in the store's snapshot, recorded before the grades were applied
    elif pending > 1e-9:
        cap = pending
    elif status == "invalid" and top - score > 1e-9:
        cap = top - score
    else:
        return None
    readings = {str(k): str(v) for k, v in (part.get("readings") or {}).items()}
    shown = dict(readings)
    if status == "invalid" or not readings:
        shown["(attngrade said)"] = " / ".join(feedback)  # all there is of an unreadable answer in results.json
    # What the checks said is part of the answer's key: the same answer always gets the same words,
    # and they are all that tells two unreadable answers apart (results.json keeps no raw text).
    # The line saying a written answer waits is keyed as it was first worded: the grades of a store
    # made then still find their answers.
    said_of_it = [KEYED_WAITING if line == WAITING else line for line in feedback]
    return Answer(homework, str(part["id"]), student, fingerprint(readings, said_of_it), shown, status,
                  score, round(cap, 6), top, vgroup, decided)


# What the store keys by student, and how: (table, column, prefix of the id in it).
_BY_STUDENT = (("answers", "student", ""), ("grades", "key", "student:"), ("placements", "key", "student:"))


def carry(conn: sqlite3.Connection, renamed: Mapping[str, Renamed]) -> None:
    """Move what the store keeps under a renamed student's id (`history.renamed`) to the new id: their
    answers, their own grades, and their comments on the answers that did not change. A grade holds only
    for the answer it was given for, so a changed answer then needs another look, as anyone's would;
    a comment on a changed answer is removed (the audit log keeps it)."""
    if not renamed:
        return
    # Through a temporary id first: two students may have traded ids.
    moves = [(r.before, "\x00" + r.now) for r in renamed.values()] + [("\x00" + r.now, r.now) for r in renamed.values()]
    with writing(conn):
        for r in renamed.values():
            for row in conn.execute("SELECT homework, part, comment FROM comments WHERE student = ?", (r.before,)):
                if row["part"] not in r.same:
                    audit(conn, "grade run", "student comment", (row["homework"], row["part"]), f"student:{r.before}",
                          row["comment"], None)
            conn.execute(f"DELETE FROM comments WHERE student = ? AND part NOT IN ({','.join('?' * len(r.same))})",
                         (r.before, *r.same))
        for source, target in moves:
            for table, column, prefix in (*_BY_STUDENT, ("comments", "student", "")):
                conn.execute(f"UPDATE OR REPLACE {table} SET {column} = ? WHERE {column} = ?",
                             (prefix + target, prefix + source))
        for r in renamed.values():
            audit(conn, "grade run", "renamed", ("", ""), f"student:{r.before}", r.before, r.now)


def decided_in(part: Mapping[str, Any]) -> bool:
    return any(line.startswith(MARK) for line in part.get("feedback", ()))


def written_points(homework: Homework | None, part_id: str) -> float:
    part = homework.part(part_id) if homework is not None else None
    return sum(c.points for c in part.checks if c.check == "manual") if part is not None else 0.0


# ---------------------------------------------------------------- the snapshot of a run


def digest(answers: Iterable[Answer]) -> str:
    """What tells one run's staff answers from another's (same students, parts and answers)."""
    h = hashlib.sha256()
    for key in sorted(f"{a.homework}\x00{a.part}\x00{a.student}\x00{a.fp}" for a in answers):
        h.update(key.encode())
        h.update(b"\n")
    return h.hexdigest()


def record(conn: sqlite3.Connection, answers: list[Answer],
           parts: Iterable[tuple[str, str, dict, float, float, str]]) -> None:
    """Make the store's snapshot this run's: every answer staff decide, with what the machine gave
    it. A student's `graded_fp` (the answer their grade was given for) stays, so a changed answer
    shows as needing another look; an answer the run's results show as decided by staff keeps its row."""
    keep = [(a.homework, a.part, a.student) for a in answers if a.decided]
    whole = digest(answers)
    answers = [a for a in answers if not a.decided]
    with writing(conn):
        describe(conn, parts)
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS seen(homework TEXT, part TEXT, student TEXT)")
        conn.execute("DELETE FROM seen")
        conn.executemany("INSERT INTO seen VALUES (?,?,?)",
                         [(a.homework, a.part, a.student) for a in answers] + list(keep))
        conn.execute("DELETE FROM answers WHERE (homework, part, student) NOT IN (SELECT homework, part, student "
                     "FROM seen)")
        conn.executemany(
            "INSERT INTO answers VALUES (?,?,?,?,?,?,?,?,?,?,NULL) ON CONFLICT(homework, part, student) DO UPDATE "
            "SET fp=excluded.fp, answer=excluded.answer, status=excluded.status, machine=excluded.machine, "
            "cap=excluded.cap, max=excluded.max, vgroup=excluded.vgroup",
            [(a.homework, a.part, a.student, a.fp, json.dumps(dict(a.answer), ensure_ascii=False), a.status,
              a.machine, a.cap, a.max, a.vgroup) for a in answers])
        conn.execute("INSERT INTO meta VALUES ('digest', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                     (whole,))
        # A student whose current answer has a grade counts as graded for it (a newcomer with a graded answer).
        conn.execute("UPDATE answers SET graded_fp = fp WHERE EXISTS (SELECT 1 FROM grades g WHERE g.graded = 1 AND "
                     "g.homework = answers.homework AND g.part = answers.part AND (g.key = answers.fp OR "
                     "(g.key = 'student:' || answers.student AND g.fp = answers.fp)))")


def describe(conn: sqlite3.Connection, parts: Iterable[tuple[str, str, dict, float, float, str]]) -> None:
    """Keep what is known of each part (its fields' kinds, written points); a part whose homework could
    not be loaded this time keeps what an earlier look knew."""
    for hw, part, kinds, written, top, statement in parts:
        conn.execute("INSERT INTO parts VALUES (?,?,?,?,?,?) ON CONFLICT(homework, part) DO UPDATE SET "
                     "kinds=excluded.kinds, written=excluded.written, max=excluded.max, statement=excluded.statement "
                     "WHERE excluded.kinds != '{}' OR parts.kinds = '{}'",
                     (hw, part, json.dumps(kinds), written, top, statement))


def snapshot_digest(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'digest'").fetchone()
    return row[0] if row else None


# ---------------------------------------------------------------- reading grades


@dataclass
class Grade:
    """A staff grade of one answer (key: its fingerprint) or of one student's answer (key: student:ID)."""

    key: str
    fp: str | None = None
    items: list[int] = field(default_factory=list)
    adjust: float = 0.0
    comment: str = ""
    graded: bool = False
    version: int = 0
    who: str | None = None
    at: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"items": list(self.items), "adjust": self.adjust, "comment": self.comment, "graded": self.graded,
                "version": self.version, "by": self.who, "at": self.at}


def _grade(row: sqlite3.Row) -> Grade:
    return Grade(row["key"], row["fp"], json.loads(row["items"]), row["adjust"], row["comment"], bool(row["graded"]),
                 row["version"], row["who"], row["at"])


def grades_of(conn: sqlite3.Connection, homework: str, part: str) -> dict[str, Grade]:
    rows = conn.execute("SELECT * FROM grades WHERE homework = ? AND part = ?", (homework, part))
    return {row["key"]: _grade(row) for row in rows}


@dataclass(frozen=True)
class Item:
    id: int
    points: float
    text: str
    position: int
    version: int = 1

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "points": self.points, "text": self.text, "position": self.position,
                "version": self.version}


def rubric_of(conn: sqlite3.Connection, homework: str, part: str) -> list[Item]:
    rows = conn.execute("SELECT * FROM rubric WHERE homework = ? AND part = ? AND deleted = 0 ORDER BY position, id",
                        (homework, part))
    return [Item(r["id"], r["points"], r["text"], r["position"], r["version"]) for r in rows]


def staff_points(grade: Grade, rubric: Mapping[int, Item], cap: float) -> float:
    """A grade's points: its items (read now, so an item's new points count) and adjustment, within 0..cap."""
    total = sum(rubric[i].points for i in grade.items if i in rubric) + grade.adjust
    return round(min(max(total, 0.0), cap), 6)


def effective(grades: Mapping[str, Grade], student: str, fp: str) -> Grade | None:
    """The grade that holds for a student's current answer: their own (for this very answer), else the answer's."""
    own = grades.get(f"student:{student}")
    if own is not None and own.fp == fp:
        return own if own.graded else None
    shared = grades.get(fp)
    return shared if shared is not None and shared.graded else None


def student_comments(conn: sqlite3.Connection, homework: str, part: str) -> dict[str, tuple[str, int]]:
    rows = conn.execute("SELECT student, comment, version FROM comments WHERE homework = ? AND part = ?",
                        (homework, part))
    return {r["student"]: (r["comment"], r["version"]) for r in rows}


def answers_of(conn: sqlite3.Connection, homework: str | None = None, part: str | None = None) -> list[sqlite3.Row]:
    query, args = "SELECT * FROM answers", []
    if homework is not None:
        query += " WHERE homework = ? AND part = ?"
        args = [homework, part]
    return conn.execute(query + " ORDER BY homework, part, student", args).fetchall()


def parts_of(conn: sqlite3.Connection) -> dict[tuple[str, str], sqlite3.Row]:
    return {(r["homework"], r["part"]): r for r in conn.execute("SELECT * FROM parts")}


# ---------------------------------------------------------------- applying grades to results


@dataclass
class Decided:
    """What staff decided for one student's part."""

    points: float
    cap: float
    lines: tuple[str, ...]


def decisions(conn: sqlite3.Connection) -> tuple[dict[tuple[str, str, str], Decided], list[tuple[str, str, str]]]:
    """(homework, student, part) -> what staff decided; and the answers that need another look."""
    decided: dict[tuple[str, str, str], Decided] = {}
    again: list[tuple[str, str, str]] = []
    for (hw, part), _ in parts_of(conn).items():
        grades, items = grades_of(conn, hw, part), {i.id: i for i in rubric_of(conn, hw, part)}
        comments = student_comments(conn, hw, part)
        for row in answers_of(conn, hw, part):
            grade = effective(grades, row["student"], row["fp"])
            if grade is None:
                if row["graded_fp"] is not None and row["graded_fp"] != row["fp"]:
                    again.append((hw, row["student"], part))
                continue
            points = staff_points(grade, items, row["cap"])
            comment = comments.get(row["student"], ("", 0))[0]
            decided[(hw, row["student"], part)] = Decided(points, row["cap"], _lines(grade, items, points, row,
                                                                                     comment))
    return decided, again


def _lines(grade: Grade, items: Mapping[int, Item], points: float, row: sqlite3.Row, comment: str) -> tuple[str, ...]:
    lines = [f"{MARK}{points:g} of {counted(row['cap'], 'point')}"]
    lines += [f"{MARK}{items[i].points:+g} {items[i].text}" for i in grade.items if i in items]
    if grade.adjust:
        lines.append(f"{MARK}{grade.adjust:+g} adjustment")
    lines += [f"{MARK}{text}" for text in (grade.comment, comment) if text]
    return tuple(lines)


def decide(verdict: Verdict, decided: Decided) -> Verdict:
    """A verdict with its staff points added: nothing waits any more, and the student reads why.

    Where staff decided the whole part (an answer the machine could not read, or one that is all
    written), what the machine said is replaced (kept apart, as `overruled`); else it stays, for the
    points the machine gave, without the line saying the answer waits."""
    score = round(min(verdict.max_score, verdict.score + decided.points), 6)
    status = Status.CORRECT if score >= verdict.max_score - 1e-9 else Status.INCORRECT if score <= 1e-9 \
        else Status.PARTIAL
    points = replace(verdict.points, pending_points=0.0)
    if verdict.status == Status.INVALID or decided.cap >= verdict.max_score - 1e-9:
        return replace(verdict, score=score, status=status, feedback=decided.lines, overruled=verdict.feedback,
                       points=points)
    kept = tuple(line for line in verdict.feedback if line != WAITING)
    return replace(verdict, score=score, status=status, feedback=kept + decided.lines, points=points)


def collect(results: Iterable[Result], homeworks: Mapping[str, Homework] | None,
            groups: Mapping[str, Mapping[str, Iterable[Any]]] | None) -> list[Answer]:
    """The answers staff decide among `results` (each verdict with points waiting, or unreadable)."""
    vgroups = {(hw, member, g.part): g.id for hw, by_part in (groups or {}).items()
               for gs in by_part.values() for g in gs for member in g.members}
    found = []
    for result in results:
        if result.error or result.homework is None:
            continue
        for v in result.parts:
            if v.pending_points <= 1e-9 and v.status != Status.INVALID:
                continue
            answer = answer_of(result.homework, result.student, v.to_json(),
                               vgroups.get((result.homework, result.student, v.part)))
            if answer is not None:
                found.append(answer)
    return found


def part_rows(homeworks: Mapping[str, Homework] | None,
              answers: Iterable[Answer]) -> list[tuple[str, str, dict, float, float, str]]:
    """The parts table's rows for the parts of `answers` (what `record` keeps of each part)."""
    rows = {}
    for a in answers:
        if (a.homework, a.part) in rows:
            continue
        hw = (homeworks or {}).get(a.homework)
        p = hw.part(a.part) if hw is not None else None
        kinds = {f.name: f.kind for f in p.fields} if p is not None else {}
        rows[(a.homework, a.part)] = (a.homework, a.part, kinds, written_points(hw, a.part), a.max,
                                      p.statement if p is not None else "")
    return list(rows.values())


def apply(results: list[Result], groups: Mapping[str, Any] | None, store_path: Path,
          homeworks: Mapping[str, Homework] | None = None,
          renamed: Mapping[str, Renamed] | None = None) -> tuple[list[Result], list[str]]:
    """`results` with every staff grade in the store at `store_path` applied, and what to tell.

    Call it after grading (and after an overrides file, whose decisions win: a part they decided
    waits for no one), before the outputs are written; `groups`: the run's answer groups
    (`outputs.write.groups_of`), `homeworks`: the run's homeworks, `renamed`: students graded under
    a new id since the run before (`history.renamed`), whose grades go with them. Without a store, the results
    come back as they are. The store's snapshot becomes this run's, so `grade review` shows it."""
    path = Path(store_path)
    if not path.is_file():
        return results, []
    answers = collect(results, homeworks, groups)
    with store(path, create=True) as conn:
        carry(conn, renamed or {})
        record(conn, answers, part_rows(homeworks, answers))
        decided, again = decisions(conn)
    updated, count = [], 0
    for result in results:
        if not any((result.homework, result.student, v.part) in decided for v in result.parts):
            updated.append(result)
            continue
        parts = []
        for v in result.parts:
            d = decided.get((result.homework or "", result.student, v.part))
            parts.append(decide(v, d) if d is not None else v)
            count += d is not None
        updated.append(replace(result, parts=tuple(parts), score=round(sum(v.score for v in parts), 6)))
    waiting = len(answers) - count
    said = [f"{path}: applied the staff grades of {counted(count, 'answer')}; {waiting} still "
            f"{'waits' if waiting == 1 else 'wait'} for staff (grade review)"]
    if again:
        shown = ", ".join(f"{student} {part}" for _, student, part in again[:8])
        said.append(f"{path}: {counted(len(again), 'graded answer')} changed since grading and "
                    f"{'needs' if len(again) == 1 else 'need'} another look: "
                    f"{shown}{' ...' if len(again) > 8 else ''}")
    return updated, said


# ---------------------------------------------------------------- writes


def _row_grade(conn: sqlite3.Connection, where: tuple[str, str], key: str) -> Grade:
    row = conn.execute("SELECT * FROM grades WHERE homework = ? AND part = ? AND key = ?", (*where, key)).fetchone()
    return _grade(row) if row is not None else Grade(key)


def _put_grade(conn: sqlite3.Connection, where: tuple[str, str], grade: Grade, who: str) -> Grade:
    grade = replace(grade, version=grade.version + 1, who=who, at=now())
    conn.execute("INSERT INTO grades VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(homework, part, key) DO UPDATE SET "
                 "fp=excluded.fp, items=excluded.items, adjust=excluded.adjust, comment=excluded.comment, "
                 "graded=excluded.graded, version=excluded.version, who=excluded.who, at=excluded.at",
                 (*where, grade.key, grade.fp, json.dumps(grade.items), grade.adjust, grade.comment, int(grade.graded),
                  grade.version, grade.who, grade.at))
    return grade


OPS = ("add", "remove", "set_items", "confirm", "unconfirm", "adjust", "comment")


@dataclass(frozen=True)
class Change:
    """One grading action on some answers of a part: `op` (one of OPS) with its value; `expected`:
    each key's version as the person saw it (required for `adjust` and `comment`, which replace)."""

    op: str
    item: int | None = None
    items: tuple[int, ...] = ()
    value: Any = None
    expected: Mapping[str, int] | None = None


def change(conn: sqlite3.Connection, where: tuple[str, str], keys: Mapping[str, str | None], what: Change,
           who: str) -> dict[str, Grade]:
    """Apply `what` to the grade of each key (an answer fingerprint, or student:ID -> its fingerprint),
    in one transaction; every key's students count as graded for their answer. Raises Conflict if a
    replacing change was made from a stale view, and changes nothing then."""
    if what.op not in OPS:
        raise ValueError(f"unknown change {what.op!r}")
    with writing(conn):
        done = {}
        for key, fp in keys.items():
            before = _row_grade(conn, where, key)
            if what.op in ("adjust", "comment") and (what.expected or {}).get(key, before.version) != before.version:
                raise Conflict(f"changed meanwhile by {before.who or 'someone'} at {before.at}", before.to_json())
            after = _changed(before, what, fp if key.startswith("student:") else None)
            if after == before:
                done[key] = before
                continue
            done[key] = _put_grade(conn, where, after, who)
            audit(conn, who, what.op, where, key, before.to_json() if before.version else None, done[key].to_json())
            _mark_students(conn, where, key, fp, done[key].graded)
        return done


def _changed(grade: Grade, what: Change, fp: str | None) -> Grade:
    items = list(grade.items)
    if what.op == "add" and what.item not in items:
        items.append(int(what.item))  # type: ignore[arg-type]
    elif what.op == "remove" and what.item in items:
        items.remove(what.item)
    elif what.op == "set_items":
        items = [int(i) for i in what.items]
    graded = {"unconfirm": False, "comment": grade.graded}.get(what.op, True)
    adjust = float(what.value) if what.op == "adjust" else grade.adjust
    comment = str(what.value or "") if what.op == "comment" else grade.comment
    return replace(grade, fp=fp if fp is not None else grade.fp, items=items, graded=graded, adjust=adjust,
                   comment=comment)


def _mark_students(conn: sqlite3.Connection, where: tuple[str, str], key: str, fp: str | None, graded: bool) -> None:
    """Each student of a changed grade is graded for the answer they have now (or not, once unconfirmed)."""
    value = "fp" if graded else "NULL"
    if key.startswith("student:"):
        conn.execute(f"UPDATE answers SET graded_fp = {value} WHERE homework = ? AND part = ? AND student = ?",
                     (*where, key[len("student:"):]))
    else:
        conn.execute(f"UPDATE answers SET graded_fp = {value} WHERE homework = ? AND part = ? AND fp = ? AND NOT "
                     "EXISTS (SELECT 1 FROM grades g WHERE g.homework = answers.homework AND g.part = answers.part "
                     "AND g.key = 'student:' || answers.student AND g.fp = answers.fp)", (*where, key))


def set_student_comment(conn: sqlite3.Connection, where: tuple[str, str], student: str, text: str,
                        expected: int | None, who: str) -> int:
    """A comment for one student's part; `expected`: the version the person saw (0: none yet)."""
    with writing(conn):
        row = conn.execute("SELECT comment, version FROM comments WHERE homework = ? AND part = ? AND student = ?",
                           (*where, student)).fetchone()
        version = row["version"] if row else 0
        if expected is not None and expected != version:
            raise Conflict(f"{student}: the comment was changed meanwhile", {"comment": row["comment"],
                                                                            "version": version})
        conn.execute("INSERT INTO comments VALUES (?,?,?,?,?,?,?) ON CONFLICT(homework, part, student) DO UPDATE SET "
                     "comment=excluded.comment, version=excluded.version, who=excluded.who, at=excluded.at",
                     (*where, student, text, version + 1, who, now()))
        audit(conn, who, "student comment", where, f"student:{student}", row["comment"] if row else None, text)
        return version + 1


def seed_rubric(conn: sqlite3.Connection, where: tuple[str, str], items: Iterable[tuple[float, str]]) -> bool:
    """Give a part its first rubric items, once (a part whose rubric staff edited is never seeded again)."""
    with writing(conn):
        if conn.execute("SELECT 1 FROM settings WHERE homework = ? AND part = ? AND name = 'seeded'",
                        where).fetchone():
            return False
        conn.execute("INSERT INTO settings VALUES (?,?,'seeded','1')", where)
        for position, (points, text) in enumerate(items):
            conn.execute("INSERT INTO rubric(homework, part, points, text, position) VALUES (?,?,?,?,?)",
                         (*where, float(points), str(text), position))
        return True


def edit_item(conn: sqlite3.Connection, where: tuple[str, str], item: dict[str, Any], who: str) -> Item | None:
    """Add (no id), change (id, points and/or text, version seen) or delete (id, deleted) a rubric item."""
    with writing(conn):
        if item.get("id") is None:
            top = conn.execute("SELECT COALESCE(MAX(position), -1) FROM rubric WHERE homework = ? AND part = ?",
                               where).fetchone()[0]
            cur = conn.execute("INSERT INTO rubric(homework, part, points, text, position) VALUES (?,?,?,?,?)",
                               (*where, float(item["points"]), str(item["text"]), top + 1))
            made = Item(cur.lastrowid, float(item["points"]), str(item["text"]), top + 1)
            audit(conn, who, "add item", where, f"item:{made.id}", None, made.to_json())
            return made
        row = conn.execute("SELECT * FROM rubric WHERE id = ? AND homework = ? AND part = ?",
                           (int(item["id"]), *where)).fetchone()
        if row is None:
            raise Conflict(f"no rubric item {item['id']}")
        before = Item(row["id"], row["points"], row["text"], row["position"], row["version"])
        if item.get("version") is not None and int(item["version"]) != before.version:
            raise Conflict(f"rubric item {before.id} was changed meanwhile", before.to_json())
        if item.get("deleted"):
            conn.execute("UPDATE rubric SET deleted = 1, version = version + 1 WHERE id = ?", (before.id,))
            audit(conn, who, "delete item", where, f"item:{before.id}", before.to_json(), None)
            return None
        after = replace(before, points=float(item.get("points", before.points)), text=str(item.get("text", before.text)),
                        version=before.version + 1)
        conn.execute("UPDATE rubric SET points = ?, text = ?, version = ? WHERE id = ?",
                     (after.points, after.text, after.version, after.id))
        audit(conn, who, "edit item", where, f"item:{after.id}", before.to_json(), after.to_json())
        return after


def setting(conn: sqlite3.Connection, where: tuple[str, str], name: str, default: str | None = None) -> str | None:
    row = conn.execute("SELECT value FROM settings WHERE homework = ? AND part = ? AND name = ?",
                       (*where, name)).fetchone()
    return row[0] if row else default


def set_setting(conn: sqlite3.Connection, where: tuple[str, str], name: str, value: str, who: str) -> None:
    with writing(conn):
        before = setting(conn, where, name)
        conn.execute("INSERT INTO settings VALUES (?,?,?,?) ON CONFLICT(homework, part, name) DO UPDATE SET "
                     "value=excluded.value", (*where, name, value))
        audit(conn, who, f"set {name}", where, name, before, value)


def placements_of(conn: sqlite3.Connection, where: tuple[str, str]) -> dict[str, tuple[str, str | None]]:
    rows = conn.execute("SELECT key, label, fp FROM placements WHERE homework = ? AND part = ?", where)
    return {r["key"]: (r["label"], r["fp"]) for r in rows}


def place(conn: sqlite3.Connection, where: tuple[str, str], keys: Mapping[str, str | None], label: str,
          who: str) -> None:
    """Put answers (fingerprints, or student:ID -> fingerprint) into the group `label` (a split, a merge)."""
    with writing(conn):
        for key, fp in keys.items():
            before = placements_of(conn, where).get(key)
            conn.execute("INSERT INTO placements VALUES (?,?,?,?,?) ON CONFLICT(homework, part, key) DO UPDATE SET "
                         "label=excluded.label, fp=excluded.fp", (*where, key, label, fp))
            audit(conn, who, "group", where, key, before[0] if before else None, label)


def audit_log(conn: sqlite3.Connection, limit: int = 200) -> list[dict[str, Any]]:
    rows = conn.execute("SELECT * FROM audit ORDER BY id DESC LIMIT ?", (limit,))
    return [{k: row[k] for k in row.keys()} for row in rows]


# ---------------------------------------------------------------- overrides.yaml: import and export


def import_overrides(conn: sqlite3.Connection, path: Path, who: str) -> list[str]:
    """Take the decisions of an overrides file (its groups and students) into the store, each as a
    graded answer with an adjustment (a group's decision for each of its answers, a student's for
    that student alone). The snapshot must be of the run the file was written for."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f"{path}: cannot read overrides ({err})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected the sections 'groups' and 'students'")
    rows = answers_of(conn)
    by_group: dict[tuple[str, str], list[sqlite3.Row]] = {}
    for row in rows:
        by_group.setdefault((row["homework"], row["vgroup"] or ""), []).append(row)
    by_student = {(row["student"], row["part"]): row for row in rows}
    said, taken = [], 0
    for entry in data.get("groups") or []:
        if entry.get("score") is None:
            continue
        members = by_group.get((str(entry.get("homework")), str(entry.get("group"))), [])
        if not members:
            said.append(f"{path}: group {entry.get('group')!r} has no answer waiting for staff; left out")
        for row in {r["fp"]: r for r in members}.values():
            taken += _imported(conn, row, row["fp"], float(entry["score"]) - row["machine"], entry, who)
    for entry in data.get("students") or []:
        row = by_student.get((str(entry.get("student")), str(entry.get("part"))))
        manual, score = entry.get("manual_score"), entry.get("score")
        if manual is None and score is None:
            continue
        if row is None:
            said.append(f"{path}: {entry.get('student')} {entry.get('part')} is not waiting for staff; left out")
            continue
        points = float(manual) if manual is not None else float(score) - row["machine"]
        taken += _imported(conn, row, f"student:{row['student']}", points, entry, who)
    return [f"{path}: imported {counted(taken, 'decision')}"] + said


def _imported(conn: sqlite3.Connection, row: sqlite3.Row, key: str, points: float, entry: Mapping[str, Any],
              who: str) -> int:
    where = (row["homework"], row["part"])
    fp = row["fp"]
    change(conn, where, {key: fp}, Change("set_items", items=()), who)
    grades = grades_of(conn, *where)
    expected = {key: grades[key].version}
    change(conn, where, {key: fp}, Change("adjust", value=round(min(max(points, 0.0), row["cap"]), 6),
                                          expected=expected), who)
    if entry.get("comment"):
        change(conn, where, {key: fp}, Change("comment", value=str(entry["comment"]),
                                              expected={key: expected[key] + 1}), who)
    return 1


def export_overrides(conn: sqlite3.Connection) -> str:
    """The store's decisions as an overrides file (`grade run --overrides FILE` applies the same points)."""
    decided, _ = decisions(conn)
    written = {key: row["written"] for key, row in parts_of(conn).items()}
    rows = {(r["homework"], r["student"], r["part"]): r for r in answers_of(conn)}
    students = []
    for (hw, student, part), d in sorted(decided.items()):
        row = rows[(hw, student, part)]
        entry: dict[str, Any] = {"student": student, "part": part}
        if written.get((hw, part), 0.0) > 0 and row["status"] != "invalid":
            entry["manual_score"] = d.points
        else:
            entry["score"] = round(min(row["max"], row["machine"] + d.points), 6)
        comment = "; ".join(line[len(MARK):] for line in d.lines[1:])
        entry["comment"] = comment or None
        students.append(entry)
    head = "# Staff decisions exported from the staff store (grade review); pass with --overrides.\n"
    return head + yaml.safe_dump({"groups": [], "students": students}, sort_keys=False, allow_unicode=True)
