"""Print a Result for a person at a terminal (used by `grade check`)."""

from __future__ import annotations

import builtins

from .rawtext import printable
from .records import Result

_MARK = {"correct": "ok", "partial": "~", "incorrect": "x", "invalid": "!", "missing": "-", "manual": "?",
         "unchecked": "?"}


def print_result(result: Result) -> None:
    def print(line: str) -> None:  # noqa: A001 - every line holds the student's text: shown, never acted on
        builtins.print(printable(line))

    print(f"{result.student} - {result.homework}")
    for note in result.notes:
        print(f"  note: {note}")
    for v in result.parts:
        print(f"[{_MARK.get(v.status, '?'):>2}] {v.part:<8} {v.status:<10} {v.score:g}/{v.max_score:g}")
        for name, text in v.readings.items():
            print(f"       {name} read as: {text}")
        for line in v.feedback:
            print("       " + line.replace("\n", "\n       "))
    # What a machine decided here: not the points left to staff, nor written answers (answered or not).
    checked = sum(v.points.decided for v in result.parts)
    print(f"machine-checked so far: {round(result.score, 2):g} of {round(checked, 2):g} points "
          f"(of {result.max_score:g}; the rest is checked by course staff)")
