"""`grade groups OUT [--part ID] [--json]`: each part's groups of answers waiting for staff, without a
server: a JSON object from part id to its groups (members, a representative answer, size, grade).

It never writes to OUT: it reads a copy of OUT's store (or a fresh scratch store) made for it, gone
afterwards. Graded anonymously, members are their pseudonyms here too."""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
from pathlib import Path
from urllib.parse import quote

from .. import staff
from ..errors import EXIT_OK, ConfigError
from ..review import classroom
from ..review.classroom import Classroom
from ..runtime.text import counted, printable
from .options import homework_source


def main(args: argparse.Namespace) -> int:
    source = homework_source(args)
    homework = source.bank.load_homework(source.homework) if source.homework else None
    if not (args.out / "results.json").is_file():
        raise ConfigError(f"{args.out}: no results.json here; run `grade run ... -o {args.out}` first")
    own = args.out / staff.STORE
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / staff.STORE
        if own.is_file():
            copied(own, copy)
        room = Classroom(args.out, source.bank, homework, store=copy)
        room.start()
        found = groups_of(room, args.part)
    if args.json:
        print(json.dumps(found, ensure_ascii=False, indent=1))
        return EXIT_OK
    for key, groups in found.items():
        answers = counted(sum(g["size"] for g in groups), "answer")
        print(printable(f"{key}: {counted(len(groups), 'group')} of {answers}"))
        for g in groups:
            first = " ".join(g["answer"].split())
            state = f"graded {g['points']:g}" if g["graded"] and g["points"] is not None else \
                "graded" if g["graded"] else "not graded"
            print(printable(f"  {g['size']:>4}  {state:<12}  {first[:90]}"))
    return EXIT_OK


def copied(source: Path, target: Path) -> None:
    """A copy of the store at `source`, read without writing a byte to OUT (no lock files: the store's
    every write is in the file itself, checkpointed at once); a copy read while the app wrote is read
    again. A store that cannot be read is a ConfigError naming it and what to do."""
    for attempt in range(3):
        try:
            reading = sqlite3.connect(f"file:{quote(str(source.absolute()))}?mode=ro&immutable=1", uri=True)
            try:
                writing = sqlite3.connect(str(target))
                try:
                    reading.backup(writing)
                    if writing.execute("PRAGMA quick_check").fetchone()[0] == "ok":
                        return
                finally:
                    writing.close()
            finally:
                reading.close()
        except sqlite3.Error as err:
            if attempt == 2:
                raise staff.explained(source, err) from None
        target.unlink(missing_ok=True)
    raise staff.explained(source, sqlite3.DatabaseError("database disk image is malformed"))


def groups_of(room: Classroom, wanted: str | None) -> dict[str, list[dict]]:
    """Part key (part id, or homework:part where several homeworks were graded) -> its groups."""
    parts = room.parts()
    homeworks = {hw for hw, _ in parts}
    names = room.names()
    found: dict[str, list[dict]] = {}
    for hw, pid in parts:
        key = classroom.part_key(hw, pid, homeworks)
        if wanted is not None and wanted not in (pid, f"{hw}:{pid}"):
            continue
        part = room.part(hw, pid)
        if part is None:
            continue
        state = classroom.state(room, part)
        found[key] = [_plain(classroom.group_json(room, state, g, names)) for g in part.groups]
    if wanted is not None and not found:
        known = ", ".join(classroom.part_key(hw, pid, homeworks) for hw, pid in parts) or "none"
        raise ConfigError(f"--part {wanted}: no part of this run waits for staff by that id; these do: {known}")
    return found


def _plain(group: dict) -> dict:
    """A group for the command line: students as members (as the app shows them), no page-only ids."""
    return {"id": group["id"], "answer": group["answer"], "size": group["size"],
            "members": [m["student"] for m in group["members"]], "graded": group["graded"],
            "points": group["points"], "cap": group["cap"],
            "answers": [{"answer": u["answer"], "size": u["size"]} for u in group["units"]]}
