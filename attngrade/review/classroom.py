"""A run's OUT and its staff store as staff see them: parts, their groups of answers, and members.

The store's snapshot (`staff.record`) is the list of answers waiting for staff; `grade run` writes it
when the store exists, and this module writes it from OUT/results.json when the run did not (the
same answers, the same fingerprints). Groups are made from the snapshot: answers that staff split
out or merged stay where staff put them; an answer changed since it was graded waits in a group of
its own, beside the grade its old answer had; the rest of a written part is grouped by normalized
text and then by meaning, a machine part by exact value.

Ids of answers, groups and placements are keyed by the store's secret: they say nothing of the
students or answers behind them, and stay the same from one start of the app to the next.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import numpy as np
import yaml

from .. import staff
from ..errors import ConfigError
from ..grading import Assignment, Options, resolver
from ..problems import BUNDLED, Bank
from ..records import Homework
from ..staff import Grade, Item
from ..staff import claims as handed
from ..staff import requests as regrades
from ..staff.transcripts import Transcript, transcripts_of, unreadable
from . import embed, grouping
from .names import Names

SEEDS = Path(__file__).with_name("rubrics.yaml")
SUGGEST_FROM = 0.6  # a graded neighbour less similar than this says nothing about an answer
T = TypeVar("T")


@dataclass
class Unit:
    """Students who gave one answer (a fingerprint), or one student split out on their own (student:ID)."""

    id: str  # opaque, for pages and the API (keyed by the store's secret: no student id in it)
    key: str
    fp: str
    students: list[str]
    answer: dict[str, str]  # field -> how it was read
    text: str  # what is compared by meaning: the written fields
    machine: dict[str, float]  # student -> the machine's points
    cap: float
    status: str
    raw: dict[str, str] = field(default_factory=dict)  # field -> what was written, where the run kept it
    prior: dict[str, Any] | None = None  # changed since grading: the answer its students were graded for
    kind: str = "staff"


@dataclass
class Group:
    id: str
    units: list[Unit]
    label: str | None = None  # placed by staff (a split or a merge), or "changed" since grading
    center: np.ndarray | None = None

    @property
    def size(self) -> int:
        return sum(len(u.students) for u in self.units)


@dataclass
class Part:
    """One part's answers waiting for staff, grouped (what does not change until the snapshot, the
    placements, the threshold, the rubric or the answers changed since grading do)."""

    homework: str
    id: str
    kinds: dict[str, str]
    written: float
    max: float
    statement: str
    units: list[Unit]
    groups: list[Group]
    threshold: float
    embedder: str
    stamp: tuple = ()
    version: str = ""  # a short digest of `stamp`: a page whose version differs shows another grouping

    @property
    def where(self) -> tuple[str, str]:
        return (self.homework, self.id)

    @property
    def text(self) -> bool:
        """A written part: its answers are grouped by meaning and suggestions are made."""
        return any(k == "text" for k in self.kinds.values())

    def unit(self, unit_id: Any) -> Unit | None:
        return self._units().get(unit_id) if isinstance(unit_id, str) else None

    def group(self, group_id: Any) -> Group | None:
        return self._groups().get(group_id) if isinstance(group_id, str) else None

    def group_of(self, unit: Unit) -> Group | None:
        return next((g for g in self.groups if any(u.key == unit.key for u in g.units)), None)

    def _units(self) -> dict[str, Unit]:
        if not hasattr(self, "_by_unit"):
            self._by_unit = {u.id: u for u in self.units}
        return self._by_unit

    def _groups(self) -> dict[str, Group]:
        if not hasattr(self, "_by_group"):
            self._by_group = {g.id: g for g in self.groups}
        return self._by_group


class Classroom:
    """OUT and its store, loaded once and again when results.json or the store's snapshot change."""

    def __init__(self, out: Path, bank: Bank = BUNDLED, homework: Homework | None = None,
                 store: Path | None = None, solutions: Path | None = None):
        self.out = Path(out)
        self.path = Path(store) if store is not None else self.out / staff.STORE
        self.bank, self.homework, self.solutions = bank, homework, solutions
        self.key = b""
        self.lock = threading.RLock()
        self._seen: tuple | None = None
        self._parts: dict[tuple[str, str], Part] = {}
        self._building: dict[tuple[str, str], threading.Lock] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._homeworks: dict[str, Homework] = {}
        self.unknown: set[str] = set()  # homework ids of results.json the bank cannot load (own, not named)
        self._assignments: dict[str, Assignment] = {}
        self.embedder = embed.default()

    # ------------------------------------------------------------ loading

    def open(self) -> Any:
        return staff.store(self.path)

    def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(conn)`, made again while a run switching OUT in has the store away."""
        return staff.retrying(self.path, work)

    def start(self) -> None:
        """Make the store if there is none, and bring its snapshot to results.json's run."""
        if not (self.out / "results.json").is_file():
            raise ConfigError(f"{self.out}: no results.json; run `grade run ... -o {self.out}` first")
        with staff.store(self.path, create=True) as conn:
            self.key = staff.secret(conn)
        self.refresh()

    def refresh(self, force: bool = False) -> None:
        """Reload if results.json changed (a rerun) since last looked at (or `force`: the store did)."""
        if force:
            with self.lock:
                self._seen = None
        source = self.out / "results.json"
        try:
            stat = source.stat()
        except FileNotFoundError:
            return  # a run is switching OUT in: what was loaded stays until it is back
        seen = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        with self.lock:
            if seen == self._seen:
                return
            try:
                results = json.loads(source.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return  # written while read: the next look reads it whole
            self.write(lambda conn: self._recorded(conn, results))
            self._seen = seen
            self._parts.clear()

    def _recorded(self, conn: sqlite3.Connection, results: list[dict[str, Any]]) -> None:
        homeworks = self._homeworks_of({r.get("homework") for r in results if r.get("homework")})
        asked = regrades.requested(conn)
        answers = [a for r in results if isinstance(r, dict) and not r.get("error") and r.get("homework")
                   for p in r.get("parts", ()) for a in [staff.answer_of(r["homework"], r["student"], p, None,
                                                                         (r["homework"], r["student"], p.get("id"))
                                                                         in asked)]
                   if a is not None]
        if staff.snapshot_digest(conn) != staff.digest(answers):
            staff.record(conn, answers, staff.part_rows(homeworks, answers))
        else:
            with staff.writing(conn):
                staff.describe(conn, staff.part_rows(homeworks, answers))
        self._seed(conn, homeworks)

    def _homeworks_of(self, ids: set[str]) -> dict[str, Homework]:
        for hid in ids - set(self._homeworks):
            if self.homework is not None and self.homework.id == hid:
                self._homeworks[hid] = self.homework
                continue
            try:
                self._homeworks[hid] = self.bank.load_homework(hid)
                self.unknown.discard(hid)
            except ConfigError:
                self.unknown.add(hid)  # a homework of a folder not named with --homework: not known here
                continue
        return {hid: self._homeworks[hid] for hid in ids if hid in self._homeworks}

    def homework_of(self, hid: str) -> Homework | None:
        return self._homeworks_of({hid}).get(hid)

    def assignment(self, hid: str) -> Assignment:
        """The homework with its keys under --solutions, as `grade run` grades it (for transcriptions)."""
        with self.lock:
            if hid not in self._assignments:
                options = Options(solutions=self.solutions or Path("solutions"), bank=self.bank)
                self._assignments[hid] = resolver(options)(hid)
            return self._assignments[hid]

    def _seed(self, conn: Any, homeworks: dict[str, Homework]) -> None:
        """Give each part waiting for staff its first rubric items, from its problem file or SEEDS."""
        own = yaml.safe_load(SEEDS.read_text(encoding="utf-8")) or {}
        for (hw, pid), _ in staff.parts_of(conn).items():
            homework = homeworks.get(hw)
            part = homework.part(pid) if homework is not None else None
            if part is None:
                continue
            manual = [c for c in part.checks if c.check == "manual"]
            scale = manual[0].scale if manual else 1.0
            items = self.bank.rubric(part.problem, pid) or own.get(part.problem, {}).get(pid) or []
            staff.seed_rubric(conn, (hw, pid), [(float(i["points"]) * scale, i["text"]) for i in items])

    def anonymous(self) -> bool:
        """Graded anonymously: the store's setting (the instructor's), else what a homework asks for. A
        homework that cannot be loaded here may ask for it (`anonymous: true` in its own folder), so it
        is taken to: its ids stay hidden until the instructor names its folder or lifts anonymity."""
        asks = bool(self.unknown) or any(getattr(h, "anonymous", False) for h in self._homeworks.values())
        with self.open() as conn:
            return staff.anonymous(conn, asks)

    def names(self) -> Names:
        return Names(self.anonymous(), self.key)

    # ------------------------------------------------------------ parts and groups

    def parts(self) -> list[tuple[str, str]]:
        self.refresh()
        with self.open() as conn:
            return sorted(staff.parts_of(conn), key=lambda k: (k[0], _natural(k[1])))

    def part(self, homework: str, part_id: str) -> Part | None:
        """The part as grouped now: from the cache while nothing its grouping depends on changed; one
        request groups it at a time (the others of a team opening the part wait for that grouping)."""
        self.refresh()
        where = (homework, part_id)
        with self.lock:
            building = self._building.setdefault(where, threading.Lock())
        with building:
            return self._part(where)

    def _part(self, where: tuple[str, str]) -> Part | None:
        with self.open() as conn:
            info = staff.parts_of(conn).get(where)
            if info is None:
                return None
            rubric = tuple((i.id, i.points, i.text, i.version) for i in staff.rubric_of(conn, *where))
            default = self.embedder.threshold if rubric else self.embedder.threshold_alone
            threshold = _threshold(staff.setting(conn, where, "threshold"), default)
            placements = staff.placements_of(conn, where)
            own = {k for k in staff.grades_of(conn, *where) if k.startswith("student:")}
            changed = _changed_since_grading(conn, where)
            stamp = (staff.snapshot_digest(conn), threshold, tuple(sorted(placements.items())), tuple(sorted(own)),
                     rubric, tuple(sorted(changed)))
            cached = self._parts.get(where)
            if cached is not None and cached.stamp == stamp:
                return cached
            rows = staff.answers_of(conn, *where)
            grades = staff.grades_of(conn, *where)
        kinds = json.loads(info["kinds"])
        units = self._units(rows, kinds, placements, grades, changed)
        made = Part(*where, kinds, info["written"], info["max"], info["statement"], units, [], threshold,
                    self.embedder.name, stamp, hashlib.sha256(repr(stamp).encode()).hexdigest()[:16])
        made.groups = self._groups(made, placements, tuple(i[2] for i in rubric))
        with self.lock:
            self._parts[where] = made
        return made

    def _units(self, rows: list[Any], kinds: dict[str, str], placements: dict[str, tuple[str, str | None]],
               grades: dict[str, Grade], changed: dict[str, str]) -> list[Unit]:
        alone = {k[len("student:"):]: fp for k, (_, fp) in placements.items() if k.startswith("student:")}
        alone.update({k[len("student:"):]: g.fp for k, g in grades.items() if k.startswith("student:") and g.fp})
        units: dict[str, Unit] = {}
        for row in rows:
            student, fp = row["student"], row["fp"]
            key = f"student:{student}" if alone.get(student) == fp else fp
            unit = units.get(key)
            if unit is None:
                answer = json.loads(row["answer"])
                written = [v for k, v in answer.items() if kinds.get(k) == "text"] or list(answer.values())
                unit = units[key] = Unit(self.opaque(key), key, fp, [], answer, "\n".join(written), {}, row["cap"],
                                         row["status"], json.loads(row["raw"]) if row["raw"] else {},
                                         kind=row["kind"] or "staff")
            unit.students.append(student)
            unit.machine[student] = row["machine"]
            unit.cap = min(unit.cap, row["cap"])
            if student in changed and row["prior"]:
                unit.prior = {"answer": json.loads(row["prior"]), "graded_fp": changed[student]}
        # An answer here only for a regrade request is in the part's queue of requests, not in its groups.
        return [u for u in units.values() if u.kind == "staff"]

    def opaque(self, key: str, kind: str = "u") -> str:
        return kind + hmac.new(self.key, key.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:14]

    def pseudonym(self, student: str) -> str:
        return staff.pseudonym(self.key, student)

    def vectors(self, texts: list[str]) -> np.ndarray:
        """Each text's vector, made once per text and process."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            for text, vector in zip(missing, self.embedder.vectors(missing)):
                self._vectors[text] = vector
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])

    def _groups(self, part: Part, placements: dict[str, tuple[str, str | None]], items: tuple[str, ...]) -> list[Group]:
        placed: dict[str, list[Unit]] = {}
        free = []
        for unit in part.units:
            label = placements.get(unit.key, (None, None))[0]
            if unit.prior is not None:
                placed.setdefault(f"changed:{unit.key}", []).append(unit)  # never joins a graded group
            elif label is not None and (not unit.key.startswith("student:") or placements[unit.key][1] == unit.fp):
                placed.setdefault(label, []).append(unit)
            else:
                free.append(unit)
        groups = [Group("", units, label) for label, units in placed.items()]
        groups += self._free_groups(part, free, items)
        vectors = self.vectors([u.text for u in part.units])
        index = {u.key: i for i, u in enumerate(part.units)}
        members = [[index[u.key] for u in g.units] for g in groups]
        weights = [len(u.students) for u in part.units]
        centers = grouping.centroids(vectors, members, weights) if len(part.units) else vectors
        for g, center, m in zip(groups, centers, members):
            g.center = center
            g.units = [part.units[i] for i in grouping.typical(vectors, m, center)]
            g.id = self.opaque("|".join(sorted(u.key for u in g.units)), "g")
        if not groups:
            return []
        if part.text:
            start = max(range(len(groups)), key=lambda i: (groups[i].size, -i))
            return [groups[i] for i in grouping.chain(centers, start)]
        return sorted(groups, key=lambda g: (-g.size, g.id))

    def _free_groups(self, part: Part, units: list[Unit], items: tuple[str, ...]) -> list[Group]:
        """Units no one placed: by value for machine parts; for written ones, by normalized text,
        then by meaning, kept apart where they are nearest different rubric items."""
        if not units:
            return []
        if not part.text:
            by: dict[str, list[Unit]] = {}
            for u in units:
                by.setdefault(u.fp, []).append(u)
            return [Group("", us) for us in by.values()]
        exact = grouping.exact([u.text for u in units])
        firsts = [units[members[0]].text for members in exact]
        vectors = self.vectors(firsts)
        apart = grouping.nearest_items(vectors, self.vectors(list(items)))
        merged = grouping.by_meaning(vectors, part.threshold, apart) if len(firsts) > 1 else [[0]]
        return [Group("", [units[i] for e in m for i in exact[e]]) for m in merged]


def _threshold(stored: str | None, default: float) -> float:
    try:
        value = float(stored) if stored is not None else default
    except ValueError:
        return default
    return value if 0.0 < value <= 1.0 else default


def _changed_since_grading(conn: sqlite3.Connection, where: tuple[str, str]) -> dict[str, str]:
    """Student -> the answer they were graded for, for each whose answer changed since and whose new
    answer has no grade yet."""
    rows = conn.execute(
        "SELECT student, graded_fp FROM answers a WHERE homework = ? AND part = ? AND graded_fp IS NOT NULL AND "
        "graded_fp != fp AND NOT EXISTS (SELECT 1 FROM grades g WHERE g.homework = a.homework AND g.part = a.part "
        "AND g.graded = 1 AND (g.key = a.fp OR (g.key = 'student:' || a.student AND g.fp = a.fp)))", where)
    return {r["student"]: r["graded_fp"] for r in rows}


def _natural(text: str) -> tuple:
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text))


# ---------------------------------------------------------------- a part's state, as pages and the API show it


@dataclass
class State:
    """A part's grades read now: each unit's grade and points, each student's score."""

    part: Part
    rubric: list[Item]
    grades: dict[str, Grade]
    comments: dict[str, tuple[str, int]]
    transcripts: dict[str, Transcript] = field(default_factory=dict)  # answer fingerprint -> its transcription
    claims: dict[str, str] = field(default_factory=dict)  # group id -> the grader holding it
    look_again: set[str] = field(default_factory=set)  # students whose graded answer changed

    def grade(self, unit: Unit) -> Grade | None:
        g = self.grades.get(unit.key)
        return g if g is not None and g.graded else None

    def transcript(self, unit: Unit) -> Transcript | None:
        return self.transcripts.get(unit.fp) if unreadable(unit.status) else None

    def waiting(self, unit: Unit) -> float:
        """The points staff still decide of a unit: once transcribed, what the checks left waiting (a
        written field), else all that waits."""
        transcript = self.transcript(unit)
        return float(transcript.verdict.get("pending_points") or 0.0) if transcript is not None else unit.cap

    def decided(self, unit: Unit) -> bool:
        """Graded by staff, or by the part's checks on staff's transcription (and staff, for what they left)."""
        if self.transcript(unit) is not None:
            return self.waiting(unit) <= 1e-9 or self.grade(unit) is not None
        return self.grade(unit) is not None

    def points(self, unit: Unit) -> float | None:
        """The points staff's decision adds to the machine's (a transcription's: what its verdict gives
        beyond what the machine gave), or None while it waits."""
        if not self.decided(unit):
            return None
        g, transcript = self.grade(unit), self.transcript(unit)
        if transcript is None:
            return staff.staff_points(g, {i.id: i for i in self.rubric}, unit.cap) if g is not None else None
        rest = self.waiting(unit)
        extra = staff.staff_points(g, {i.id: i for i in self.rubric}, rest) if g is not None and rest > 1e-9 else 0.0
        machine = min(unit.machine.values()) if unit.machine else 0.0
        return round(float(transcript.verdict.get("score") or 0.0) + extra - machine, 6)

    def graded(self, group: Group) -> bool:
        return all(self.decided(u) for u in group.units)

    def students(self, group: Group) -> Iterator[tuple[str, Unit]]:
        for unit in group.units:
            for student in unit.students:
                yield student, unit


def state(room: Classroom, part: Part) -> State:
    with room.open() as conn:
        rubric = staff.rubric_of(conn, *part.where)
        grades = staff.grades_of(conn, *part.where)
        comments = staff.student_comments(conn, *part.where)
        transcripts = {fp: t for (_, _, fp), t in transcripts_of(conn, *part.where).items()}
        claims = handed.holders(conn, part.where)
        again = {r["student"] for r in staff.answers_of(conn, *part.where)
                 if r["graded_fp"] is not None and r["graded_fp"] != r["fp"]}
    found = State(part, rubric, grades, comments, transcripts, claims)
    found.look_again = {s for s in again if not any(found.decided(u) for u in part.units if s in u.students)}
    return found


# ---------------------------------------------------------------- suggestions and JSON


def suggestions(room: Classroom, found: State) -> dict[str, dict[str, Any]]:
    """For each ungraded group of a written part: the grade of its nearest graded group and the
    rubric items nearest its answers; shown to staff, applied only when they press a key."""
    part = found.part
    if not part.text or not part.groups:
        return {}
    centers = np.stack([g.center for g in part.groups])
    graded = [i for i, g in enumerate(part.groups) if found.graded(g)]
    near = grouping.nearest(centers, graded)
    texts = [i.text for i in found.rubric]
    closest = grouping.closest_items(centers, room.vectors(texts)) if texts else [[] for _ in part.groups]
    made = {}
    for i, group in enumerate(part.groups):
        if i in graded:
            continue
        entry: dict[str, Any] = {"items": [found.rubric[j].id for j, _ in closest[i]]}
        if i in near and near[i].similarity >= SUGGEST_FROM:
            other = part.groups[near[i].index]
            grade = found.grade(other.units[0])
            entry["neighbour"] = {"group": other.id, "similarity": round(near[i].similarity, 3),
                                  "items": list(grade.items) if grade else [],
                                  "adjust": grade.adjust if grade else 0.0,
                                  "points": found.points(other.units[0])}
        made[group.id] = entry
    return made


def group_json(room: Classroom, found: State, group: Group, names: Names) -> dict[str, Any]:
    """A group as the API gives it: representative answer, size, members with their scores, units, grade."""
    members = []
    for student, unit in sorted(found.students(group), key=lambda su: names.shown(su[0])):
        points = found.points(unit)
        machine = unit.machine.get(student, 0.0)
        comment = found.comments.get(student, ("", 0))
        members.append({"student": names.shown(student), "unit": unit.id, "machine": machine,
                        "staff": points, "score": None if points is None else round(machine + points, 6),
                        "comment": comment[0], "comment_version": comment[1],
                        "look_again": student in found.look_again})
    first = group.units[0]
    grade = found.grade(first)
    units = [unit_json(found, u) for u in group.units]
    states = {(u["graded"], tuple(sorted(u["items"]))) for u in units}
    return {"id": group.id, "answer": answer_text(first.answer), "size": group.size,
            "placed": group.label is not None and not group.label.startswith("changed:"),
            "changed": group.label is not None and group.label.startswith("changed:"),
            "graded": found.graded(group), "mixed": len(states) > 1, "items": list(grade.items) if grade else [],
            "points": found.points(first), "cap": first.cap, "claimed_by": found.claims.get(group.id),
            "members": members, "units": units}


def unit_json(found: State, u: Unit) -> dict[str, Any]:
    g = found.grades.get(u.key)
    transcript = found.transcript(u)
    made = {"id": u.id, "answer": u.answer, "size": len(u.students), "cap": u.cap, "status": u.status,
            "graded": found.decided(u), "items": list(g.items) if g else [], "adjust": g.adjust if g else 0.0,
            "comment": g.comment if g else "", "version": g.version if g else 0, "by": g.who if g else None,
            "points": found.points(u), "unreadable": unreadable(u.status),
            "transcript": transcript.to_json() if transcript is not None else None}
    if unreadable(u.status):
        made["written"] = u.raw
    if u.prior is not None:
        made["prior"] = _prior(found, u)
    return made


def _prior(found: State, u: Unit) -> dict[str, Any]:
    """The answer a changed unit's students were graded for, with the grade it had."""
    old_fp = u.prior["graded_fp"] if u.prior else None
    old = found.grades.get(old_fp or "")
    if old is None or not old.graded:
        old = next((found.grades[f"student:{s}"] for s in u.students if f"student:{s}" in found.grades
                    and found.grades[f"student:{s}"].fp == old_fp), None)
    points = staff.staff_points(old, {i.id: i for i in found.rubric}, u.cap) if old is not None else None
    return {"answer": (u.prior or {}).get("answer", {}), "items": list(old.items) if old else [], "points": points,
            "comment": old.comment if old else ""}


def answer_text(answer: dict[str, str]) -> str:
    if len(answer) == 1:
        return next(iter(answer.values()))
    return "\n".join(f"{name}: {value}" for name, value in answer.items())


def part_key(homework: str, part_id: str, homeworks: set[str]) -> str:
    """How a part is named where several homeworks may share a part id (as grades.csv names columns)."""
    return f"{homework}:{part_id}" if len(homeworks) > 1 else part_id


def progress(found: State) -> dict[str, Any]:
    """A part's progress: students graded and to grade, points still pending, groups left, and how many
    answers each grader graded."""
    graded = to_grade = 0
    pending = 0.0
    by: dict[str, int] = {}
    for group in found.part.groups:
        for _, unit in found.students(group):
            if not found.decided(unit):
                to_grade += 1
                pending += found.waiting(unit)
                continue
            graded += 1
            grade, transcript = found.grade(unit), found.transcript(unit)
            who = transcript.who if transcript is not None else grade.who if grade is not None else None
            by[who or "?"] = by.get(who or "?", 0) + 1
    left = [g.id for g in found.part.groups if not found.graded(g)]
    return {"homework": found.part.homework, "part": found.part.id, "graded": graded, "to_grade": to_grade,
            "pending_points": round(pending, 2), "groups": len(found.part.groups), "groups_left": len(left),
            "next_group": left[0] if left else None, "look_again": len(found.look_again),
            "written": found.part.text, "by_grader": dict(sorted(by.items()))}
