"""`grade check FILE`: a student's self-check of one submission, with no keys anywhere."""

from __future__ import annotations

import argparse
import builtins
import json
import sys

from ..errors import EXIT_OK, EXIT_SUBMISSION_FAILED, SubmissionError
from ..grading import self_check
from ..records import Result, Status
from ..runtime.text import counted, printable
from .options import homework_source


def main(args: argparse.Namespace) -> int:
    source = homework_source(args)
    try:
        result = self_check(args.path, budget=args.budget, homework=source.homework, bank=source.bank)
    except SubmissionError as err:
        if args.json:
            print(json.dumps({"student": args.path.stem, "homework": None, "score": 0, "max_score": 0,
                              "parts": [], "error": str(err)}, indent=2))
        else:
            print(f"grade: {printable(str(err))}", file=sys.stderr)
        return EXIT_SUBMISSION_FAILED
    if args.json:
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        print_result(result)
    return EXIT_OK


_MARK = {Status.CORRECT: "ok", Status.PARTIAL: "~", Status.INCORRECT: "x", Status.INVALID: "!", Status.MISSING: "-",
         Status.PENDING: "?", Status.UNCHECKED: "?"}


def print_result(result: Result) -> None:
    """The result for a person at a terminal: each part's status, points, readings and feedback."""

    def print(line: str) -> None:  # noqa: A001 - every line holds the student's text: shown, never acted on
        builtins.print(printable(line))

    print(f"{result.student} - {result.homework}")
    for note in result.notes:
        print(f"  note: {note}")
    for v in result.parts:
        print(f"[{_MARK.get(v.status, '?'):>2}] {v.part:<8} {v.status:<10} {v.score:g}/{v.max_score:g}")
        for name, text in v.shown.items():
            print(f"       {name} read as: {text}")
        for line in v.feedback:
            print("       " + line.replace("\n", "\n       "))
    # What a machine decided here: not the points left to staff, nor written answers (answered or not).
    checked = sum(v.points.decided for v in result.parts)
    print(f"machine-checked so far: {round(result.score, 2):g} of {counted(checked, 'point')} "
          f"(of {result.max_score:g}; the rest is checked by course staff)")
