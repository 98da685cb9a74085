"""overrides.yaml in and out of the store: `grade review OUT --import FILE` and `--export FILE`.

An import is all or nothing: every entry is checked first (a score must be a finite number), and a
file with a mistake changes nothing and names every mistake. Taking the same file in twice changes
nothing the second time: an entry whose decision the store already holds is left as it is.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..errors import ConfigError
from ..runtime.safe_yaml import SAFE_LOADER, not_yaml
from ..runtime.text import counted
from .anonymity import pseudonyms
from .apply import decisions
from .grades import Change, Grade, answers_of, changed_in, grades_of, parts_of
from .inputs import read_text
from .store import MARK, writing


@dataclass(frozen=True)
class _Decision:
    row: sqlite3.Row  # the answer it is for
    key: str  # the grade's key: the answer's fingerprint, or student:ID
    points: float
    comment: str | None


def import_overrides(conn: sqlite3.Connection, path: Path, who: str) -> list[str]:
    """Take the decisions of an overrides file (its groups and students) into the store, each as a
    graded answer with an adjustment (a group's decision for each of its answers, a student's for
    that student alone), in one transaction. The snapshot must be of the run the file was written for;
    students may be named by their pseudonyms (a file exported while grading anonymously)."""
    data = _read(path)
    planned, said = _planned(conn, path, data)
    taken = same = 0
    with writing(conn):
        for decision in planned:
            if _holds(conn, decision):
                same += 1
                continue
            _take(conn, decision, who)
            taken += 1
    head = f"{path}: imported {counted(taken, 'decision')}"
    return [head + (f"; {counted(same, 'decision')} already in the store" if same else "")] + said


def _read(path: Path) -> dict[str, Any]:
    text = read_text(Path(path), "overrides file")
    try:
        data = yaml.load(text, Loader=SAFE_LOADER) or {}  # noqa: S506 - the safe loader
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: {not_yaml(err)}; nothing was imported") from None
    if not isinstance(data, dict) or any(not isinstance(data.get(k) or [], list) for k in ("groups", "students")):
        raise ConfigError(f"{path}: expected the sections 'groups' and 'students', each a list; nothing was imported")
    return data


def _planned(conn: sqlite3.Connection, path: Path, data: Mapping[str, Any]) -> tuple[list[_Decision], list[str]]:
    """Every decision of the file, checked; ConfigError naming every mistake (nothing is taken then)."""
    rows = answers_of(conn)
    by_group: dict[tuple[str, str], list[sqlite3.Row]] = {}
    for row in rows:
        by_group.setdefault((row["homework"], row["vgroup"] or ""), []).append(row)
    known = {**{(pseudo, ""): s for s, pseudo in pseudonyms(conn).items()}, **{(r["student"], ""): r["student"]
                                                                              for r in rows}}
    by_student = {(row["student"], row["part"]): row for row in rows}
    planned, said, wrong = [], [], []
    for index, entry in enumerate(data.get("groups") or []):
        where = f"groups[{index}]"
        score = _score(entry, "score", where, wrong)
        if score is None:
            continue
        members = by_group.get((str(entry.get("homework")), str(entry.get("group"))), [])
        if not members:
            said.append(f"{path}: group {entry.get('group')!r} has no answer waiting for staff; left out")
        for row in {r["fp"]: r for r in members}.values():
            planned.append(_Decision(row, row["fp"], _within(score - row["machine"], row), _comment(entry)))
    for index, entry in enumerate(data.get("students") or []):
        where = f"students[{index}]"
        manual, score = _score(entry, "manual_score", where, wrong), _score(entry, "score", where, wrong)
        if manual is None and score is None:
            continue
        student = known.get((str(entry.get("student")), ""), str(entry.get("student")))
        row = by_student.get((student, str(entry.get("part"))))
        if row is None:
            said.append(f"{path}: {entry.get('student')} {entry.get('part')} is not waiting for staff; left out")
            continue
        points = manual if manual is not None else score - row["machine"]  # type: ignore[operator]
        planned.append(_Decision(row, f"student:{row['student']}", _within(points, row), _comment(entry)))
    if wrong:
        raise ConfigError(f"{path}: " + "; ".join(wrong[:20]) + ("; ..." if len(wrong) > 20 else "") +
                          "; nothing was imported: put them right and import again")
    return planned, said


def _score(entry: Any, name: str, where: str, wrong: list[str]) -> float | None:
    if not isinstance(entry, Mapping):
        wrong.append(f"{where} is not a mapping of keys and values")
        return None
    value = entry.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        wrong.append(f"{where}: {name} {value!r} is not a finite number of points")
        return None
    return float(value)


def _comment(entry: Mapping[str, Any]) -> str | None:
    value = entry.get("comment")
    return None if value is None else str(value)


def _within(points: float, row: sqlite3.Row) -> float:
    return round(min(max(points, 0.0), row["cap"]), 6)


def _holds(conn: sqlite3.Connection, decision: _Decision) -> bool:
    """Whether the store already holds this decision (an import taken twice changes nothing)."""
    grade = grades_of(conn, decision.row["homework"], decision.row["part"]).get(decision.key, Grade(decision.key))
    return (grade.graded and not grade.items and abs(grade.adjust - decision.points) < 1e-9
            and (decision.comment is None or grade.comment == decision.comment))


def _take(conn: sqlite3.Connection, decision: _Decision, who: str) -> None:
    where, keys = (decision.row["homework"], decision.row["part"]), {decision.key: decision.row["fp"]}
    changed_in(conn, where, keys, Change("set_items", items=()), who)
    changed_in(conn, where, keys, Change("adjust", value=decision.points), who)
    if decision.comment is not None:
        changed_in(conn, where, keys, Change("comment", value=decision.comment), who)


def export_overrides(conn: sqlite3.Connection, anonymous: bool = False) -> str:
    """The store's decisions as an overrides file (`grade run --overrides FILE` applies the same points);
    `anonymous`: students named by their pseudonyms (`--import` takes such a file back)."""
    decided, _ = decisions(conn)
    written = {key: row["written"] for key, row in parts_of(conn).items()}
    rows = {(r["homework"], r["student"], r["part"]): r for r in answers_of(conn)}
    shown = pseudonyms(conn) if anonymous else {}
    students = []
    for (hw, student, part), d in sorted(decided.items(), key=lambda kv: (kv[0][0], shown.get(kv[0][1], kv[0][1]),
                                                                          kv[0][2])):
        row = rows[(hw, student, part)]
        entry: dict[str, Any] = {"student": shown.get(student, student), "part": part}
        if written.get((hw, part), 0.0) > 0 and row["status"] != "invalid":
            entry["manual_score"] = d.points
        else:
            entry["score"] = round(min(row["max"], row["machine"] + d.points), 6)
        comment = "; ".join(line[len(MARK):] for line in d.lines[1:])
        entry["comment"] = comment or None
        students.append(entry)
    head = "# Staff decisions exported from the staff store (grade review); pass with --overrides.\n"
    if anonymous:
        head += ("# Graded anonymously: students are named by pseudonyms; `grade review OUT --import FILE` takes it\n"
                 "# back, or lift anonymity (grade review OUT --no-anonymous) and export again for --overrides.\n")
    return head + yaml.safe_dump({"groups": [], "students": students}, sort_keys=False, allow_unicode=True)
