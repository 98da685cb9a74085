"""Applying the store to a run's results: what staff decided for each student's part, and the
verdicts with it (`grade run` calls `apply` after grading, before the outputs are written)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

from ..records import WAITING, Homework, Result, Status, Verdict
from ..runtime.text import counted
from .answers import Renamed, carry, collect, part_rows, record
from .grades import Grade, Item, answers_of, effective, grades_of, parts_of, rubric_of, staff_points, student_comments
from .store import MARK, store


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

