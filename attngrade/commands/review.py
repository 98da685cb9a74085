"""`grade review OUT`: the staff grading app over a run's output folder (or, with --import/--export,
the staff store's decisions from or into an overrides file)."""

from __future__ import annotations

import argparse

from ..errors import EXIT_OK, ConfigError
from .. import staff
from ..review.classroom import Classroom
from ..review.server import serve
from ..runtime.files import write_atomic
from ..runtime.text import printable
from .options import homework_source


def main(args: argparse.Namespace) -> int:
    source = homework_source(args)
    homework = source.bank.load_homework(source.homework) if source.homework else None
    if not (args.out / "results.json").is_file():
        raise ConfigError(f"{args.out}: no results.json here; run `grade run ... -o {args.out}` first")
    if args.import_overrides is None and args.export_overrides is None:
        return serve(args.out, args.host, args.port, source.bank, homework)
    room = Classroom(args.out, source.bank, homework)
    room.start()
    with staff.store(room.path) as conn:
        if args.import_overrides is not None:
            for line in staff.import_overrides(conn, args.import_overrides, args.grader):
                print(printable(line))
        if args.export_overrides is not None:
            write_atomic(args.export_overrides, staff.export_overrides(conn))
            print(printable(f"wrote {args.export_overrides}: pass it to grade run with --overrides"))
    return EXIT_OK
