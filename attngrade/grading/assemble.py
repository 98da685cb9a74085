"""The assemble stage: each Verdict from what was read and what the checks said.

No check runs here; every outcome comes from the run stage, keyed by task. Each
part's points go through one Ledger, which every output (reports, CSV, JSON,
Gradescope) reads, and every feedback line is rendered here, in one anatomy.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from ..checkers import Outcome
from ..checkers.messages import render
from ..records import Result, Status, Unreadable, Verdict
from .assignment import Assignment
from .ledger import Ledger
from .plan import PartReading, Plan, SubmissionReading
from .tasks import TaskKey

UNREAD = "could not read this answer, so course staff will grade it; what the reader found:"
PARTLY = ("partly pending: the fields that could be read were graded; the points of those that could not wait "
          "for course staff, and what the reader found is said below")
UNCHECKED = Outcome(0.0, ("read; compared with the key when your submission is graded",), unchecked=True)


def assemble(plan: Plan, outcomes: Mapping[TaskKey, Outcome]) -> list[Result]:
    """One Result per entry of the plan, in its order (error rows as they are).

    A PartReading the plan shared between students (the same answer) gives one Verdict,
    shared too: Verdicts are frozen, and a class's memory then follows its distinct answers."""
    memo: dict[int, Verdict] = {}
    return [entry if isinstance(entry, Result) else result(entry, outcomes, plan.assignments[
        entry.submission.homework], memo) for entry in plan.entries]


def result(reading: SubmissionReading, outcomes: Mapping[TaskKey, Outcome], given: Assignment,
           memo: dict[int, Verdict] | None = None) -> Result:
    memo = {} if memo is None else memo
    verdicts = tuple(_shared(p, outcomes, given, memo) for p in reading.parts)
    homework_max = sum(p.part.points for p in reading.parts)
    sub = reading.submission
    return Result(student=sub.student, homework=sub.homework, score=round(sum(v.score for v in verdicts), 6),
                  max_score=homework_max, parts=verdicts, notes=reading.notes, source=str(sub.path))


def _shared(reading: PartReading, outcomes: Mapping[TaskKey, Outcome], given: Assignment,
            memo: dict[int, Verdict]) -> Verdict:
    # Keyed by id(): the PartReading is alive in the plan for as long as the memo is.
    found = memo.get(id(reading))
    if found is None:
        found = verdict(reading, outcomes, given.self_check, given.unreadable == Unreadable.PENDING)
        if found.status == Status.INVALID and given.unreadable == Unreadable.PENDING:
            found = for_staff(found)
        memo[id(reading)] = found
    return found


def for_staff(unread: Verdict) -> Verdict:
    """An answer the machine could not read, left to course staff: its points wait for a person
    (never a silent 0), and the reason is the first thing staff and the student read."""
    feedback = (UNREAD, *unread.feedback)
    points = replace(unread.points, pending_points=round(unread.max_score - unread.score, 6))
    return replace(unread, feedback=feedback, points=points)


def verdict(reading: PartReading, outcomes: Mapping[TaskKey, Outcome], self_check: bool,
            unread_waits: bool = True) -> Verdict:
    """The Verdict of one part. A field that could not be read costs only the checks that read it: with
    `unread_waits` (an unreadable answer waits for staff) their points wait and the fields that were read
    are graded (the part is partly pending); without, the part is invalid, as a self-check shows it."""
    if reading.verdict is not None:
        return reading.verdict
    part = reading.part
    ledger = Ledger()
    for step in reading.steps:
        spec = part.checks[step.index]
        ledger.expect(spec)
        if step.blank:
            ledger.feedback.append(f"{', '.join(step.blank)}: no answer")
            ledger.unanswered = True
        if step.unchecked:
            ledger.add(spec, UNCHECKED)
        elif step.task is not None:
            ledger.add(spec, outcomes[step.task])
        elif reading.unreadable and not step.blank and unread_waits:
            ledger.wait(spec)
    status = ledger.status(reading.unreadable, self_check)
    partly = [PARTLY] if status == Status.PARTLY_PENDING else []
    feedback = [*partly, *reading.feedback, *(render(line) for line in ledger.feedback)]
    return Verdict(part.id, round(ledger.earned, 6), part.points, status,
                   tuple(dict.fromkeys(feedback)), shown=reading.shown, answers=reading.answers,
                   evidence=ledger.evidence, readings=reading.readings, points=ledger.points())
