"""One anatomy for every message about an answer, rendered in one place.

A check says what it found as a Finding: which field, what is wrong, what was got and
what was needed, and what to do next. The assemble stage renders Findings, so the
wording rules (the field prefix, the order of the pieces) live here and nowhere else:

    V: not equivalent to the expected answer — got 2, needed 3 — write it in terms of x
"""

from __future__ import annotations


class Finding(str):
    """A finding, as its rendered text: it reads and compares as that text."""

    __slots__ = ()

    def __new__(cls, what: str, field: str | None = None, got: str | None = None, needed: str | None = None,
                hint: str | None = None) -> "Finding":
        text = f"{field}: {what}" if field else what
        if got is not None and needed is not None:
            text += f" — got {got}, needed {needed}"
        elif got is not None:
            text += f" — got {got}"
        if hint:
            text += f" — {hint}"
        return super().__new__(cls, text)


def render(line: str) -> str:
    """A feedback line as the student reads it (plain text, whatever made it)."""
    return str.__str__(line)


INTERNAL_ERROR = ("attngrade itself failed while checking this answer ({error}); this is not a mistake in "
                  "your answer: course staff have the details and will grade this part")
