"""What every check receives and returns."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..records import CheckSpec, Part


@dataclass(frozen=True)
class Outcome:
    """The result of one check: points earned, what to tell the student, and evidence.

    `pending` marks work for a person (text parts); `unchecked` marks a key-based check
    run without keys (a student's self-check), which must not hint at the key.
    """

    earned: float
    feedback: tuple[str, ...] = ()
    evidence: Mapping[str, Any] = field(default_factory=dict)
    pending: bool = False
    unchecked: bool = False
    invalid: bool = False  # the answer could not be checked at all (e.g. it ran past the time budget)


@dataclass(frozen=True)
class Context:
    """Everything about the part a check may use, besides the answers themselves."""

    part: Part
    spec: CheckSpec
    key: Mapping[str, Any] | None = None  # readings of the key for this check's fields
    explain: Mapping[str, str] = field(default_factory=dict)  # field -> why the key is right
    rubric: str | None = None
    gold: Mapping[str, Any] = field(default_factory=dict)  # instructor gold files, NAME -> Path

    @property
    def table(self) -> Any:
        """The symbol table of the check's first field (a field may override the part's)."""
        return self.part.table_for(self.spec.fields[0])

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


@dataclass(frozen=True)
class Check:
    """A registered check: its function and whether it compares against a key."""

    name: str
    run: CheckFunction
    needs_key: bool = False
    doc: str = ""
