"""How the app names a student: their pseudonym when the run is graded anonymously, else their id
with what could pass for another id shown as escapes.

An id may hold characters a page does not show (zero-width spaces, bidirectional controls) or that
look like others (a Cyrillic `а` in `аna`, full-width `ｓ07`): shown plainly, two students would
read as one. Such characters are shown as `\\u{...}`: an invisible or control character, one that
NFKC changes, a letter of another script among Latin ones, and an id made only of letters that look
Latin without being so.
"""

from __future__ import annotations

import unicodedata
from typing import Iterable

from .. import staff

# Cyrillic and Greek letters drawn like Latin ones (a small table: the common look-alikes).
LOOK_LATIN = set("авекмнорстухѕіјԁԛԝүһӏАВЕКМНОРСТУХЅІЈԚԜҮҺӀΑΒΕΖΗΙΚΜΝΟΡΤΥΧοικρτυνϲϳ")
_HIDDEN = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Mn", "Me")


def _script(char: str) -> str:
    try:
        return unicodedata.name(char).split()[0]
    except ValueError:
        return "UNKNOWN"


def escaped(student: str) -> str:
    """`student` with every character that could make it pass for another id shown as an escape."""
    letters = [c for c in student if c.isalpha()]
    scripts = {_script(c) for c in letters}
    mixed = "LATIN" in scripts and len(scripts) > 1
    latin_alike = bool(letters) and all(c in LOOK_LATIN or c.isascii() for c in letters) and not student.isascii()
    out = []
    for char in student:
        hidden = unicodedata.category(char) in _HIDDEN or (unicodedata.category(char).startswith("Z") and char != " ")
        folded = unicodedata.normalize("NFKC", char) != char
        foreign = not char.isascii() and char.isalpha() and (mixed or latin_alike)
        out.append(f"\\u{{{ord(char):04x}}}" if hidden or folded or foreign else char)
    return "".join(out)


class Names:
    """Students as one request shows them."""

    def __init__(self, anonymous: bool, key: bytes):
        self.anonymous, self.key = anonymous, key
        self._cache: dict[str, str] = {}

    def shown(self, student: str) -> str:
        found = self._cache.get(student)
        if found is None:
            found = staff.pseudonym(self.key, student) if self.anonymous else escaped(student)
            self._cache[student] = found
        return found

    def find(self, given: object, students: Iterable[str]) -> str | None:
        """The student of `students` a page named (as it shows them: their pseudonym or their id)."""
        if not isinstance(given, str) or not given or len(given) > 500:
            return None
        for student in students:
            if self.shown(student) == given or (not self.anonymous and student == given):
                return student
        return None

    def matches(self, needle: str, student: str) -> bool:
        """A search's text in how the student is shown (never in a hidden id)."""
        return needle in staff.normalized(self.shown(student))

    def order(self, students: Iterable[str]) -> list[str]:
        """Students in the order of how they are shown: pseudonyms give nothing of the ids' order away."""
        return sorted(students, key=self.shown)
