"""Grades, the rubric, comments, settings and placements: reading them, and every change to them.

A grade is a set of rubric items (points ±, text) plus an adjustment and a comment: its points come
from the items each time they are read, so changing an item's points regrades everyone graded with
it. Every write is one transaction that bumps a row's `version` and adds what it changed to the
audit log (who, when, before, after); a write made from a stale view is refused (`Conflict`)."""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping

from .store import Conflict, audit, now, writing


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
    return Grade(row["key"], row["fp"], _ids(row["items"]), _points(row["adjust"]), str(row["comment"] or ""),
                 bool(row["graded"]), int(row["version"] or 0), row["who"], row["at"])


def _ids(text: Any) -> list[int]:
    """A grade's rubric item ids as stored; what is not a list of ids (a hand edit) reads as none."""
    try:
        found = json.loads(text)
    except (TypeError, ValueError):
        return []
    return [i for i in found if isinstance(i, int) and not isinstance(i, bool)] if isinstance(found, list) else []


def _points(value: Any) -> float:
    """Points as stored; what is not a finite number (written by an older attngrade) reads as 0."""
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else 0.0


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
    return [Item(r["id"], _points(r["points"]), str(r["text"]), r["position"], r["version"]) for r in rows]


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
    """Student -> (comment, version), for the comments written on the answer each has now."""
    rows = conn.execute("SELECT c.student, c.comment, c.version FROM comments c JOIN answers a ON a.homework = "
                        "c.homework AND a.part = c.part AND a.student = c.student AND a.fp = c.fp "
                        "WHERE c.homework = ? AND c.part = ?", (homework, part))
    return {r["student"]: (r["comment"], r["version"]) for r in rows}


def answers_of(conn: sqlite3.Connection, homework: str | None = None, part: str | None = None) -> list[sqlite3.Row]:
    query, args = "SELECT * FROM answers", []
    if homework is not None:
        query += " WHERE homework = ? AND part = ?"
        args = [homework, part]
    return conn.execute(query + " ORDER BY homework, part, student", args).fetchall()


def parts_of(conn: sqlite3.Connection) -> dict[tuple[str, str], sqlite3.Row]:
    return {(r["homework"], r["part"]): r for r in conn.execute("SELECT * FROM parts")}



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
POINTS_LIMIT = 1e6  # no rubric item or adjustment is worth more: beyond it a number is a slip of the keyboard
TEXT_LIMIT = 20_000  # characters of a comment


@dataclass(frozen=True)
class Change:
    """One grading action on some answers of a part: `op` (one of OPS) with its value; `expected`:
    each key's version as the person saw it (a key whose grade changed since is refused). `every`:
    an item given or taken back applies to every answer even where their grades disagree (else only
    the ungraded answers of such a group get it, and none is taken from a graded one)."""

    op: str
    item: int | None = None
    items: tuple[int, ...] = ()
    value: Any = None
    expected: Mapping[str, int] | None = None
    every: bool = False


class Disagree(Conflict):
    """An item given or taken back on answers graded differently, none of them ungraded."""


def finite(value: Any, what: str) -> float:
    """`value` as points: a finite number within the limit, else ValueError saying what is wrong."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{what} must be a number")
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{what} must be a number, not {str(value)[:40]!r}") from None
    if not math.isfinite(number) or abs(number) > POINTS_LIMIT:
        raise ValueError(f"{what} must be a finite number of points (at most {POINTS_LIMIT:g} either way)")
    return number


def checked(what: Change) -> Change:
    """`what` with its value as the op needs it, or ValueError."""
    if what.op not in OPS:
        raise ValueError(f"unknown change {what.op!r}; one of {', '.join(OPS)}")
    if what.op in ("add", "remove") and (isinstance(what.item, bool) or not isinstance(what.item, int)):
        raise ValueError(f"{what.op} names a rubric item by its id (a whole number)")
    if what.op == "set_items" and any(isinstance(i, bool) or not isinstance(i, int) for i in what.items):
        raise ValueError("set_items takes a list of rubric item ids")
    if what.op == "adjust":
        return replace(what, value=finite(what.value, "the adjustment"))
    if what.op == "comment":
        if what.value is not None and not isinstance(what.value, str):
            raise ValueError("a comment is text")
        return replace(what, value=str(what.value or "")[:TEXT_LIMIT])
    return what


def change(conn: sqlite3.Connection, where: tuple[str, str], keys: Mapping[str, str | None], what: Change,
           who: str) -> dict[str, Grade]:
    """Apply `what` to the grade of each key (an answer fingerprint, or student:ID -> its fingerprint),
    in one transaction; every key's students count as graded for their answer. Raises Conflict if the
    change was made from a stale view (a key's version is not the one expected), and changes nothing then."""
    what = checked(what)
    with writing(conn):
        return changed_in(conn, where, keys, what, who)


def changed_in(conn: sqlite3.Connection, where: tuple[str, str], keys: Mapping[str, str | None], what: Change,
               who: str) -> dict[str, Grade]:
    """`change` inside a write transaction the caller holds."""
    before = {key: _row_grade(conn, where, key) for key in keys}
    stale = [key for key in keys if what.expected is not None and key in what.expected
             and what.expected[key] != before[key].version]
    if stale:
        last = max((before[k] for k in stale), key=lambda g: g.version)
        raise Conflict(f"changed meanwhile by {last.who or 'someone'} at {last.at}; the page now shows what was saved",
                       {k: before[k].to_json() for k in stale})
    done = {}
    for key in _scope(before, what):
        fp = keys[key]
        after = _changed(before[key], what, fp if key.startswith("student:") else None)
        if after == before[key]:
            done[key] = before[key]
            continue
        done[key] = _put_grade(conn, where, after, who)
        audit(conn, who, what.op, where, key, before[key].to_json() if before[key].version else None,
              done[key].to_json())
        _mark_students(conn, where, key, fp, done[key].graded)
    return done


def _scope(before: Mapping[str, Grade], what: Change) -> list[str]:
    """The keys an item given or taken back reaches: all of them where their grades agree (or `every`),
    else only the ungraded ones: a key pressed on a group never takes an item from a graded answer."""
    keys = list(before)
    if what.op not in ("add", "remove") or what.every:
        return keys
    states = {(g.graded, tuple(sorted(g.items))) for g in before.values()}
    if len(states) <= 1:
        return keys
    ungraded = [k for k in keys if not before[k].graded]
    if not ungraded:
        raise Disagree("the answers of this group were graded differently; give or take the item answer by answer "
                       "(show them with d), or press the key again to do it for all of them",
                       {k: g.to_json() for k, g in before.items()})
    return ungraded


def _changed(grade: Grade, what: Change, fp: str | None) -> Grade:
    items = list(grade.items)
    if what.op == "add" and what.item not in items:
        items.append(int(what.item))  # type: ignore[arg-type]
    elif what.op == "remove" and what.item in items:
        items.remove(what.item)
    elif what.op == "set_items":
        items = list(dict.fromkeys(int(i) for i in what.items))
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
    """A comment for one student's part, kept with the answer they have now (a changed answer does not
    carry it); `expected`: the version the person saw (0: none yet). Its new version."""
    text = str(text)[:TEXT_LIMIT]
    with writing(conn):
        answer = conn.execute("SELECT fp FROM answers WHERE homework = ? AND part = ? AND student = ?",
                              (*where, student)).fetchone()
        fp = answer["fp"] if answer is not None else ""
        row = conn.execute("SELECT comment, version, who FROM comments WHERE homework = ? AND part = ? AND "
                           "student = ? AND fp = ?", (*where, student, fp)).fetchone()
        version = row["version"] if row else 0
        if expected is not None and expected != version:
            raise Conflict(f"the comment was changed meanwhile by {row['who'] if row else 'someone'}",
                           {"comment": row["comment"] if row else "", "version": version})
        conn.execute("INSERT INTO comments VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(homework, part, student, fp) DO "
                     "UPDATE SET comment=excluded.comment, version=excluded.version, who=excluded.who, at=excluded.at",
                     (*where, student, fp, text, version + 1, who, now()))
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


ITEM_TEXT = 2_000  # characters of a rubric item


def edit_item(conn: sqlite3.Connection, where: tuple[str, str], item: Mapping[str, Any], who: str) -> Item | None:
    """Add (no id), change (id, points and/or text, version seen) or delete (id, deleted) a rubric item.
    ValueError for an item that is not one (points not a finite number, text not text)."""
    points = finite(item["points"], "an item's points") if item.get("points") is not None else None
    text = item.get("text")
    if text is not None and not isinstance(text, str):
        raise ValueError("an item's text is text")
    with writing(conn):
        if item.get("id") is None:
            if points is None or text is None:
                raise ValueError("a new item takes points (a number) and text")
            top = conn.execute("SELECT COALESCE(MAX(position), -1) FROM rubric WHERE homework = ? AND part = ?",
                               where).fetchone()[0]
            cur = conn.execute("INSERT INTO rubric(homework, part, points, text, position) VALUES (?,?,?,?,?)",
                               (*where, points, text[:ITEM_TEXT], top + 1))
            made = Item(int(cur.lastrowid or 0), points, text[:ITEM_TEXT], top + 1)
            audit(conn, who, "add item", where, f"item:{made.id}", None, made.to_json())
            return made
        return _edited(conn, where, item, (points, text), who)


def _edited(conn: sqlite3.Connection, where: tuple[str, str], item: Mapping[str, Any],
            new: tuple[float | None, str | None], who: str) -> Item | None:
    if isinstance(item["id"], bool) or not isinstance(item["id"], int):
        raise ValueError("an item's id is a whole number")
    row = conn.execute("SELECT * FROM rubric WHERE id = ? AND homework = ? AND part = ? AND deleted = 0",
                       (item["id"], *where)).fetchone()
    if row is None:
        raise Conflict(f"no rubric item {item['id']} in this part (deleted meanwhile?)")
    before = Item(row["id"], _points(row["points"]), str(row["text"]), row["position"], row["version"])
    if item.get("version") is not None and item["version"] != before.version:
        raise Conflict(f"rubric item {before.id} was changed meanwhile", before.to_json())
    if item.get("deleted"):
        conn.execute("UPDATE rubric SET deleted = 1, version = version + 1 WHERE id = ?", (before.id,))
        audit(conn, who, "delete item", where, f"item:{before.id}", before.to_json(), None)
        return None
    points, text = new
    after = replace(before, points=before.points if points is None else points,
                    text=before.text if text is None else text[:ITEM_TEXT], version=before.version + 1)
    conn.execute("UPDATE rubric SET points = ?, text = ?, version = ? WHERE id = ?",
                 (after.points, after.text, after.version, after.id))
    audit(conn, who, "edit item", where, f"item:{after.id}", before.to_json(), after.to_json())
    return after


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

