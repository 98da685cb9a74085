"""`grade autograder HOMEWORK -o autograder.zip`: a Gradescope autograder for one homework."""

from __future__ import annotations

import argparse

from ..errors import EXIT_OK
from ..gradescope import build_autograder
from .options import homework_source


def main(args: argparse.Namespace) -> int:
    source = homework_source(args)
    path = build_autograder(source.homework, args.out, solutions=source.solutions, gold=source.gold,
                            source=args.source, bank=source.bank)
    print(f"wrote {path}")
    return EXIT_OK
