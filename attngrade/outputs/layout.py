"""The names of what a run writes: the files at OUT's top and a folder per student."""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from ..records import Result
from ..runtime.outfiles import OUTPUT_FILES
from ..runtime.text import numbered

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def folder_names(results: Sequence[Result], wanted: Sequence[str | None] | None = None,
                 held: Iterable[str] = ()) -> list[str]:
    """A safe folder name per result, unique even where a file system ignores case (student
    ids are untrusted text: 'a b', 'a_b' and 'a_b-2' must not share a folder, and so a report),
    and never the name of a file the run writes beside the folders (a student 'index.html').

    A result gets the folder it `wanted` (the one its submission had in the run before, see
    `lastrun`) if that is still free and one of the names its id gives: a newcomer 'Bob' sorted
    before 'bob' does not move bob's report to bob-2, away from the notes kept beside it (which
    would then sit beside Bob's report). `held`: folders nobody may have (a person's)."""
    taken = {name.lower() for name in (*OUTPUT_FILES, *held)}  # and names so far, lower-cased
    bases = [_folder_base(result.student) for result in results]
    names: list[str | None] = [None] * len(bases)
    for i, before in enumerate(wanted or ()):
        if before is not None and _gives(results[i].student, bases[i], before) and before.lower() not in taken:
            names[i] = before
            taken.add(before.lower())
    for i, base in enumerate(bases):
        if names[i] is not None:
            continue
        name, n = base, 1
        while name.lower() in taken:
            n += 1
            name = f"{base}-{n}"
        taken.add(name.lower())
        names[i] = name
    return names  # type: ignore[return-value]  # every slot is filled


def _folder_base(student: str) -> str:
    return (_UNSAFE.sub("_", student).strip("._") or "student")[:80]


def gives_folder(student: str, folder: str) -> bool:
    """Whether `folder` is one of the folders `folder_names` may give the id `student`."""
    return _gives(student, _folder_base(student), folder)


def _gives(student: str, base: str, folder: str) -> bool:
    """Whether `folder` is one the id `student` gives, or the id it was made from (`zoe` of
    `zoe-3`: a submission listed as zoe-3 when a namesake joined keeps its folder zoe)."""
    claim = numbered(student)
    return _of_base(folder, base) or (claim is not None and _of_base(folder, _folder_base(claim)))


def _of_base(folder: str, base: str) -> bool:
    """Whether `folder` is one of the names `folder_names` gives an id whose base is `base`."""
    suffix = folder[len(base) + 1:]
    return folder == base or (folder.startswith(base + "-") and 0 < len(suffix) <= 7 and suffix.isascii()
                              and suffix.isdigit() and suffix[0] != "0" and int(suffix) >= 2)
