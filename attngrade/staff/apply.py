"""Applying the store to a run's results: what staff decided for each student's part, and the
verdicts with it (`grade run` calls `apply` after grading, before the outputs are written)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

from ..errors import ConfigError
from ..grading import Assignment
from ..records import WAITING, Homework, Result, Status, Verdict
from ..runtime.text import counted
from .answers import Answer, Renamed, carry, collect, part_rows, record
from .grades import Grade, Item, answers_of, effective, grades_of, parts_of, rubric_of, staff_points, student_comments
from .requests import requested, requests_of
from .store import MARK, StoreError, explained, store
from .transcripts import Transcript, Unreadable, graded, transcripts_of, unreadable


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


def transcribed(verdict: Verdict, transcript: Transcript, assignment: Assignment | None) -> Verdict:
    """The verdict of an unreadable answer graded by its transcription: the part's checks on what staff
    typed (again, with this run's keys, where the run's assignment is given), the student's own text
    kept as they wrote it, and lines saying who transcribed it, as what, and what the checks said."""
    fresh: Verdict | None = None
    if assignment is not None:
        try:
            fresh = graded(assignment, verdict.part, transcript.text)
        except (Unreadable, ConfigError):  # the keys or the reader changed: what the checks said then holds
            fresh = None
    said = fresh.to_json() if fresh is not None else dict(transcript.verdict)
    score = round(min(verdict.max_score, float(said.get("score") or 0.0)), 6)
    pending = round(float(said.get("pending_points") or 0.0), 6)
    typed = "; ".join(f"{name}: {text}" for name, text in transcript.text.items())
    lines = [f"{MARK}your answer could not be read; {transcript.who or 'course staff'} transcribed it as: {typed}",
             f"{MARK}attngrade's checks on the transcription: {said.get('status')}, {score:g} of "
             f"{counted(verdict.max_score, 'point')}"]
    lines += [f"{MARK}{line}" for line in said.get("feedback") or ()]
    status = Status(str(said.get("status"))) if str(said.get("status")) in {s.value for s in Status} else verdict.status
    points = fresh.points if fresh is not None else replace(verdict.points, pending_points=pending)
    return replace(verdict, score=score, status=status, feedback=tuple(lines), overruled=verdict.feedback,
                   points=points)


def _within(decided: Decided, cap: float) -> Decided:
    """A staff decision held to `cap`: what still waits once a transcription was graded."""
    points = round(min(decided.points, cap), 6)
    return Decided(points, cap, (f"{MARK}{points:g} of {counted(cap, 'point')}", *decided.lines[1:]))


def replied(verdict: Verdict, replies: list[str]) -> Verdict:
    """A verdict with staff's replies to the student's regrade requests of it."""
    return replace(verdict, feedback=verdict.feedback + tuple(f"{MARK}regrade request: {text}" for text in replies))


@dataclass
class _Found:
    """What the store holds for one run: each part's staff decision, transcriptions, replies."""

    answers: list[Answer]
    decided: dict[tuple[str, str, str], Decided]
    again: list[tuple[str, str, str]]
    transcripts: dict[tuple[str, str, str], Transcript]
    replies: dict[tuple[str, str, str], list[str]]

    def __post_init__(self) -> None:
        self.fps = {(a.homework, a.student, a.part): a.fp for a in self.answers}


def apply(results: list[Result], groups: Mapping[str, Any] | None, store_path: Path,
          homeworks: Mapping[str, Homework] | None = None, renamed: Mapping[str, Renamed] | None = None,
          assignments: Mapping[str, Assignment] | None = None) -> tuple[list[Result], list[str]]:
    """`results` with every staff grade in the store at `store_path` applied, and what to tell.

    Call it after grading (and after an overrides file, whose decisions win: a part they decided
    waits for no one), before the outputs are written; `groups`: the run's answer groups
    (`outputs.write.groups_of`), `homeworks`: the run's homeworks, `renamed`: students graded under
    a new id since the run before (`history.renamed`), whose grades go with them; `assignments`: the
    run's, which grade staff's transcriptions again with this run's keys. Without a store, the results
    come back as they are; a store that cannot be read or written leaves them as they are too, and
    says so: grading never waits on the store. The store's snapshot becomes this run's, so
    `grade review` shows it."""
    path = Path(store_path)
    if not path.is_file():
        return results, []
    try:
        found = _found(results, groups, path, homeworks, renamed)
    except (StoreError, sqlite3.Error) as err:
        reason = explained(path, err)
        return results, [f"{reason}. Staff grades were not applied: the answers waiting for staff still wait in "
                         "this run's outputs; put the store right and run again"]
    updated, count = [], 0
    for result in results:
        parts, changed = [], False
        for v in result.parts:
            new, decided = _decided(v, (result.homework or "", result.student, v.part), found, assignments or {})
            count += decided
            changed |= new is not v
            parts.append(new)
        updated.append(replace(result, parts=tuple(parts), score=round(sum(v.score for v in parts), 6))
                       if changed else result)
    return updated, _said(path, found, count)


def _found(results: list[Result], groups: Mapping[str, Any] | None, path: Path,
           homeworks: Mapping[str, Homework] | None, renamed: Mapping[str, Renamed] | None) -> _Found:
    with store(path, create=True) as conn:
        carry(conn, renamed or {})
        answers = collect(results, homeworks, groups, requested(conn))
        record(conn, answers, part_rows(homeworks, answers))
        decided, again = decisions(conn)
        replies: dict[tuple[str, str, str], list[str]] = {}
        for r in requests_of(conn):
            if r.reply:
                replies.setdefault((r.homework, r.student, r.part), []).append(r.reply)
        return _Found(answers, decided, again, transcripts_of(conn), replies)


def _decided(verdict: Verdict, key: tuple[str, str, str], found: _Found,
             assignments: Mapping[str, Assignment]) -> tuple[Verdict, bool]:
    """One part with what staff decided of it (its transcription, else its grade) and their replies;
    whether staff decided its points."""
    transcript = found.transcripts.get((key[0], key[2], found.fps.get(key, "")))
    new, decided = verdict, True
    if transcript is not None and unreadable(verdict.status):
        new = transcribed(verdict, transcript, assignments.get(key[0]))
        if key in found.decided and new.pending_points > 1e-9:  # staff graded what still waits (a written field)
            new = decide(new, _within(found.decided[key], new.pending_points))
    elif key in found.decided:
        new = decide(verdict, found.decided[key])
    else:
        decided = False
    if found.replies.get(key):
        new = replied(new, found.replies[key])
    return new, decided


def _said(path: Path, found: _Found, count: int) -> list[str]:
    waiting = sum(a.kind == "staff" for a in found.answers) - count
    said = [f"{path}: applied the staff grades of {counted(count, 'answer')}; {max(waiting, 0)} still "
            f"{'waits' if waiting == 1 else 'wait'} for staff (grade review)"]
    if found.again:
        again = found.again
        shown = ", ".join(f"{student} {part}" for _, student, part in again[:8])
        said.append(f"{path}: {counted(len(again), 'graded answer')} changed since grading and "
                    f"{'needs' if len(again) == 1 else 'need'} another look: "
                    f"{shown}{' ...' if len(again) > 8 else ''}")
    return said
