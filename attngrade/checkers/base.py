"""What every check declares, receives and returns."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..errors import ConfigError
from ..records import CheckSpec, Part
from ..runtime.text import did_you_mean


@dataclass(frozen=True)
class Outcome:
    """The result of one check: points earned, what to tell the student, and evidence.

    `is_pending` marks work for a person (text parts); `unchecked` marks a key-based check
    run without keys (a student's self-check), which must not hint at the key;
    `invalid` an answer that could not be checked at all (e.g. past the time budget);
    `failed` a failure of attngrade itself, which is course staff's problem, never the
    student's. `feedback` holds plain lines or Findings (lines made of their pieces);
    the assemble stage renders them all the same way.
    """

    earned: float
    feedback: tuple[str, ...] = ()
    evidence: Mapping[str, Any] = field(default_factory=dict)
    is_pending: bool = False
    unchecked: bool = False
    invalid: bool = False
    failed: bool = False


@dataclass(frozen=True)
class Context:
    """Everything about the part a check may use, besides the answers themselves."""

    part: Part
    spec: CheckSpec
    key: Mapping[str, Any] | None = None  # readings of the key for this check's fields
    explain: Mapping[str, str] = field(default_factory=dict)  # field -> why the key is right
    rubric: str | None = None
    gold: Mapping[str, Any] = field(default_factory=dict)  # instructor gold files, NAME -> Path
    # The grader's own secret for samples a student must not foresee (which dev rows a checkpoint is
    # checked on): kept in OUT across runs; empty in a self-check, which hides nothing from its student.
    salt: bytes = b""

    @property
    def table(self) -> Any:
        """The symbol table of the check's first field (a field may override the part's)."""
        return self.part.table_for(self.spec.fields[0])

    @property
    def prepared(self) -> Any:
        """What the check's `prepare` computed from its params when the bank loaded."""
        return self.spec.prepared

    def scaled(self, points: Any) -> float:
        """A point value from the params, in this homework's points."""
        return float(points) * self.spec.scale

    @property
    def points(self) -> float:
        return self.spec.points

    @property
    def seed(self) -> int:
        """Deterministic per part and check, so a rerun gives the same verdicts."""
        digest = hashlib.sha256(f"{self.part.problem}/{self.part.id}/{self.spec.check}".encode()).digest()
        return int.from_bytes(digest[:4], "little")


CheckFunction = Callable[[Mapping[str, Any], Context], Outcome]
Prepare = Callable[[Mapping[str, Any], Part, CheckSpec], Any]


@dataclass(frozen=True)
class Param:
    """One parameter a check takes in a problem file."""

    name: str
    types: tuple[type, ...]
    required: bool = False

    def describe(self) -> str:
        kinds = "/".join(_TYPE_NAMES.get(t, t.__name__) for t in self.types)
        return f"{self.name} ({kinds}{', required' if self.required else ''})"


_TYPE_NAMES = {int: "whole number", float: "number", str: "text", list: "list", dict: "mapping", bool: "yes/no"}


@dataclass(frozen=True)
class Check:
    """A registered check: its function, the params it takes, and what it prepares from them."""

    name: str
    run: CheckFunction
    params: tuple[Param, ...] = ()
    needs_key: bool = False
    prepare: Prepare | None = None
    # Grades what it can when only some of its fields were read: a typo in one field
    # must not cost the fields that were read their credit.
    partial: bool = False
    # Runs student code in the sandbox (attngrade.sandbox): the plan starts the sandbox early,
    # and the check gets CODE_BUDGET instead of a shorter --budget (its child has its own limits).
    runs_code: bool = False
    # The fields whose answer is code to run, where not all are (None: every field): a check whose code
    # fields are all unanswered runs nothing, so nothing is started for it (a checkpoint is optional),
    # and what it says then depends on none of its fields (see `inputs_of`).
    code_fields: Callable[[CheckSpec], tuple[str, ...]] | None = None

    def runs_code_on(self, spec: CheckSpec, inputs: Mapping[str, Any] | None) -> bool:
        """Whether this check runs code on `inputs` (None: not known yet, so it may)."""
        if not self.runs_code:
            return False
        if inputs is None or self.code_fields is None:
            return True
        return any(name in inputs for name in self.code_fields(spec))

    def inputs_of(self, spec: CheckSpec, inputs: Mapping[str, Any]) -> Mapping[str, Any]:
        """What the outcome on `inputs` depends on: all of them, or none where the check's code fields
        are all unanswered, so that one task serves every submission that hands in no code."""
        if self.code_fields is None or any(name in inputs for name in self.code_fields(spec)):
            return inputs
        return {}

    def validate(self, params: Any, part: Part, spec: CheckSpec, where: str) -> Any:
        """Reject unknown, missing or mistyped params; returns what `prepare` computes.

        `where` names the file and part, so a ConfigError says where to look.
        """
        where = f"{where}, check {self.name}"
        if params is None:
            params = {}
        if not isinstance(params, Mapping):
            raise ConfigError(f"{where}: params must be a mapping of names to values")
        known = {p.name: p for p in self.params}
        for name in params:
            if name not in known:
                hint = did_you_mean(str(name), known)
                takes = ", ".join(p.describe() for p in self.params) or "no params"
                raise ConfigError(f"{where}: unknown parameter '{name}'{hint}; this check takes: {takes}")
        for p in self.params:
            if p.required and p.name not in params:
                raise ConfigError(f"{where}: missing parameter '{p.name}' ({p.describe()})")
            value = params.get(p.name)
            if value is not None and not _has_type(value, p.types):
                raise ConfigError(f"{where}: parameter '{p.name}' must be {p.describe()}, "
                                  f"not {type(value).__name__} {value!r}")
        if self.prepare is None:
            return None
        try:
            return self.prepare(params, part, spec)
        except ConfigError as err:
            raise ConfigError(f"{where}: {err}") from None
        except Exception as err:  # noqa: BLE001 - a param the check cannot use is the file's fault
            raise ConfigError(f"{where}: the params cannot be used ({type(err).__name__}: {err})") from None


def _has_type(value: Any, types: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in types
    if isinstance(value, int) and float in types:
        return True
    return isinstance(value, types)
