"""overrides.yaml in and out of the store: `grade review OUT --import FILE` and `--export FILE`."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..errors import ConfigError
from ..runtime.text import counted
from .apply import decisions
from .grades import Change, answers_of, change, grades_of, parts_of
from .store import MARK


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
