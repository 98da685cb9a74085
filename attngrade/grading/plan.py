"""The plan stage: read every submission and list the distinct tasks; check nothing.

Reading is memoized on the raw text (a class writes the same answers many times),
and tasks are keyed by the canonical form of what was read, so the run stage costs
what the class's *distinct* answers cost. The statistics of both memos are part of
the returned Plan.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Mapping

from ..checkers import REGISTRY
from ..errors import ConfigError, SubmissionError
from ..intake.formats.notebook_code import own_notebook
from ..intake.submissions import code_folder, error_result, find_code, is_code
from ..mathlang import Value
from ..reading import FieldError, FileReading, describe, read_field
from ..records import Homework, Listing, Part, Result, Status, Submission, Verdict
from ..runtime.text import closest, did_you_mean, safe_text
from ..sandbox import prestart
from .assignment import Assignment
from .identity import Names, _place, submission_names, unique_students
from .ledger import static_points
from .tasks import Task, TaskKey, canonical
from .unread import not_read

log = logging.getLogger(__name__)


def _own_notebook(part: Part, raw: Any, submission: Submission, homework: Homework) -> tuple[Any, str | None]:
    """The answer of an answers notebook that holds its part's code itself (see `own_notebook`): beside a
    lone notebook nothing counts as there (a class folder's other files are other students')."""
    if submission.path is None or submission.path.suffix.lower() != ".ipynb":
        return raw, None
    folder = submission.folder

    def present(name: str) -> bool:
        return folder is not None and bool(name) and "/" not in name and "\x00" not in name and _present(folder / name)

    return own_notebook(part, raw, submission.path.name, submission.written.get(part.id, ()), homework, present)


def _folder_of(part: Part, submission: Submission, raw: Any) -> Path | None:
    """Where `part` finds the files it names: the submission folder. A file handed in by itself that a
    part names as its only file (the course's notebook), or whose only file field's answer names it (a
    notebook that holds its own code), is read by that part, as the one file of a folder: nothing
    beside it (a class folder's other students, a Downloads folder) is looked at."""
    if submission.folder is not None or submission.path is None:
        return submission.folder
    files = [f for f in part.fields if f.kind == "file"]
    if len(files) != 1:
        return None
    named = raw.get(files[0].name) if isinstance(raw, Mapping) else raw if part.single_field else None
    own = submission.path.name
    if (isinstance(named, str) and named.strip() == own
            or files[0].filename == own and part.id not in submission.answers):
        return submission.path.parent
    return None


@dataclass(frozen=True)
class CheckStep:
    """What the plan decided for one check of one part."""

    index: int
    task: TaskKey | None = None  # the task whose outcome this check takes
    blank: tuple[str, ...] = ()  # required fields left blank: the check does not run
    unchecked: bool = False  # a key-based check in a self-check: read, never compared


@dataclass(frozen=True)
class PartReading:
    """One part of one submission as read, before any check ran."""

    part: Part
    verdict: Verdict | None = None  # settled by reading alone (no answer, or not a mapping)
    answers: Mapping[str, str] = field(default_factory=dict)  # field -> what was written
    shown: Mapping[str, str] = field(default_factory=dict)  # field -> how it was read
    readings: Mapping[str, Any] = field(default_factory=dict)  # field -> typed reading
    feedback: tuple[str, ...] = ()  # from reading: unknown fields, parse errors, notes
    unreadable: bool = False
    steps: tuple[CheckStep, ...] = ()


@dataclass(frozen=True)
class SubmissionReading:
    submission: Submission
    parts: tuple[PartReading, ...]
    notes: tuple[str, ...] = ()


@dataclass
class Stats:
    """How much reading and checking the memos saved."""

    submissions: int = 0  # submissions loaded from disk (each once)
    reads: int = 0  # field answers read (file fields excepted: their content differs per student)
    read_hits: int = 0  # ... of which were read before
    checks: int = 0  # checks a part asked for
    check_hits: int = 0  # ... whose task was already planned
    by_check: dict = field(default_factory=dict)  # check name -> [lookups, distinct]

    @property
    def tasks(self) -> int:
        return self.checks - self.check_hits

    def add(self, other: "Stats", repeated: Iterable[str] = ()) -> None:
        """Add the counts of another share of the class; `repeated`: the check of each of its
        distinct tasks that an earlier share had already planned (one task, so a hit)."""
        self.submissions += other.submissions
        self.reads += other.reads
        self.read_hits += other.read_hits
        self.checks += other.checks
        self.check_hits += other.check_hits
        for name, (lookups, distinct) in other.by_check.items():
            row = self.by_check.setdefault(name, [0, 0])
            row[0] += lookups
            row[1] += distinct
        for name in repeated:
            self.check_hits += 1
            self.by_check[name][1] -= 1

    def count(self, check: str, hit: bool) -> None:
        self.checks += 1
        self.check_hits += hit
        row = self.by_check.setdefault(check, [0, 0])
        row[0] += 1
        row[1] += not hit

    def to_json(self) -> dict[str, Any]:
        def rate(hits: int, total: int) -> float | None:
            return round(hits / total, 4) if total else None

        machine = [row for name, row in self.by_check.items() if name != "manual"]
        manual = self.by_check.get("manual", [0, 0])
        machine_lookups, machine_distinct = sum(r[0] for r in machine), sum(r[1] for r in machine)
        return {
            "submissions": self.submissions, "reads": self.reads, "read_hits": self.read_hits,
            "checks": self.checks, "check_hits": self.check_hits, "tasks": self.tasks,
            "read_hit_rate": rate(self.read_hits, self.reads), "check_hit_rate": rate(self.check_hits, self.checks),
            "machine_checks": machine_lookups, "machine_distinct": machine_distinct,
            "machine_check_hit_rate": rate(machine_lookups - machine_distinct, machine_lookups),
            "manual_checks": manual[0], "manual_distinct": manual[1],
            "manual_check_hit_rate": rate(manual[0] - manual[1], manual[0]),
            "by_check": {name: {"lookups": r[0], "distinct": r[1]} for name, r in sorted(self.by_check.items())},
        }


@dataclass
class Plan:
    """Everything the run and assemble stages need."""

    entries: list[SubmissionReading | Result] = field(default_factory=list)  # a Result: an error row
    tasks: dict[TaskKey, Task] = field(default_factory=dict)
    assignments: dict[str, Assignment] = field(default_factory=dict)
    stats: Stats = field(default_factory=Stats)


Resolve = Callable[[str], Assignment]








def plan(items: Iterable[Submission | Result], resolve: Resolve, stats: Stats | None = None, *,
         prestart: bool = True, reserved: "Names | Collection[str] | None" = None,
         on_task: Callable[[Task], None] | None = None) -> Plan:
    """Read every submission; `resolve` gives the Assignment of a homework id.

    `resolve` raises SubmissionError for a homework the submission names but nobody
    has (that student's error row) and ConfigError for a broken homework or key
    (the instructor's: it stops the batch before any student is graded). `prestart`:
    start the code sandbox as soon as a code check is planned (not in a process that
    plans a share of the class for another). `reserved`: the names the class's submissions are
    known by (`submission_names`), when `items` cannot be looked over first. `on_task` is given
    each distinct task as it is planned (the run stage may start it at once, see `execute.Stream`).
    """
    out = Plan(stats=stats or Stats())
    reader = _Reader(out, prestart, on_task)
    for item in unique_students(items, submission_names(items) if reserved is None else reserved):
        if isinstance(item, Result):
            out.entries.append(item)
            continue
        try:
            if item.homework not in out.assignments:
                out.assignments[item.homework] = resolve(item.homework)
        except SubmissionError as err:
            out.entries.append(error_result(_place(item), item.homework, str(err), item.student))
            continue
        try:
            out.entries.append(reader.submission(item, out.assignments[item.homework]))
        except ConfigError:
            raise
        except Exception as err:  # noqa: BLE001 - one broken submission must not stop a class
            log.debug("internal error reading %s", item.path, exc_info=True)
            out.entries.append(error_result(
                item.path, item.homework, f"{item.path}: attngrade failed on this submission "
                f"({type(err).__name__}: {err}); course staff will grade it by hand", item.student))
    return out












def place_of(entry: "SubmissionReading | Submission | Result") -> Path:
    """Where a plan entry's (or a loaded item's) submission is in the class (see `_place`)."""
    return _place(entry.submission if isinstance(entry, SubmissionReading) else entry)


def student_of(entry: "SubmissionReading | Submission | Result") -> str:
    return entry.submission.student if isinstance(entry, SubmissionReading) else entry.student






class _Reader:
    """Reads answers into typed readings and steps, with memos shared across a plan."""

    def __init__(self, plan: Plan, prestart: bool = True, on_task: Callable[[Task], None] | None = None):
        self.plan = plan
        self.stats = plan.stats
        self.prestart = prestart
        self.on_task = on_task
        self._reads: dict = {}
        self._shown: dict = {}
        self._parts: dict = {}  # (homework, part, problem, frozen raw answer) -> (PartReading, reads, checks)
        self._file_parts: dict = {}  # everything a reading of a part with files holds -> that reading
        self._files: dict = {}  # (file name, sha256) -> its FileReading

    def submission(self, submission: Submission, assignment: Assignment) -> SubmissionReading:
        homework = assignment.homework
        notes = list(submission.notes)
        known = {p.id for p in homework.parts}
        for pid in submission.answers:
            if pid not in known:
                hint = did_you_mean(pid, sorted(known))
                notes.append(f"unknown part '{pid}'{hint} was not graded; this homework's parts are: "
                             + ", ".join(p.id for p in homework.parts))
        owned = [_own_notebook(part, submission.answers.get(part.id), submission, homework) for part in homework.parts]
        notes.extend(said for _, said in owned if said)
        parts = tuple(self.part(part, raw, _folder_of(part, submission, raw), assignment, submission.invalid.get(part.id),
                                submission.listing) for part, (raw, _) in zip(homework.parts, owned))
        notes.extend(not_read(homework, submission))
        # The raw answers live on in the parts' readings (shared between students); dropping them (and
        # the folder's listing) here is what lets a class loaded one submission at a time free them as it goes.
        return SubmissionReading(replace(submission, answers={}, listing=None), parts, tuple(notes))

    def part(self, part: Part, raw: Any, folder: Path | None, assignment: Assignment,
             problem: str | None = None, listing: Listing | None = None) -> PartReading:
        """One part as read; the same answer to a part without files is read once per plan.
        `listing`: the submission folder's files, where intake listed them (code files are found there).

        Sharing the PartReading (and so, in assemble, the Verdict) keeps a class's memory
        growing with its distinct answers, not with its students."""
        if any(f.kind == "file" for f in part.fields) and folder is not None:
            return self._shared_file_part(assignment.id, self._part(part, raw, folder, assignment, problem, listing))
        memo_key = (assignment.id, part.id, problem, frozen(raw))
        hit = self._parts.get(memo_key)
        if hit is None:
            reads, counted = self.stats.reads, self.stats.checks
            reading = self._part(part, raw, folder, assignment, problem)
            self._parts[memo_key] = hit = (reading, self.stats.reads - reads, self.stats.checks - counted)
            return reading
        reading, reads, checks = hit
        self.stats.reads += reads
        self.stats.read_hits += reads
        for step in reading.steps:  # the same lookups as the first time, now all hits
            if step.task is not None:
                self.stats.count(part.checks[step.index].check, True)
        return reading

    def _shared_file_part(self, homework: str, reading: PartReading) -> PartReading:
        """`reading`, or an equal reading of the same part made before for another student.

        A part with files is read for every student, as the files are part of the answer; but
        a class hands in far fewer distinct files than students (a shared starter file, an
        unchanged baseline), and each reading holds its file's text. Equal readings are one
        object, so memory grows with the distinct files, as it does with distinct answers."""
        if reading.verdict is not None:
            return reading
        key = (homework, reading.part.id, tuple(reading.answers.items()), tuple(reading.shown.items()),
               tuple((name, _identity(value)) for name, value in reading.readings.items()),
               reading.feedback, reading.unreadable, reading.steps)
        return self._file_parts.setdefault(key, reading)

    def _part(self, part: Part, raw: Any, folder: Path | None, assignment: Assignment,
              problem: str | None = None, listing: Listing | None = None) -> PartReading:
        if problem is not None:  # the carrier already found it cannot be graded (two different answers)
            return PartReading(part, Verdict(part.id, 0.0, part.points, Status.INVALID, (problem,),
                                             points=static_points(part.checks)))
        raw = _with_files(part, raw, folder, listing)
        if _blank(raw) or raw == {}:
            return PartReading(part, _missing(part))
        fields = split_fields(part, raw)
        if fields is None:
            names = ", ".join(f.name for f in part.fields)
            example = "\n".join(f"  {f.name}: ..." for f in part.fields)
            return PartReading(part, Verdict(
                part.id, 0.0, part.points, Status.INVALID,
                (f"{part.id}: this part has the fields {names}; write them as a mapping:\n{part.id}:\n{example}",),
                answers={"": safe_text(raw)}, points=static_points(part.checks)))
        if all(_blank(v) for v in fields.values()):
            return PartReading(part, _missing(part))
        answers = {name: safe_text(value, 20_000) for name, value in fields.items() if value is not _UNKNOWN}
        feedback: list[str] = []
        unknown = [n for n, v in fields.items() if v is _UNKNOWN]
        if unknown:
            names = [f.name for f in part.fields]
            hints = [f"'{u}' (did you mean {m}?)" if (m := _same_but_case(u, names)) else f"'{u}'" for u in unknown]
            feedback.append(f"{part.id}: unknown field{'' if len(hints) == 1 else 's'} {', '.join(hints)}; this part's fields are: "
                            + ", ".join(names) + " (names are case-sensitive)")
        readings: dict[str, Any] = {}
        shown: dict[str, str] = {}
        unreadable = False
        for f in part.fields:
            value = fields.get(f.name)
            if _blank(value):
                continue
            try:
                readings[f.name] = self._read(assignment.id, part, f.name, value, folder, listing)
            except FieldError as err:
                unreadable = True
                feedback.append(str(err))
                continue
            shown[f.name] = self._describe(readings[f.name])
            if isinstance(readings[f.name], Value):
                feedback.extend(readings[f.name].notes)
        steps = tuple(self._step(part, index, fields, readings, assignment) for index in range(len(part.checks)))
        return PartReading(part, None, answers, shown, readings, tuple(feedback), unreadable, steps)

    def _step(self, part: Part, index: int, fields: Mapping[str, Any], readings: Mapping[str, Any],
              assignment: Assignment) -> CheckStep:
        spec = part.checks[index]
        missing = [n for n in spec.fields if n not in readings and n not in spec.optional]
        blank = tuple(n for n in missing if _blank(fields.get(n)))  # unreadable ones were reported when read
        inputs = {n: readings[n] for n in spec.fields if n in readings}
        if missing and not (REGISTRY[spec.check].partial and inputs):
            return CheckStep(index, blank=blank)
        if assignment.self_check and REGISTRY[spec.check].needs_key:
            return CheckStep(index, unchecked=True)
        inputs = REGISTRY[spec.check].inputs_of(spec, inputs)
        key = TaskKey(assignment.id, part.id, index,
                      tuple(canonical(inputs[n]) if n in inputs else None for n in spec.fields))
        self.stats.count(spec.check, key in self.plan.tasks)
        if self.prestart and REGISTRY[spec.check].runs_code_on(spec, inputs) and key not in self.plan.tasks:
            prestart()  # torch is imported in the sandbox's zygote while the rest is planned
        if key not in self.plan.tasks:
            self.plan.tasks[key] = task = Task(key, inputs)
            if self.on_task is not None:
                self.on_task(task)
        return CheckStep(index, task=key, blank=blank)

    def _read(self, homework: str, part: Part, name: str, raw: Any, folder: Path | None,
              listing: Listing | None = None) -> Any:
        if part.field(name).kind == "file":
            field = part.field(name)
            try:
                folder = code_folder(folder, field.filename, raw, listing)  # code files: at any depth
            except SubmissionError as err:
                raise FieldError(part.id, name, str(err)) from None
            # Read for every student (the file is the answer); a copy of a file read before is that reading.
            return read_field(part, field, raw, folder, self._files)
        memo_key = (homework, part.id, name, type(raw).__name__,
                    raw if isinstance(raw, (str, int, float, bool)) else safe_text(raw, 100_000))
        self.stats.reads += 1
        if memo_key in self._reads:
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

    def _describe(self, reading: Any) -> str:
        """How a reading is shown; printing sympy is slow, so once per distinct reading."""
        if not isinstance(reading, Value):
            return describe(reading)
        key = reading.canonical
        if key not in self._shown:
            self._shown[key] = describe(reading)
        return self._shown[key]


def _identity(reading: Any) -> tuple:
    """What tells two readings of one field apart: a file by its name and content, any other
    reading by the object itself (readings of equal answers are one object, from the memo)."""
    if isinstance(reading, FileReading):
        return ("file", reading.name, reading.sha256)
    return ("read", id(reading))


def frozen(raw: Any) -> Any:
    """A hashable image of a YAML answer that keeps types apart (1, "1" and True read differently)."""
    if isinstance(raw, dict):
        return ("dict", tuple((frozen(k), frozen(v)) for k, v in raw.items()))
    if isinstance(raw, (list, tuple)):
        return ("list", tuple(frozen(v) for v in raw))
    if raw is None or isinstance(raw, (str, int, float, bool)):
        return (type(raw).__name__, raw)
    return (type(raw).__name__, safe_text(raw, 100_000))


def _same_but_case(name: str, names: list[str]) -> str | None:
    return next((n for n in names if n.lower() == name.lower()), None) or closest(name, names, cutoff=0.75)


def _missing(part: Part) -> Verdict:
    return Verdict(part.id, 0.0, part.points, Status.MISSING, ("no answer was given",), points=static_points(part.checks))


class _Unknown:
    def __repr__(self) -> str:
        return "<unknown field>"


_UNKNOWN = _Unknown()


def split_fields(part: Part, raw: Any) -> dict[str, Any] | None:
    """The raw answer as {field: value}; a single-field part may take the value directly.

    Returns None for a multi-field part whose answer is not a mapping.
    """
    names = [f.name for f in part.fields]
    if isinstance(raw, dict):
        return {str(k): (v if str(k) in names else _UNKNOWN) for k, v in raw.items()}
    if part.single_field:
        return {names[0]: raw}
    return None


def _with_files(part: Part, raw: Any, folder: Path | None, listing: Listing | None = None) -> Any:
    """Add the part's files that sit in the submission folder to its answer mapping (code files at
    any depth: in intake's `listing` of the folder, where there is one)."""
    files = [f for f in part.fields if f.kind == "file" and f.filename]
    if not files or folder is None:
        return raw

    present = {f.name: f.filename for f in files
               if _present(folder / f.filename) or (is_code(f.filename) and find_code(folder, f.filename, listing))}
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


def _present(path: Path) -> bool:
    """Whether `path` names anything, a link included (reading it then says links are refused): one
    lstat. An error other than its absence (no permission to look) is raised, not taken for "missing"."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    return True


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())
