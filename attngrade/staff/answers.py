"""Answers as the store keys them: normalized text, fingerprints, one part's answer waiting for
staff (`answer_of`), and the snapshot of a run (`record`) that the app groups and `apply` decides.

A grade is kept by part and by the answer's fingerprint (its readings up to spacing and LaTeX
spacing, with what the checks said of it), so a rerun keeps each grade whose answer did not change,
gives it to a newcomer who wrote the same answer, and leaves a changed answer ungraded, marked
"needs another look"."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import unicodedata
from dataclasses import dataclass
from typing import Any, Collection, Iterable, Mapping, Protocol

from ..grading.groups import by_member
from ..records import WAITING, Homework, Result, Status
from .store import KEYED_WAITING, MARK, audit, writing


class Renamed(Protocol):
    """A student graded under a new id since the run before (`outputs.history.Renamed`)."""

    before: str
    now: str
    same: frozenset[str]


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
    raw: Mapping[str, str] | None = None  # field -> what was written, where the run knew it (results.json does not)
    kind: str = "staff"  # "staff": waits for staff (or did); "request": here for a regrade request alone


MAX_GROUP_ID = 200  # a part id and a hash: results.json is the run's, but read as any file is


def answer_of(homework: str, student: str, part: Mapping[str, Any], vgroup: str | None = None,
              requested: bool = False) -> Answer | None:
    """The Answer of one part of results.json (or `Verdict.to_json()`), if staff have something to decide
    (`requested`: the student asked for a regrade of it, so staff may add what the machine did not give).
    `vgroup`, where not given, is the part's `group` in results.json."""
    if vgroup is None and isinstance(part.get("group"), str) and len(part["group"]) <= MAX_GROUP_ID:
        vgroup = part["group"]
    said = list(part.get("feedback", ()))
    decided = any(line.startswith(MARK) for line in said)  # graded by staff in the run that wrote it
    # What the machine said: replaced by staff's lines in a decided part, and kept as `overruled`.
    feedback = [line for line in list(part.get("overruled") or ()) + said if not line.startswith(MARK)]
    pending = float(part.get("pending_points") or 0.0)
    status, score = str(part.get("status", "")), float(part.get("score") or 0.0)
    top = float(part.get("max_score") or 0.0)
    kind = "staff"
    if decided:
        cap = 0.0  # its machine values are in the store's snapshot, recorded before the grades were applied
    elif pending > 1e-9:
        cap = pending
    elif status == "invalid" and top - score > 1e-9:
        cap = top - score
    elif requested:
        cap, kind = max(top - score, 0.0), "request"
    else:
        return None
    readings = {str(k): str(v) for k, v in (part.get("readings") or {}).items()}
    shown = dict(readings)
    if status in ("invalid", "partly pending") or not readings:
        shown["(attngrade said)"] = " / ".join(feedback)  # all there is of an unreadable answer in results.json
    # What the checks said is part of the answer's key: the same answer always gets the same words,
    # and they are all that tells two unreadable answers apart (results.json keeps no raw text).
    # The line saying a written answer waits is keyed as it was first worded: the grades of a store
    # made then still find their answers.
    said_of_it = [KEYED_WAITING if line == WAITING else line for line in feedback]
    return Answer(homework, str(part["id"]), student, fingerprint(readings, said_of_it), shown, status,
                  score, round(cap, 6), top, vgroup, decided, _bounded(part.get("answers")), kind)


RAW_CHARS = 20_000  # of each field of what a student wrote, kept for staff to read and transcribe


def _bounded(answers: Any) -> dict[str, str] | None:
    if not isinstance(answers, Mapping) or not answers:
        return None
    return {str(k)[:200]: str(v)[:RAW_CHARS] for k, v in list(answers.items())[:50]}


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
        # The answer a student's grade was given for is kept when their answer changes: staff see it
        # beside the new one ("changed since grading").
        conn.executemany(
            "INSERT INTO answers(homework, part, student, fp, answer, status, machine, cap, max, vgroup, raw, kind) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(homework, part, student) DO UPDATE "
            "SET prior=CASE WHEN answers.fp != excluded.fp AND answers.graded_fp = answers.fp THEN answers.answer "
            "WHEN answers.fp != excluded.fp AND answers.graded_fp IS NULL THEN NULL ELSE answers.prior END, "
            "fp=excluded.fp, answer=excluded.answer, status=excluded.status, machine=excluded.machine, "
            "cap=excluded.cap, max=excluded.max, vgroup=excluded.vgroup, raw=COALESCE(excluded.raw, "
            "CASE WHEN answers.fp = excluded.fp THEN answers.raw END), kind=excluded.kind",
            [(a.homework, a.part, a.student, a.fp, json.dumps(dict(a.answer), ensure_ascii=False), a.status,
              a.machine, a.cap, a.max, a.vgroup, json.dumps(dict(a.raw), ensure_ascii=False) if a.raw else None,
              a.kind) for a in answers])
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


def collect(results: Iterable[Result], homeworks: Mapping[str, Homework] | None,
            groups: Mapping[str, Mapping[str, Iterable[Any]]] | None,
            requested: Collection[tuple[str, str, str]] = ()) -> list[Answer]:
    """The answers staff decide among `results` (each verdict with points waiting, or unreadable), and
    those of `requested` (homework, student, part): a regrade request asks staff to look again."""
    vgroups = by_member(groups)
    asked = set(requested)
    found = []
    for result in results:
        if result.error or result.homework is None:
            continue
        for v in result.parts:
            wanted = (result.homework, result.student, v.part) in asked
            if v.pending_points <= 1e-9 and v.status != Status.INVALID and not wanted:
                continue
            answer = answer_of(result.homework, result.student, {**v.to_json(), "answers": dict(v.answers)},
                               vgroups.get((result.homework, result.student, v.part)), wanted)
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
