"""The core records: Homework, Problem, Part, Field, Submission, Verdict (with its Status), Result.

All frozen: a loaded homework is shared by every submission of a batch, and a Verdict
is memoized across students, so nothing may change one after it is made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from .mathlang.macros import used

if TYPE_CHECKING:  # only named in annotations: the records load without sympy (see early.py)
    from .mathlang import SymbolTable


class Status(str, Enum):
    """A part's grade in one word. A `str` so that JSON, CSV and reports hold the word itself."""

    CORRECT = "correct"
    PARTIAL = "partial"
    INCORRECT = "incorrect"
    INVALID = "invalid"  # the answer could not be read or checked at all
    MISSING = "missing"  # no answer
    PENDING = "pending"  # points wait for course staff
    # Some fields were read and graded; the points of the fields the machine could not read wait for staff.
    PARTLY_PENDING = "partly pending"
    UNCHECKED = "unchecked"  # a self-check: read, never compared with a key
    ERROR = "error"  # attngrade itself failed: course staff's problem, never the student's

    def __str__(self) -> str:  # the word, not `Status.CORRECT`, wherever it is formatted
        return self.value


STATUSES = tuple(s.value for s in Status)
WAITING = "course staff will grade this answer"  # the feedback of a written answer no person has graded yet
# Feedback a person's decision adds begins with one of these: a grade from the staff store, a decision
# of overrides.yaml (which is also how WAITING was once worded).
STAFF_MARK, STAFF_GRADED = "course staff: ", "graded by course staff"
FIELD_KINDS = ("math", "bool", "choice", "text", "number", "file")


@dataclass(frozen=True)
class Field:
    """One answer slot of a part, e.g. the Q of 1e.ii."""

    name: str
    kind: str
    expect: str | None = None  # math only: scalar | vector | matrix | bigO
    shape: tuple[Any, Any] | None = None  # math only: the required (rows, cols)
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # choice only
    max_length: int = 20_000  # text only
    percent: bool = False  # number only: 5, 5%, 0.05 and 25/500 may all mean five percent
    filename: str | None = None  # file only: the file's name in the submission folder
    max_bytes: int = 10_000_000  # file only
    binary: bool = False  # file only: bytes (a model checkpoint), never read as text
    table: SymbolTable | None = None  # math only: this field's own symbols, if not the part's


@dataclass(frozen=True)
class CheckSpec:
    """One registered check applied to some fields of a part, worth some points."""

    check: str
    fields: tuple[str, ...]
    points: float
    params: Mapping[str, Any] = field(default_factory=dict)
    optional: tuple[str, ...] = ()  # fields the check can do without (it says what is missing)
    scale: float = 1.0  # a homework's points over the problem's own: point values in params scale too
    prepared: Any = field(default=None, compare=False, repr=False)  # what the check precomputed at load


@dataclass(frozen=True)
class Part:
    id: str
    points: float
    statement: str
    fields: tuple[Field, ...]
    checks: tuple[CheckSpec, ...]
    table: SymbolTable
    problem: str = ""

    @property
    def single_field(self) -> bool:
        return len(self.fields) == 1

    def table_for(self, name: str) -> SymbolTable:
        """The symbols a field's answer may use: its own table, else the part's."""
        return self.field(name).table or self.table

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)


@dataclass(frozen=True)
class Problem:
    id: str
    title: str
    source: str
    intro: str
    parts: tuple[Part, ...]



class Unreadable(str, Enum):
    """What an answer the machine cannot read gets: a person's grade, or 0 with the reason."""

    PENDING = "pending"  # its points wait for course staff (`grade run`'s default)
    ZERO = "zero"  # invalid and 0, the reason shown (a self-check, so the student fixes it)

    def __str__(self) -> str:
        return self.value

@dataclass(frozen=True)
class Homework:
    id: str
    title: str
    course: str
    problems: tuple[Problem, ...]
    unreadable: Unreadable = Unreadable.PENDING
    anonymous: bool = False  # staff grade it without student ids (`grade review`), unless the instructor lifts it
    ignore: tuple[str, ...] = ()  # file-name patterns a submission may hold that no part reads, and none is told of

    @cached_property
    def parts(self) -> tuple[Part, ...]:
        return tuple(p for problem in self.problems for p in problem.parts)

    @cached_property
    def _by_id(self) -> dict[str, Part]:
        by_id: dict[str, Part] = {}
        for p in self.parts:
            by_id.setdefault(p.id, p)
        return by_id

    def part(self, part_id: str) -> Part | None:
        return self._by_id.get(part_id)

    @property
    def max_score(self) -> float:
        return sum(p.points for p in self.parts)


class Written(str):
    """An answer's text with the macros its submission defines that it uses (mathlang.macros).

    A `str` wherever the answer is a string (shown, stored, hashed as a memo key), so that no
    stage between loading and reading needs to know of macros; two equal texts with different
    definitions are different answers (a memo never gives one student's reading to another)."""

    definitions: tuple

    def __new__(cls, text: str, definitions: tuple = ()) -> "Written":
        made = super().__new__(cls, text)
        made.definitions = tuple(definitions)
        return made

    def __eq__(self, other: object) -> bool:
        return str.__eq__(self, other) and getattr(other, "definitions", ()) == self.definitions

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((str(self), self.definitions))

    def __reduce__(self) -> tuple:
        return (Written, (str(self), self.definitions))


def with_definitions(answers: Any, definitions: tuple) -> Any:
    """`answers` ({part: value or {field: value}}) with each text that calls one of `definitions`
    (mathlang.macros.Definition) carrying those it calls, and those their bodies call."""

    def carry(value: Any) -> Any:
        if isinstance(value, str) and "\\" in value:
            wanted = used(definitions, value)
            return Written(value, wanted) if wanted else value
        return value

    return {part: ({name: carry(v) for name, v in value.items()} if isinstance(value, dict) else carry(value))
            for part, value in answers.items()}


@dataclass(frozen=True)
class Listing:
    """A submission folder's files as intake looked through it, once: each by its place in the folder
    ('src/dataset.py'), and what the look did not see when it was cut short (empty: nothing)."""

    files: tuple[str, ...]
    shortfall: str = ""
    links: tuple[str, ...] = ()  # links in the folder, which no search follows


@dataclass(frozen=True)
class Submission:
    """One student's answers as loaded: raw text per part and field, nothing parsed.

    `definitions` are the macros the submission's file defines (a LaTeX preamble, a notebook's
    or Markdown file's `$\\newcommand...$`); each answer text that calls one carries it (`Written`)."""

    student: str
    homework: str
    answers: Mapping[str, Mapping[str, Any]]
    path: Path
    folder: Path | None = None  # where files named by parts are looked up
    listing: Listing | None = None  # the folder's files, listed at intake (None: not listed)
    notes: tuple[str, ...] = ()
    invalid: Mapping[str, str] = field(default_factory=dict)  # part -> why its answer cannot be graded
    definitions: tuple = ()
    # A notebook's own code: each notebook-code part whose definitions its code cells write (other than as
    # the template's stubs), with those definitions (`intake.formats.notebook_code.own_notebook`).
    written: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.definitions and self.answers:
            object.__setattr__(self, "answers", with_definitions(self.answers, self.definitions))


@dataclass(frozen=True)
class PartPoints:
    """A part's points ledger: what a machine decided, what course staff still decide."""

    decided: float = 0.0  # the maximum of the machine checks that settled their points
    staff: float = 0.0  # machine points left to course staff (no gold, a check that could not decide)
    text: float = 0.0  # points of written (text) answers
    pending_points: float = 0.0  # points waiting for a person now: undecided machine points, unscored written answers


@dataclass(frozen=True)
class Verdict:
    """The grade of one part, with what a student needs to understand it."""

    part: str
    score: float
    max_score: float
    status: Status
    feedback: tuple[str, ...] = ()
    shown: Mapping[str, str] = field(default_factory=dict)  # field -> how it was read, as people see it
    answers: Mapping[str, str] = field(default_factory=dict)  # field -> what was written
    evidence: Mapping[str, Any] = field(default_factory=dict)
    readings: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)  # field -> typed reading
    points: PartPoints = field(default_factory=PartPoints, compare=False)
    overruled: tuple[str, ...] = ()  # what the machine said of a part a person's grade replaced

    @cached_property  # (a report asks it of every part many times; a verdict never changes)
    def pending_points(self) -> float:
        """Points of this part that course staff have yet to decide (never counted as 0)."""
        return round(self.points.pending_points, 6)

    @property
    def is_pending(self) -> bool:
        """Every point of the part waits for course staff: its score is not 0, it is not there yet."""
        return bool(self.pending_points) and self.score == 0 and self.pending_points >= self.max_score - 1e-9

    @property
    def flags(self) -> list[str]:
        """Integrity warnings for course staff only; they never change the score."""
        return list(self.evidence.get("flags", []))

    def to_json(self) -> dict[str, Any]:
        out = {
            "id": self.part,
            "score": self.score,
            "max_score": self.max_score,
            "status": self.status,
            "pending_points": self.pending_points,
            "feedback": list(self.feedback),
            "readings": dict(self.shown),
        }
        if self.overruled:
            out["overruled"] = list(self.overruled)
        if self.flags:
            out["flags"] = self.flags
        return out


@dataclass(frozen=True)
class Result:
    """One submission's grade: the JSON contract's object."""

    student: str
    homework: str | None
    score: float
    max_score: float
    parts: tuple[Verdict, ...] = ()
    error: str | None = None  # the submission could not be graded at all
    notes: tuple[str, ...] = ()
    source: str = ""

    @cached_property
    def pending_points(self) -> float:
        return round(sum(v.pending_points for v in self.parts), 6)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "student": self.student,
            "homework": self.homework,
            "score": self.score,
            "max_score": self.max_score,
            "pending_points": self.pending_points,
            "parts": [v.to_json() for v in self.parts],
        }
        if self.error is not None:
            out["error"] = self.error
        if self.notes:
            out["notes"] = list(self.notes)
        return out
