"""The files of a submission folder that no part reads, said once in the submission's notes.

A student who hands in a notebook, a checkpoint or a plot that no part of the homework reads must
hear so, not find out from a grade: the note lists them by their place in the folder. A file is
read when it is the answers file, or a file a part asks for (by its field's name or the name an answer
gives) where the part looks for it: beside the answers file, or at any depth for code. A homework's
`ignore:` patterns name files it expects and does not read (plots, logs); those are not listed. The folder is listed within the same bounds as any search of it.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from ..intake.submissions import is_code
from ..intake.walk import MAX_SUBMISSION_ENTRIES, Budget, walk
from ..records import Homework, Listing, Submission

SHOWN = 12  # names listed before "and N more"


def _expected(rel: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], p) for p in patterns)


def not_read(homework: Homework, submission: Submission) -> tuple[str, ...]:
    """The note about the folder's files no part reads (none when every file is read, or no folder).
    The folder's listing made at intake is used where there is one; else the folder is listed now."""
    folder = submission.folder
    if folder is None:
        return ()
    listing = submission.listing or _listed(folder)
    read = _read_names(homework, submission)
    code = {name for name in read if is_code(name)}
    answers = Path(submission.path).name if submission.path else None
    left = [rel for rel in listing.files
            if rel not in read and rel.rsplit("/", 1)[-1] not in code and rel != answers
            and not _expected(rel, homework.ignore)]
    said = []
    if left:
        cut = f" (the folder was not looked through to the end: {listing.shortfall})" if listing.shortfall else ""
        said.append(f"not read: no part of {homework.id} reads {_some(left)}{cut}; if one of them holds an answer, "
                    "put it where the part asks for it (see the template) and submit again")
    if listing.links:
        said.append(f"not read: {_some(list(listing.links))} {'is a link' if len(listing.links) == 1 else 'are links'}, "
                    "which attngrade never follows; hand in the files themselves")
    return tuple(said)


def _some(names: list[str]) -> str:
    return ", ".join(sorted(names)[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def _read_names(homework: Homework, submission: Submission) -> set[str]:
    """The names of the files the parts read: each file field's, and any an answer gives instead
    (`notebook: hw8.ipynb`). A code file is read wherever it is in the folder; any other file only
    beside the answers file, so the same name deeper down is not read, and is named."""
    names = set()
    for part in homework.parts:
        given = submission.answers.get(part.id)
        for f in part.fields:
            if f.kind != "file":
                continue
            named = given.get(f.name) if isinstance(given, dict) else given if part.single_field else None
            names.update(n for n in (f.filename, named) if isinstance(n, str) and n.strip())
    return names


def _listed(folder: Path) -> Listing:
    budget, links = Budget(MAX_SUBMISSION_ENTRIES), []
    files = tuple(path.relative_to(folder).as_posix() for path, _ in walk(folder, budget, links=links))
    return Listing(files, budget.shortfall(), tuple(link.relative_to(folder).as_posix() for link in links))
