"""`grade assign HOMEWORK`: a student template of a homework, with no keys and no answers.

For a course's own homework (a homework folder) the template goes out with a copy of the
folder without its keys (`DIR/<id>/`: homework.yaml and problems/), so that students can
self-check against it: `grade check <id>.ipynb --homework <id>`.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..errors import EXIT_OK
from ..intake.formats.write import STYLE, WRITERS
from ..problems import HomeworkFolder, open_homework
from ..runtime.files import write_atomic
from ..runtime.text import printable


def main(args: argparse.Namespace) -> int:
    bank, hid = open_homework(args.homework)
    homework = bank.load_homework(hid)
    write, suffix = WRITERS[args.format]
    target = args.out / f"{homework.id}{suffix}"
    write_atomic(target, write(homework))
    written = [str(target)]
    if args.format == "tex":
        write_atomic(args.out / "attngrade.sty", STYLE)
        written.append(str(args.out / "attngrade.sty"))
    if isinstance(bank, HomeworkFolder):
        copy = keyless_copy(bank, args.out / homework.id)
        written.append(f"{copy}/ (the homework without its keys)")
        print(printable("wrote " + " and ".join(written)))
        print(printable(f"students self-check with: grade check {target.name} --homework {homework.id}"))
        return EXIT_OK
    print(printable("wrote " + " and ".join(written)))
    return EXIT_OK


def keyless_copy(folder: HomeworkFolder, target: Path) -> Path:
    """The homework folder's homework and problem files (never its keys or gold) under `target`:
    what students need to self-check a course's own homework, which no install of attngrade has."""
    if os.path.realpath(target) == os.path.realpath(folder.root):
        return target  # the folder itself (`grade assign my-hw -o .` from its parent, named alike)
    kept = folder.problem_files()
    for rel in kept:
        write_atomic(target / rel, (folder.root / rel).read_text(encoding="utf-8"))
    for path in (target / "problems").glob("*.yaml"):  # removed from the homework since the last copy
        if f"problems/{path.name}" not in kept:
            path.unlink()
    return target
