"""`grade autograder HOMEWORK -o autograder.zip`: a Gradescope autograder for one homework."""

from __future__ import annotations

import argparse
from typing import Mapping

from ..errors import EXIT_OK
from ..gradescope import build_autograder
from ..gradescope.build import point_split
from ..runtime.text import printable
from .options import homework_source


def main(args: argparse.Namespace) -> int:
    source = homework_source(args)
    path = build_autograder(source.homework, args.out, solutions=source.solutions, gold=source.gold,
                            source=args.source, bank=source.bank)
    homework = source.bank.load_homework(source.homework)
    print(printable(f"wrote {path}"))
    for line in split_lines(point_split(homework, source.gold), homework.max_score):
        print(printable(line))
    return EXIT_OK


def split_lines(split: Mapping[str, float], total: float) -> list[str]:
    """Who grades the points, for the instructor setting up the assignment on Gradescope."""
    machine = split["now"] + split["published"]
    staff = split["written"] + split["no_gold"]
    lines = [f"of {total:g} points, {machine:g} are graded by the autograder ({split['now']:g} shown to students "
             f"at once, {split['published']:g} once you publish grades) and {staff:g} wait for course staff"]
    if split["written"]:
        lines.append(f"  {split['written']:g} for written answers: grade them with Gradescope's manual grading "
                     "(add rubric items worth these points to the assignment's outline)")
    if split["no_gold"]:
        lines.append(f"  up to {split['no_gold']:g} scored against gold the zip does not hold: pass it with "
                     "--gold NAME=FILE, or grade those shares by hand")
    return lines
