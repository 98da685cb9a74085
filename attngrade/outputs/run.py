"""`grade run`'s life of an output folder: claim OUT, grade the class, apply the staff's
decisions, write every output into a staged OUT and switch it in.

One bad submission never stops the run: it gets an error row in grades.csv and an error
report of its own, and the exit code says that something could not be graded.
"""

from __future__ import annotations

import gc
import logging
import os
import shutil
import sys
import time
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping

from ..errors import ConfigError
from ..grading import Assignment, Class, Executor, Graded, Hooks, Options, Showing, Stats, grade
from ..grading.distributed import DaskExecutor
from ..grading.execute import settle
from ..grading.groups import Prints, prints_of
from ..intake.early import EarlyLoad
from ..intake.submissions import apart
from ..records import Homework, Result
from ..reports.cluster import ClusterReports
from ..reports.mathml import remember, shown_of
from ..reports.parallel import ReportPool
from ..runtime.deadline import BudgetExceeded
from ..runtime.files import NotRead, read_bounded
from ..runtime.outfiles import SALT_FILE
from ..runtime.progress import Quiet, for_terminal
from ..runtime.scale import default_workers
from . import history
from .ahead import FoldersAhead, Made
from .folder import check_only_outputs, claimed, staged
from .history import Renamed
from .lms import read_roster, unmatched
from .overrides import apply as apply_overrides
from .overrides import load as load_overrides
from .overrides import template, write_template
from ..staff import STORE
from ..staff import apply as apply_staff
from .write import Groups, Outputs, groups_of, report_folders, show_decided, write_outputs

log = logging.getLogger(__name__)


@dataclass
class RunRequest:
    """A `grade run`: what to grade (`paths`), into which output folder, how (`grading`), and what
    the run adds to grading: staff decisions (`overrides`), the rubric shown to students, the
    roster joined into grades.csv, a progress display, and `early`, a child that began reading the
    class before the library was imported."""

    paths: list[Path]
    out: Path
    grading: Options = field(default_factory=Options)
    overrides: Path | None = None
    rubric: bool = False
    roster: Path | None = None
    show_progress: bool = True
    early: EarlyLoad | None = None


@dataclass
class Batch:
    """What a run produced, for the command's summary and exit code."""

    graded: Graded
    out: Path
    groups: Groups = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)

    @property
    def results(self) -> list[Result]:
        return self.graded.results

    @property
    def failed(self) -> list[Result]:
        return self.graded.failed

    @property
    def homeworks(self) -> dict[str, Homework]:
        return self.graded.homeworks

    @property
    def stats(self) -> Stats:
        return self.graded.stats

    def stats_json(self) -> dict[str, Any]:
        return {**self.graded.stats.to_json(), "timings": self.graded.timings}


def grade_run(request: RunRequest) -> Batch:
    """Grade every submission under the request's paths and write results, grades and reports to its OUT."""
    out, said = request.out, []
    paths = apart(request.paths, out, said)
    check_only_outputs(out)  # before any grading: a folder that cannot be replaced is the instructor's error
    _check_overrides_file(request.overrides, out)
    people = read_roster(request.roster) if request.roster is not None else None
    with claimed(out, said):  # a second run into OUT is refused now; an interrupted one is put right first
        request = replace(request, grading=replace(request.grading, salt=_salt(out)))
        run = _Run(request, for_terminal(request.show_progress))
        try:
            batch = run.graded(paths)
            batch.messages[:0] = said
            if people is not None:
                batch.messages += unmatched((r.student for r in batch.results), people)
            return run.finish(batch, people)
        finally:
            run.close()


def _salt(out: Path) -> bytes:
    """The grader's secret for hidden samples: the one the last run into OUT kept, else a new one."""
    try:
        info = os.lstat(out / SALT_FILE)
        kept = read_bounded(out / SALT_FILE, 64) if info.st_uid == os.getuid() and not info.st_mode & 0o077 else b""
    except (NotRead, OSError):
        kept = b""
    return kept if len(kept) == 32 else os.urandom(32)  # (one another user could read is a secret no more)


def _keep_salt(stage: Path, salt: bytes) -> None:
    fd = os.open(stage / SALT_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        os.fchmod(f.fileno(), 0o600)  # (a file kept from the last run may have been made readable since)
        f.write(salt)


class _Run:
    """What one run holds between its stages: the report processes, the folders made ahead, the
    fingerprints the workers made, the progress display."""

    def __init__(self, request: RunRequest, progress: Quiet):
        self.request, self.progress = request, progress
        self.workers = request.grading.workers
        # The report processes are forked before the class is read, while this process is small
        # (see reports.parallel).
        self.reports = _reports(request.grading.runner, self.workers)
        self.folders = FoldersAhead(request.out, default_workers(self.workers), self.reports)
        self.prints: Prints = {}  # made by the run stage's workers
        self.timings: dict[str, dict[str, float]] = {}

    def graded(self, paths: list[Path]) -> Batch:
        out, messages = self.request.out, []
        source = Class(paths, out, history.class_folders(out), partial(_ids_before, out, messages),
                       self.request.early)
        hooks = Hooks(self.progress, counted=self.reports.start, named=self.folders.named,
                      showing=Showing(_made_beside, partial(_keep_beside, self.prints)),
                      meanwhile=self.reports.prepare)
        try:
            graded = grade(source, replace(self.request.grading, freeze=True), hooks)
        except KeyboardInterrupt:
            sys.stderr.write(f"grade: stopped while grading, before anything was written; {out} is as it was\n")
            raise
        return Batch(graded, out, messages=messages + graded.messages)

    def finish(self, batch: Batch, roster: dict | None) -> Batch:
        """The staff's decisions applied, then every output written into a staged OUT, switched in."""
        out, homeworks = self.request.out, batch.homeworks
        batch.groups = groups_of(batch.results, homeworks, self.prints)
        # Students graded under a new id (a placeholder put right): their decisions go with them.
        renamed = history.renamed(out, history.read(out, quiet=True), batch.graded.places, batch.results)
        if self.request.overrides is not None:
            self._decided(batch, renamed)
        self._staff_graded(batch, renamed)
        settle()  # the run stage's pool, joined in the background: done before report processes fork
        made = self._made(batch)
        started = (time.perf_counter(), time.process_time())
        with staged(out, batch.messages, made.keeping.persons, made.stage) as stage:
            self.progress.stage(f"writing {len(batch.results)} reports", len(batch.results))
            _keep_salt(stage, self.request.grading.salt)
            self._take(made, stage)
            outputs = Outputs(batch.results, homeworks, batch.groups, self.request.rubric, roster, made.keeping,
                              made.folders)

            def overrides_template() -> None:
                rows = template(batch.results, batch.groups, out / "overrides.yaml", homeworks)
                batch.messages.append(write_template(stage, rows, shown=out))

            try:
                write_outputs(outputs, stage, stage != Path(os.path.abspath(out)), self.progress, self.workers,
                              self.reports, overrides_template)
            finally:
                # Every report is written, or the run stopped: either way the processes writing
                # them go first, before the switch walks the old OUT or the stage is removed.
                self.reports.close()
        batch.graded.timings["write"] = {"wall_s": round(time.perf_counter() - started[0], 4),
                                         "cpu_s": round(time.process_time() - started[1], 4)}
        return batch

    def _decided(self, batch: Batch, renamed: Mapping[str, Renamed]) -> None:
        """The results and groups with the decisions of the overrides file applied."""
        homeworks = batch.homeworks
        group_of = {(member, g.part): (hid, g.id) for hid, by_part in batch.groups.items()
                    for gs in by_part.values() for g in gs for member in g.members}
        decisions = load_overrides(self.request.overrides, batch.results, batch.groups, homeworks, renamed)
        batch.graded.results = apply_overrides(batch.results, decisions, group_of)
        batch.messages += decisions.said
        if not decisions.empty:  # the class page and the next template show the groups as decided
            batch.groups = groups_of(batch.results, homeworks, self.prints)
            show_decided(batch.groups, batch.results, set(decisions.students))

    def _staff_graded(self, batch: Batch, renamed: Mapping[str, Renamed]) -> None:
        """The grades course staff gave in `grade review` (OUT's store), for the parts still pending:
        a decision of the overrides file wins."""
        homeworks = batch.homeworks
        batch.graded.results, said = apply_staff(batch.results, batch.groups, self.request.out / STORE, homeworks,
                                                 renamed, batch.graded.assignments)
        batch.messages += said
        if said:  # the class page and the overrides template show the staff-decided parts
            batch.groups = groups_of(batch.results, homeworks, self.prints)

    def _made(self, batch: Batch) -> Made:
        """The report folders: made while the class was checked, or named now."""
        students = [r.student for r in batch.results]
        made = self.folders.taken(students, batch.graded.places, batch.messages)
        if made is not None:
            return made
        last = history.read(self.request.out, quiet=True)
        keeping = history.keeping_of(batch.graded.places, students, last, self.request.out, batch.messages)
        return Made(keeping, report_folders(batch.results, keeping))

    @staticmethod
    def _take(made: Made, stage: Path) -> None:
        """Wait for the folders made ahead, or drop them if OUT is written in place after all."""
        if made.maker is not None and stage == made.stage:
            made.maker.wait()
        elif made.maker is not None:  # OUT could not be replaced after all (see staged): written in place
            made.maker.stop()
            shutil.rmtree(made.stage, ignore_errors=True)  # what the maker made after staged removed it

    def close(self) -> None:
        gc.unfreeze()
        self.folders.close()  # first: a report process making a large class's folders then stops at once
        self.reports.close()
        self.folders.close()
        self.progress.close()


def _ids_before(out: Path, said: list[str]) -> Mapping[str, str] | None:
    """Each place's id in the run before into `out`, if that run's list can be used."""
    run_before = history.read(out, said)
    return run_before.ids() if run_before.known else None


def _made_beside(tasks: list[Any], assignments: Mapping[str, Assignment]) -> tuple[Any, Any]:
    """What a run-stage worker makes of a batch besides its outcomes, for what this process does
    after the run stage: the MathML of its readings (`reports.mathml.shown_of`) and their answer
    groups' fingerprints (`grading.groups.prints_of`)."""
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
    shown, fingerprints = made
    if shown is not None:
        remember(shown)
    prints.update(fingerprints or {})


def _reports(runner: Executor | None, workers: int | None) -> ReportPool | ClusterReports:
    """Where students' reports are rendered: on the Dask cluster that checks, else by local processes."""
    if isinstance(runner, DaskExecutor):
        return ClusterReports(runner)
    return ReportPool(default_workers(workers), thaws=True)  # (see `_Run.close`'s gc.unfreeze)


def _check_overrides_file(overrides: Path | None, out: Path) -> None:
    """Decisions must live in a file the run keeps: OUT/overrides.new.yaml is written afresh by
    every run, so decisions made in it would hold for one run and be gone after it."""
    regenerated = out / "overrides.new.yaml"
    if overrides is not None and overrides.exists() and regenerated.exists() and overrides.samefile(regenerated):
        raise ConfigError(f"--overrides {overrides}: every run writes this file afresh, so decisions made in it "
                          f"would be lost; copy them into {out / 'overrides.yaml'} (or a file outside {out}) "
                          "and pass that file")
