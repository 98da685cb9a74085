"""`grade validate [PATH]`: load a bank or homework folder with its keys exactly as grading does."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..checkers.accuracy import expected_lines, load_gold
from ..errors import EXIT_OK, ConfigError
from ..grading import assignment
from ..problems import HOMEWORK_FILE, HomeworkFolder
from ..problems.keys import load_keys
from .options import open_bank


def main(args: argparse.Namespace) -> int:
    if args.bank is not None and (args.bank / HOMEWORK_FILE).is_file():
        bank = HomeworkFolder(args.bank)
        solutions = args.solutions or bank.root
    else:
        bank, solutions = open_bank(args.bank), args.solutions or Path("solutions")
    ids = bank.homework_ids()
    if not ids:
        raise ConfigError(f"{args.bank}: no homeworks/*.yaml in this bank")
    gold = bank.gold() if isinstance(bank, HomeworkFolder) else {}
    for hid in ids:
        homework = bank.load_homework(hid)  # problem files: params, fields, checks
        keys = load_keys(solutions, homework)
        assignment(homework, keys, solutions=solutions)  # keys cover every key-based check
        for part in homework.parts:  # every gold a check reads is there and readable, or its length is known
            for spec in part.checks:
                if spec.check == "accuracy_file":
                    expected_lines(part, spec.prepared, load_gold(spec.prepared["gold"], gold))
        checks = sum(len(p.checks) for p in homework.parts)
        print(f"{hid}: ok ({len(homework.parts)} parts, {checks} checks, "
              f"{'keys from ' + str(keys.source) if keys else 'no keys needed'})")
    return EXIT_OK
