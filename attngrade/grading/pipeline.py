"""The one way a submission is graded: `grade`, plan → run → assemble.

`grade run`, `grade check`, the Gradescope runner and the benchmark all call `grade`; what
differs between them is data: what is graded (a `Class` on disk, or submissions already
loaded), how (`Options`: the homework, keys, workers, budget) and what the caller is told or
does meanwhile (`Hooks`). It knows nothing of output folders or reports: what the run before
left in OUT comes in with the `Class`, and the work a layer above wants done beside the
checks comes in with the `Hooks`.
"""

from __future__ import annotations

import gc
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Iterator, Mapping

from ..checkers.accuracy import gold_names
from ..errors import ConfigError, SubmissionError
from ..intake.early import EarlyLoad
from ..intake.formats import OWN_HOMEWORK
from ..intake.submissions import load_submission
from ..problems import BUNDLED, Bank
from ..problems.keys import load_keys
from ..records import Homework, Result, Submission, Unreadable, Verdict
from ..runtime.progress import Quiet
from ..runtime.scale import LARGE_CLASS
from ..runtime.text import did_you_mean
from . import canary
from .assemble import assemble
from .assignment import Assignment, assignment
from .canary import Proof
from .execute import Executor, InProcess, Showing, Stream, WorkerPool, default_workers, executor, run, start_fork_server
from .identity import unique_students
from .loading import Discovery, Loaded, load_all
from .plan import Plan, Stats, place_of, plan, student_of
from .shards import plan_split, remembered


@dataclass
class Class:
    """Submissions on disk: files, submission folders or class folders, and what the run before
    into the same output folder says of them."""

    paths: list[Path]
    out: Path | None = None  # the run's output folder: passed over where the class holds it
    classes: Collection[str] = ()  # the folders the run before graded as classes
    ids_before: Callable[[], Mapping[str, str] | None] | None = None  # each place's id in the run before
    early: EarlyLoad | None = None  # a child that began reading the class before the library was imported


@dataclass
class Options:
    """How submissions are graded. `assignments`, where given, are the homeworks graded (a
    self-check's, a Gradescope container's); otherwise each homework is loaded from `bank` with
    its keys under `solutions`."""

    solutions: Path = Path("solutions")
    gold: dict[str, Path] = field(default_factory=dict)
    bank: Bank = BUNDLED
    homework: str | None = None  # the id for files that name none
    workers: int | None = 1  # None: every core
    budget: float = 2.0  # seconds for one check of one answer
    runner: Executor | None = None  # default: worker processes on this machine
    assignments: Mapping[str, Assignment] | None = None
    freeze: bool = False  # keep what the plan read out of the collector's reach; the caller unfreezes
    unreadable: Unreadable | None = None  # what an unreadable answer gets (None: what the homework says)
    ids_from_names: bool = False  # each student id is the file or folder name (an LMS download)
    salt: bytes = b""  # the grader's secret for hidden samples (`checkers.Context.salt`)


@dataclass
class Hooks:
    """What the caller is told, or has done, while a class is graded."""

    progress: Quiet = field(default_factory=Quiet)
    counted: Callable[[int], None] | None = None  # how many submissions there are, before any is read
    named: Callable[[list[Path], list[str]], None] | None = None  # each submission's place and id, in order
    showing: Showing | None = None  # work for the run stage's workers beside the checks
    meanwhile: Callable[[], None] | None = None  # this process's own work while workers check


@dataclass
class Graded:
    """What `grade` made: a Result per submission, in order, and how it went."""

    results: list[Result]
    places: list[Path]  # where each result's submission is
    assignments: dict[str, Assignment]
    stats: Stats
    timings: dict[str, dict[str, float]]  # stage -> wall and CPU seconds
    messages: list[str]  # for the instructor: entries passed over, folders read oddly

    @property
    def failed(self) -> list[Result]:
        return [r for r in self.results if r.error]

    @property
    def homeworks(self) -> dict[str, Homework]:
        return {hid: a.homework for hid, a in self.assignments.items()}


def grade(what: Class | Iterable[Submission | Result], options: Options | None = None,
          hooks: Hooks | None = None) -> Graded:
    """Grade `what`: plan (read every submission once, list the distinct tasks), run (each task
    once), assemble (each part's verdict, through one points ledger)."""
    options, hooks = options or Options(), hooks or Hooks()
    if isinstance(what, Class):
        return _Run(options, hooks).grade_class(what)
    resolve = _fixed(options.assignments) if options.assignments is not None else resolver(options)
    planned = plan(what, resolve)
    proof = canary.prove(planned.tasks, planned.assignments, options.budget, options.bank)
    tasks = {key: task for key, task in planned.tasks.items() if proof.holds(key)}
    outcomes = run(tasks, planned.assignments, options.runner or InProcess(options.budget))
    outcomes = {key: outcomes[key] if key in outcomes else proof.outcome(key) for key in planned.tasks}
    results = assemble(planned, outcomes)
    return Graded(results, [place_of(e) for e in planned.entries], planned.assignments, planned.stats, {},
                  list(proof.notes))


def grade_submission(given: Assignment, submission: Submission, runner: Executor | None = None) -> Result:
    """One submission of `given`'s homework, graded in this process."""
    graded = grade([submission], Options(assignments={given.id: given}, runner=runner or InProcess()))
    return graded.results[0]


def grade_answer(given: Assignment, part_id: str, raw: Any, folder: Path | None = None,
                 runner: Executor | None = None) -> Verdict:
    """One answer to one part, as if it were the only answer of a submission."""
    submission = Submission(student="answer", homework=given.id, answers={part_id: raw},
                            path=Path("answer.yaml"), folder=folder)
    result = grade_submission(given, submission, runner)
    return next(v for v in result.parts if v.part == part_id)


def self_check(path: Path, budget: float = 2.0, homework: str | None = None, bank: Bank = BUNDLED) -> Result:
    """A student's self-check of one submission file or folder: no keys and no gold, so parts
    compared with a key are only read (`homework`: the id when the file names none; `bank`:
    where the homework is, e.g. the homework folder a course hands out)."""
    submission = load_submission(path, homework=homework, bank=bank)
    try:
        loaded = bank.load_homework(submission.homework)
    except ConfigError as err:
        hint = "" if submission.homework in bank.homework_ids() else f"; {OWN_HOMEWORK}"
        raise SubmissionError(f"{err}{hint}", path=str(submission.path)) from None
    return grade_submission(assignment(loaded, None, self_check=True), submission, InProcess(budget))


def resolver(options: Options) -> Callable[[str], Assignment]:
    """Homework id -> Assignment, from the options' bank and the keys under their solutions."""
    bank, solutions, gold = options.bank, options.solutions, options.gold

    def resolve(homework_id: str) -> Assignment:
        try:
            homework = bank.load_homework(homework_id)
        except ConfigError as err:
            if homework_id in bank.homework_ids():
                raise  # the homework exists but its files are broken: the instructor's error
            raise SubmissionError(str(err)) from None  # a homework nobody has: this student's error
        return assignment(homework, load_keys(solutions, homework), gold=gold, solutions=solutions,
                          unreadable=options.unreadable, salt=options.salt)

    return resolve


def _fixed(assignments: Mapping[str, Assignment]) -> Callable[[str], Assignment]:
    def resolve(homework: str) -> Assignment:
        if homework not in assignments:
            raise SubmissionError(f"this submission answers homework '{homework}', which is not being graded "
                                  f"here ({', '.join(assignments)})")
        return assignments[homework]

    return resolve


def check_gold_names(gold: Mapping[str, Path], assignments: Mapping[str, Assignment]) -> None:
    """A --gold NAME that no check of the graded homeworks reads is a typo: say so before grading."""
    used = set(gold_names([part for a in assignments.values() for part in a.homework.parts]))
    for name in gold:
        if name not in used:
            hint = did_you_mean(name, sorted(used), "; did you mean '{}'?")
            known = ", ".join(sorted(used)) or "none"
            raise ConfigError(f"--gold {name}: no check of the homeworks graded here reads a gold named '{name}'"
                              f"{hint} (the gold names they read: {known})")


@contextmanager
def _timed(timings: dict[str, dict[str, float]], stage: str) -> Iterator[None]:
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        timings[stage] = {"wall_s": round(time.perf_counter() - wall, 4),
                          "cpu_s": round(time.process_time() - cpu, 4)}


class _Run:
    """One class graded: the state the stages share (the runner, the stream, what was said)."""

    def __init__(self, options: Options, hooks: Hooks):
        self.options, self.hooks = options, hooks
        self.processes = default_workers(options.workers)
        self.served = False  # whether the run stage's workers come from the fork server
        self.timings: dict[str, dict[str, float]] = {}
        self.stats = Stats()
        self.passed_over: list[Path] = []
        self.mixed: list[Path] = []
        self.notes: list[str] = []  # what the run stage has to say (the reference canary's findings)

    def grade_class(self, source: Class) -> Graded:
        stream = None
        try:
            with _timed(self.timings, "plan"):
                items = self._load(source)
                self.hooks.progress.stage(f"reading {len(items)} submissions", len(items))
                if self.hooks.named is not None and isinstance(items, Loaded):
                    self.hooks.named(*_who(unique_students(items, items.names)))  # the ids the plan gives
                resolve = remembered(_fixed(self.options.assignments) if self.options.assignments is not None
                                     else resolver(self.options))
                runner = self._runner()
                stream = _stream(runner, items, resolve, self.hooks.showing)
                planned = plan_split(items, resolve, self.stats, self.processes, self.hooks.progress.advance,
                                     on_task=stream.add if stream is not None else None)
            private = [*source.paths, *([source.out] if source.out else [])]
            outcomes = self._checked(planned, items, runner, stream, private)
        finally:
            if stream is not None:
                stream.close()  # the run stopped first (a broken key, Ctrl-C): its workers go now
        with _timed(self.timings, "assemble"):
            results = assemble(planned, outcomes)
        return Graded(results, [place_of(entry) for entry in planned.entries], planned.assignments,
                      planned.stats, self.timings, self._said())

    def _load(self, source: Class) -> Any:
        discovery = Discovery(source.classes, source.out, self.passed_over, self.mixed, source.early,
                              source.ids_before, self.options.ids_from_names)
        return load_all(source.paths, self.stats, homework=self.options.homework, bank=self.options.bank,
                        discovery=discovery, found=self._counted, lazy_from=LARGE_CLASS, workers=self.processes)

    def _counted(self, count: int) -> None:
        """Told how many submissions there are, before any is read."""
        if self.hooks.counted is not None:
            self.hooks.counted(count)
        if self.options.runner is None and self.processes > 1 and count >= LARGE_CLASS:
            self.served = start_fork_server()

    def _runner(self) -> Executor:
        runner = self.options.runner or executor(self.processes, self.options.budget, from_server=self.served)
        if hasattr(runner, "on_done"):
            runner = replace(runner, on_done=self.hooks.progress.advance)
        return runner

    def _checked(self, planned: Plan, items: Any, runner: Executor, stream: Stream | None,
                 private: list[Path]) -> dict:
        """The run stage: the outcome of every task of `planned`; the hooks' `meanwhile` is this
        process's own work while the workers of a stream check what the plan sent them."""
        if self.options.freeze and len(items) < LARGE_CLASS:
            # What the plan read stays alive to the end of the run: out of the cyclic collector's
            # reach, its full collections stop walking it again and again. Garbage frozen with it
            # waits for the end of the run. A large class is left as it was: frozen, its garbage
            # would be held to the end. The caller unfreezes.
            gc.freeze()
        check_gold_names(self.options.gold, planned.assignments)
        if self.hooks.named is not None and not isinstance(items, Loaded):
            self.hooks.named(*_who(planned.entries))
        with _timed(self.timings, "run"):
            proof = self._proved(planned, stream, private)
            tasks = {key: task for key, task in planned.tasks.items() if proof.holds(key)}
            self.hooks.progress.stage(f"checking {len(tasks)} distinct answers", len(tasks))
            if stream is not None:
                outcomes = stream.outcomes(tasks, self.hooks.meanwhile)
            else:
                outcomes = run(tasks, planned.assignments, runner)
        return {key: outcomes[key] if key in outcomes else proof.outcome(key) for key in planned.tasks}

    def _proved(self, planned: Plan, stream: Stream | None, private: list[Path]) -> Proof:
        """The reference canary, before any student's code runs; its notes are said once. `private`: the class
        and the output folder, which no job may read."""
        proof = canary.prove(planned.tasks, planned.assignments, self.options.budget, self.options.bank, private)
        self.notes.extend(proof.notes)
        if stream is not None:
            stream.drop(key for key in planned.tasks if not proof.holds(key))
        return proof

    def _said(self) -> list[str]:
        said = list(self.notes)
        if self.passed_over:
            said.append("not submissions, passed over: " + ", ".join(str(p) for p in self.passed_over))
        for folder in self.mixed:
            said.append(f"{folder}: holds an answers file and folders of answers, so each was graded as a "
                        "submission of its own; if it is one student's folder (an old attempt inside, say), "
                        "leave one answers file in it and run again")
        return said


def _who(entries: Iterable[Any]) -> tuple[list[Path], list[str]]:
    """Where each submission (or plan entry) is in the class, and its student id."""
    places, students = [], []
    for entry in entries:
        places.append(place_of(entry))
        students.append(student_of(entry))
    return places, students


def _stream(runner: Executor, items: Any, resolve: Callable[[str], Assignment],
            showing: Showing | None) -> Stream | None:
    """The run stage begun before the plan (`execute.Stream`), for a class loaded whole and checked by
    local worker processes forked from this one; its homeworks resolved first, for the workers."""
    if (not isinstance(runner, WorkerPool) or runner.workers <= 1 or runner.start_method is not None
            or not isinstance(items, Loaded)):
        return None
    assignments = {}
    for homework in dict.fromkeys(item.homework for item in items if isinstance(item, Submission)):
        try:
            assignments[homework] = resolve(homework)
        except SubmissionError:
            continue  # a homework nobody has: the plan gives those students their error rows
    if not assignments:
        return None
    return runner.stream(assignments, showing)
