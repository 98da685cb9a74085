"""Student text as the outputs can hold it (light: the load stage and the CLI use it too)."""

from __future__ import annotations

import difflib
import re
from typing import Any, Iterable

# A lone surrogate (a notebook's JSON may hold "\ud800"; an undecodable byte in a file name
# becomes one) has no UTF-8 form: outputs and the terminal write it as its escape, so such a
# text never stops a run at its end.
UNENCODABLE = "backslashreplace"


def safe_text(raw: Any, size: int = 2000) -> str:
    """A bounded text form of any raw YAML value (a huge int has no decimal str())."""
    if isinstance(raw, int) and not isinstance(raw, bool) and abs(raw).bit_length() > 4000:
        return f"<an integer of {abs(raw).bit_length()} bits>"
    try:
        text = raw if isinstance(raw, str) else str(raw)
    except (ValueError, RecursionError):
        return f"<a {type(raw).__name__} too large to show>"
    return text if len(text) <= size else text[:size] + "..."


# Characters a terminal acts on rather than shows: C0 and C1 controls (ESC starts sequences that
# recolour, retitle or erase what is on screen), DEL, and the bidirectional overrides and
# isolates (which reorder what is shown). Line breaks and tabs stay.
_ACTED_ON = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)] if chr(c) not in "\n\t"}
_ACTED_ON.update({c: f"\\u{c:04x}" for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]})


def printable(text: str) -> str:
    """`text` for a terminal or a spreadsheet cell: what either would act on is shown as its escape."""
    return text.translate(_ACTED_ON)


_NUMBERED = re.compile(r"(.+)-[1-9][0-9]*")


def numbered(name: str) -> str | None:
    """The name `name` numbers (`sam` of `sam-2`), as ids and folders are made unique; else None."""
    match = _NUMBERED.fullmatch(name)
    return match.group(1) if match else None


def closest(name: str, known: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The one of `known` closest to `name` (a misspelling's likely meaning), if any is close."""
    found = difflib.get_close_matches(name, list(known), n=1, cutoff=cutoff)
    return found[0] if found else None


def did_you_mean(name: str, known: Iterable[str], form: str = " (did you mean '{}'?)", cutoff: float = 0.6) -> str:
    """The hint an error message ends with when `name` is not among `known`: `form` filled with
    the closest name, or "" when none is close."""
    match = closest(name, known, cutoff)
    return form.format(match) if match is not None else ""


def counted(count: float, word: str, many: str | None = None) -> str:
    """A number with its noun, singular for one: '1 point', '2 points', '1.5 points', '3 entries'."""
    number = f"{round(count, 2):g}"
    return f"{number} {word if number == '1' else many or word + 's'}"
