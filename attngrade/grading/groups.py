"""Answer groups: students whose answers to a part are the same, up to notation.

Math answers are grouped by value, not by text: each reading is evaluated at a few
fixed random instances of the part's symbols (the same instances for every student),
and the rounded numbers are its fingerprint. `2(k_a-k_c)` and `2k_a - 2k_c` land in
one group; text answers are grouped by their normalized words.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np

from ..checkers.instances import random_instance
from ..mathlang import Value
from ..mathlang.evaluate import NUMERIC, EvaluationError, evaluate
from ..reading import FileReading
from ..records import Part, Result, Verdict

_INSTANCES = 3


@dataclass
class Group:
    """One distinct answer to one part and the students who gave it."""

    part: str
    id: str
    members: list[str] = field(default_factory=list)
    example: Verdict | None = None  # one member's verdict, to show the answer and its grade

    @property
    def count(self) -> int:
        return len(self.members)


def fingerprint(part: Part, name: str, reading: Any) -> str:
    """A string equal for readings with the same value (math) or the same words (text)."""
    if isinstance(reading, Value):
        return _math_fingerprint(part, name, reading)
    if isinstance(reading, FileReading):
        return f"file:{reading.sha256}"
    if isinstance(reading, str):
        return "text:" + " ".join(re.findall(r"[a-z0-9]+", reading.lower()))
    return f"{type(reading).__name__}:{reading!r}"


def _math_fingerprint(part: Part, name: str, value: Value) -> str:
    table = part.table_for(name)
    rng = np.random.default_rng(20240917)  # the same instances for every student
    numbers = []
    try:
        for _ in range(_INSTANCES):
            env, dims = random_instance(table, [value.expr], rng)
            x = np.asarray(evaluate(value.expr, env, dims, NUMERIC), dtype=float)
            if value.shape and value.shape[0] == 1 and value.shape[1] != 1:
                x = x.T  # a row vector groups with the column vector it stands for
            numbers.append(np.round(x, 6).tolist())
    except (EvaluationError, ValueError, TypeError, ZeroDivisionError, OverflowError, np.linalg.LinAlgError):
        return f"{value.kind}:{value.canonical}"
    return f"{value.kind}:{numbers}"


# (homework, part, field, canonical form) -> a math reading's fingerprint, made where it was checked
Prints = dict[tuple[str, str, str, str], str]


def prints_of(tasks: Iterable[Any], assignments: Mapping[str, Any]) -> Prints:
    """The fingerprints of the math readings among the run stage's `tasks` (the costly kind: each is
    evaluated at instances), keyed (homework, part, field, canonical form), for `answer_groups`.

    A run-stage worker makes them for the batch it checked, while the class is still being read;
    grouping, which comes after the run stage in one process, then finds them made."""
    made: Prints = {}
    for task in tasks:
        homework, part_id = task.key.homework, task.key.part
        part = assignments[homework].homework.part(part_id)
        for name, value in task.answers.items():
            if part is not None and isinstance(value, Value):
                key = (homework, part_id, name, value.canonical)
                if key not in made:
                    made[key] = fingerprint(part, name, value)
    return made


def by_member(groups: Mapping[str, Mapping[str, Iterable[Group]]] | None) -> dict[tuple[str, str, str], str]:
    """(homework, student, part) -> the id of the answer group the student's answer is in, for groups
    per homework and part (`answer_groups` of each homework)."""
    return {(hid, member, g.part): g.id for hid, by_part in (groups or {}).items() for gs in by_part.values()
            for g in gs for member in g.members}


def group_id(part: str, key: str) -> str:
    return f"{part}#{hashlib.sha256(key.encode()).hexdigest()[:8]}"


def answer_groups(results: Iterable[Result], parts: dict[str, Part],
                  made: Prints | None = None) -> dict[str, list[Group]]:
    """Groups per part id, largest first; only parts that were answered. `made`: fingerprints this
    run's workers made already (`prints_of`)."""
    groups: dict[str, dict[str, Group]] = {}
    prints: dict[tuple[str, str, str], str] = {}
    known: dict[int, str] = {}  # id(verdict) -> its group: students with equal answers share a Verdict
    for result in results:
        for verdict in result.parts:
            part = parts.get(verdict.part)
            if part is None or not verdict.readings:
                continue
            gid = known.get(id(verdict))
            if gid is None:
                gid = known[id(verdict)] = _group_of(verdict, part, prints, result.homework or "", made or {})
            group = groups.setdefault(verdict.part, {}).setdefault(gid, Group(verdict.part, gid))
            group.members.append(result.student)
            group.example = group.example or verdict
    return {pid: sorted(g.values(), key=lambda g: (-g.count, g.id)) for pid, g in groups.items()}


def _group_of(verdict: Verdict, part: Part, prints: dict[tuple[str, str, str], str], homework: str,
              made: Prints) -> str:
    pieces = []
    for name in sorted(verdict.readings):
        reading = verdict.readings[name]
        memo = (verdict.part, name, _identity(reading))
        if memo not in prints:
            given = made.get((homework, *memo))
            prints[memo] = given if given is not None else fingerprint(part, name, reading)
        pieces.append(f"{name}={prints[memo]}")
    for name in sorted(set(verdict.answers) - set(verdict.readings)):
        # written but unreadable: not the same as left blank, and two typos are two answers
        text = verdict.answers[name]
        pieces.append(f"{name}=unreadable:{hashlib.sha256(text.encode()).hexdigest()[:12]}")
    return group_id(verdict.part, "|".join(pieces))


def _identity(reading: Any) -> str:
    if isinstance(reading, Value):
        return reading.canonical
    if isinstance(reading, FileReading):
        return reading.sha256
    return f"{type(reading).__name__}:{reading!r}"
