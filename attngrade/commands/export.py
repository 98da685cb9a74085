"""`grade export OUT --format canvas|gradescope`: a run's grades in the columns an LMS imports."""

from __future__ import annotations

import argparse
import json

from ..errors import EXIT_OK, ConfigError
from ..outputs.lms import export, read_roster
from ..runtime.files import write_atomic
from ..runtime.text import printable


def main(args: argparse.Namespace) -> int:
    source = args.out / "results.json"
    try:
        results = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ConfigError(f"{source}: not the results of a `grade run` ({err})") from None
    roster = read_roster(args.roster) if args.roster else {}
    text, said = export(results, roster, args.format, args.assignment, args.homework)
    target = args.output or args.out / f"export-{args.format}.csv"
    write_atomic(target, text)
    count, *said = said
    print(printable(f"wrote {target} ({args.format}: {count})"))
    for line in said:
        print(printable(line))
    return EXIT_OK
