"""Print a Result for a person at a terminal (used by `grade check`)."""

from __future__ import annotations

from .records import Result

_MARK = {"correct": "ok", "partial": "~", "incorrect": "x", "invalid": "!", "missing": "-", "manual": "?",
         "unchecked": "?"}


def print_result(result: Result) -> None:
    print(f"{result.student} - {result.homework}")
    for note in result.notes:
        print(f"  note: {note}")
    for v in result.parts:
        print(f"[{_MARK.get(v.status, '?'):>2}] {v.part:<8} {v.status:<10} {v.score:g}/{v.max_score:g}")
        for name, text in v.readings.items():
            print(f"       {name} read as: {text}")
        for line in v.feedback:
            print("       " + line.replace("\n", "\n       "))
    checked = sum(v.max_score for v in result.parts if v.status not in ("unchecked", "manual"))
    print(f"machine-checked so far: {result.score:g} of {checked:g} points "
          f"(of {result.max_score:g}; the rest is checked by course staff)")
