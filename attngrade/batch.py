"""`grade run`: grade a batch of submissions and write every output.

One bad submission never stops the batch: it gets an error row in grades.csv and an
error report of its own, and the exit code says that something could not be graded.
"""

from __future__ import annotations

import gc
import logging
import os
import shutil
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

from .deadline import BudgetExceeded
from .errors import ConfigError, SubmissionError
from .grading import (Assignment, Executor, Stats, assemble, assignment, default_workers, executor, load_all,
                      start_fork_server)
from .grading.execute import settle
from .grading import run as run_tasks
from .grading.execute import Showing, Stream, WorkerPool
from .grading.plan import Loaded, Plan, place_of, student_of, unique_students
from .grading.shards import plan_split, remembered
from .checkers.accuracy import gold_names
from .groups import Group, Prints, answer_groups, prints_of
from .keys import load_keys
from .lms import read_roster, unmatched
from . import lastrun
from .output import folder_names, gives_folder, grades_csv, results_json, write_atomic
from .overrides import apply as apply_overrides
from .overrides import load as load_overrides
from .overrides import template, write_template
from .problems import BUNDLED, Bank
from .progress import Quiet, for_terminal
from .records import Homework, Result, Submission
from .reports.folders import FolderMaker
from .reports.parallel import ClassPage, ReportPool, write_reports
from .runfolder import apart, check_only_outputs, claimed, new_stage, staged
from .scale import LARGE_CLASS

if TYPE_CHECKING:
    from .early import EarlyLoad
    from .reports.cluster import ClusterReports

log = logging.getLogger(__name__)


@dataclass
class Batch:
    """What a run produced, for the CLI's summary and exit code."""

    results: list[Result] = field(default_factory=list)
    out: Path | None = None
    assignments: dict[str, Assignment] = field(default_factory=dict)
    groups: dict[str, dict[str, list[Group]]] = field(default_factory=dict)  # homework -> part -> groups
    prints: Prints = field(default_factory=dict, repr=False)  # made by the run stage's workers
    messages: list[str] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    timings: dict[str, dict[str, float]] = field(default_factory=dict)  # stage -> wall and CPU seconds
    places: list[Path] = field(default_factory=list)  # where each result's submission is in the class
    # What the run before in OUT left, read when needed (held whole, it is 40 MB at 100,000 students).
    last: Callable[[], lastrun.LastRun] = lastrun.LastRun

    @property
    def failed(self) -> list[Result]:
        return [r for r in self.results if r.error]

    @property
    def homeworks(self) -> dict[str, Homework]:
        return {hid: a.homework for hid, a in self.assignments.items()}

    def stats_json(self) -> dict[str, Any]:
        return {**self.stats.to_json(), "timings": self.timings}


def _who(entries: Iterable[Any]) -> tuple[list[Path], list[str]]:
    """Where each submission (or plan entry) is in the class, and its student id."""
    places, students = [], []
    for entry in entries:
        places.append(place_of(entry))
        students.append(student_of(entry))
    return places, students


def resolver(solutions: Path, gold: dict[str, Path] | None = None, bank: Bank = BUNDLED):
    """Homework id -> Assignment, from `bank` and the keys under `solutions`."""

    def resolve(homework_id: str) -> Assignment:
        try:
            homework = bank.load_homework(homework_id)
        except ConfigError as err:
            if homework_id in bank.homework_ids():
                raise  # the homework exists but its files are broken: the instructor's error
            raise SubmissionError(str(err)) from None  # a homework nobody has: this student's error
        return assignment(homework, load_keys(solutions, homework), gold=gold, solutions=solutions)

    return resolve


def _check_gold_names(gold: dict[str, Path], assignments: dict[str, Assignment]) -> None:
    """A --gold NAME that no check of the graded homeworks reads is a typo: say so before grading."""
    import difflib

    used = set(gold_names([part for a in assignments.values() for part in a.homework.parts]))
    for name in gold:
        if name not in used:
            close = difflib.get_close_matches(name, sorted(used), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
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


def grade_paths(paths: Iterable[Path], solutions: Path,
                progress: Quiet | None = None,
                gold: dict[str, Path] | None = None, *, workers: int | None = 1, budget: float = 2.0,
                bank: Bank = BUNDLED, homework: str | None = None, runner: Executor | None = None,
                reports: ReportPool | None = None, freeze: bool = False, out: Path | None = None,
                named: Callable[[list[Path], list[str]], None] | None = None,
                early: EarlyLoad | None = None) -> Batch:
    """plan (load and read every submission), run (each distinct task once), assemble.

    `runner` is where the run stage executes (default: worker processes on this machine);
    `reports` is started as soon as the submissions are counted, before any is read;
    `freeze`: move what the plan made to the collector's permanent generation (the caller
    calls gc.unfreeze() when done with the batch); `out`: the OUT the run writes, where the run
    before left which folders were classes and each submission's id (see `lastrun`; the ids are
    read once the processes started when the submissions are counted are forked, so that none
    holds a copy of them); `named` is told where each submission is and the id it goes by, in
    order, as soon as that is known (before the class is read, if it is loaded whole), so that
    the run's folders are made meanwhile; `early`, a child that began reading the class before this
    process imported the library (`early.EarlyLoad`).
    """
    batch = Batch()
    progress = progress or Quiet()
    passed_over: list[Path] = []
    mixed: list[Path] = []
    processes = default_workers(workers)
    served = False  # whether the run stage's workers come from the fork server

    classes = lastrun.class_folders(out) if out is not None else set()
    if out is not None:  # read again when the folders are due (held, it would cost a large class 40 MB)
        batch.last = partial(lastrun.read, out, quiet=True)

    def before() -> Mapping[str, str] | None:
        if out is None:
            return None
        run_before = lastrun.read(out, batch.messages)
        return run_before.ids() if run_before.known else None

    def found(count: int) -> None:  # before any submission is read
        nonlocal served
        if reports is not None:
            reports.start(count)
        if runner is None and processes > 1 and count >= LARGE_CLASS:
            served = start_fork_server()

    stream = None
    try:
        with _timed(batch.timings, "plan"):
            items = load_all(paths, batch.stats, homework=homework, bank=bank, passed_over=passed_over,
                             found=found, lazy_from=LARGE_CLASS, before=before, classes=classes, outputs=out,
                             mixed=mixed, workers=processes, early=early)
            progress.stage(f"reading {len(items)} submissions", len(items))
            if named is not None and isinstance(items, Loaded):
                named(*_who(unique_students(items, items.names)))  # the ids the plan gives, as it will give them
            resolve = remembered(resolver(solutions, gold or {}, bank))
            runner = runner or executor(processes, budget, from_server=served)
            if hasattr(runner, "on_done"):
                runner = replace(runner, on_done=progress.advance)
            stream = _stream(runner, items, resolve, shown=reports is not None, prints=batch.prints)
            planned = plan_split(items, resolve, batch.stats, processes, progress.advance,
                                 on_task=stream.add if stream is not None else None)
        outcomes = _checked(planned, items, runner, stream, batch, progress, freeze, gold, named,
                            meanwhile=reports.prepare if reports is not None else None)
    finally:
        if stream is not None:
            stream.close()  # the run stopped first (a broken key, Ctrl-C): its workers go now
    with _timed(batch.timings, "assemble"):
        batch.results = assemble(planned, outcomes)
    batch.places = [place_of(entry) for entry in planned.entries]
    batch.assignments = planned.assignments
    if passed_over:
        batch.messages.append("not submissions, passed over: " + ", ".join(str(p) for p in passed_over))
    for folder in mixed:
        batch.messages.append(f"{folder}: holds an answers file and folders of answers, so each was graded as a "
                              "submission of its own; if it is one student's folder (an old attempt inside, say), "
                              "leave one answers file in it and run again")
    return batch


def _stream(runner: Executor, items: Any, resolve: Any, shown: bool,
            prints: Prints) -> "Stream | None":
    """The run stage begun before the plan (`execute.Stream`), for a class loaded whole and checked by
    local worker processes forked from this one; its homeworks resolved first, for the workers.
    `shown`: the run writes its outputs (reports rendered by processes forked from this one, answer
    groups), so the workers make what those need of the readings they check meanwhile (`_made_beside`;
    the fingerprints go to `prints`)."""
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
    return runner.stream(assignments, Showing(_made_beside, partial(_keep_beside, prints)) if shown else None)


def _made_beside(tasks: list[Any], assignments: Mapping[str, Assignment]) -> tuple[Any, Any]:
    """What a run-stage worker makes of a batch besides its outcomes, for what this process does
    after the run stage: the MathML of its readings (`reports.mathml.shown_of`) and their answer
    groups' fingerprints (`groups.prints_of`)."""
    from .reports.mathml import shown_of

    return _or_none(shown_of, tasks, assignments), _or_none(prints_of, tasks, assignments)


def _or_none(make: Callable[..., Any], *args: Any) -> Any:
    """What `make` makes, or None if it fails: one kind failing never costs the other (see `_made_beside`)."""
    try:
        return make(*args)
    except BudgetExceeded:
        raise  # the batch's time is up: nothing more is made of it (see `execute._made`)
    except Exception:  # noqa: BLE001 - this process makes it itself, later
        log.debug("a worker could not make %s", getattr(make, "__name__", make), exc_info=True)
        return None


def _keep_beside(prints: Prints, made: tuple[Any, Any]) -> None:
    """Keep what `_made_beside` made: the MathML for the report processes, the fingerprints in
    `prints`, this run's own (a later run in this process may read other problem definitions)."""
    from .reports.mathml import remember

    shown, fingerprints = made
    if shown is not None:
        remember(shown)
    prints.update(fingerprints or {})


def _checked(planned: Plan, items: Any, runner: Executor, stream: "Stream | None", batch: Batch, progress: Quiet,
             freeze: bool, gold: dict[str, Path] | None, named: Callable[[list[Path], list[str]], None] | None,
             meanwhile: Callable[[], None] | None = None) -> dict:
    """The run stage: the outcome of every task of `planned`; `meanwhile`, this process's own work while
    the workers of a stream (`execute.Stream`) check what the plan sent them (with none, it is not done)."""
    if freeze and len(items) < LARGE_CLASS:
        # What the plan read stays alive to the end of the run: out of the cyclic collector's
        # reach, its full collections stop walking it again and again (they cost assemble
        # three times over when the plan came back from several processes). Garbage frozen
        # with it waits for the end of the run (a full collection first would cost 85 ms at
        # 1,000 students). A large class is left as it was: frozen, its garbage waited to the end
        # (100,000 students with distinct prediction files: 999 MB instead of 785). `run` unfreezes.
        gc.freeze()
    _check_gold_names(gold or {}, planned.assignments)
    if named is not None and not isinstance(items, Loaded):
        named(*_who(planned.entries))
    with _timed(batch.timings, "run"):
        progress.stage(f"checking {len(planned.tasks)} distinct answers", len(planned.tasks))
        if stream is not None:
            return stream.outcomes(planned.tasks, meanwhile)
        return run_tasks(planned.tasks, planned.assignments, runner)


def run(paths: list[Path], out: Path, solutions: Path = Path("solutions"), *, show_progress: bool = True,
        gold: dict[str, Path] | None = None, workers: int | None = None, budget: float = 2.0,
        overrides: Path | None = None, bank: Bank = BUNDLED, homework: str | None = None,
        runner: Executor | None = None, rubric: bool = False, roster: Path | None = None,
        early: EarlyLoad | None = None) -> Batch:
    """Grade every submission under `paths` and write results, grades and reports to `out`.

    Reports go to students, so the rubric of pending parts is in them only with `rubric`;
    `early`: a child reading the class since before the library was imported (`early.EarlyLoad`).
    """
    said: list[str] = []
    paths = apart(paths, out, said)
    check_only_outputs(out)  # before any grading: a folder that cannot be replaced is the instructor's error
    _check_overrides_file(overrides, out)
    people = read_roster(roster) if roster is not None else None
    with claimed(out, said):  # a second run into OUT is refused now; an interrupted one is put right first
        progress = for_terminal(show_progress)
        # The report processes are forked before the class is read, while this process is small
        # (see reports.parallel).
        reports = _reports(runner, workers)
        folders = _FoldersAhead(out, default_workers(workers), reports)
        try:
            try:
                batch = grade_paths(paths, solutions, progress, gold, workers=workers, budget=budget, bank=bank,
                                    homework=homework, runner=runner, reports=reports, freeze=True, out=out,
                                    named=folders.named, early=early)
            except KeyboardInterrupt:
                sys.stderr.write(f"grade: stopped while grading, before anything was written; {out} is as it was\n")
                raise
            batch.out = out
            batch.messages[:0] = said
            if people is not None:
                batch.messages += unmatched((r.student for r in batch.results), people)
            return _finish(batch, out, overrides, progress, rubric, people, workers, reports, folders)
        finally:
            gc.unfreeze()
            folders.close()  # first: a report process making a large class's folders then stops at once
            reports.close()
            folders.close()
            progress.close()


def _reports(runner: Executor | None, workers: int | None) -> ReportPool | ClusterReports:
    """Where students' reports are rendered: on the Dask cluster that checks, else by local processes."""
    from .grading.distributed import DaskExecutor

    if isinstance(runner, DaskExecutor):
        from .reports.cluster import ClusterReports

        return ClusterReports(runner)
    return ReportPool(default_workers(workers), thaws=True)  # (see `run`'s gc.unfreeze)


def _check_overrides_file(overrides: Path | None, out: Path) -> None:
    """Decisions must live in a file the run keeps: OUT/overrides.new.yaml is written afresh by
    every run, so decisions made in it would hold for one run and be gone after it."""
    regenerated = out / "overrides.new.yaml"
    if overrides is not None and overrides.exists() and regenerated.exists() and overrides.samefile(regenerated):
        raise ConfigError(f"--overrides {overrides}: every run writes this file afresh, so decisions made in it "
                          f"would be lost; copy them into {out / 'overrides.yaml'} (or a file outside {out}) "
                          "and pass that file")


def _finish(batch: Batch, out: Path, overrides: Path | None, progress: Quiet, rubric: bool = False,
            roster: dict | None = None, workers: int | None = 1, reports: ReportPool | None = None,
            folders: "_FoldersAhead | None" = None) -> Batch:
    batch.out = out
    homeworks = batch.homeworks
    batch.groups = _answer_groups(batch, homeworks)
    if overrides is not None:
        group_of = {(member, g.part): (hid, g.id) for hid, by_part in batch.groups.items()
                    for gs in by_part.values() for g in gs for member in g.members}
        decisions = load_overrides(overrides, batch.results, batch.groups, homeworks)
        batch.results = apply_overrides(batch.results, decisions, group_of)
        batch.messages += decisions.said
        if not decisions.empty:  # the class page and the next template show the groups as decided
            batch.groups = _answer_groups(batch, homeworks)
            _group_examples(batch, set(decisions.students))
    settle()  # the run stage's pool, joined in the background: done before report processes fork
    made = folders.taken(batch) if folders is not None else None
    if made is None:
        keeping = _keeping(batch.places, [r.student for r in batch.results], batch.last(), out, batch.messages)
        made = _Made(keeping, _folders(batch.results, keeping))
    with _timed(batch.timings, "write"), staged(out, batch.messages, made.keeping.persons, made.stage) as stage:
        progress.stage(f"writing {len(batch.results)} reports", len(batch.results))
        if made.maker is not None and stage == made.stage:
            made.maker.wait()
        elif made.maker is not None:  # OUT could not be replaced after all (see staged): written in place
            made.maker.stop()
            shutil.rmtree(made.stage, ignore_errors=True)  # what the maker made after staged removed it

        def overrides_template() -> None:
            batch.messages.append(write_template(stage, template(batch.results, batch.groups, out / "overrides.yaml",
                                                                  homeworks), shown=out))

        try:
            write_outputs(batch.results, stage, homeworks, batch.groups, progress, rubric=rubric, roster=roster,
                          workers=workers, reports=reports, meanwhile=overrides_template, keeping=made.keeping,
                          folders=made.folders, fresh=stage != Path(os.path.abspath(out)))
        finally:
            if reports is not None:
                # Every report is written, or the run stopped: either way the processes writing
                # them go first, before the switch walks the old OUT or the stage is removed.
                reports.close()
    return batch


def _answer_groups(batch: Batch, homeworks: dict[str, Homework]) -> dict[str, dict[str, list[Group]]]:
    """Each homework's answer groups, from its graded results."""
    return {hid: answer_groups([r for r in batch.results if r.homework == hid and not r.error],
                               {p.id: p for p in hw.parts}, batch.prints) for hid, hw in homeworks.items()}


def _group_examples(batch: Batch, own: set[tuple[str, str]]) -> None:
    """Each group shown by a member the group's decision (or the machine) scored, not one a
    student's own entry did: that one's score is not the group's."""
    verdicts = {(r.student, v.part): v for r in batch.results for v in r.parts}
    for by_part in batch.groups.values():
        for groups in by_part.values():
            for group in groups:
                plain = next((m for m in group.members if (m, group.part) not in own), None)
                if plain is not None:
                    group.example = verdicts[(plain, group.part)]


@dataclass
class Keeping:
    """What this run keeps of the run before in OUT: the folder each result had (`wanted`), the
    folders nobody may have (`reserved`), and the entries held for submissions that left."""

    places: list[Path]
    wanted: list[str | None] | None = None
    reserved: set[str] = field(default_factory=set)
    held: dict[str, lastrun.Entry] = field(default_factory=dict)
    persons: set[str] = field(default_factory=set)  # folders of OUT the run before did not write

    def listing(self, results: list[Result], folders: list[str]) -> Iterator[str]:
        """This run's OUT/.folders.json."""
        return lastrun.lines((lastrun.place_key(p) for p in self.places), (r.student for r in results),
                             folders, self.held)


def _keeping(where: list[Path], students: list[str], last: lastrun.LastRun, out: Path, said: list[str]) -> Keeping:
    """What the run keeps of `last` for submissions found at `where` (in order) under the ids `students`."""
    keeping = Keeping(where)
    if not last.known:
        return keeping
    places = [lastrun.place_key(p) for p in where]
    found = sum(1 for place in places if place in last.entries)
    if last.entries and found < min(len(places), len(last.entries)) / 2:
        said.append(f"{out / lastrun.FILE}: only {found} of this run's {len(places)} submissions were "
                    "in the run before (was the class moved?); the others were given ids and folders afresh")
    keeping.wanted = last.wanted(places, students, fits=gives_folder)
    keeping.held = last.held(out, places, keeping.wanted)
    keeping.persons = last.unlisted(out)
    keeping.reserved = {e.folder for e in keeping.held.values()} | keeping.persons
    return keeping


def write_outputs(results: list[Result], out: Path, homeworks: dict[str, Homework],
                  groups: dict[str, dict[str, list[Group]]] | None = None, progress: Quiet | None = None,
                  rubric: bool = False, roster: dict | None = None, workers: int | None = 1,
                  reports: ReportPool | None = None, meanwhile: Callable[[], None] | None = None,
                  keeping: "Keeping | None" = None, folders: list[str] | None = None, fresh: bool = False) -> None:
    """results.json, grades.csv, a report per student and the class page; `meanwhile` is
    called with the tables, while report processes render (this process would only wait).
    `keeping`: the folders the run before gave and held, and how to list this run's (`lastrun`);
    `folders`: the result's folders, if named already (`_folders`); `fresh`: `out` is a staged OUT."""
    out.mkdir(parents=True, exist_ok=True)
    folders = folders if folders is not None else _folders(results, keeping)
    advance = progress.advance if progress is not None else (lambda count=1: None)

    def tables() -> None:
        write_atomic(out / "results.json", results_json(results))
        write_atomic(out / "grades.csv", grades_csv(results, homeworks, roster))
        if keeping is not None:
            write_atomic(out / lastrun.FILE, keeping.listing(results, folders))
        if meanwhile is not None:
            meanwhile()

    write_reports(results, folders, out, homeworks, rubric, default_workers(workers),
                  advance, also=ClassPage(out / "index.html", "Class results", groups), pool=reports,
                  meanwhile=tables, fresh=fresh)


def _folders(results: Sequence[Result], keeping: Keeping | None) -> list[str]:
    return folder_names(results, keeping.wanted, keeping.reserved) if keeping else folder_names(results)


@dataclass
class _Made:
    """The run's folders, named (and, with `maker`, being made in `stage`) before the class was checked."""

    keeping: Keeping
    folders: list[str]
    stage: Path | None = None
    maker: FolderMaker | None = None
    students: list[str] = field(default_factory=list)  # the ids they were named for
    top: frozenset[str] | None = None  # what OUT held at the top when they were named


class _FoldersAhead:
    """With more than one worker: the staged OUT and its students' folders made while the class is
    read and checked (`reports.folders`), as soon as it is known who is in it."""

    def __init__(self, out: Path, workers: int, reports: Any):
        self.out, self.workers, self.reports = out, workers, reports
        self.made: _Made | None = None
        self.said: list[str] = []
        self._left: list[Path] = []  # stages removed, to remove again (see close)

    def named(self, places: list[Path], students: list[str]) -> None:
        if self.workers <= 1 or not places:
            return
        pool = getattr(self.reports, "early", None)
        if len(places) >= LARGE_CLASS and pool is None:
            return  # a large class is never forked from (see reports.folders), and no process is free
        keeping = _keeping(places, students, lastrun.read(self.out, quiet=True), self.out, self.said)
        folders = folder_names([_Named(s) for s in students], keeping.wanted, keeping.reserved)
        stage = new_stage(self.out)
        if stage is None:
            return  # OUT is written in place: its folders may be there already
        self.made = _Made(keeping, folders, stage, None, students, _top(self.out))  # from now on close() removes it
        self.made.maker = FolderMaker(stage, folders, pool).start()

    def taken(self, batch: Batch) -> _Made | None:
        """What was made, for `batch` to write into; None if nothing was (or it was made for other ids)."""
        made, self.made = self.made, None
        if made is None:
            return None
        # OUT's top as it was: no folder of a person's was added meanwhile (see `_keeping`'s persons),
        # known without reading the run before's list again (40 MB at 100,000 students).
        if (made.students != [r.student for r in batch.results] or made.keeping.places != batch.places
                or made.top != _top(self.out)):
            self.made = made  # close() removes it
            return None
        batch.messages += self.said
        return made

    def close(self) -> None:
        """Remove a stage no run took (the run stopped first). Called again once the report processes
        are gone: one of them may have been making its folders (a large class) as it was removed."""
        made, self.made = self.made, None
        if made is not None:
            if made.maker is not None:
                made.maker.stop()
            if made.stage is not None:
                self._left.append(made.stage)
        for stage in self._left:
            shutil.rmtree(stage, ignore_errors=True)


def _top(out: Path) -> frozenset[str] | None:
    try:
        return frozenset(os.listdir(out))
    except OSError:
        return None


@dataclass(frozen=True)
class _Named:
    """A result as `folder_names` sees it: an id (known from the plan, before there is a result)."""

    student: str
