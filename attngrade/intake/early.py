"""A class's answers files read by a child forked before the heavy imports.

`grade run` begins by importing sympy and numpy in one process while the other cores wait, and finding the class's answers files and reading them is work for another process.
So with more than one worker the command forks a child before those imports
(`EarlyLoad.start`): it finds the submissions as the run will (`intake.submissions.discover`) and
reads them, in order, until the run asks for what it has; the run reads the rest, with every worker.

The run takes what the child found and read (`found`) only if the child looked where the run
looks: the same paths, and the same folders that the run before into OUT graded as classes,
read again once OUT is claimed (a run interrupted there is put right first); otherwise, or if
the child failed in any way, the run finds and reads the files itself, as it would have. The
child's discovery is then the run's, made a moment earlier; but where OUT is inside the class,
claiming it may have changed what is there, and the run looks again itself, taking only the
submissions the child read that its own discovery begins with. A large class is not read
early: it is read one submission at a time as it is planned (`grading.plan.Loading`).

YAML answers files are read without sympy or numpy; a notebook, Markdown or LaTeX file needs
the homework's parts, from the bank, which imports them (so does naming the homework or the
bank): the child then imports them too, still beside this process's own import.
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection

from ..records import Result, Submission
from ..runtime.files import within
from ..runtime.forked import Share
from ..runtime.scale import LARGE_CLASS, default_workers
from .submissions import apart, discover, load_or_error

Source = Callable[[], "tuple[Any, str | None]"]  # (bank, homework id): what the files are read against
Classes = Callable[[Path], Collection[str]]  # OUT -> the folders the run before into it graded as classes


@dataclass(frozen=True)
class Found:
    """What the child found under `paths` (given `classes` and `outputs`, as `discover` takes them) and
    read: `loaded` are the first submissions of `every`."""

    paths: list[Path]
    classes: frozenset[str]
    outputs: Path
    every: list[Path]
    nested: dict[Path, int]
    passed_over: list[Path]
    mixed: list[Path]
    loaded: list[Submission | Result]

    def holds(self) -> bool:
        """Whether the run may take this discovery as its own: not if OUT is inside the class,
        where claiming it (making its folder, putting an interrupted run right) may have changed
        what the child saw."""
        real = os.path.realpath(self.outputs.parent)
        return not any(real == inside or within(real, inside) for inside in map(os.path.realpath, self.paths))

    def first_of(self, every: list[Path]) -> list[Submission | Result]:
        """The loaded submissions that begin `every` (the run's own discovery) as they began the child's."""
        agree = 0
        for mine, theirs in zip(every, self.every[:len(self.loaded)]):
            if mine != theirs:
                break
            agree += 1
        return self.loaded[:agree]


class EarlyLoad:
    """The child reading a class's first submissions: what it `found`, or `stop` it."""

    def __init__(self, child: Share):
        self._child: Share | None = child

    @classmethod
    def start(cls, paths: list[Path], out: Path, workers: int | None, source: Source,
              classes: Classes) -> "EarlyLoad | None":
        """A child forked now to read the class under `paths` (graded into `out`); None with one worker."""
        if default_workers(workers) <= 1:
            return None
        return cls(Share(lambda hurried: _read(paths, out, (source, classes), hurried), hurried=True))

    def found(self, paths: list[Path], classes: Collection[str], outputs: Path | None) -> Found | None:
        """What the child found and read, if it looked where the run looks (the same `paths`, and the
        same folders of the run before, now that OUT is claimed); else None, and the run looks itself."""
        child, self._child = self._child, None
        if child is not None:
            child.hurry()  # what it has not read yet, the run reads now with every worker
        found = child.result() if child is not None else None
        if not isinstance(found, Found) or (found.paths, found.classes, found.outputs) != (
                list(paths), frozenset(classes), outputs):
            return None
        return found

    def stop(self) -> None:
        """End the child if it was never asked (the run stopped before reading the class)."""
        child, self._child = self._child, None
        if child is not None:
            child.stop()


def _read(paths: list[Path], out: Path, given: tuple[Source, Classes], hurried: Callable[[], bool]) -> Found:
    """In the child: the discovery the run will make, and the submissions read in order until the
    run asks for them (`hurried`), unless the class is large."""
    source, classes_of = given
    gc.enable()  # (forked with it off, for a parent holding a class: this one holds nothing yet)
    paths, classes = apart(paths, out, []), frozenset(classes_of(out))
    nested: dict[Path, int] = {}
    passed_over: list[Path] = []
    mixed: list[Path] = []
    every = list(discover(paths, passed_over, nested=nested, classes=classes, outputs=out, mixed=mixed))
    loaded: list[Submission | Result] = []
    if len(every) < LARGE_CLASS and every and not hurried():
        bank, homework = source()  # (a homework or bank named is opened only when there is a class to read)
        for path in every:
            if hurried():
                break
            loaded.append(load_or_error(path, homework, bank))
    return Found(paths, classes, out, every, nested, passed_over, mixed, loaded)
