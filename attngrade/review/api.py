"""The app's JSON API over one Classroom: what each route reads and changes (docs/review.md lists them).

Every handler takes a `Call` (the grader the guard found by their secret, the path's and query's
parameters, the checked JSON body) and returns an `Answer` (status and JSON). Every change carries
what the page saw (each answer's grade version, the grouping's version, a comment's version) and is
refused with 409, with the current state, when someone changed it meanwhile: no change replaces
another grader's decision unseen.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from .. import staff
from ..errors import ConfigError
from ..reports.mathml import statement_html
from ..staff import Change, Conflict
from ..staff import claims as handed
from ..staff import graders as roster
from ..staff import requests as regrades
from ..staff import transcripts
from ..staff.grades import ITEM_TEXT
from . import classroom, grouping, inputs
from .classroom import Classroom, Part
from .inputs import BadInput
from .names import Names
from .key import reference

TEXT_LIMIT = 20_000
AUDIT_LIMIT = 10_000
POLL_ROWS = 2_000  # changes read per poll; a page further behind loads the part again


@dataclass
class Call:
    grader: str
    params: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)


@dataclass
class Answer:
    status: int
    data: Any


def ok(data: Any) -> Answer:
    return Answer(200, data)


class Api:
    def __init__(self, room: Classroom):
        self.room = room

    # ------------------------------------------------------------ helpers

    def part_of(self, call: Call) -> Part:
        part = self.room.part(call.params["homework"], call.params["part"])
        if part is None:
            raise LookupError("no such part waits for staff in this run")
        return part

    def names(self) -> Names:
        return self.room.names()

    def _parts(self) -> list[Part]:
        return [p for p in (self.room.part(hw, pid) for hw, pid in self.room.parts()) if p is not None]

    def _group_answer(self, part: Part, unit: classroom.Unit, names: Names, status: int = 200,
                      **extra: Any) -> Answer:
        """The group `unit` is in now (the grouping may have changed with the change), and the part's progress."""
        fresh = self.room.part(part.homework, part.id) or part
        found = classroom.state(self.room, fresh)
        now = next((u for u in fresh.units if u.key == unit.key or u.fp == unit.fp), None)
        group = fresh.group_of(now) if now is not None else None
        shown = classroom.group_json(self.room, found, group, names) if group else None
        return Answer(status, {**extra, "group": shown, "progress": classroom.progress(found), "version": fresh.version})

    # ------------------------------------------------------------ reading

    def me(self, call: Call) -> Answer:
        with self.room.open() as conn:
            active = [g.name for g in roster.graders(conn) if g.revoked is None]
        return ok({"grader": call.grader, "anonymous": self.room.anonymous(), "graders": active})

    def parts(self, call: Call) -> Answer:
        with self.room.open() as conn:
            asked = regrades.requests_of(conn)
        rows = []
        for part in self._parts():
            row = classroom.progress(classroom.state(self.room, part))
            mine = [r for r in asked if (r.homework, r.part) == part.where]
            rows.append({**row, "requests": len(mine), "requests_open": sum(not r.answered for r in mine)})
        return ok(rows)

    def part(self, call: Call) -> Answer:
        part = self.part_of(call)
        names = self.names()
        found = classroom.state(self.room, part)
        groups = self._search(found, inputs.query(call.query, "q"), names)
        with self.room.open() as conn:
            since = staff.last_change(conn)
        homework = self.room.homework_of(part.homework)
        return ok({"homework": part.homework, "part": part.id, "statement": part.statement,
                   "statement_html": str(statement_html(part.statement)) if part.statement else "",
                   "written": part.text, "threshold": part.threshold, "embedder": part.embedder,
                   "fields": [{"name": n, "kind": k} for n, k in part.kinds.items()], "version": part.version,
                   "since": since, "progress": classroom.progress(found), "anonymous": names.anonymous,
                   "rubric": [i.to_json() for i in found.rubric], "reference": self._reference(part, homework),
                   "suggestions": classroom.suggestions(self.room, found),
                   "groups": [classroom.group_json(self.room, found, g, names) for g in groups]})

    def _reference(self, part: Part, homework: Any) -> dict[str, Any] | None:
        if homework is None:
            return None
        made = reference(self.room.solutions, homework, part.id)
        if made and list(made.get("answer") or {}) == ["answer"] and len(part.kinds) == 1:
            made["answer"] = {next(iter(part.kinds)): made["answer"]["answer"]}
        return made

    def poll(self, call: Call) -> Answer:
        """What changed in the part since the page's `since` (an audit id): the groups it touched, the
        claims, the progress; `reload` when the grouping itself changed (or the page is far behind).
        Renews the grader's claim on the group their page shows (`focus`)."""
        part = self.part_of(call)
        since = inputs.whole(call.body, "since")
        focus = inputs.text(call.body, "focus", 40)
        seen = inputs.text(call.body, "version", 40)
        if focus:
            self.room.write(lambda conn: handed.renew(conn, part.where, focus, call.grader))
        with self.room.open() as conn:
            rows = conn.execute("SELECT id, target FROM audit WHERE id > ? AND homework = ? AND part = ? ORDER BY id "
                                "LIMIT ?", (since, *part.where, POLL_ROWS)).fetchall()
            newest = staff.last_change(conn)
            if not rows and seen == part.version:  # nothing new: only who holds which group
                return ok({"since": newest, "version": part.version, "reload": False, "groups": [], "progress": None,
                           "claims": handed.holders(conn, part.where)})
        found = classroom.state(self.room, part)
        reload = seen != part.version or len(rows) >= POLL_ROWS
        touched = [] if reload else self._touched(part, [str(r["target"] or "") for r in rows])
        names = self.names()
        return ok({"since": newest, "version": part.version, "reload": reload, "claims": found.claims,
                   "progress": classroom.progress(found),
                   "groups": [classroom.group_json(self.room, found, g, names) for g in touched]})

    @staticmethod
    def _touched(part: Part, targets: list[str]) -> list[classroom.Group]:
        keys = set(targets)
        students = {t[len("student:"):] for t in keys if t.startswith("student:")}
        hit = []
        for group in part.groups:
            if any(u.key in keys or u.fp in keys or students.intersection(u.students) for u in group.units):
                hit.append(group)
        return hit

    def integrity(self, call: Call) -> Answer:
        """Near-identical long written answers across students, per part (for staff, never a verdict)."""
        names = self.names()
        found = []
        for part in self._parts():
            if not part.text:
                continue
            texts, owners = [], []
            for unit in part.units:
                texts += [unit.text] * len(unit.students)
                owners += unit.students
            for students, overlap in grouping.near_identical(texts, owners):
                found.append({"homework": part.homework, "part": part.id, "overlap": overlap,
                              "students": [names.shown(s) for s in names.order(students)]})
        return ok(found)

    def audit(self, call: Call) -> Answer:
        limit = inputs.query_whole(call.query, "limit", 200, AUDIT_LIMIT) or 200
        with self.room.open() as conn:
            rows = staff.audit_log(conn, limit)
        return ok(scrubbed(rows, self.names()))

    def _search(self, found: classroom.State, query: str, names: Names) -> list[classroom.Group]:
        needle = staff.normalized(query)
        if not needle:
            return found.part.groups
        return [g for g in found.part.groups
                if any(needle in staff.normalized(classroom.answer_text(u.answer)) or
                       any(names.matches(needle, s) for s in u.students) for u in g.units)]

    # ------------------------------------------------------------ claims

    def next_in_part(self, call: Call) -> Answer:
        part = self.part_of(call)
        after = inputs.text(call.body, "after", 40) or None
        found = classroom.state(self.room, part)
        order = [g.id for g in part.groups if not found.graded(g)]
        gid, others = self.room.write(lambda conn: handed.take_next(conn, part.where, order, call.grader, after))
        return ok({"group": gid, "held_by_others": others, "left": len(order)})

    def next_any(self, call: Call) -> Answer:
        for part in self._parts():
            found = classroom.state(self.room, part)
            order = [g.id for g in part.groups if not found.graded(g)]
            if not order:
                continue
            gid, _ = self.room.write(lambda conn: handed.take_next(conn, part.where, order, call.grader))
            if gid is not None:
                return ok({"homework": part.homework, "part": part.id, "group": gid})
        return ok({"homework": None, "part": None, "group": None})

    def leave(self, call: Call) -> Answer:
        part = self.part_of(call)
        self.room.write(lambda conn: handed.release(conn, part.where, call.grader))
        return ok({"ok": True})

    # ------------------------------------------------------------ grading

    def grade(self, call: Call) -> Answer:
        part, body = self.part_of(call), call.body
        units = [part.unit(u) for u in inputs.strings(body, "units")]
        names = self.names()
        if any(u is None for u in units):
            raise Conflict("these answers are not in the part as it is grouped now: the page loads it again")
        seen = inputs.versions(body)
        if any(u.id not in seen for u in units):  # type: ignore[union-attr]
            raise BadInput("expected names the version of each answer the change is for")
        what = self._change(body, {u.key: seen[u.id] for u in units})  # type: ignore[union-attr]
        found = classroom.state(self.room, part)
        if what.op != "comment" and any(found.transcript(u) and found.waiting(u) <= 1e-9  # type: ignore[arg-type]
                                        for u in units):
            raise Conflict("graded by its transcription: take the transcription back (t) to grade it by hand")
        keys = {u.key: u.fp for u in units}  # type: ignore[union-attr]
        try:
            self.room.write(lambda conn: staff.change(conn, part.where, keys, what, call.grader))
        except Conflict as err:
            return self._group_answer(part, units[0], names, 409, error=str(err), current=err.current,
                                      disagree=isinstance(err, staff.Disagree))
        done = self._group_answer(part, units[0], names)
        group = done.data.get("group")
        if what.op == "confirm" and group and group["graded"]:
            self.room.write(lambda conn: handed.release(conn, part.where, call.grader, group["id"]))
        return done

    @staticmethod
    def _change(body: Mapping[str, Any], expected: dict[str, int]) -> Change:
        op = inputs.text(body, "op", 20, required=True)
        if op not in staff.OPS:
            raise BadInput(f"op is one of {', '.join(staff.OPS)}")
        item = inputs.whole(body, "item", required=op in ("add", "remove"))
        items = tuple(inputs.wholes(body, "items")) if op == "set_items" else ()
        value: Any = None
        if op == "adjust":
            value = inputs.number(body, "value")
        elif op == "comment":
            value = inputs.text(body, "value", TEXT_LIMIT)
        return Change(op, item, items, value, expected, inputs.flag(body, "every"))

    def rubric(self, call: Call) -> Answer:
        part, body = self.part_of(call), call.body
        item: dict[str, Any] = {}
        if body.get("id") is not None:
            item["id"] = inputs.whole(body, "id")
            item["version"] = inputs.whole(body, "version")
            item["deleted"] = inputs.flag(body, "deleted")
        if body.get("points") is not None or "id" not in item:
            item["points"] = inputs.number(body, "points")
        if body.get("text") is not None or "id" not in item:
            item["text"] = inputs.text(body, "text", ITEM_TEXT, required=True)
        made = self.room.write(lambda conn: staff.edit_item(conn, part.where, item, call.grader))
        return ok({"item": made.to_json() if made else None})

    def _same_grouping(self, part: Part, body: Mapping[str, Any]) -> None:
        if inputs.text(body, "version", 40, required=True) != part.version:
            raise Conflict("the groups changed meanwhile: the page shows them as they are now")

    def split(self, call: Call) -> Answer:
        part, body = self.part_of(call), call.body
        self._same_grouping(part, body)
        unit = part.unit(inputs.text(body, "unit", 40, required=True))
        if unit is None:
            raise Conflict("this answer is not in the part as it is grouped now")
        student = self.names().find(body.get("student"), unit.students) if body.get("student") is not None else None
        if body.get("student") is not None and student is None:
            raise Conflict("no such student in this answer's group now")
        key = f"student:{student}" if student is not None and len(unit.students) > 1 else unit.key
        label = "alone:" + self.room.opaque(key, "a")
        self.room.write(lambda conn: staff.place(conn, part.where, {key: unit.fp}, label, call.grader))
        return ok({"ok": True})

    def merge(self, call: Call) -> Answer:
        part, body = self.part_of(call), call.body
        self._same_grouping(part, body)
        groups = [part.group(g) for g in inputs.strings(body, "groups")]
        if len(groups) < 2 or any(g is None for g in groups):
            raise Conflict("name two groups or more of this part as it is grouped now")
        keys = {u.key: u.fp for g in groups for u in g.units}  # type: ignore[union-attr]
        label = "merged:" + min(g.id for g in groups)  # type: ignore[union-attr]
        self.room.write(lambda conn: staff.place(conn, part.where, keys, label, call.grader))
        return ok({"ok": True})

    def threshold(self, call: Call) -> Answer:
        part = self.part_of(call)
        self._same_grouping(part, call.body)
        value = inputs.number(call.body, "value")
        if not 0.0 < value <= 1.0:
            raise BadInput("the threshold is a number above 0 and at most 1")
        self.room.write(lambda conn: staff.set_setting(conn, part.where, "threshold", repr(value), call.grader))
        return ok({"threshold": value})

    def comment(self, call: Call) -> Answer:
        part, body = self.part_of(call), call.body
        names = self.names()
        student = names.find(body.get("student"), [s for u in part.units for s in u.students])
        if student is None:
            raise Conflict("no such student waits for staff in this part now")
        text = inputs.text(body, "text", TEXT_LIMIT)
        expected = inputs.whole(body, "expected")
        version = self.room.write(lambda conn: staff.set_student_comment(conn, part.where, student, text, expected,
                                                                         call.grader))
        return ok({"version": version})

    def transcribe(self, call: Call) -> Answer:
        """Staff's transcription of an unreadable answer, graded by the part's checks (`text`: field ->
        what the student wrote, in attngrade's notation; null takes it back)."""
        part, body = self.part_of(call), call.body
        unit = part.unit(inputs.text(body, "unit", 40, required=True))
        if unit is None:
            raise Conflict("this answer is not in the part as it is grouped now")
        if not transcripts.unreadable(unit.status):
            raise BadInput("only an answer the machine could not read is transcribed")
        expected = inputs.whole(body, "expected")
        if body.get("text") is None:
            self.room.write(lambda conn: transcripts.remove(conn, part.where, unit.fp, expected, call.grader))
            return self._group_answer(part, unit, self.names())
        try:
            text = transcripts.checked_text(body.get("text"), list(part.kinds) or list(unit.raw))
        except ValueError as err:
            raise BadInput(str(err)) from None
        try:
            assignment = self.room.assignment(part.homework)
        except ConfigError as err:
            raise Conflict(f"cannot grade a transcription here: {err}; start grade review with --solutions DIR, "
                           "the folder `grade run` graded with") from None
        verdict = transcripts.graded(assignment, part.id, text)
        said = transcripts.verdict_json(verdict)
        self.room.write(lambda conn: transcripts.transcribe(conn, part.where, unit.fp, text, said, expected,
                                                            call.grader))
        return self._group_answer(part, unit, self.names(), verdict=said)

    # ------------------------------------------------------------ regrade requests

    def requests(self, call: Call) -> Answer:
        part = self.part_of(call)
        names = self.names()
        with self.room.open() as conn:
            asked = regrades.requests_of(conn, *part.where)
            rows = {r["student"]: r for r in staff.answers_of(conn, *part.where)}
            grades = staff.grades_of(conn, *part.where)
            rubric = staff.rubric_of(conn, *part.where)
            history = staff.audit_log(conn, AUDIT_LIMIT)
        made = [_request_json(r, rows.get(r.student), grades, rubric, names,
                              scrubbed([h for h in history if _about(h, part, r.student, rows.get(r.student))], names))
                for r in asked]
        return ok({"homework": part.homework, "part": part.id, "rubric": [i.to_json() for i in rubric],
                   "requests": made})

    def reply(self, call: Call) -> Answer:
        """Answer a regrade request: a reply the student reads, and/or a grade of this student's answer."""
        rid = call.params["rid"]
        if not rid.isdecimal() or len(rid) > 12:
            raise LookupError("no such regrade request")
        body = call.body
        with self.room.open() as conn:
            asked = regrades.request(conn, int(rid))
            row = None if asked is None else conn.execute(
                "SELECT * FROM answers WHERE homework = ? AND part = ? AND student = ?",
                (asked.homework, asked.part, asked.student)).fetchone()
        if asked is None:
            raise LookupError("no such regrade request")
        grade = body.get("grade")
        if grade is not None:
            if not isinstance(grade, dict) or row is None:
                raise BadInput("grade is an object {items, adjust, expected} for an answer in this run")
            items, adjust = tuple(inputs.wholes(grade, "items")), inputs.number(grade, "adjust")
            seen = inputs.whole(grade, "expected")
            self.room.write(lambda conn: regrades.regrade(conn, (asked.homework, asked.part), asked.student, row["fp"],
                                                          (items, adjust, seen), call.grader))
        if body.get("reply") is not None:
            text = inputs.text(body, "reply", regrades.REPLY_CHARS)
            expected = inputs.whole(body, "expected")
            self.room.write(lambda conn: regrades.reply(conn, asked.id, text, expected, call.grader))
        with self.room.open() as conn:
            now = regrades.request(conn, asked.id)
        return ok({"request": {**now.to_json(), "student": self.names().shown(now.student)} if now else None})


def _about(row: Mapping[str, Any], part: Part, student: str, answer: Any) -> bool:
    if (row.get("homework"), row.get("part")) != part.where:
        return False
    target = str(row.get("target") or "")
    return target == f"student:{student}" or (answer is not None and target == answer["fp"])


def _request_json(asked: regrades.Request, row: Any, grades: Mapping[str, staff.Grade], rubric: list[staff.Item],
                  names: Names, history: list[dict[str, Any]]) -> dict[str, Any]:
    made = {**asked.to_json(), "student": names.shown(asked.student), "history": history}
    if row is None:
        return {**made, "answer": None, "grade": None}
    grade = staff.effective(grades, asked.student, row["fp"])
    own = grades.get(f"student:{asked.student}")
    points = staff.staff_points(grade, {i.id: i for i in rubric}, row["cap"]) if grade is not None else None
    return {**made, "answer": json.loads(row["answer"]), "written": json.loads(row["raw"]) if row["raw"] else {},
            "grade": {"machine": row["machine"], "staff": points, "cap": row["cap"], "max": row["max"],
                      "score": round(row["machine"] + (points or 0.0), 6), "items": list(grade.items) if grade else [],
                      "adjust": grade.adjust if grade else 0.0},
            "own": {"version": own.version if own is not None else 0}}


def scrubbed(rows: list[dict[str, Any]], names: Names) -> list[dict[str, Any]]:
    """Audit entries as a page may show them: graded anonymously, every student id the store wrote in
    them is their pseudonym (a target student:ID, a renamed student's ids, an old label alone:student:ID)."""
    if not names.anonymous:
        return rows
    out = []
    for row in rows:
        row = dict(row)
        target = str(row.get("target") or "")
        if target.startswith("student:"):
            row["target"] = "student:" + names.shown(target[len("student:"):])
        for key in ("before", "after"):
            row[key] = _scrubbed_value(row.get(key), row.get("action"), names)
        out.append(row)
    return out


def _scrubbed_value(value: Any, action: Any, names: Names) -> Any:
    if not isinstance(value, str):
        return value
    try:
        data = json.loads(value)
    except ValueError:
        return value
    if action == "renamed" and isinstance(data, str):
        return json.dumps(names.shown(data))
    if isinstance(data, str) and data.startswith("alone:student:"):
        return json.dumps("alone:student:" + names.shown(data[len("alone:student:"):]))
    return value
