"""One anatomy for every message about an answer, rendered in one place.

A check says what it found as a Finding: which field, what is wrong, what was got and
what was needed, and what to do next. The assemble stage renders Findings, so the
wording rules (the field prefix, the order of the pieces) live here and nowhere else:

    V: not equivalent to the expected answer — got 2, needed 3 — write it in terms of x
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    what: str
    field: str | None = None
    got: str | None = None
    needed: str | None = None
    hint: str | None = None

    def render(self) -> str:
        text = f"{self.field}: {self.what}" if self.field else self.what
        if self.got is not None and self.needed is not None:
            text += f" — got {self.got}, needed {self.needed}"
        elif self.got is not None:
            text += f" — got {self.got}"
        if self.hint:
            text += f" — {self.hint}"
        return text


def render(line: "str | Finding") -> str:
    """A feedback line as the student reads it."""
    return line.render() if isinstance(line, Finding) else line


INTERNAL_ERROR = ("attngrade itself failed while checking this answer ({error}); this is not a mistake in "
                  "your answer: course staff have the details and will grade this part")
