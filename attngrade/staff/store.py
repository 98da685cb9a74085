"""The staff store's file: `OUT/staff.sqlite`, its tables, connections and write transactions.

Every write is one transaction (`BEGIN IMMEDIATE`, so two writers queue instead of failing halfway)
that adds what it changed to the audit log. Connections are opened per use and never create the
file behind a caller's back: a run switching OUT in moves the file, and each write is checkpointed,
so the file alone always holds every committed grade. A write that meets the file moved away (a
run switching OUT in) waits for it to be back and is made again (`retrying`).

A store that cannot be read or written is a `StoreError` naming the file and what to do, never a
traceback.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from ..errors import ConfigError
from ..records import STAFF_GRADED, STAFF_MARK

STORE = "staff.sqlite"  # the store's name in OUT
MARK = STAFF_MARK  # every feedback line `apply` adds starts with this
KEYED_WAITING = STAFF_GRADED  # WAITING as answers' fingerprints have always held it
SCHEMA = 2
SWITCH_WAIT = 10.0  # seconds a use waits for the file while a run switches OUT in

_TABLES = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS parts(homework TEXT, part TEXT, kinds TEXT NOT NULL, written REAL NOT NULL,
    max REAL NOT NULL, statement TEXT NOT NULL DEFAULT '', PRIMARY KEY(homework, part));
CREATE TABLE IF NOT EXISTS answers(homework TEXT, part TEXT, student TEXT, fp TEXT NOT NULL, answer TEXT NOT NULL,
    status TEXT NOT NULL, machine REAL NOT NULL, cap REAL NOT NULL, max REAL NOT NULL, vgroup TEXT,
    graded_fp TEXT, PRIMARY KEY(homework, part, student));
CREATE TABLE IF NOT EXISTS grades(homework TEXT, part TEXT, key TEXT, fp TEXT, items TEXT NOT NULL DEFAULT '[]',
    adjust REAL NOT NULL DEFAULT 0, comment TEXT NOT NULL DEFAULT '', graded INTEGER NOT NULL DEFAULT 0,
    version INTEGER NOT NULL DEFAULT 0, who TEXT, at TEXT, PRIMARY KEY(homework, part, key));
CREATE TABLE IF NOT EXISTS rubric(id INTEGER PRIMARY KEY AUTOINCREMENT, homework TEXT NOT NULL, part TEXT NOT NULL,
    points REAL NOT NULL, text TEXT NOT NULL, position INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0,
    version INTEGER NOT NULL DEFAULT 1);
CREATE TABLE IF NOT EXISTS comments(homework TEXT, part TEXT, student TEXT, comment TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 1, who TEXT, at TEXT, PRIMARY KEY(homework, part, student));
CREATE TABLE IF NOT EXISTS placements(homework TEXT, part TEXT, key TEXT, label TEXT NOT NULL, fp TEXT,
    PRIMARY KEY(homework, part, key));
CREATE TABLE IF NOT EXISTS settings(homework TEXT, part TEXT, name TEXT, value TEXT NOT NULL,
    PRIMARY KEY(homework, part, name));
CREATE TABLE IF NOT EXISTS audit(id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, who TEXT NOT NULL,
    action TEXT NOT NULL, homework TEXT, part TEXT, target TEXT, before TEXT, after TEXT);
CREATE INDEX IF NOT EXISTS answers_fp ON answers(homework, part, fp);
"""

# Schema 2: graders with secrets of their own, claims on groups, transcriptions, regrade requests;
# what a student wrote and the answer a changed one was graded for; a comment kept with its answer.
_SCHEMA_2 = """
ALTER TABLE answers ADD COLUMN raw TEXT;
ALTER TABLE answers ADD COLUMN prior TEXT;
ALTER TABLE answers ADD COLUMN kind TEXT NOT NULL DEFAULT 'staff';
CREATE TABLE comments2(homework TEXT, part TEXT, student TEXT, fp TEXT NOT NULL DEFAULT '', comment TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 1, who TEXT, at TEXT, PRIMARY KEY(homework, part, student, fp));
INSERT INTO comments2 SELECT c.homework, c.part, c.student, COALESCE((SELECT a.fp FROM answers a WHERE
    a.homework = c.homework AND a.part = c.part AND a.student = c.student), ''), c.comment, c.version, c.who, c.at
    FROM comments c;
DROP TABLE comments;
ALTER TABLE comments2 RENAME TO comments;
CREATE TABLE IF NOT EXISTS graders(name TEXT PRIMARY KEY, secret TEXT NOT NULL, added TEXT NOT NULL, revoked TEXT,
    by TEXT);
CREATE TABLE IF NOT EXISTS claims(homework TEXT, part TEXT, grp TEXT, grader TEXT NOT NULL, until REAL NOT NULL,
    PRIMARY KEY(homework, part, grp));
CREATE TABLE IF NOT EXISTS transcripts(homework TEXT, part TEXT, fp TEXT, text TEXT NOT NULL, verdict TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 1, who TEXT, at TEXT, PRIMARY KEY(homework, part, fp));
CREATE TABLE IF NOT EXISTS requests(id INTEGER PRIMARY KEY AUTOINCREMENT, homework TEXT NOT NULL, part TEXT NOT NULL,
    student TEXT NOT NULL, message TEXT NOT NULL, fp TEXT, received TEXT NOT NULL, source TEXT NOT NULL,
    reply TEXT NOT NULL DEFAULT '', version INTEGER NOT NULL DEFAULT 0, who TEXT, at TEXT,
    UNIQUE(homework, part, student, message));
CREATE INDEX IF NOT EXISTS audit_part ON audit(homework, part, id);
"""

T = TypeVar("T")


class Conflict(Exception):
    """A write made from a stale view: someone changed the row since it was read."""

    def __init__(self, message: str, current: Any = None):
        super().__init__(message)
        self.current = current


class StoreError(ConfigError):
    """The store cannot be read or written: the message names the file and what to do."""


# ---------------------------------------------------------------- connections


def open_store(path: Path, create: bool = False, wait: float = SWITCH_WAIT) -> sqlite3.Connection:
    """A connection to the store at `path`, brought to this schema; the file is made (with its tables)
    only when `create`. A missing file is waited for up to `wait` seconds (a run switching OUT in)."""
    path = Path(path)
    _wait_for(path, create, wait)
    try:
        conn = sqlite3.connect(f"file:{_quoted(path.absolute())}?mode={'rwc' if create else 'rw'}", uri=True,
                               timeout=10.0, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as err:
        raise explained(path, err) from err
    try:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout = 10000")
        _prepare(conn, path, create)
    except sqlite3.Error as err:
        conn.close()
        raise explained(path, err) from err
    except BaseException:
        conn.close()
        raise
    return conn


def _wait_for(path: Path, create: bool, wait: float) -> None:
    deadline = time.monotonic() + wait
    while not create and not path.is_file():
        if path.exists() or path.is_symlink() or time.monotonic() >= deadline:
            what = "is not a file" if path.exists() or path.is_symlink() else "does not exist"
            raise StoreError(f"{path}: the staff store {what}; `grade review {path.parent}` makes one in the output "
                             "folder of a `grade run`")
        time.sleep(0.05)


def _prepare(conn: sqlite3.Connection, path: Path, create: bool) -> None:
    if create:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.executescript(_TABLES)
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', '1')")
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    except sqlite3.OperationalError as err:
        if "no such table" in str(err):
            raise StoreError(f"{path}: this SQLite file is not a staff store (it has no meta table); move it "
                             f"aside and `grade review {path.parent}` makes a fresh one") from None
        raise
    schema = int(row[0]) if row is not None and str(row[0]).isdecimal() else 1
    if schema > SCHEMA:
        raise StoreError(f"{path}: made by a newer attngrade (store schema {schema}, this one reads up to {SCHEMA}); "
                         "upgrade attngrade (pip install -U attngrade)")
    if schema < SCHEMA:
        _migrate(conn, schema)


def _migrate(conn: sqlite3.Connection, schema: int) -> None:
    """Bring an older store to this schema, in one transaction (a second opener finds it done)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None or int(row[0]) < 2:
            for statement in _SCHEMA_2.split(";"):
                if statement.strip():
                    conn.execute(statement)
        conn.execute("INSERT INTO meta VALUES ('schema', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                     (str(SCHEMA),))
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('secret', ?)", (secrets.token_hex(32),))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def explained(path: Path, err: BaseException) -> StoreError:
    """What SQLite said of the store at `path`, as what it means and what to do."""
    text = str(err)
    if isinstance(err, StoreError):
        return err
    if "not a database" in text or "malformed" in text or "file is encrypted" in text:
        return StoreError(f"{path}: the staff store is damaged ({text}); move it aside (keep it: the audit log may "
                          "be recoverable with `sqlite3 FILE .recover`) and restore a copy, or let "
                          f"`grade review {path.parent}` start a fresh one")
    if "readonly" in text or "read-only" in text or not _writable(path):
        return StoreError(f"{path}: the staff store cannot be written ({text}); make the file and its folder "
                          "writable by this user (chmod u+w), then try again")
    if "unable to open" in text:
        return StoreError(f"{path}: the staff store cannot be opened ({text}); check that its folder exists and "
                          "is readable")
    if "locked" in text or "busy" in text:
        return StoreError(f"{path}: the staff store stayed locked by another program ({text}); try again")
    return StoreError(f"{path}: the staff store failed ({text})")


def _writable(path: Path) -> bool:
    return (not path.exists() or os.access(path, os.W_OK)) and os.access(path.parent, os.W_OK)


def _quoted(path: Path) -> str:
    return str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")


@contextmanager
def store(path: Path, create: bool = False) -> Iterator[sqlite3.Connection]:
    conn = open_store(path, create)
    try:
        yield conn
    except sqlite3.Error as err:
        raise explained(Path(path), err) from err
    finally:
        conn.close()


@contextmanager
def reading(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection that only reads the store at `path` and writes nothing beside it (no lock files):
    for commands that must leave OUT as it is (`grade groups`, `grade export`). Every committed grade
    is in the file itself (each write is checkpointed), so it reads them all."""
    path = Path(path)
    try:
        conn = sqlite3.connect(f"file:{_quoted(path.absolute())}?mode=ro&immutable=1", uri=True)
        conn.row_factory = sqlite3.Row
        conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    except sqlite3.Error as err:
        raise explained(path, err) from err
    try:
        yield conn
    except sqlite3.Error as err:
        raise explained(path, err) from err
    finally:
        conn.close()


def retrying(path: Path, work: Callable[[sqlite3.Connection], T], wait: float = SWITCH_WAIT) -> T:
    """`work(conn)` on a fresh connection, made again while the file is away (a run moving OUT's files
    refuses a write to the moved file: SQLite calls it read-only) or busy; each try is one transaction
    or none, so a try that failed changed nothing."""
    deadline = time.monotonic() + wait
    while True:
        try:
            with store(path) as conn:
                return work(conn)
        except StoreError as err:
            cause = err.__cause__
            transient = isinstance(cause, sqlite3.OperationalError) and any(
                word in str(cause) for word in ("readonly", "locked", "busy", "disk I/O", "unable to open"))
            if not transient or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


@contextmanager
def writing(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken at once (so two writers queue instead of failing halfway)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    # The file alone then holds every committed grade: a run that moves OUT's files one by one
    # can never part the store from a write-ahead log that still holds some of them.
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def audit(conn: sqlite3.Connection, who: str, action: str, where: tuple[str, str], target: str,
          before: Any, after: Any) -> None:
    conn.execute("INSERT INTO audit(at, who, action, homework, part, target, before, after) VALUES (?,?,?,?,?,?,?,?)",
                 (now(), who, action, where[0], where[1], target, _dumps(before), _dumps(after)))


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def secret(conn: sqlite3.Connection) -> bytes:
    """The store's own secret: keys pseudonyms and the opaque ids of answers and groups."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'secret'").fetchone()
    return bytes.fromhex(row[0])


def last_change(conn: sqlite3.Connection) -> int:
    """The newest audit entry's id: every change a page shows adds one."""
    return int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM audit").fetchone()[0])


def setting(conn: sqlite3.Connection, where: tuple[str, str], name: str, default: str | None = None) -> str | None:
    row = conn.execute("SELECT value FROM settings WHERE homework = ? AND part = ? AND name = ?",
                       (*where, name)).fetchone()
    return row[0] if row else default


def set_setting(conn: sqlite3.Connection, where: tuple[str, str], name: str, value: str, who: str) -> None:
    with writing(conn):
        before = setting(conn, where, name)
        conn.execute("INSERT INTO settings VALUES (?,?,?,?) ON CONFLICT(homework, part, name) DO UPDATE SET "
                     "value=excluded.value", (*where, name, value))
        audit(conn, who, f"set {name}", where, name, before, value)
