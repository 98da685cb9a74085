"""The write stage: results.json, grades.csv, the students' reports and the class page."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..grading.groups import Group, Prints, answer_groups, by_member
from ..records import Homework, Result
from ..reports.parallel import ClassPage, ReportJob, write_reports
from ..runtime.files import write_atomic
from ..runtime.outfiles import FOLDERS_FILE
from ..runtime.progress import Quiet
from ..runtime.scale import default_workers
from .history import Keeping
from .layout import folder_names
from .tables import grades_csv, results_json

Groups = dict[str, dict[str, list[Group]]]  # homework -> part -> its answer groups


@dataclass
class Outputs:
    """What a run writes: its results, the homeworks they answer, their answer groups, whether the
    rubric of parts waiting for staff is shown to students, the roster joined into grades.csv, and
    the report folders (`keeping`: what the run before gave and held, and how to list this run's)."""

    results: list[Result]
    homeworks: dict[str, Homework]
    groups: Groups | None = None
    rubric: bool = False
    roster: dict | None = None
    keeping: Keeping | None = None
    folders: list[str] | None = None  # each result's folder, if named already


def write_outputs(outputs: Outputs, out: Path, fresh: bool = False, progress: Quiet | None = None,
                  workers: int | None = 1, reports: Any = None, meanwhile: Callable[[], None] | None = None) -> None:
    """Every output of a run into `out` (`fresh`: a staged OUT no one reads yet); `meanwhile` is
    called with the tables, while report processes render (this process would only wait);
    `reports`: the processes (or cluster) that render the reports, started already."""
    out.mkdir(parents=True, exist_ok=True)
    results = outputs.results
    folders = outputs.folders if outputs.folders is not None else report_folders(results, outputs.keeping)
    advance = progress.advance if progress is not None else (lambda count=1: None)

    def tables() -> None:
        write_atomic(out / "results.json", results_json(results, by_member(outputs.groups)))
        write_atomic(out / "grades.csv", grades_csv(results, outputs.homeworks, outputs.roster))
        if outputs.keeping is not None:
            write_atomic(out / FOLDERS_FILE, outputs.keeping.listing(results, folders))
        if meanwhile is not None:
            meanwhile()

    page = ClassPage(out / "index.html", "Class results", outputs.groups)
    job = ReportJob(results, folders, out, outputs.homeworks, outputs.rubric, page, fresh)
    write_reports(job, default_workers(workers), advance, pool=reports, meanwhile=tables)


def report_folders(results: Sequence[Result], keeping: Keeping | None) -> list[str]:
    """Each result's report folder, keeping what the run before gave (`keeping`), if known."""
    return folder_names(results, keeping.wanted, keeping.reserved) if keeping else folder_names(results)


def groups_of(results: list[Result], homeworks: dict[str, Homework], prints: Prints) -> Groups:
    """Each homework's answer groups, from its graded results."""
    return {hid: answer_groups([r for r in results if r.homework == hid and not r.error],
                               {p.id: p for p in hw.parts}, prints) for hid, hw in homeworks.items()}


def show_decided(groups: Groups, results: list[Result], own: set[tuple[str, str]]) -> None:
    """Each group shown by a member the group's decision (or the machine) scored, not one a
    student's own entry did: that one's score is not the group's."""
    verdicts = {(r.student, v.part): v for r in results for v in r.parts}
    for by_part in groups.values():
        for part_groups in by_part.values():
            for group in part_groups:
                plain = next((m for m in group.members if (m, group.part) not in own), None)
                if plain is not None:
                    group.example = verdicts[(plain, group.part)]
