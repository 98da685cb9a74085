"""Looking through folders within a budget: entries listed, depth, seconds.

Finding a class's submissions, a code file a part names, or answers nested in a student's folder
all list folders a student made, which may hold anything: a dataset of 100,000 files, a
`node_modules`, a thousand copies of old attempts. Each search is given a `Budget`; what it did
not get to is known (`Budget.shortfall`), so the caller can say it rather than take "not there"
for an answer.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ..records import Listing
from .formats import is_answers_format
from .look import looks_like_answers

MAX_WALK_DEPTH = 6  # folders below a submission folder looked into
MAX_SUBMISSION_ENTRIES = 20_000  # files and folders looked at in one submission folder, per search
# Seconds to look through one submission folder for answers nested in it: each answers-format file
# found is read (to see whether it holds answers), and a folder of large notebooks must not cost a
# class its reading time.
NESTED_SECONDS = 5.0
# Files of a submission folder kept in its listing (`records.Listing`), which lives as long as the
# submission is loaded: a folder of more is searched again where it is needed, so a class of folders
# of thousands of files costs no more memory than their answers.
MAX_LISTED = 500
MAX_LINKS = 50  # links a listing names (never followed)
# Folders never looked into: a tool's caches and builds, installed packages and a macOS zip's litter, not a
# student's work (a virtualenv's site-packages holds many a model.py).
SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "__MACOSX", "site-packages", "venv", "build", "dist"})
# Where a part's code file lives in the layouts courses hand out (the folder itself, src/): looked
# at first, with one lstat each, before any folder is listed.
CODE_PLACES = ("", "src")


@dataclass
class Budget:
    """How much a search may look at: `entries` listed in all, for at most `seconds`."""

    entries: int
    seconds: float | None = None
    spent: int = 0
    started: float = field(default_factory=time.monotonic)
    cut: str = ""  # where the search stopped, when it did (a path, relative to where it began)
    why: str = ""  # ENTRIES, SECONDS or DEPTH: what stopped it
    closed: str = ""  # the first folder the grader may not open (the search goes on past it)

    @property
    def over(self) -> bool:
        """Whether the search was stopped (its budget spent, or too deep)."""
        return bool(self.why)

    @property
    def short(self) -> bool:
        """Whether the search saw less than there is: stopped, or kept out of a folder."""
        return bool(self.why or self.closed)

    def take(self, count: int = 1) -> bool:
        """Count `count` entries looked at; False once the budget is spent (then it stays spent)."""
        if self.why:
            return False
        self.spent += count
        if self.spent > self.entries:
            self.why = self.why or ENTRIES
        elif self.seconds is not None and time.monotonic() - self.started > self.seconds:
            self.why = self.why or SECONDS
        return not self.why

    def stop(self, where: str, why: str = "") -> None:
        """The search ends at `where` (for `why`, when it is not the budget itself)."""
        self.why = self.why or why or ENTRIES
        self.cut = self.cut or where or "."

    def share(self, entries: int, seconds: float) -> "Budget":
        """A budget for one part of this search: at most `entries` and `seconds`, and no more than is
        left here; count what it spent with `spend`."""
        left = seconds if self.seconds is None else max(0.0, min(seconds, self.seconds - (time.monotonic()
                                                                                          - self.started)))
        return Budget(max(0, min(entries, self.entries - self.spent)), left)

    def spend(self, part: "Budget") -> None:
        self.take(part.spent)

    def shortfall(self) -> str:
        """What the search did not see, for a message ('only the first 20,000 files and folders were
        looked at (it stopped at data/)'); empty when it saw everything."""
        said = []
        if self.why == SECONDS:
            said.append(f"only what could be looked at in {self.seconds:g} s was ({self.spent:,} files and "
                        f"folders; it stopped at {self.cut})")
        elif self.why == DEPTH:
            said.append(f"it was looked through {MAX_WALK_DEPTH} folders deep, not below {self.cut}")
        elif self.why:
            said.append(f"only the first {self.entries:,} files and folders were looked at (it stopped at {self.cut})")
        if self.closed:
            said.append(f"the grader may not open {self.closed}")
        return "; ".join(said)


ENTRIES, SECONDS, DEPTH = "entries", "seconds", "depth"


def listing(folder: Path, budget: Budget, top: Path | None = None) -> list[os.DirEntry]:
    """`folder`'s entries sorted by name, each counted against `budget`; fewer when it runs out, or
    none when the grader may not open it (then `budget.cut`, or `budget.closed`, names the folder,
    relative to `top`)."""
    entries = []
    try:  # scandir: an entry's type comes with its name, not from a stat of its own
        with os.scandir(folder) as listed:
            for entry in listed:
                if not budget.take():
                    budget.stop(_relative(folder, top))
                    break
                entries.append(entry)
    except PermissionError:  # what it holds is unknown, not absent: said
        budget.closed = budget.closed or _relative(folder, top)
    except OSError:
        pass  # gone, or no folder: nothing in it
    return sorted(entries, key=lambda entry: entry.name)


def _relative(path: Path, top: Path | None) -> str:
    if top is None:
        return str(path)
    try:
        return path.relative_to(top).as_posix()
    except ValueError:
        return str(path)


def looked_into(entry: os.DirEntry) -> bool:
    """A folder a search goes into: not hidden, not a link, not a cache."""
    return (not entry.name.startswith(".") and entry.name not in SKIPPED_FOLDERS
            and entry.is_dir(follow_symlinks=False))


def walk(folder: Path, budget: Budget, depth: int = MAX_WALK_DEPTH,
         links: list[Path] | None = None) -> Iterator[tuple[Path, int]]:
    """Every regular file under `folder` (hidden files and folders, links and caches left out),
    level by level, with its depth (0: in `folder` itself), until `budget` runs out. The links it
    passes over go into `links`, where given (at most MAX_LINKS of them)."""
    level = [folder]
    for below_top in range(depth + 1):
        deeper: list[Path] = []
        for current in level:
            for entry in listing(current, budget, folder):
                if entry.name.startswith("."):
                    continue
                if entry.is_symlink():
                    if links is not None and len(links) < MAX_LINKS:
                        links.append(current / entry.name)
                    continue
                if entry.is_file(follow_symlinks=False):
                    yield current / entry.name, below_top
                elif looked_into(entry):
                    deeper.append(current / entry.name)
            if budget.over:
                return
        level = deeper
        if not level:
            return
    if level:
        budget.stop(_relative(level[0], folder), DEPTH)  # deeper than `depth`: said as a cut


def find_code(folder: Path, name: str, listing: Listing | None = None) -> list[Path]:
    """The places to read the code file `name` from: every regular file so named under `folder`,
    where courses put code first (`CODE_PLACES`), then the rest shallowest first; a folder of 5,000
    data files beside src/ still finds src/dataset.py. When the search was cut short before any was
    found (`MAX_SUBMISSION_ENTRIES` entries, `MAX_WALK_DEPTH` levels, a folder the grader may not
    open), the place it would be read from, `folder/name`: reading it then says how far the search
    went, never "no answer given". A `listing` of the whole folder made before (by `walk`) is searched
    instead of the folder."""
    if listing is not None and not listing.shortfall:
        found = [folder / place / name for place in CODE_PLACES if _a_file(folder / place / name)]
        return found + [p for rel in listing.files if rel.rsplit("/", 1)[-1] == name
                        and (p := folder / rel) not in found]
    budget = Budget(MAX_SUBMISSION_ENTRIES)
    found = code_files(folder, name, budget)
    return found or ([folder / name] if budget.short else [])


def code_files(folder: Path, name: str, budget: Budget) -> list[Path]:
    """Every file called `name` under `folder` (see `find_code`), as far as `budget` goes."""
    found = [folder / place / name for place in CODE_PLACES if _a_file(folder / place / name)]
    for path, _ in walk(folder, budget):
        if path.name == name and path not in found:
            found.append(path)
    return found


def _a_file(path: Path) -> bool:
    """Whether `path` names anything but a folder (a link or a pipe too: reading it then says what
    it is): one lstat."""
    try:
        return not stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return False


def nested_answers(folder: Path, budget: Budget) -> list[Path]:
    """Answers files below `folder`'s own level that look like answers (another attempt, another
    student's folder): none of them is graded as part of `folder`'s submission."""
    return [path for path, depth in walk(folder, budget) if is_nested_answers(path, depth)]


def is_nested_answers(path: Path, depth: int) -> bool:
    """Whether a file `walk` found at `depth` is answers nested in the folder walked (see `nested_answers`)."""
    return depth > 0 and is_answers_format(path) and looks_like_answers(path)
