"""An Assignment: one homework with everything grading it needs, checked up front.

Made once per homework and batch, before any student is graded: a key-based check
with no key, or a key that lacks a field a check needs, is a ConfigError for the
instructor here, never a failure in each student's report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..checkers import REGISTRY, Context
from ..errors import ConfigError
from ..problems.keys import Keys
from ..records import Homework, Part, Unreadable


@dataclass(frozen=True)
class Assignment:
    """A homework, its keys (None for a student's self-check) and the instructor's gold."""

    homework: Homework
    keys: Keys | None = None
    self_check: bool = False
    gold: Mapping[str, Path] = field(default_factory=dict)  # NAME -> Path of instructor gold files
    unreadable: Unreadable = Unreadable.PENDING  # what an answer the machine cannot read gets
    reference: Path | None = None  # the reference solution (a folder or one file), which proves the host
    salt: bytes = b""  # the grader's secret for hidden samples (`checkers.Context.salt`)

    @property
    def id(self) -> str:
        return self.homework.id

    def context(self, part: Part, index: int) -> Context:
        """What check `index` of `part` receives besides the answers."""
        spec = part.checks[index]
        keys = self.keys
        key = None
        if REGISTRY[spec.check].needs_key and keys is not None:
            key = keys.answers[part.id]
        return Context(part=part, spec=spec, key=key,
                       explain=dict(keys.explain.get(part.id, {})) if keys else {},
                       rubric=keys.rubrics.get(part.id) if keys else None, gold=dict(self.gold), salt=self.salt)


def assignment(homework: Homework, keys: Keys | None, *, self_check: bool = False,
               gold: Mapping[str, Path] | None = None, solutions: Any = None,
               unreadable: Unreadable | None = None, salt: bytes = b"") -> Assignment:
    """An Assignment whose keys cover every key-based check (or a self-check, which needs none).

    An answer that cannot be read waits for course staff unless `unreadable` (or the homework)
    says zero; a self-check always says it is invalid, so that the student fixes it."""
    if not self_check:
        _keys_cover(homework, keys, solutions)
    policy = Unreadable.ZERO if self_check else unreadable or homework.unreadable
    return Assignment(homework=homework, keys=None if self_check else keys, self_check=self_check,
                      gold=dict(gold or {}), unreadable=policy,
                      reference=None if self_check else reference_of(solutions, homework.id),
                      salt=b"" if self_check else salt)


def reference_of(solutions: Any, homework: str) -> Path | None:
    """Where a homework's reference solution is under `solutions` (a folder, or one file), if anywhere."""
    if solutions is None:
        return None
    for candidate in (Path(solutions) / homework / "reference", Path(solutions) / homework / "reference.yaml"):
        if candidate.exists():
            return candidate
    return None


def _keys_cover(homework: Homework, keys: Keys | None, solutions: Any) -> None:
    """Every key-based check has its key; else one error naming every part and field that lacks one
    (a new homework's keys are filled in at one sitting, not one rerun per missing key)."""
    lacking: dict[str, tuple[list[str], list[str]]] = {}  # part -> (fields, checks)
    for part in homework.parts:
        for spec in part.checks:
            if not REGISTRY[spec.check].needs_key:
                continue
            key = keys.answers.get(part.id) if keys is not None else None
            missing = [n for n in spec.fields if key is None or n not in key]
            if missing:
                names, checks = lacking.setdefault(part.id, ([], []))
                names += [n for n in missing if n not in names]
                checks += [] if spec.check in checks else [spec.check]
    if not lacking:
        return
    if keys is None:
        parts = ", ".join(lacking)
        raise ConfigError(f"{'part' if len(lacking) == 1 else 'parts'} {parts} of {homework.id} "
                          f"{'is' if len(lacking) == 1 else 'are'} checked against a key, but there are no keys "
                          f"at {solutions or 'solutions'}/{homework.id}/keys.yaml; pass --solutions DIR")
    listed = "; ".join(f"part {part}, field{'' if len(names) == 1 else 's'} {', '.join(names)} (its "
                       f"{' and '.join(checks)} "
                       f"{'checks compare' if len(checks) > 1 else 'check compares'} with one)"
                       for part, (names, checks) in lacking.items())
    raise ConfigError(f"{keys.source}: no key for {listed}; add them under keys: PART:")
