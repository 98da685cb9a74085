"""`grade assign HOMEWORK`: a student template of a homework, with no keys and no answers."""

from __future__ import annotations

import argparse

from ..errors import EXIT_OK
from ..intake.formats.write import STYLE, WRITERS
from ..problems import open_homework
from ..runtime.files import write_atomic


def main(args: argparse.Namespace) -> int:
    bank, hid = open_homework(args.homework)
    homework = bank.load_homework(hid)
    write, suffix = WRITERS[args.format]
    target = args.out / f"{homework.id}{suffix}"
    write_atomic(target, write(homework))
    written = [target]
    if args.format == "tex":
        write_atomic(args.out / "attngrade.sty", STYLE)
        written.append(args.out / "attngrade.sty")
    print("wrote " + " and ".join(str(p) for p in written))
    return EXIT_OK
