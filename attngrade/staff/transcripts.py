"""Transcriptions: an answer the machine could not read, typed again by staff in attngrade's notation
(docs/reference/math.md) and graded by the part's own checks, as if the student had written it so.

A transcription is kept by the answer's fingerprint (every student who wrote the same unreadable
answer has it, transcribed once) with who typed it and what the checks said; `grade run` grades it
again with the run's keys (`apply`), and a student's report shows what they wrote, the
transcription, who made it and the verdict on it. One that the reader cannot read either is
refused with the reader's own message (`Unreadable`).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any, Mapping

from ..grading import Assignment, grade_answer
from ..records import Verdict
from .store import Conflict, audit, now, writing

TEXT_CHARS = 5_000  # of each field of a transcription


# Answers a transcription is for: none of it read, or some fields not (the rest graded, the part partly pending).
UNREADABLE = ("invalid", "partly pending")


def unreadable(status: str) -> bool:
    return str(status) in UNREADABLE


class Unreadable(ValueError):
    """A transcription the reader cannot read: its message is the reader's."""


@dataclass(frozen=True)
class Transcript:
    fp: str
    text: Mapping[str, str]  # field -> what staff typed
    verdict: Mapping[str, Any]  # what the part's checks said of it (Verdict.to_json)
    version: int
    who: str | None
    at: str | None

    def to_json(self) -> dict[str, Any]:
        return {"text": dict(self.text), "verdict": dict(self.verdict), "version": self.version, "by": self.who,
                "at": self.at}


def checked_text(text: Any, fields: list[str]) -> dict[str, str]:
    """A transcription as the API takes it: field -> text for fields of the part; ValueError if not."""
    if not isinstance(text, Mapping) or not text:
        raise ValueError("a transcription is an object: field -> what the student wrote, in attngrade's notation")
    unknown = [str(k) for k in text if k not in fields]
    if unknown:
        raise ValueError(f"no field {', '.join(unknown)[:80]} in this part; its fields: {', '.join(fields)}")
    if any(not isinstance(v, str) for v in text.values()):
        raise ValueError("each field of a transcription is text")
    return {str(k): v[:TEXT_CHARS] for k, v in text.items()}


def graded(assignment: Assignment, part_id: str, text: Mapping[str, str]) -> Verdict:
    """The part's checks on the transcription; Unreadable (with the reader's message) if it does not read."""
    verdict = grade_answer(assignment, part_id, dict(text))
    if unreadable(verdict.status):
        said = [line for line in verdict.feedback if not line.startswith("could not read this answer")]
        raise Unreadable("the transcription does not read either: " + " ".join(said or verdict.feedback))
    return verdict


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    return {**verdict.to_json(), "pending_points": verdict.pending_points}


def transcribe(conn: sqlite3.Connection, where: tuple[str, str], fp: str, text: Mapping[str, str],
               verdict: Mapping[str, Any], expected: int | None, who: str) -> Transcript:
    """Keep staff's transcription of the answer `fp` (replacing one made before, if `expected` is its version)."""
    with writing(conn):
        before = _row(conn, where, fp)
        version = before.version if before is not None else 0
        if expected is not None and expected != version:
            raise Conflict(f"the transcription was changed meanwhile by {before.who if before else 'someone'}",
                           before.to_json() if before else None)
        made = Transcript(fp, dict(text), dict(verdict), version + 1, who, now())
        conn.execute("INSERT INTO transcripts VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(homework, part, fp) DO UPDATE SET "
                     "text=excluded.text, verdict=excluded.verdict, version=excluded.version, who=excluded.who, "
                     "at=excluded.at", (*where, fp, json.dumps(made.text, ensure_ascii=False),
                                        json.dumps(made.verdict, ensure_ascii=False), made.version, who, made.at))
        audit(conn, who, "transcribe", where, fp, before.to_json() if before else None, made.to_json())
        return made


def remove(conn: sqlite3.Connection, where: tuple[str, str], fp: str, expected: int | None, who: str) -> None:
    """Take a transcription back: the answer waits for staff again."""
    with writing(conn):
        before = _row(conn, where, fp)
        if before is None:
            return
        if expected is not None and expected != before.version:
            raise Conflict(f"the transcription was changed meanwhile by {before.who}", before.to_json())
        conn.execute("DELETE FROM transcripts WHERE homework = ? AND part = ? AND fp = ?", (*where, fp))
        audit(conn, who, "remove transcription", where, fp, before.to_json(), None)


def _row(conn: sqlite3.Connection, where: tuple[str, str], fp: str) -> Transcript | None:
    row = conn.execute("SELECT * FROM transcripts WHERE homework = ? AND part = ? AND fp = ?", (*where, fp)).fetchone()
    return _transcript(row) if row is not None else None


def _transcript(row: sqlite3.Row) -> Transcript:
    return Transcript(row["fp"], json.loads(row["text"]), json.loads(row["verdict"]), row["version"], row["who"],
                      row["at"])


def transcripts_of(conn: sqlite3.Connection, homework: str | None = None,
                   part: str | None = None) -> dict[tuple[str, str, str], Transcript]:
    """(homework, part, fp) -> its transcription."""
    query, args = "SELECT * FROM transcripts", ()
    if homework is not None:
        query, args = query + " WHERE homework = ? AND part = ?", (homework, part)
    return {(r["homework"], r["part"], r["fp"]): _transcript(r) for r in conn.execute(query, args)}
