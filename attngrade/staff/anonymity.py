"""Anonymous grading: for a whole run, staff see each student as a pseudonym, never their id.

It is the store's setting, turned on by `grade review OUT --anonymous` (or a homework's
`anonymous: true`) and lifted only by the instructor's command line (`--no-anonymous`): no page
can. Pseudonyms are keyed by the store's own secret (`store.secret`), so they are stable across
restarts and cannot be worked back to ids without the file.
"""

from __future__ import annotations

import hashlib
import hmac
import sqlite3

from .store import secret, set_setting, setting

GLOBAL = ("", "")


def anonymous(conn: sqlite3.Connection, default: bool = False) -> bool:
    """Whether this run is graded anonymously: the instructor's word if they gave it, else `default`
    (a homework that asks for it)."""
    value = setting(conn, GLOBAL, "anonymous")
    return default if value is None else value == "1"


def set_anonymous(conn: sqlite3.Connection, on: bool, who: str) -> None:
    set_setting(conn, GLOBAL, "anonymous", "1" if on else "0", who)


def pseudonym(key: bytes, student: str) -> str:
    return "anon-" + hmac.new(key, b"who:" + student.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:10]


def pseudonyms(conn: sqlite3.Connection, students: list[str] | None = None) -> dict[str, str]:
    """Student id -> pseudonym, for `students` or every student of the snapshot."""
    key = secret(conn)
    if students is None:
        students = [r[0] for r in conn.execute("SELECT DISTINCT student FROM answers")]
    return {s: pseudonym(key, s) for s in students}
