"""A class's submissions found and loaded: whole (by several processes), or one by one as planned."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Iterator, Mapping

from ..intake.early import EarlyLoad
from ..intake.submissions import discover, load_or_error
from ..intake.submissions import named as _named
from ..records import Result, Submission
from ..runtime.forked import Share
from ..runtime.scale import SHARE_LOAD_FROM
from .identity import Names
from .plan import Stats


@dataclass
class Discovery:
    """How a class is found on disk (`intake.submissions.discover`): the folders the run before
    graded as classes, the run's output folder (passed over), where what was passed over and the
    folders holding both an answers file and folders of answers are listed, and a child that may
    have found (and begun to read) the class already; and the ids the run before gave."""

    classes: Collection[str] = ()
    outputs: Path | None = None
    passed_over: list[Path] | None = None
    mixed: list[Path] | None = None
    early: EarlyLoad | None = None  # a child forked before the heavy imports, finding and reading the class
    # Each place's id in the run before into the same OUT; asked once the class is counted (processes
    # forked then do not inherit a copy of it).
    ids_before: Callable[[], Mapping[str, str] | None] | None = None
    ids_from_names: bool = False  # each student id is the file or folder name (an LMS download)


def load_all(paths: Iterable[Path], stats: Stats | None = None, *, homework: str | None = None,
             bank: Any = None, discovery: Discovery | None = None, found: Callable[[int], None] | None = None,
             lazy_from: int | None = None, workers: int = 1) -> "Loaded | Loading":
    """Every submission under `paths`, or an error row for one that cannot be loaded.

    `homework` is the id for files that name none; `discovery`, how the class is found.
    `found` is told how many there are before any is loaded. From `lazy_from` submissions
    on, they are loaded one at a time as the plan reads them (a `Loading`, read once).
    With `workers` > 1 a class loaded
    whole is loaded by as many processes (`Loading.shared`), one of which may be the discovery's
    early child, which read the first of them.
    """
    d = discovery or Discovery()
    paths = list(paths)
    ahead = d.early.found(paths, d.classes, d.outputs) if d.early is not None else None
    if ahead is not None and ahead.holds():
        every, nested = ahead.every, ahead.nested
        for said, into in ((ahead.passed_over, d.passed_over), (ahead.mixed, d.mixed)):
            if into is not None:
                into += said
    else:
        nested = {}
        every = list(discover(paths, d.passed_over, nested=nested, classes=d.classes, outputs=d.outputs,
                              mixed=d.mixed))
    if found is not None:
        found(len(every))
    read = partial(load_or_error, homework=homework, bank=bank, ids_from_names=d.ids_from_names)
    loading = Loading(every, stats, read, nested, d.ids_before() if d.ids_before is not None else None)
    if lazy_from is not None and len(every) >= lazy_from:
        return loading
    return Loaded(loading.shared(workers, ahead.first_of(every) if ahead else None), loading.names)


class Loaded(list):
    """A class's submissions loaded whole, with the names its submissions go by (`Names`),
    which the plan needs and the loaded items alone cannot tell (how deep each was found)."""

    def __init__(self, items: Iterable[Submission | Result], names: "Names"):
        super().__init__(items)
        self.names = names


class Loading:
    """Submissions loaded one by one as they are iterated, in order; iterated once.

    A plan keeps of each submission only its readings (shared between equal answers), so a
    class loaded this way never holds every student's raw answers at once: at 100,000
    students those are half a gigabyte."""

    def __init__(self, paths: list[Path], stats: Stats | None, read: Callable[[Path], Submission | Result],
                 nested: dict[Path, int] | None = None, before: Mapping[str, str] | None = None):
        """`read` loads one submission, or gives its error row (`intake.submissions.load_or_error`)."""
        self.paths, self.stats, self.read = paths, stats, read
        self.names = Names.of(((_named(p), p) for p in paths), nested, before)
        self._started = False

    def __len__(self) -> int:
        return len(self.paths)

    def __iter__(self) -> Iterator[Submission | Result]:
        self._begin()
        for path in self.paths:
            if self.stats is not None:
                self.stats.submissions += 1
            yield self._load(path)

    def shared(self, workers: int, first: list[Submission | Result] | None = None) -> list[Submission | Result]:
        """Every submission, in order, loaded by `workers` processes: forked children load the later
        shares (their submissions come back pickled: plain data, cheap) while this one loads the first.
        `first`: the first submissions, loaded already (`early.EarlyLoad`); the rest are shared as the
        whole would be, a rest too small to pay for a process loaded here."""
        self._begin()
        loaded = list(first or ())
        rest = self.paths[len(loaded):]
        processes = max(1, workers) if len(rest) >= SHARE_LOAD_FROM else 1
        size = max(1, -(-len(rest) // processes))
        shares = [rest[start:start + size] for start in range(0, len(rest), size)] or [[]]
        later = [Share(lambda share=share: [self._load(p) for p in share]) for share in shares[1:]]
        try:
            loaded += [self._load(p) for p in shares[0]]
            for share, child in zip(shares[1:], later):
                done = child.result()
                loaded += done if done is not None else [self._load(p) for p in share]
        finally:
            for child in later:
                child.stop()
        if self.stats is not None:
            self.stats.submissions += len(self.paths)
        return loaded

    def _begin(self) -> None:
        if self._started:
            raise RuntimeError("a Loading is read once; load the submissions again to read them again")
        self._started = True

    def _load(self, path: Path) -> Submission | Result:
        return self.read(path)


