"""The grade stage: read each field, run the part's checks, make one Verdict per part.

Both steps are memoized on what was actually read (the canonical form of the
answer), so a class costs what its distinct answers cost, not its head count.
"""

from __future__ import annotations

import logging
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, Mapping

from .checkers import REGISTRY, Context, Outcome
from .deadline import BudgetExceeded, time_limit
from .errors import ConfigError
from .keys import Keys
from .mathlang import Value
from .reading import FieldError, FileReading, describe, read_field, safe_text
from .records import Homework, Part, Result, Submission, Verdict

log = logging.getLogger(__name__)


@dataclass
class Stats:
    reads: int = 0
    read_hits: int = 0
    checks: int = 0
    check_hits: int = 0


@dataclass
class Grader:
    """Grades submissions of one homework; keeps the memo between them.

    With `keys=None` (a student's self-check) key-based checks are not run: the
    student learns how the answer was read, never whether it matches the key.
    """

    homework: Homework
    keys: Keys | None = None
    self_check: bool = False
    solutions: Any = None  # where keys were looked for, for messages
    gold: dict = field(default_factory=dict)  # NAME -> Path of instructor gold files
    budget: float = 2.0  # seconds one check may take
    collect: dict | None = None  # when a dict, checks are queued here instead of run
    replaying: bool = False  # a second pass over already-counted answers: leave the stats alone
    stats: Stats = field(default_factory=Stats)
    _reads: dict = field(default_factory=dict)
    _outcomes: dict = field(default_factory=dict)
    _shown: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        for part in self.homework.parts:
            for spec in part.checks:
                if spec.check not in REGISTRY:
                    raise ConfigError(f"part {part.id}: unknown check '{spec.check}'")
                if REGISTRY[spec.check].needs_key and self.keys is None and not self.self_check:
                    raise ConfigError(
                        f"part {part.id} of {self.homework.id} is checked against a key, but there are no keys "
                        f"at {self.solutions or 'solutions'}/{self.homework.id}/keys.yaml; pass --solutions DIR"
                    )

    def grade(self, submission: Submission) -> Result:
        notes = list(submission.notes)
        known = {p.id for p in self.homework.parts}
        for pid in submission.answers:
            if pid not in known:
                notes.append(f"unknown part '{pid}' was not graded; this homework's parts are: "
                             + ", ".join(p.id for p in self.homework.parts))
        verdicts = tuple(self.grade_part(part, submission.answers.get(part.id), submission.folder)
                         for part in self.homework.parts)
        return Result(
            student=submission.student,
            homework=self.homework.id,
            score=round(sum(v.score for v in verdicts), 6),
            max_score=self.homework.max_score,
            parts=verdicts,
            notes=tuple(notes),
            source=str(submission.path),
        )

    # -- one part ---------------------------------------------------------------------
    def grade_part(self, part: Part, raw: Any, folder: Path | None = None) -> Verdict:
        raw = _with_files(part, raw, folder)
        if _blank(raw) or raw == {}:
            return Verdict(part.id, 0.0, part.points, "missing", ("no answer was given",))
        fields = _split_fields(part, raw)
        if fields is None:
            names = ", ".join(f.name for f in part.fields)
            example = "\n".join(f"  {f.name}: ..." for f in part.fields)
            return Verdict(part.id, 0.0, part.points, "invalid",
                           (f"{part.id}: this part has the fields {names}; write them as a mapping:\n"
                            f"{part.id}:\n{example}",), answers={"": safe_text(raw)})
        if all(_blank(v) for v in fields.values()):
            return Verdict(part.id, 0.0, part.points, "missing", ("no answer was given",))
        feedback: list[str] = []
        readings: dict[str, Any] = {}
        shown: dict[str, str] = {}
        answers: dict[str, str] = {}
        for name, value in fields.items():
            if value is _UNKNOWN:
                continue
            answers[name] = safe_text(value, 20_000)
        unknown = [n for n, v in fields.items() if v is _UNKNOWN]
        invalid = False
        if unknown:
            feedback.append(f"{part.id}: unknown field(s) {', '.join(unknown)}; this part's fields are: "
                            + ", ".join(f.name for f in part.fields))
        for f in part.fields:
            value = fields.get(f.name)
            if _blank(value):
                continue
            try:
                readings[f.name] = self._read(part, f.name, value, folder)
            except FieldError as err:
                invalid = True
                feedback.append(str(err))
                continue
            shown[f.name] = self._describe(readings[f.name])
            if isinstance(readings[f.name], Value):
                feedback.extend(readings[f.name].notes)
        tally = self._run_checks(part, fields, readings)
        feedback.extend(tally.feedback)
        return Verdict(part.id, round(tally.earned, 6), part.points, tally.status(invalid, self.self_check),
                       tuple(dict.fromkeys(feedback)), shown, answers, tally.evidence, readings)

    def _run_checks(self, part: Part, fields: Mapping[str, Any], readings: Mapping[str, Any]) -> "Tally":
        """Run each of the part's checks whose fields were read, and add up what they say."""
        tally = Tally()
        for index, spec in enumerate(part.checks):
            if spec.check != "manual":
                tally.machine_max += spec.points
            missing = [n for n in spec.fields if n not in readings and n not in spec.optional]
            if missing:
                blank = [n for n in missing if _blank(fields.get(n))]
                if blank:  # unreadable fields were reported when they were read
                    tally.feedback.append(f"{', '.join(blank)}: no answer")
                    tally.unanswered = True
                continue
            tally.add(spec, self._run(part, index, {n: readings[n] for n in spec.fields if n in readings}))
        return tally

    def _describe(self, reading: Any) -> str:
        """How a reading is shown; printing sympy is slow, so once per distinct reading."""
        if not isinstance(reading, Value):
            return describe(reading)
        key = reading.canonical
        if key not in self._shown:
            self._shown[key] = describe(reading)
        return self._shown[key]

    def _read(self, part: Part, name: str, raw: Any, folder: Path | None = None) -> Any:
        if part.field(name).kind == "file":
            return read_field(part, part.field(name), raw, folder)  # content differs per student
        memo_key = (part.id, name, type(raw).__name__,
                    raw if isinstance(raw, (str, int, float, bool)) else safe_text(raw, 100_000))
        if not self.replaying:
            self.stats.reads += 1
        if memo_key in self._reads:
            if not self.replaying:
                self.stats.read_hits += 1
            hit = self._reads[memo_key]
        else:
            try:
                hit = read_field(part, part.field(name), raw)
            except FieldError as err:
                hit = err
            self._reads[memo_key] = hit
        if isinstance(hit, FieldError):
            raise hit
        return hit

    def _run(self, part: Part, index: int, answers: Mapping[str, Any]) -> Outcome:
        spec = part.checks[index]
        memo_key = (part.id, index, tuple(_canonical(answers[n]) if n in answers else None for n in spec.fields))
        if not self.replaying:
            self.stats.checks += 1
        if memo_key in self._outcomes or (self.collect is not None and memo_key in self.collect):
            if not self.replaying:
                self.stats.check_hits += 1
            if memo_key in self._outcomes:
                return self._outcomes[memo_key]
            return Outcome(0.0)  # already queued for the workers
        task = self.task(part, index, answers)
        if task is None:  # self-check: a key-based check is only read, never compared
            outcome = Outcome(0.0, ("read; compared with the key when your course staff grades it",),
                              unchecked=True)
        elif self.collect is not None:
            self.collect[memo_key] = task  # run later, with the other distinct answers, in workers
            return Outcome(0.0)
        else:
            outcome = run_task(task, self.budget, part=part)
        self._outcomes[memo_key] = outcome
        return outcome

    def task(self, part: Part, index: int, answers: Mapping[str, Any]) -> "Task | None":
        """Everything a check needs, picklable, so it can run in a worker process."""
        spec = part.checks[index]
        key = None
        if REGISTRY[spec.check].needs_key:
            if self.keys is None:
                return None
            key = self.keys.answers.get(part.id)
            if key is None or any(n not in key for n in spec.fields):
                raise ConfigError(f"{self.keys.source}: no key for part {part.id} "
                                  f"(fields {', '.join(spec.fields)})")
        return Task(
            homework=self.homework.id, part=part.id, index=index, answers=dict(answers), key=key,
            explain=dict(self.keys.explain.get(part.id, {})) if self.keys else {},
            rubric=self.keys.rubrics.get(part.id) if self.keys else None, gold=dict(self.gold),
        )

    def prime(self, outcomes: Mapping[Any, Outcome]) -> None:
        """Store outcomes computed elsewhere (by worker processes) in the memo."""
        self._outcomes.update(outcomes)


@dataclass
class Tally:
    """What a part's checks said, added up, and the status that follows from it."""

    earned: float = 0.0
    machine_max: float = 0.0  # points machines decide (text parts are a person's)
    undecided: float = 0.0  # machine points a check left to a person (no gold, could not decide)
    pending: bool = False
    unchecked: bool = False
    unanswered: bool = False
    invalid: bool = False
    feedback: list = field(default_factory=list)
    evidence: dict = field(default_factory=dict)

    def add(self, spec: Any, outcome: Outcome) -> None:
        self.earned += outcome.earned
        self.feedback.extend(outcome.feedback)
        for name, item in outcome.evidence.items():
            if isinstance(item, list) and isinstance(self.evidence.get(name), list):
                self.evidence[name] = self.evidence[name] + item  # e.g. integrity flags of two checks
            else:
                self.evidence[name] = item
        self.pending |= outcome.pending
        self.unchecked |= outcome.unchecked
        self.invalid |= outcome.invalid
        if spec.check != "manual" and (outcome.unchecked or outcome.pending):
            self.undecided += spec.points - outcome.earned

    def status(self, unreadable: bool, self_check: bool) -> str:
        machine_max, pending, unchecked = self.machine_max, self.pending, self.unchecked
        if not self_check or not unchecked:
            # Points a check could not settle (e.g. test gold absent) are for a person.
            machine_max -= self.undecided
            pending = pending or self.undecided > 0
            unchecked = False
        return _status(self.earned, machine_max, unreadable or self.invalid, pending, unchecked, self.unanswered)


@dataclass(frozen=True)
class Task:
    """One distinct (part, check, answer) to check: what a worker process receives."""

    homework: str
    part: str
    index: int
    answers: Mapping[str, Any]
    key: Mapping[str, Any] | None
    explain: Mapping[str, str]
    rubric: str | None
    gold: Mapping[str, Any]


def run_task(task: Task, budget: float = 0.0, part: Part | None = None) -> Outcome:
    """Run one check; never raises for a student's answer, whatever the check does.

    A worker process finds the part in the bank by id; in-process callers pass it.
    """
    if part is None:
        from .problems import load_homework

        part = load_homework(task.homework).part(task.part)
    spec = part.checks[task.index]
    ctx = Context(part=part, spec=spec, key=task.key, explain=task.explain, rubric=task.rubric, gold=task.gold)
    try:
        with time_limit(budget):
            return REGISTRY[spec.check].run(task.answers, ctx)
    except ConfigError:
        raise
    except BudgetExceeded:
        return timed_out(budget)
    except MemoryError:
        return Outcome(0.0, ("this answer is too large to check within the memory limit; simplify it",),
                       invalid=True)
    except Exception as err:  # noqa: BLE001 - a checker bug must not sink the class
        log.debug("check %s failed on part %s", spec.check, part.id, exc_info=True)
        return Outcome(0.0, (f"attngrade could not check this answer ({type(err).__name__}); "
                             "course staff will grade it by hand",), pending=True)


def timed_out(budget: float) -> Outcome:
    return Outcome(0.0, (f"checking this answer took longer than the {budget:g} s limit; "
                         "write it more simply (expand fewer products, use smaller powers)",), invalid=True)


class _Unknown:
    def __repr__(self) -> str:
        return "<unknown field>"


_UNKNOWN = _Unknown()


def _split_fields(part: Part, raw: Any) -> dict[str, Any] | None:
    """The raw answer as {field: value}; a single-field part may take the value directly.

    Returns None for a multi-field part whose answer is not a mapping.
    """
    names = [f.name for f in part.fields]
    if isinstance(raw, dict):
        return {str(k): (v if str(k) in names else _UNKNOWN) for k, v in raw.items()}
    if part.single_field:
        return {names[0]: raw}
    return None


def _with_files(part: Part, raw: Any, folder: Path | None) -> Any:
    """Add the part's files that sit in the submission folder to its answer mapping."""
    files = [f for f in part.fields if f.kind == "file" and f.filename]
    if not files or folder is None:
        return raw
    present = {f.name: f.filename for f in files if (folder / f.filename).exists() or (folder / f.filename).is_symlink()}
    if not present:
        return raw
    if raw is None:
        return present
    if not isinstance(raw, dict):
        if part.single_field:
            return raw
        others = [f for f in part.fields if f.kind != "file"]
        raw = {others[0].name: raw} if len(others) == 1 else raw
        if not isinstance(raw, dict):
            return raw
    return {**present, **raw}


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _canonical(reading: Any) -> str:
    if isinstance(reading, Value):
        return reading.canonical
    if isinstance(reading, FileReading):
        return f"file:{reading.name}:{reading.sha256}"
    return f"{type(reading).__name__}:{reading!r}"


def _status(earned: float, machine_max: float, invalid: bool, pending: bool, unchecked: bool,
            unanswered: bool = False) -> str:
    if invalid:
        return "invalid"
    if machine_max == 0:
        return "manual" if pending or not unanswered else "incorrect"
    if unchecked and earned < machine_max:
        return "unchecked"
    if earned >= machine_max - 1e-9:
        if unanswered:
            return "partial"
        return "manual" if pending else "correct"
    return "incorrect" if earned <= 1e-9 else "partial"
