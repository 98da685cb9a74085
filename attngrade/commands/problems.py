"""`grade problems [HOMEWORK]`: the homeworks in the bank, or one homework's parts."""

from __future__ import annotations

import argparse
import textwrap

from ..errors import EXIT_OK
from ..intake.formats.write import field_kind
from ..problems import homework_ids, load_homework, open_homework
from ..runtime.text import counted


def main(args: argparse.Namespace) -> int:
    if not args.homework:
        for hid in homework_ids():
            hw = load_homework(hid)
            print(f"{hid}\t{hw.course}: {hw.title} ({counted(hw.max_score, 'point')})")
        return EXIT_OK
    bank, hid = open_homework(args.homework)
    hw = bank.load_homework(hid)
    for part in hw.parts:
        fields = ", ".join(f"{f.name}:{f.expect or f.kind}" for f in part.fields)
        symbols = ", ".join(part.table.names()) or "-"
        checks = ", ".join(c.check for c in part.checks)
        print(f"{part.id}\t{part.points:g} pt{'' if part.points == 1 else 's'}\t{checks}\tfields {fields}\tsymbols {symbols}")
        if part.statement:
            print(textwrap.fill(part.statement, width=100, initial_indent="    ", subsequent_indent="    "))
        for f in part.fields:
            if f.kind == "file" and f.filename:
                print(f"    expects the file {f.filename} ({f.name})")
            elif f.kind in ("choice", "bool"):  # the words the answer is read as, with the ones that name each
                print(f"    {f.name}: {field_kind(f)}")
                for option, phrases in f.options.items():
                    if phrases:
                        print(textwrap.fill(f"{option} (also: {', '.join(phrases)})", width=100,
                                            initial_indent="      ", subsequent_indent="        "))
    return EXIT_OK
