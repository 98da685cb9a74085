"""`grade validate [PATH]`: load a bank or homework folder with its keys exactly as grading does.

Beyond loading, it checks what loading cannot see: every key is graded by its own check and
must earn full marks (a key the check does not give full marks to would make every right
answer wrong); every symbol an `attention_query` part declares has a position; partial-credit
parameters stay within their check's points. `--show-keys` prints every key as it was read.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any, Iterator

import yaml

from ..checkers import REGISTRY
from ..checkers.accuracy import expected_lines, load_gold
from ..checkers.messages import render
from ..errors import EXIT_OK, ConfigError
from ..grading import Assignment, InProcess, assignment, plan, run
from ..grading.plan import PartReading
from ..problems import HOMEWORK_FILE, Bank, HomeworkFolder
from ..problems.keys import Keys, load_keys
from ..problems.lines import locate
from ..records import Homework, Part, Submission
from ..runtime.safe_yaml import SAFE_LOADER
from ..runtime.text import counted, printable
from .options import open_bank

KEY_BUDGET = 20.0  # seconds for one check of one key: a few keys, and a slow key is worth waiting for
# Parameters that give part of a check's points, by check: each must stay within the check's points.
PARTIAL_PARAMS = {"bigO": ("loose_points", "untidy_points"), "attention_query": ("unscaled_points",)}
_WORD = re.compile(r"(?<![\\A-Za-z_])[A-Za-z]{2,}(?![A-Za-z_])")


def main(args: argparse.Namespace) -> int:
    if args.bank is not None and (args.bank / HOMEWORK_FILE).is_file():
        bank: Bank = HomeworkFolder(args.bank)
        solutions = args.solutions or bank.root
    else:
        bank, solutions = open_bank(args.bank), args.solutions or Path("solutions")
    ids = bank.homework_ids()
    if not ids:
        raise ConfigError(f"{args.bank}: no homeworks/*.yaml in this bank")
    gold = bank.gold() if isinstance(bank, HomeworkFolder) else {}
    errors: list[str] = []
    for hid in ids:
        homework = bank.load_homework(hid)  # problem files: params, fields, checks
        keys = load_keys(solutions, homework)
        graded = assignment(homework, keys, solutions=solutions)  # keys cover every key-based check
        for part in homework.parts:  # every gold a check reads is there and readable, or its length is known
            for spec in part.checks:
                if spec.check == "accuracy_file":
                    expected_lines(part, spec.prepared, load_gold(spec.prepared["gold"], gold))
        found = settings_errors(bank, homework)
        if keys is not None and keys.answers:
            found += key_errors(graded, keys, getattr(args, "show_keys", False))
        errors += found
        if not found:
            checks = sum(len(p.checks) for p in homework.parts)
            print(f"{hid}: ok ({counted(len(homework.parts), 'part')}, {counted(checks, 'check')}, "
                  f"{'keys from ' + str(keys.source) if keys else 'no keys needed'})")
    if errors:
        raise ConfigError("\n".join(errors))
    return EXIT_OK


# -- the problem files: what loading accepts but grading cannot use -------------------------------
def settings_errors(bank: Bank, homework: Homework) -> list[str]:
    """Each check's settings that would grade every student wrong, as `file:line: ...` lines."""
    errors = []
    for part in homework.parts:
        where = bank.where("library", part.problem)
        text = _text(bank, part.problem)
        for spec in part.checks:
            for name, message in _setting_problems(part, spec):
                line = locate(text, part.id, name) if text else None
                errors.append(f"{where}{f':{line}' if line else ''}: part {part.id}, check {spec.check}: {message}")
    return errors


def _setting_problems(part: Part, spec: Any) -> Iterator[tuple[str, str]]:
    """(the parameter, what is wrong) for one check of a part."""
    own = spec.points / spec.scale if spec.scale else spec.points  # params are in the problem's own points
    params = spec.params or {}
    if spec.check == "attention_query":
        declared = [n for n, s in part.table.specs.items() if s.kind == "vector" and not s.define]
        missing = [n for n in declared if n not in (params.get("positions") or {})]
        if missing:
            them = "it" if len(missing) == 1 else "them"
            places = ", ".join(f"'{n}: <1..n>'" for n in missing)
            yield "positions", (f"the part declares {', '.join(missing)} but positions gives {them} no place among "
                                f"the keys, so every answer using {them} would get 0; add {places} under positions, "
                                "or remove the symbol")
    for name in PARTIAL_PARAMS.get(spec.check, ()):
        value = params.get(name)
        if isinstance(value, (int, float)) and not 0 <= value <= own + 1e-9:
            yield name, (f"{name} is {value:g}, but the check is worth {own:g} points; give at most {own:g} "
                         "(partial credit cannot be more than the check's points)")
    if spec.check == "attention_qkv":
        shares = {k: v.get("points") for k, v in (params.get("partial") or {}).items() if isinstance(v, dict)}
        total = sum(v for v in shares.values() if isinstance(v, (int, float)))
        if total > own + 1e-9:
            named = " + ".join(f"{k} {v:g}" for k, v in shares.items() if isinstance(v, (int, float)))
            yield "partial", (f"the partial credits add up to {total:g} ({named}), but the check is worth "
                              f"{own:g} points; lower them to at most {own:g} in all")


def _text(bank: Bank, problem: str) -> str | None:
    try:
        return bank._path("library", problem).read_text(encoding="utf-8")
    except OSError:
        return None


# -- the keys: each graded by its own check ------------------------------------------------------
def key_errors(graded: Assignment, keys: Keys, show: bool = False) -> list[str]:
    """Every key graded as an answer with the checks it is for: a key that does not earn a check's
    full marks is an error naming the part and what the check saw; `show` prints each key as read."""
    text = keys.source.read_text(encoding="utf-8") if keys.source else ""
    raw = _raw_keys(text)
    answers = {pid: raw.get(pid) for pid in keys.answers}
    key = Submission(student="key", homework=graded.id, answers=answers, path=keys.source or Path("keys.yaml"))
    planned = plan([key], lambda _: graded, prestart=False)
    outcomes = run(planned.tasks, planned.assignments, InProcess(KEY_BUDGET))
    entry = planned.entries[0]
    errors = []
    if show:
        print(printable(f"{graded.id}: the keys as read ({keys.source})"))
    for reading in getattr(entry, "parts", ()):
        if reading.part.id not in keys.answers:
            continue
        where = f"{keys.source}:{locate(text, reading.part.id) or 1}"
        if show:
            _show(reading, answers[reading.part.id])
        found = [*_glued(reading, answers[reading.part.id]), *_failed(reading, outcomes)]
        errors += [f"{where}: part {reading.part.id}, {message}" for message in found]
    return errors


def _raw_keys(text: str) -> dict[str, Any]:
    try:
        data = yaml.load(text, Loader=SAFE_LOADER) or {}  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        return {}
    keys = data.get("keys") if isinstance(data, dict) else None
    return {str(pid): value for pid, value in (keys or {}).items()} if isinstance(keys, dict) else {}


def _failed(reading: PartReading, outcomes: dict) -> Iterator[str]:
    """What each check that could grade the key saw, where the key did not earn its points."""
    part = reading.part
    for step in reading.steps:
        spec = part.checks[step.index]
        if step.task is None or step.blank or step.unchecked or REGISTRY[spec.check].runs_code:
            continue
        outcome = outcomes[step.task]
        if outcome.earned >= spec.points - 1e-9 and not (outcome.is_pending or outcome.invalid or outcome.failed):
            continue
        saw = "; ".join(render(line) for line in outcome.feedback) or "no reason given"
        read = ", ".join(f"{name} read as {reading.shown.get(name, '?')}" for name in spec.fields)
        why = "could not decide the key" if outcome.is_pending else \
            f"gives the key {outcome.earned:g} of {spec.points:g} points"
        yield (f"field{'' if len(spec.fields) == 1 else 's'} {', '.join(spec.fields)}: its {spec.check} check {why}, so a student who writes the key "
               f"would not get full marks ({read}); the check saw: {saw}. Fix the key (`--show-keys` prints "
               "every key as read) or the check's params")
    for line in reading.feedback:  # the key did not read (a field the part does not have, a parse error)
        yield f"the key: {render(line)}"


def _glued(reading: PartReading, raw: Any) -> Iterator[str]:
    """Letters run together that read as a product of one symbol with itself (`dd` as d·d): in a
    key, a typo far more often than a square, and every right answer would be judged by it."""
    values = raw if isinstance(raw, dict) else {reading.part.fields[0].name: raw}
    for name, value in values.items():
        try:
            declared = set(reading.part.table_for(str(name)).names())
        except KeyError:
            continue
        for word in _WORD.findall(str(value)):
            if word not in declared and set(word) <= declared and any(a == b for a, b in zip(word, word[1:])):
                yield (f"field '{name}': '{word}' reads as the product {' '.join(word)}, so the key reads as "
                       f"{reading.shown.get(str(name), '?')} and every answer is judged by that; if that is a "
                       f"typo, fix it; if you mean the product, write it with spaces or as a power")


def _show(reading: PartReading, raw: Any) -> None:
    values = raw if isinstance(raw, dict) else {reading.part.fields[0].name: raw}
    for name, value in values.items():
        shown = reading.shown.get(str(name), "(not read)")
        written = ("yes" if value else "no") if isinstance(value, bool) else str(value)
        print(printable(f"  {reading.part.id:<8} {name}: {written}  ->  read as: {shown}"))
