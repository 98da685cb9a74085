"""The reference canary: before any student's code is graded, the host proves it can grade the reference's.

A check that runs student code depends on the machine: its kernel (namespaces, Landlock,
seccomp), where Python is installed, whether PyTorch is. A host that cannot run code must never
charge its failure to the students. So, once per run and before the first student's job, the
reference solution's code (solutions/<homework>/reference) goes through the same plan, sandbox,
layers and checks as a student's. A check on which the reference does not earn full marks is
*unproven* here: no student's answer to it is run, every one waits for course staff with the
host's reason, and the run says so once. A check the reference hands nothing to run (a
checkpoint, which a reference solution has no reason to hold) is not run on it: the host is proven
for it by the reference's other code checks, or, where there are none, by a job that runs nothing.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from .. import sandbox
from ..checkers import REGISTRY, Outcome
from ..errors import ConfigError, SubmissionError
from ..intake.submissions import load_submission

from .assignment import Assignment
from .plan import SubmissionReading, plan
from .tasks import TaskKey, run_task

Check = tuple[str, str, int]  # homework, part, check index
COULD_NOT_RUN, STAFF_WILL_LOOK = "attngrade could not run your code (", "); course staff will look at it"


@dataclass(frozen=True)
class Proof:
    """What the canary found: each code check it could not prove, with why, and the notes for the run."""

    unproven: Mapping[Check, str]
    notes: tuple[str, ...] = ()
    layers: Mapping[str, Any] = field(default_factory=dict)  # the reference's jobs' layers: active, missing

    def holds(self, key: TaskKey) -> bool:
        return (key.homework, key.part, key.index) not in self.unproven

    def outcome(self, key: TaskKey) -> Outcome:
        """What a student's answer to an unproven check gets: pending, with the host's reason."""
        why = self.unproven[(key.homework, key.part, key.index)]
        return Outcome(0.0, (f"your code was not run: this machine could not grade the reference solution's code "
                             f"for this part ({why}); these points wait for course staff, and nothing is wrong "
                             "with your submission because of it",), is_pending=True)


def code_checks(tasks: Iterable[TaskKey], assignments: Mapping[str, Assignment]) -> set[Check]:
    """The checks among `tasks` that run student code on their answers (`tasks` a mapping to each Task,
    or keys alone: then every code check counts)."""
    found = set()
    for key in tasks:
        part = assignments[key.homework].homework.part(key.part)
        task = tasks.get(key) if isinstance(tasks, Mapping) else None
        if part is not None and REGISTRY[part.checks[key.index].check].runs_code_on(
                part.checks[key.index], task.answers if task is not None else None):
            found.add((key.homework, key.part, key.index))
    return found


def prove(tasks: Iterable[TaskKey], assignments: Mapping[str, Assignment], budget: float,
          bank: Any = None, private: Iterable[Path] = ()) -> Proof:
    """Grade the reference's code for every code check among `tasks`; what did not earn full marks. `private`:
    what else no job may read (the class's submissions, the output folder), besides keys, gold and reference."""
    private = tuple(Path(p) for p in private)
    wanted = code_checks(tasks, assignments)
    unproven: dict[Check, str] = {}
    notes = []
    layers: dict[str, Any] = {}
    for homework in sorted({hw for hw, _, _ in wanted}):
        given = assignments[homework]
        if given.self_check:
            continue  # a student's own check: no reference, and nothing is charged to anyone
        checks = {(part, index) for hw, part, index in wanted if hw == homework}
        found, idle, note = _reference_outcomes(given, checks, budget, bank)
        if note:
            notes.append(note)
        for outcome in found.values():
            layers = layers or _layers(outcome)
        for (part, index), outcome in found.items():
            why = _shortfall(given, part, index, outcome) or _exposed(given, layers, private)
            if why:
                unproven[(homework, part, index)] = why
        if idle and not layers:
            failed, layers = _empty_job()  # nothing else ran here: what a job is on this host, from one of its own
        for part, index in idle:
            why = (failed if not layers else "") or _exposed(given, layers, private)
            if why:
                unproven[(homework, part, index)] = why
    for (homework, part, _), why in sorted(unproven.items()):
        notes.append(f"{homework} {part}: the reference solution's code did not earn full marks on this machine "
                     f"({why}); no student's code was graded for it, and those points wait for course staff")
    return Proof(unproven, tuple(dict.fromkeys(notes)), layers)


def _empty_job() -> tuple[str, dict[str, Any]]:
    """Why a sandbox job that runs nothing (an empty module) did not end well here ("" when it did), and
    its isolation layers: the proof of the host for a check the reference hands nothing to run."""
    if sandbox.torch_missing():
        return "", {}  # (such a check says so itself, and waits for staff)
    run = sandbox.run({"empty.py": ""}, {"kind": "notebook", "module": "empty", "chunks": [], "names": [],
                                         "calls": [], "seed": 0}, timeout=30.0)
    if run.status != "ok":
        return f"a sandbox job that runs nothing ended with {run.status} here ({str(run.error or '')[:300]})", {}
    return "", dict(run.layers or {})


def _layers(outcome: Outcome | None) -> dict[str, Any]:
    """The isolation layers a job of `outcome` had, as the sandbox reported them ({} if none ran)."""
    found = (((outcome.evidence if outcome else {}).get("sandbox") or {}).get("layers")) or {}
    return dict(found) if isinstance(found, Mapping) else {}


def _exposed(given: Assignment, layers: Mapping[str, Any], private: tuple[Path, ...]) -> str:
    """Why something no job may read is within the jobs' reach ("" when it is not). A job with neither a
    minimal root nor Landlock (a container that refuses both) reads whatever its uid may: only file
    permissions keep the keys, gold, reference, classmates' submissions and results from it. `layers`: those
    of the reference's jobs on this host ({} when none ran: a check that started no job here proves nothing
    of the host, and refuses nothing)."""
    if not layers:
        return ""
    active = " ".join(str(a) for a in layers.get("active") or [])
    if "minimal root" in active or "Landlock" in active:
        return ""
    secrets = [given.reference.parent] if given.reference is not None else []
    for path in [*secrets, *given.gold.values(), *private]:
        readable = readable_by_others(Path(path))
        if readable is not None:
            return (f"{readable} can be read by any user, and the jobs here have neither Landlock nor a mount "
                    f"namespace to keep them from it; make it the grader's alone (chmod -R go-rwx {path})")
    return ""


def readable_by_others(path: Path, limit: int = 100_000) -> Path | None:
    """A file under `path` that a uid of its own could read (the folders above it open to all), or None."""
    if not path.exists() or not all(os.stat(above).st_mode & 0o001 for above in path.resolve().parents):
        return None
    todo, seen = [path.resolve()], 0
    while todo and seen < limit:
        here = todo.pop()
        seen += 1
        try:
            mode = os.stat(here).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            if mode & 0o005 == 0o005:
                todo.extend(here.iterdir())
        elif mode & 0o004:
            return here
    return None


def prove_homework(given: Assignment, budget: float = 2.0, bank: Any = None) -> Proof:
    """The canary for every code check of `given`'s homework (an autograder's setup does this once)."""
    keys = [TaskKey(given.id, part.id, index, ()) for part in given.homework.parts
            for index, spec in enumerate(part.checks) if REGISTRY[spec.check].runs_code]
    return prove(keys, {given.id: given}, budget, bank)


def _reference_outcomes(given: Assignment, checks: set[tuple[str, int]], budget: float, bank: Any
                        ) -> tuple[dict[tuple[str, int], Outcome | None], set[tuple[str, int]], str]:
    """The outcome of each of `checks` on the reference (None where it answers none), the checks it hands
    nothing to run (not run here), and a note."""
    reference = given.reference
    if reference is None:
        return {}, set(), (f"{given.id}: no reference solution at solutions/{given.id}/reference, so this machine's "
                           "ability to run code was not proven first; a host failure would show as each student's")
    try:
        submission = load_submission(reference, homework=given.id, bank=bank)
    except (SubmissionError, ConfigError, OSError) as err:
        return {}, set(), f"{given.id}: the reference solution at {reference} could not be read ({err}); fix it"
    planned = plan([submission], lambda _: given, prestart=True)
    entry = next((e for e in planned.entries if isinstance(e, SubmissionReading)), None)
    outcomes: dict[tuple[str, int], Outcome | None] = dict.fromkeys(checks)
    idle: set[tuple[str, int]] = set()
    for key, task in planned.tasks.items():
        spec = given.homework.part(key.part).checks[key.index]
        if (key.part, key.index) in checks and not REGISTRY[spec.check].runs_code_on(spec, task.answers):
            idle.add((key.part, key.index))
            del outcomes[(key.part, key.index)]
        elif (key.part, key.index) in checks:
            outcome = run_task(task, given, budget)
            if _shortfall(given, key.part, key.index, outcome):
                # Once more before the host is blamed: a machine busy for a moment can run a job out of time.
                outcome = run_task(task, given, budget)
            outcomes[(key.part, key.index)] = outcome
    if entry is None:
        return outcomes, idle, f"{given.id}: the reference solution at {reference} could not be graded; fix it"
    return outcomes, idle, ""


def _shortfall(given: Assignment, part_id: str, index: int, outcome: Outcome | None) -> str:
    """Why the reference's `outcome` on a check is not full marks ("" when it is)."""
    if outcome is None:
        return (f"the reference solution at {given.reference} answers nothing to it: a file it names is missing or "
                "could not be read (a link, a second hard link, too large)")
    points = given.homework.part(part_id).checks[index].points
    if outcome.earned >= points - 1e-9 and not (outcome.is_pending or outcome.invalid or outcome.failed):
        return ""
    first = next((str(line) for line in outcome.feedback if str(line).strip()), "no feedback")
    inner = first.removeprefix(COULD_NOT_RUN).removesuffix(STAFF_WILL_LOOK)  # the sandbox's own reason, unwrapped
    return f"it got {outcome.earned:g} of {points:g}: {inner[:600]}"
