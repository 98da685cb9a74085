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
# recolour, retitle or erase what is on screen), DEL, the bidirectional marks, overrides and
# isolates (which reorder what is shown), and the invisible ones (zero-width spaces and joiners,
# the byte order mark, the Mongolian vowel separator, the line and paragraph separators, tag
# characters), which make one text look like another. Line breaks and tabs stay.
_ACTED_ON = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)] if chr(c) not in "\n\t"}
_ACTED_ON.update({c: f"\\u{c:04x}" for c in [0x061C, 0x180E, *range(0x200B, 0x2010), *range(0x2028, 0x202F),
                                            0x2060, *range(0x2066, 0x206A), 0xFEFF]})
_ACTED_ON.update({c: f"\\U{c:08x}" for c in range(0xE0000, 0xE0080)})


def _char_class(codes: Iterable[int]) -> re.Pattern[str]:
    """One character class of `codes`, written as ranges (a class of many single characters is
    searched far more slowly)."""
    runs: list[list[int]] = []
    for c in sorted(codes):
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return re.compile("[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in runs) + "]")


# A page's text holds line breaks, which Python calls unprintable: it is searched (in C) for what is
# acted on before anything is translated, which for text beyond ASCII goes a character at a time.
_ANY_ACTED_ON = _char_class(_ACTED_ON)


def printable(text: str) -> str:
    """`text` for a terminal, a spreadsheet cell or a page: what any of them would act on, or
    would not show, is shown as its escape."""
    # Every character translated is one Python calls unprintable (controls, format characters such as
    # the bidi and zero-width marks, line and paragraph separators): most text has none, and is kept.
    if text.isprintable() or _ANY_ACTED_ON.search(text) is None:
        return text
    return text.translate(_ACTED_ON)


# Words only attngrade says of itself, on the sandbox's own word (its supervisor's status) or
# when a check fails: never the student's code's to produce, however it writes them.
GRADER_OWN = ("attngrade could not run your code", "attngrade itself failed")
_GRADER_OWN = re.compile("|".join(re.escape(w) for w in GRADER_OWN), re.IGNORECASE)  # literals: no backtracking
# In a quotation, also the line breaks and tabs (a quotation is one line), a lone surrogate (no
# UTF-8 form) and the quotation marks themselves (text that closed the quotation could go on
# in attngrade's voice).
_QUOTED = {**_ACTED_ON, ord("\n"): "\\n", ord("\t"): "\\t", ord("\u00ab"): "\\u00ab", ord("\u00bb"): "\\u00bb",
           **{c: f"\\u{c:04x}" for c in range(0xD800, 0xE000)}}
QUOTE = 300  # characters of one quotation, unless the caller says otherwise


def quoted_from_code(raw: Any, limit: int = QUOTE) -> str:
    """What the student's code said (an exception, printed output, a name it chose), quoted as its
    own: «…», on one line, at most `limit` of its characters, every character a terminal or a
    page would act on or hide shown as its escape, and attngrade's own words about itself
    (GRADER_OWN) with their first letter escaped, so no quotation reads as attngrade speaking."""
    shown, rest = _from_code(raw, limit)
    return f"«{shown}»" + (f"…({rest} more characters)" if rest > 0 else "")


def escaped_from_code(raw: Any, limit: int = QUOTE) -> str:
    """Text that passed through the sandbox child but is normally the sandbox's own (its isolation
    layers), shown as `quoted_from_code` shows a quotation, without the quotation marks."""
    shown, rest = _from_code(raw, limit)
    return shown + (f"…({rest} more characters)" if rest > 0 else "")


def _from_code(raw: Any, limit: int) -> tuple[str, int]:
    """The first `limit` characters of `raw`, escaped, and how many more there were."""
    text = raw if isinstance(raw, str) else safe_text(raw, size=4 * limit)
    shown = text[:limit].translate(_QUOTED)
    return _GRADER_OWN.sub(lambda m: f"\\x{ord(m.group()[0]):02x}{m.group()[1:]}", shown), len(text) - limit


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
