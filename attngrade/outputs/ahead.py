"""The staged OUT and its students' folders, made by a child process while the class is checked.

Every report lives in a folder of its own, and making a folder is the costliest file-system
call a run makes, and folders are made one at a time in one parent folder however many
processes ask (they queue on its lock): a fixed part of the write stage that no number of
report processes shortens. The names are known as soon as the class is read, so with more than one worker a
child forked then makes them while the class is checked and the report writers find them made.

A process, not a thread: a thread would wait for the interpreter's lock after every folder
while this process reads and checks. The child (`forked.Share`) makes the folders
and exits. A large class is not forked from: while the child lived, every page this process
wrote would be copied (see `reports.parallel`); its folders are a job for a report process
forked before the class was read (`pool`). If either fails for any
reason the folders not made are made here, where an error is raised with its file name (`wait`).
"""

from __future__ import annotations

import os
import shutil
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..runtime.forked import Share
from ..runtime.scale import LARGE_CLASS
from .folder import new_stage
from .history import Keeping, keeping_of, read
from .layout import folder_names


class FolderMaker:
    """`root`/<name> for every name, made by a child process from `start` on; `wait` before use."""

    def __init__(self, root: Path, names: Sequence[str], pool: Executor | None = None):
        self.root, self.names, self.pool = root, list(names), pool
        self._child: Share | None = None
        self._job: Future | None = None

    def start(self) -> "FolderMaker":
        if not self.names:
            return self
        if self.pool is not None:
            self._job = self.pool.submit(make_folders, self.root, self.names)
        else:
            self._child = Share(lambda: make_folders(self.root, self.names))
        return self

    def wait(self) -> None:
        """Return once every folder is made; made here whatever the child did not make."""
        job, self._job = self._job, None
        child, self._child = self._child, None
        try:
            if job is not None and job.result() is True:
                return
        except Exception:  # noqa: BLE001 - made here instead, where a real error is raised
            pass
        if child is not None and child.result() is True:
            return
        for name in self.names:
            (self.root / name).mkdir(exist_ok=True)

    def stop(self) -> None:
        """End the child now (the run stopped before its reports were written). A job of a report
        process cannot be stopped: it ends at its next folder once the stage is removed."""
        if self._job is not None:
            self._job.cancel()
            self._job = None
        if self._child is not None:
            self._child.stop()
            self._child = None


def make_folders(root: Path, names: Sequence[str]) -> bool:
    base = os.fspath(root)
    for name in names:
        os.mkdir(os.path.join(base, name))
    return True


@dataclass
class Made:
    """The run's folders, named (and, with `maker`, being made in `stage`) before the class was checked."""

    keeping: Keeping
    folders: list[str]
    stage: Path | None = None
    maker: FolderMaker | None = None
    students: list[str] = field(default_factory=list)  # the ids they were named for
    top: frozenset[str] | None = None  # what OUT held at the top when they were named


class FoldersAhead:
    """With more than one worker: the staged OUT and its students' folders made while the class is
    read and checked (`FolderMaker`), as soon as it is known who is in it."""

    def __init__(self, out: Path, workers: int, reports: Any):
        self.out, self.workers, self.reports = out, workers, reports
        self.made: Made | None = None
        self.said: list[str] = []
        self._left: list[Path] = []  # stages removed, to remove again (see close)

    def named(self, places: list[Path], students: list[str]) -> None:
        if self.workers <= 1 or not places:
            return
        pool = getattr(self.reports, "early", None)
        if len(places) >= LARGE_CLASS and pool is None:
            return  # a large class is never forked from (see `FolderMaker`), and no process is free
        keeping = keeping_of(places, students, read(self.out, quiet=True), self.out, self.said)
        folders = folder_names([_Named(s) for s in students], keeping.wanted, keeping.reserved)
        stage = new_stage(self.out)
        if stage is None:
            return  # OUT is written in place: its folders may be there already
        self.made = Made(keeping, folders, stage, None, students, _top(self.out))  # from now on close() removes it
        self.made.maker = FolderMaker(stage, folders, pool).start()

    def taken(self, students: list[str], places: list[Path], said: list[str]) -> Made | None:
        """What was made, for the results of `students` found at `places` to be written into; None if
        nothing was (or it was made for other ids)."""
        made, self.made = self.made, None
        if made is None:
            return None
        # OUT's top as it was: no folder of a person's was added meanwhile (see `Keeping.persons`),
        # known without reading the run before's list again (large for a large class).
        if made.students != students or made.keeping.places != places or made.top != _top(self.out):
            self.made = made  # close() removes it
            return None
        said += self.said
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
