"""One anatomy for every message about an answer, rendered in one place.

A check says what it found as a Finding: which field, what is wrong, what was got and
what was needed, and what to do next. The assemble stage renders Findings, so the
wording rules (the field prefix, the order of the pieces) live here and nowhere else:

    V: not equivalent to the expected answer — got 2, needed 3 — write it in terms of x

What a student's code says (its exceptions, its printed output, the names it chose) is
only ever quoted, through `runtime.text.quoted_from_code`: `raised`, `printed` and `said`
put it in words that make clear whose text it is.
"""

from __future__ import annotations

from typing import Any

from ..runtime.text import GRADER_OWN, QUOTE, quoted_from_code


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


def raised(text: Any, limit: int = QUOTE) -> str:
    """An exception the student's code raised (as the sandbox's driver describes it), quoted."""
    return "your code raised " + quoted_from_code(text, limit)


def printed(text: Any, limit: int = QUOTE) -> str:
    """What the student's code printed, quoted."""
    return "your code printed " + quoted_from_code(text, limit)


def said(text: Any, limit: int = QUOTE) -> str:
    """Any other text the student's code sent back (a type's name, a value), quoted."""
    return "your code said: " + quoted_from_code(text, limit)


def names(values: Any, limit: int = 12) -> str:
    """Names the student's code chose (its parameters, its modules' classes), each quoted, at most
    `limit` of them."""
    values = list(values)
    shown = ", ".join(quoted_from_code(v, 100) for v in values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


SANDBOX_FAILED = GRADER_OWN[0]  # only the sandbox supervisor's own status `failed` is told so
INTERNAL_ERROR = (GRADER_OWN[1] + " while checking this answer ({error}); this is not a mistake in "
                  "your answer: course staff have the details and will grade this part")
