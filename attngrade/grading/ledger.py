"""The points ledger of one part and the status that follows from it.

One place holds the rules every output reads: the points a machine decided, the
machine points left to course staff (a check that could not decide, test gold not
supplied, attngrade's own failure), and the points of written (text) answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..checkers import Outcome
from ..records import CheckSpec, PartPoints, Status


@dataclass
class Ledger:
    """What a part's checks said, added up."""

    earned: float = 0.0
    machine_max: float = 0.0  # points machines decide (text parts are a person's)
    undecided: float = 0.0  # machine points a check left to a person (no gold, could not decide)
    text: float = 0.0  # points of manual (text) checks
    pending_points: float = 0.0  # points of checks that left them to a person (text to score, no gold, ...)
    is_pending: bool = False  # a check left work for a person
    unchecked: bool = False
    unanswered: bool = False
    invalid: bool = False
    failed: bool = False
    unread: float = 0.0  # machine points of checks that could not run: a field they read was not readable
    checked: bool = False  # some machine check ran on fields that were read
    feedback: list = field(default_factory=list)
    evidence: dict = field(default_factory=dict)

    def expect(self, spec: CheckSpec) -> None:
        """Count a check's points, whether or not it runs."""
        if spec.check == "manual":
            self.text += spec.points
        else:
            self.machine_max += spec.points

    def wait(self, spec: CheckSpec) -> None:
        """A check that could not run because a field it reads was not readable: its points wait for staff."""
        self.unread += spec.points
        self.pending_points += spec.points
        if spec.check != "manual":
            self.undecided += spec.points

    def add(self, spec: CheckSpec, outcome: Outcome) -> None:
        self.checked |= spec.check != "manual" and not (outcome.invalid or outcome.failed)
        self.earned += outcome.earned
        self.feedback.extend(outcome.feedback)
        for name, item in outcome.evidence.items():
            if isinstance(item, list) and isinstance(self.evidence.get(name), list):
                self.evidence[name] = self.evidence[name] + item  # e.g. integrity flags of two checks
            else:
                self.evidence[name] = item
        self.is_pending |= outcome.is_pending
        self.unchecked |= outcome.unchecked
        self.invalid |= outcome.invalid
        self.failed |= outcome.failed
        if outcome.unchecked or outcome.is_pending or outcome.failed:
            self.pending_points += spec.points - outcome.earned
            if spec.check != "manual":
                self.undecided += spec.points - outcome.earned

    def points(self) -> PartPoints:
        return PartPoints(decided=round(self.machine_max - self.undecided, 6), staff=round(self.undecided, 6),
                          text=round(self.text, 6), pending_points=round(self.pending_points, 6))

    def status(self, unreadable: bool, self_check: bool) -> Status:
        if self.failed and not (unreadable or self.invalid):
            return Status.ERROR
        if unreadable and self.unread and self.checked and not self.invalid:
            return Status.PARTLY_PENDING  # the fields read were graded; the others' points wait
        machine_max, is_pending, unchecked = self.machine_max, self.is_pending, self.unchecked
        if not self_check or not unchecked:
            # Points a check could not settle (e.g. test gold absent) are for a person.
            machine_max -= self.undecided
            is_pending = is_pending or self.undecided > 0
            unchecked = False
        return status(self.earned, machine_max, unreadable or self.invalid, is_pending, unchecked, self.unanswered)


def status(earned: float, machine_max: float, invalid: bool, is_pending: bool, unchecked: bool,
           unanswered: bool = False) -> Status:
    if invalid:
        return Status.INVALID
    if machine_max == 0:
        return Status.PENDING if is_pending or not unanswered else Status.INCORRECT
    if unchecked and earned < machine_max:
        return Status.UNCHECKED
    if earned >= machine_max - 1e-9:
        if unanswered:
            return Status.PARTIAL
        return Status.PENDING if is_pending else Status.CORRECT
    return Status.INCORRECT if earned <= 1e-9 else Status.PARTIAL


def static_points(specs: tuple[CheckSpec, ...]) -> PartPoints:
    """The ledger of a part none of whose checks ran (missing, or not a mapping): nothing waits."""
    ledger = Ledger()
    for spec in specs:
        ledger.expect(spec)
    return ledger.points()
