"""Graders: the people who may change the store through `grade review`, each with a secret of their own.

A grader is added by the instructor's command line (`grade review OUT --graders alice,bob`, or
`--add-grader NAME` while the app runs), which prints the grader's URL with a fresh secret once; the
store keeps only the secret's SHA-256, so the file does not hold a usable secret. Every request the
app takes names its grader by that secret, looked up at each request: a grader added by another
process is let in at once, and one revoked is shut out at once. The audit log names the grader the
secret belongs to, never a name a page typed.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import unicodedata
from dataclasses import dataclass

from .store import audit, now, writing

NAME_CHARS = 60


@dataclass(frozen=True)
class Grader:
    name: str
    added: str
    revoked: str | None
    by: str | None


def checked_name(name: str) -> str:
    """A grader's name as kept: any letters of any script, without control or invisible characters,
    commas (--graders lists names with them) or surrounding spaces; ValueError saying what is wrong."""
    name = unicodedata.normalize("NFC", str(name)).strip()
    if not name:
        raise ValueError("a grader's name is empty")
    if len(name) > NAME_CHARS:
        raise ValueError(f"a grader's name is at most {NAME_CHARS} characters")
    bad = [c for c in name if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") or c == ","]
    if bad:
        shown = ", ".join(f"U+{ord(c):04X}" for c in dict.fromkeys(bad))
        raise ValueError(f"grader {name!r}: a name holds no commas, control or invisible characters ({shown})")
    return name


def _hashed(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def add(conn: sqlite3.Connection, name: str, by: str) -> str:
    """Add `name` (or give them a new secret, ending the old one's access); the secret, to print once."""
    name = checked_name(name)
    secret = secrets.token_urlsafe(32)
    with writing(conn):
        before = conn.execute("SELECT revoked FROM graders WHERE name = ?", (name,)).fetchone()
        conn.execute("INSERT INTO graders VALUES (?,?,?,NULL,?) ON CONFLICT(name) DO UPDATE SET secret = "
                     "excluded.secret, added = excluded.added, revoked = NULL, by = excluded.by",
                     (name, _hashed(secret), now(), by))
        action = "add grader" if before is None else "new secret"
        audit(conn, by, action, ("", ""), f"grader:{name}", None, name)
    return secret


def revoke(conn: sqlite3.Connection, name: str, by: str) -> bool:
    """End `name`'s access (their secret no longer opens anything); False if there is no such grader."""
    name = checked_name(name)
    with writing(conn):
        row = conn.execute("SELECT revoked FROM graders WHERE name = ?", (name,)).fetchone()
        if row is None:
            return False
        conn.execute("UPDATE graders SET revoked = ?, secret = '' WHERE name = ?", (now(), name))
        audit(conn, by, "revoke grader", ("", ""), f"grader:{name}", name, None)
    return True


def grader_of(conn: sqlite3.Connection, secret: str) -> str | None:
    """The grader whose secret this is, if they may still act."""
    if not secret or len(secret) > 200:
        return None
    wanted = _hashed(secret)
    row = conn.execute("SELECT name, secret FROM graders WHERE secret = ? AND revoked IS NULL", (wanted,)).fetchone()
    return row["name"] if row is not None and hmac.compare_digest(row["secret"], wanted) else None


def graders(conn: sqlite3.Connection) -> list[Grader]:
    rows = conn.execute("SELECT name, added, revoked, by FROM graders ORDER BY name")
    return [Grader(r["name"], r["added"], r["revoked"], r["by"]) for r in rows]
