"""Claims: while a team grades one part, "next ungraded group" hands each grader a group no one else
holds, for a short while (`TTL`), renewed while their page shows it and dropped when they take
another. A claim is a courtesy between graders, never a lock on the grades: a change to a claimed
group is still only refused when it was made from a stale view (see `grades.change`).
"""

from __future__ import annotations

import sqlite3
import time
from typing import Sequence

from .store import writing

TTL = 90.0  # seconds a claim lasts without its page renewing it (a page renews it every poll)


def holders(conn: sqlite3.Connection, where: tuple[str, str], at: float | None = None) -> dict[str, str]:
    """Group id -> the grader holding it now."""
    at = time.time() if at is None else at
    rows = conn.execute("SELECT grp, grader FROM claims WHERE homework = ? AND part = ? AND until > ?", (*where, at))
    return {r["grp"]: r["grader"] for r in rows}


def take_next(conn: sqlite3.Connection, where: tuple[str, str], order: Sequence[str], grader: str,
              after: str | None = None) -> tuple[str | None, int]:
    """The first group of `order` (the ungraded groups, in the page's order) after `after` that no other
    grader holds, now claimed by `grader` (their other claim in the part is dropped); None if every one
    is held by others. Also how many are held by others."""
    at = time.time()
    with writing(conn):
        conn.execute("DELETE FROM claims WHERE until <= ?", (at,))
        held = holders(conn, where, at)
        others = {g for g, who in held.items() if who != grader}
        start = order.index(after) + 1 if after in order else 0
        for gid in list(order[start:]) + list(order[:start]):
            if gid not in others:
                _claim(conn, where, gid, grader, at)
                return gid, len(others & set(order))
        conn.execute("DELETE FROM claims WHERE homework = ? AND part = ? AND grader = ?", (*where, grader))
        return None, len(others & set(order))


def _claim(conn: sqlite3.Connection, where: tuple[str, str], gid: str, grader: str, at: float) -> None:
    conn.execute("DELETE FROM claims WHERE homework = ? AND part = ? AND grader = ? AND grp != ?",
                 (*where, grader, gid))
    conn.execute("INSERT INTO claims VALUES (?,?,?,?,?) ON CONFLICT(homework, part, grp) DO UPDATE SET "
                 "grader = excluded.grader, until = excluded.until", (*where, gid, grader, at + TTL))


def renew(conn: sqlite3.Connection, where: tuple[str, str], gid: str, grader: str) -> bool:
    """Keep `grader`'s claim on `gid` (their page still shows it); False if they do not hold it."""
    at = time.time()
    with writing(conn):
        cur = conn.execute("UPDATE claims SET until = ? WHERE homework = ? AND part = ? AND grp = ? AND grader = ? "
                           "AND until > ?", (at + TTL, *where, gid, grader, at))
        return cur.rowcount > 0


def release(conn: sqlite3.Connection, where: tuple[str, str], grader: str, gid: str | None = None) -> None:
    """Drop `grader`'s claim (on `gid`, or any in the part): the group is graded, or they left it."""
    with writing(conn):
        if gid is None:
            conn.execute("DELETE FROM claims WHERE homework = ? AND part = ? AND grader = ?", (*where, grader))
        else:
            conn.execute("DELETE FROM claims WHERE homework = ? AND part = ? AND grader = ? AND grp = ?",
                         (*where, grader, gid))
