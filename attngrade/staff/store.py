"""The staff store's file: `OUT/staff.sqlite`, its tables, connections and write transactions.

Every write is one transaction (`BEGIN IMMEDIATE`, so two writers queue instead of failing halfway)
that adds what it changed to the audit log. Connections are opened per use and never create the
file behind a caller's back: a run switching OUT in moves the file, and each write is checkpointed,
so the file alone always holds every committed grade.
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ..errors import ConfigError
from ..records import STAFF_GRADED, STAFF_MARK

STORE = "staff.sqlite"  # the store's name in OUT
MARK = STAFF_MARK  # every feedback line `apply` adds starts with this
KEYED_WAITING = STAFF_GRADED  # WAITING as answers' fingerprints have always held it
SCHEMA = 1

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


class Conflict(Exception):
    """A write made from a stale view: someone changed the row since it was read."""

    def __init__(self, message: str, current: Any = None):
        super().__init__(message)
        self.current = current




def open_store(path: Path, create: bool = False) -> sqlite3.Connection:
    """A connection to the store at `path`; the file is made (with its tables) only when `create`."""
    path = Path(path)
    mode = "rwc" if create else "rw"
    try:
        conn = sqlite3.connect(f"file:{_quoted(path.absolute())}?mode={mode}", uri=True, timeout=10.0,
                               isolation_level=None, check_same_thread=False)
    except sqlite3.OperationalError as err:
        raise ConfigError(f"{path}: cannot open the staff store ({err})") from None
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 10000")
    if create:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.executescript(_TABLES)
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA),))
    return conn


def _quoted(path: Path) -> str:
    return str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")


@contextmanager
def store(path: Path, create: bool = False) -> Iterator[sqlite3.Connection]:
    conn = open_store(path, create)
    try:
        yield conn
    finally:
        conn.close()


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
