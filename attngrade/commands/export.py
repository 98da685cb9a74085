"""`grade export OUT --format canvas|gradescope`: a run's grades in the columns an LMS imports
(`export-HOMEWORK-FORMAT.csv`: always named by the homework it holds, so the file says which it is
and one homework's export never overwrites another's), with the regrade requests staff answered
beside it (`requests-HOMEWORK.csv`)."""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
from pathlib import Path
from typing import Any

from .. import staff
from ..errors import EXIT_OK, ConfigError
from ..outputs.lms import export, read_roster
from ..runtime.files import write_atomic
from ..outputs.tables import spreadsheet_cell
from ..runtime.text import counted, printable
from ..staff import requests as regrades


def main(args: argparse.Namespace) -> int:
    source = args.out / "results.json"
    try:
        results = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ConfigError(f"{source}: not a results.json of `grade run` ({err})") from None
    roster = read_roster(args.roster) if args.roster else {}
    text, said = export(results, roster, args.format, args.assignment, args.homework)
    graded = sorted({r["homework"] for r in results if r.get("homework") and not r.get("error")})
    homework = args.homework or graded[0]  # `export` refused a run of none or several without --homework
    target = args.output or args.out / f"export-{_safe(homework)}-{args.format}.csv"
    write_atomic(target, text)
    count, *said = said
    print(printable(f"wrote {target} ({args.format}: {count})"))
    for line in said:
        print(printable(line))
    listed = _requests(args.out, homework, results)
    if listed is not None:
        print(printable(listed))
    return EXIT_OK


def _safe(name: str) -> str:
    """A homework id as part of a file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "homework"


def _requests(out: Path, homework: str, results: list[dict[str, Any]]) -> str | None:
    """Write the answered regrade requests of `homework` beside the export; what to say of it."""
    store = out / staff.STORE
    if not store.is_file():
        return None
    answered = regrades.answered_in(store, homework)
    if not answered:
        return None
    scores = {(r["student"], p["id"]): p for r in results if r.get("homework") == homework
              for p in r.get("parts", ())}
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["student", "part", "request", "reply", "answered by", "answered at", "score", "max score"])
    for r in answered:
        part = scores.get((r.student, r.part), {})
        writer.writerow([spreadsheet_cell(r.student), spreadsheet_cell(r.part), spreadsheet_cell(r.message),
                         spreadsheet_cell(r.reply), spreadsheet_cell(r.who or ""), r.at or "",
                         part.get("score", ""), part.get("max_score", "")])
    target = out / f"requests-{_safe(homework)}.csv"
    write_atomic(target, buffer.getvalue())
    return f"wrote {target} ({counted(len(answered), 'answered regrade request')})"
