"""What the run before left in OUT for the next one: each submission's student id and report folder.

OUT/.folders.json lists every submission by its place (the absolute path of the file or
folder it was read from) with the id it was graded under and the folder its report went to.
A course staff member keeps notes in a student's folder and decisions under a student's id
(overrides.yaml), so the next run into OUT keeps both with the same submission:

- a submission keeps its id where ids must be made unique (`sam` and `sam-2` stay with their
  files when a third file claiming `sam` joins; see `grading.plan.Names`);
- it keeps its report folder (a newcomer `Bob` sorted before `bob` does not take bob's);
- the folder of a submission that left goes to nobody while it still holds a person's files,
  and neither does a folder of OUT the run before did not write (someone's own `regrades/`).

A file that is not what a run writes never fails a run: it is said, and ids and folders are
then given as for a first run.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..intake.submissions import place_key
from ..records import STAFF_GRADED, STAFF_MARK, WAITING, Result
from ..runtime.outfiles import FOLDERS_FILE
from ..runtime.text import numbered
from .folder import written_at_the_top, written_in_a_students_folder
from .layout import gives_folder

FILE = FOLDERS_FILE
MAX_BYTES = 32_000_000  # 100,000 submissions with long paths; a larger file is not a run's
SAFE_FOLDER = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}")  # what layout.folder_names makes








@dataclass(frozen=True, slots=True)  # slots: a rerun of 100,000 submissions holds one each
class Entry:
    student: str
    folder: str


@dataclass
class LastRun:
    """The run before's submissions by place; `known` is False when OUT had no usable list
    (a first run, or a file that could not be read): then nothing is kept."""

    entries: dict[str, Entry] = field(default_factory=dict)
    known: bool = False
    complete: bool = True  # every entry as a run writes it: folders it does not name are a person's

    def ids(self) -> Mapping[str, str]:
        """Place -> the id it was graded under (a view: no second table of the whole class)."""
        return _Ids(self.entries)

    def folders(self) -> set[str]:
        """The report folders the run before wrote."""
        return {entry.folder for entry in self.entries.values()}

    def wanted(self, places: list[str], students: list[str],
               fits: Callable[[str, str], bool] = lambda student, folder: True) -> list[str | None]:
        """The folder each submission had: by its place, or by its id from a place no longer in
        the class (a file renamed; a folder held for an id the place had before: a student who
        claimed another id for a run and claims their own again). `fits(id, folder)`: whether
        the folder is still one the id gives."""
        present = set(places)
        # Not by a suffixed id: sam-2 is whoever came second, not a person.
        by_student = {e.student: e.folder for p, e in self.entries.items()
                      if p not in present and numbered(e.student) is None}
        wanted: list[str | None] = []
        for place, student in zip(places, students):
            mine = self.entries.get(place)
            wanted.append(mine.folder if mine is not None and fits(student, mine.folder) else by_student.get(student))
        return wanted

    def held(self, out: Path, places: list[str], wanted: list[str | None]) -> dict[str, Entry]:
        """Entries whose folders still hold a person's files (notes about that student) and that
        no submission gets back: kept in the list, given to nobody. Those of submissions that left,
        and the old folder of a place whose id changed (listed under the place and that folder).
        Also kept: a submission that left a folder graded again under a made-unique id (sam-2),
        so that no later newcomer is given that id, nor the decisions made under it."""
        present, keeps = set(places), {f.lower() for f in wanted if f}
        graded = {os.path.dirname(place) for place in places}
        held = {place: entry for place, entry in self.entries.items()
                if place not in present and entry.folder.lower() not in keeps
                and (_holds_a_persons_files(out / entry.folder)
                     or numbered(entry.student) is not None and os.path.dirname(place) in graded)}
        for place, now in zip(places, wanted):
            mine = self.entries.get(place)
            if mine is not None and mine.folder != now and mine.folder.lower() not in keeps \
                    and _holds_a_persons_files(out / mine.folder):
                held[f"{place}#{mine.folder}"] = mine  # never a place of a class: read back as one that left
        return held

    def unlisted(self, out: Path) -> set[str]:
        """Folders and files at the top of OUT the run before did not write: a person's, whose
        names no report folder takes (a file `carol` of notes is not replaced by carol's folder).
        Only when the run before's list is known (an OUT of an older attngrade holds students'
        folders that no list names)."""
        if not self.known or not self.complete:
            return set()
        listed = {f.lower() for f in self.folders()}
        try:
            with os.scandir(out) as entries:
                return {e.name for e in entries if e.name.lower() not in listed and not e.name.startswith(".")
                        and not written_at_the_top(Path(e.path))}
        except OSError:
            return set()


class _Ids(Mapping[str, str]):
    def __init__(self, entries: dict[str, Entry]):
        self._entries = entries

    def __getitem__(self, place: str) -> str:
        return self._entries[place].student

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def _holds_a_persons_files(folder: Path) -> bool:
    try:
        with os.scandir(folder) as entries:
            return any(not written_in_a_students_folder(Path(e.path)) for e in entries)
    except OSError:
        return False


def class_folders(out: Path) -> set[str]:
    """The folders the run before into OUT found submissions in: classes, whatever they hold now.
    Read a line at a time, keeping only the folders (a run starts small); none for a list written
    otherwise."""
    path = out / FILE
    try:
        if _problem(path) is not None:
            return set()
        return {os.path.dirname(place) for place, _ in _pairs(path)}
    except (OSError, ValueError, _WrittenOtherwise):
        return set()


def read(out: Path, said: list[str] | None = None, quiet: bool = False) -> LastRun:
    """OUT/.folders.json as the run before wrote it; what cannot be used is said (not if `quiet`)."""
    if quiet:
        said = None
    path = out / FILE
    if not path.is_file() and not path.is_symlink():
        return LastRun()
    data = None  # (place, Entry or None for an entry not as a run writes it)
    try:
        problem = _problem(path)
        if problem is None:
            data = _by_line(path)
            if data is None:  # not as a run writes it (edited by hand?): the whole file, parsed at once
                whole = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(whole, dict):
                    data = [(place, _entry(value)) for place, value in whole.items()]
                else:
                    problem = "it is not a JSON object"
    except (OSError, ValueError, RecursionError) as err:  # RecursionError: '[[[[...' nested beyond the parser
        problem = f"it cannot be read ({type(err).__name__})"
    if problem is not None or data is None:
        _say(said, f"{path}: {problem}, so ids and report folders were given as for a first run (students "
                   "named alike may have changed ids or folders); this run writes a new one")
        return LastRun()
    entries, ignored = {}, 0
    for place, entry in data:
        if entry is None:
            ignored += 1
        else:
            entries[place] = entry
    if ignored:
        _say(said, f"{path}: {ignored} entr{'y' if ignored == 1 else 'ies'} not as a run writes them "
                   "(a 'student' and a 'folder' each) were ignored")
    return LastRun(entries, known=True, complete=not ignored)


def _problem(path: Path) -> str | None:
    """Why the file at `path` cannot be a run's list without reading it, if it cannot."""
    if path.is_symlink() or not path.is_file():
        return "it is not a regular file"
    if path.stat().st_size > MAX_BYTES:
        return f"it is over {MAX_BYTES:,} bytes"
    return None


def _by_line(path: Path) -> list[tuple[str, Entry | None]] | None:
    """The entries of a list as `lines` writes it, one line at a time: parsed whole, a large
    class's list would peak in memory the allocator keeps for the rest of the run; None for a
    file written otherwise."""
    try:
        return [(place, _entry(value)) for place, value in _pairs(path)]
    except _WrittenOtherwise:
        return None


class _WrittenOtherwise(Exception):
    """The file is not one entry a line, as `lines` writes it."""


def _pairs(path: Path) -> Iterator[tuple[str, object]]:
    """(place, value) of each line of a list as `lines` writes it; raises _WrittenOtherwise."""
    with open(path, encoding="utf-8") as handle:
        if handle.readline() != "{\n":
            raise _WrittenOtherwise
        for line in handle:
            if line == "}\n":
                if handle.read() != "":
                    raise _WrittenOtherwise
                return
            body = line.rstrip("\n")
            try:
                one = json.loads("{" + (body[:-1] if body.endswith(",") else body) + "}")
            except ValueError:
                raise _WrittenOtherwise from None
            if not isinstance(one, dict) or len(one) != 1:
                raise _WrittenOtherwise
            yield from one.items()
    raise _WrittenOtherwise  # no closing brace: cut short


def _entry(value: object) -> Entry | None:
    if not isinstance(value, dict):
        return None
    student, folder = value.get("student"), value.get("folder")
    if not isinstance(student, str) or not isinstance(folder, str) or not SAFE_FOLDER.fullmatch(folder):
        return None
    return Entry(student, folder)


def _say(said: list[str] | None, message: str) -> None:
    if said is not None:
        said.append(message)


def lines(places: Iterable[str], students: Iterable[str], folders: Iterable[str],
          held: Mapping[str, Entry] | None = None) -> Iterator[str]:
    """OUT/.folders.json: a submission a line (written as they come), then the entries `held`."""
    pairs = zip(places, students, folders)
    kept = ((place, e.student, e.folder) for place, e in (held or {}).items())
    yield "{"
    for i, (place, student, folder) in enumerate(itertools.chain(pairs, kept)):
        yield (("\n" if i == 0 else ",\n") + json.dumps(place, ensure_ascii=False) + ": "
               + json.dumps({"student": student, "folder": folder}, ensure_ascii=False))
    yield "\n}\n"


@dataclass
class Keeping:
    """What this run keeps of the run before in OUT: the folder each result had (`wanted`), the
    folders nobody may have (`reserved`), and the entries held for submissions that left."""

    places: list[Path]
    wanted: list[str | None] | None = None
    reserved: set[str] = field(default_factory=set)
    held: dict[str, Entry] = field(default_factory=dict)
    persons: set[str] = field(default_factory=set)  # folders of OUT the run before did not write

    def listing(self, results: list[Result], folders: list[str]) -> Iterator[str]:
        """This run's OUT/.folders.json."""
        return lines((place_key(p) for p in self.places), (r.student for r in results),
                             folders, self.held)


def keeping_of(where: list[Path], students: list[str], last: LastRun, out: Path, said: list[str]) -> Keeping:
    """What the run keeps of `last` for submissions found at `where` (in order) under the ids `students`."""
    keeping = Keeping(where)
    if not last.known:
        return keeping
    places = [place_key(p) for p in where]
    found = sum(1 for place in places if place in last.entries)
    if last.entries and found < min(len(places), len(last.entries)) / 2:
        said.append(f"{out / FOLDERS_FILE}: only {found} of this run's {len(places)} submissions were "
                    "in the run before (was the class moved?); the others were given ids and folders afresh")
    keeping.wanted = last.wanted(places, students, fits=gives_folder)
    keeping.held = last.held(out, places, keeping.wanted)
    keeping.persons = last.unlisted(out)
    keeping.reserved = {e.folder for e in keeping.held.values()} | keeping.persons
    return keeping


# -- students graded under a new id ---------------------------------------------------------------
@dataclass(frozen=True)
class Renamed:
    """A submission the run before graded under `before` and this run under `now` (a placeholder id
    put right, an LMS download renamed): `same` holds the parts whose answer did not change, the
    only ones whose staff decisions go with it; `compared` is False when the run before's answers
    could not be read (then no answer counts as the same)."""

    before: str
    now: str
    same: frozenset[str]
    compared: bool = True


RESULTS = "results.json"


def renamed(out: Path, last: LastRun, places: Iterable[Path], results: Iterable[Result]) -> dict[str, Renamed]:
    """Id before -> Renamed, for each submission at the same place graded under another id than in the
    run before into `out` (whose results.json still holds that run's answers). Ids that two
    submissions traded, or that passed along a chain, are each the submission's own."""
    if not last.known:
        return {}
    pairs: dict[str, Result] = {}
    for place, result in zip((place_key(p) for p in places), results):
        entry = last.entries.get(place)
        if entry is not None and entry.student != result.student:
            pairs[entry.student] = result
    if not pairs:
        return {}
    before = _answers_of(out / RESULTS, set(pairs))
    found = {}
    for old, result in pairs.items():
        answered = before.get(old)
        same = frozenset(v.part for v in result.parts
                         if answered is not None and answered.get(v.part) == _said(dict(v.shown), v.feedback))
        found[old] = Renamed(old, result.student, same, answered is not None)
    return found


def _said(readings: dict[str, str], feedback: Iterable[str], overruled: Iterable[str] = ()) -> tuple:
    """What tells one answer from another in a results.json: how it was read and what the checks said of
    it (all there is of an unreadable answer), without what a person's decision added or replaced."""
    machine = [line for line in [*overruled, *feedback]
               if line != WAITING and not line.startswith((STAFF_MARK, STAFF_GRADED))]
    return tuple(sorted(readings.items())), tuple(machine)


def _answers_of(path: Path, students: set[str]) -> dict[str, dict[str, tuple]]:
    """Student -> part -> `_said` of the answer, from a results.json as `tables.results_json` writes it
    (a student a line), for `students` only: a line is parsed only if it starts with one of theirs."""
    starts = tuple('{"student": ' + json.dumps(s, ensure_ascii=False) + "," for s in students)
    found: dict[str, dict[str, tuple]] = {}
    try:
        if path.is_symlink() or not path.is_file():
            return found
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if not line.startswith(starts):
                    continue
                record = json.loads(line.rstrip().rstrip(","))
                found[record["student"]] = {
                    str(p["id"]): _said({str(k): str(v) for k, v in (p.get("readings") or {}).items()},
                                        map(str, p.get("feedback") or ()), map(str, p.get("overruled") or ()))
                    for p in record.get("parts") or () if isinstance(p, dict) and "id" in p}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}  # a results.json not as a run writes it: no answer counts as the same
    return found
