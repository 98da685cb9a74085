"""Each submission's student id: its own claim, made unique by numbering, kept across runs.

A class's files may claim one id twice, or another submission's name; the run before into
the same output folder gave ids that its decisions (overrides) are filed under. `Names` holds
what decides, and `unique_students` gives each submission the id it goes by.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Collection, Iterable, Iterator, Mapping

from ..intake.formats import is_answers_format
from ..intake.submissions import named as _named
from ..intake.submissions import place_key
from ..records import Result, Submission
from ..runtime.text import numbered


def unique_students(items: Iterable[Submission | Result],
                    reserved: "Names | Collection[str]" = ()) -> Iterator[Submission | Result]:
    """The items with a student id each of its own, in order (the first keeps a shared id, or
    the shallowest, see `Names`); error rows too (`x.md` and `x.tex`, both unreadable, are two rows).

    An id that is the file or folder name of a submission (`reserved`, see `submission_names`)
    belongs to that submission: another file claiming it (`aaa.yaml` saying `student: zoe`
    beside `zoe.yaml`) is listed under a new id, with a note, whatever the order."""
    taken: set[str] = set()  # student ids so far: a set, since a class may have 100,000
    for item in items:
        item = _unique_student(item, taken, reserved)
        taken.add(item.student)
        yield item


@dataclass(frozen=True)
class Names:
    """The file or folder names a class's submissions go by when they claim no id, each with
    the rank of the best place so named; and the class depth of each submission found inside a
    nested class folder (the others are at depth 0).

    A name is its submission's own: another file claiming it (`aaa.yaml` saying `student: zoe`
    beside `zoe.yaml`) does not get it. Of two submissions named alike, a shallower one keeps
    it: a `section-b/zoe/` inside a folder of sections can never take the name of Zoe at the top of
    the class (a folder with answers of its own is one student's, and answers nested in it are passed over). At one depth an answers file
    or folder keeps it from a stray file (`zoe.txt` beside `zoe.yaml`), and then the first does.
    (A name is ranked by where it is, before the files are read: a shallower `zoe.yaml` that
    says `student: zoe-smith` still outranks a nested `zoe/`, which is then listed as `zoe-2`.)"""

    best: Mapping[str, tuple[int, bool]] = field(default_factory=dict)
    nested: Mapping[Path, int] = field(default_factory=dict)
    previous: Mapping[Path, str] = field(default_factory=dict)  # place -> its id in the run before (lastrun)
    promised: Mapping[str, Path] = field(default_factory=dict)  # that id -> the place it stays with
    # Ids made unique in the run before (sam-2) whose submissions left: another file claiming
    # sam is not the one who was sam-2, and must not get that one's decisions (overrides).
    departed: frozenset[str] = frozenset()

    @classmethod
    def of(cls, places: Iterable[tuple[str, Path]], nested: Mapping[Path, int] | None = None,
           before: Mapping[str, str] | None = None) -> "Names":
        """`before`: each place's id in the run before, by `lastrun.place_key`."""
        names = cls({}, nested or {}, {}, {})
        best: dict[str, tuple[int, bool]] = names.best  # type: ignore[assignment]
        # Made-unique ids of the run before by place, until their place is found (few: no set of
        # every place is held, which a rerun of 100,000 would pay for in memory).
        unfound = {key: had for key, had in (before or {}).items() if "-" in had and numbered(had) is not None}
        folders: set[str] = set()  # where this run's submissions are (a few class folders)
        for name, place in places:
            rank = names.rank(place)
            if name not in best or rank < best[name]:
                best[name] = rank
            if before:
                key = place_key(place)
                folders.add(os.path.dirname(key))
                unfound.pop(key, None)
                had = before.get(key)
                if had is not None and had not in names.promised:
                    names.previous[place] = had  # type: ignore[index]
                    names.promised[had] = place  # type: ignore[index]
        # Only from a folder graded again: a class copied or moved elsewhere is new places, not
        # students who left (its ids are given afresh, as for a first run).
        departed = frozenset(had for key, had in unfound.items()
                             if os.path.dirname(key) in folders and had not in names.promised)
        return replace(names, departed=departed) if departed else names

    def rank(self, place: Path) -> tuple[int, bool]:
        """Lower is stronger: the class depth, then whether the place is a stray file."""
        return self.nested.get(place, 0), _stray(place)

    def __contains__(self, name: object) -> bool:
        return name in self.best

    def belongs_elsewhere(self, item: Submission | Result) -> bool:
        """Whether the id `item` claims is another submission's: its name, or the id it had in
        the run before (a newcomer claiming `sam` does not take it from the file that was sam)."""
        claimed = item.student
        place = _place(item)
        if self._anothers_name(claimed, item, place):
            return True
        return self.promised_elsewhere(claimed, place) and not self._owns(item, place)

    def _anothers_name(self, name: str, item: Submission | Result, place: Path) -> bool:
        """Whether `name` is the name of a submission other than `item` (or of one ranked above it)."""
        return name in self.best and (name != _own_name(item) or self.best[name] < self.rank(place))

    def promised_elsewhere(self, name: str, place: Path) -> bool:
        return self.promised.get(name, place) != place

    def _owns(self, item: Submission | Result, place: Path) -> bool:
        """A name is its own submission's before any promise to a place not so named (bob.yaml
        joining is bob, though x.yaml claiming bob was bob in the run before), and before a
        promise to a deeper place so named (the top-level zoe.yaml over a nested zoe/)."""
        if item.student != _own_name(item):
            return False
        promised = self.promised[item.student]
        return _named(promised) != item.student or self.rank(place) < self.rank(promised)

    def kept_id(self, item: Submission | Result, taken: Collection[str]) -> str | None:
        """The id `item`'s place had in the run before, if it may have it again: one its claim
        gives (the claim itself or claim-N), free, and no other submission's name."""
        place = _place(item)
        had = self.previous.get(place)
        claimed = item.student
        if had is None or had in taken:
            return None
        unreadable = isinstance(item, Result)  # a file that failed to load this time is still that student
        if had != claimed and not unreadable and numbered(had) != claimed:
            return None
        return None if self._anothers_name(had, item, place) else had


def _stray(place: Path) -> bool:
    """A file in a class that is not in an answers format (its row says so): `zoe.txt`."""
    return bool(place.suffix) and not is_answers_format(place) and not place.is_dir()


def _own_name(item: Submission | Result) -> str:
    if isinstance(item, Submission):
        return item.folder.name if item.folder is not None else item.path.stem
    return _named(Path(item.source))


def _place(item: Submission | Result) -> Path:
    """Where a submission is in the class: its folder, or its file (the path discovery found)."""
    if isinstance(item, Submission):
        return item.folder if item.folder is not None else item.path
    return Path(item.source)


def _unique_student(item: Submission | Result, taken: set[str],
                    reserved: "Names | Collection[str]" = ()) -> Submission | Result:
    """A student id is the submission's own claim: two files claiming one id get two ids, and
    a claim to another submission's name is not granted; with the run before known, a
    submission keeps the id it had (`Names.kept_id`)."""
    claimed = item.student
    where = item.path if isinstance(item, Submission) else item.source
    place = _place(item)
    if isinstance(reserved, Names):
        kept = reserved.kept_id(item, taken) if reserved.previous else None
        if kept is not None:
            if kept == claimed:
                return item
            note = f"another submission in this batch also says it is '{claimed}'; this one ({where}) is " \
                   f"listed as '{kept}', as in the run before"
            return replace(item, student=kept, notes=item.notes + (note,))
        someone_elses = reserved.belongs_elsewhere(item)
    else:
        someone_elses = claimed in reserved and claimed != _own_name(item)
    if claimed not in taken and not someone_elses:
        return item
    n = 2
    while f"{claimed}-{n}" in taken or f"{claimed}-{n}" in reserved or (isinstance(reserved, Names) and (
            reserved.promised_elsewhere(f"{claimed}-{n}", place) or f"{claimed}-{n}" in reserved.departed)):
        n += 1
    new = f"{claimed}-{n}"
    why = ("another submission in this batch also says it is" if claimed in taken
           else "another submission in this batch is named" if claimed in reserved
           else "another submission in this batch was")
    note = f"{why} '{claimed}'" + (" in the run before" if why.endswith("was") else "") + \
        f"; this one ({where}) is listed as '{new}'"
    return replace(item, student=new, notes=item.notes + (note,))


def submission_names(items: Any) -> Names | Collection[str]:
    """The names a class's submissions go by (`Names`), for the items a plan can look over
    before reading them: a class loaded by `grading.loading` knows them; of any other list, each
    item's own name (every item taken to be at the top of the class)."""
    names = getattr(items, "names", None)
    if isinstance(names, Names):
        return names
    if isinstance(items, (list, tuple)):
        return Names.of((_own_name(item), _place(item)) for item in items)
    return ()