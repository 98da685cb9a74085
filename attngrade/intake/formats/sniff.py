"""Whether a file's text looks like answers: a cheap look, no parsing, run on every answers-format
file a class holds while its submissions are found (before any budget but discovery's own).

Each look is a scan whose work grows with the text's length and no faster: `str.find` for a fixed
word, then a few characters either side of each place it is found. No regular expression runs on
the text: a pattern such as "```+ then attngrade" tries every backtick of a flood as a start and
reads the rest of the flood from each (a notes.md of backticks stopped a class for hours).
"""

from __future__ import annotations

YAML = "yaml"
HEADING = "heading"  # Markdown, and a notebook's JSON (its Markdown cells' text, escaped)
LATEX = "latex"

_BLANKS = " \t"
_MAX_HASHES = 6  # Markdown headings: # to ######
_MAX_INDENT = 3  # up to three spaces before the hashes, as in CommonMark


def kind_of(suffix: str) -> str:
    """Which look an answers file of this suffix gets."""
    suffix = suffix.lower()
    if suffix in (".yaml", ".yml"):
        return YAML
    return LATEX if suffix == ".tex" else HEADING


def looks_like(kind: str, text: str) -> bool:
    """Whether `text` (of a file given the look `kind`) has answers in it."""
    if kind == YAML:
        return has_homework_key(text)
    if kind == LATEX:
        return has_latex_answer(text)
    return has_answer_heading(text) or has_attngrade_fence(text)


def has_homework_key(text: str) -> bool:
    """A line `homework:` (the key may be quoted, blanks before the colon) at the start of a line."""
    at = text.find("homework")
    while at != -1:
        start = at - 1 if at > 0 and text[at - 1] in "\"'" else at
        if _line_starts_at(text, start) and _colon_follows(text, at + len("homework")):
            return True
        at = text.find("homework", at + 1)
    return False


def _line_starts_at(text: str, at: int) -> bool:
    return at == 0 or text[at - 1] == "\n"


def _colon_follows(text: str, at: int) -> bool:
    if at < len(text) and text[at] in "\"'":
        at += 1
    at = _skip_blanks(text, at)
    return at < len(text) and text[at] == ":"


def _skip_blanks(text: str, at: int) -> int:
    """The first index from `at` on that is no space or tab (each run is skipped once per call)."""
    while at < len(text) and text[at] in _BLANKS:
        at += 1
    return at


def _blanks_before(text: str, at: int) -> int:
    """The start of the run of spaces and tabs that ends just before `at`."""
    while at > 0 and text[at - 1] in _BLANKS:
        at -= 1
    return at


def has_answer_heading(text: str) -> bool:
    """`## Answer 1b` (any level, any case): at a line's start, after an escaped `\\n` or after a quote
    (a notebook's JSON holds each Markdown line in a string)."""
    lowered = text.lower()  # (only ASCII matters here, and lower() keeps every ASCII character in place)
    at = lowered.find("answer")
    while at != -1:
        if _heading_before(lowered, at) and _word_follows(lowered, at + len("answer")):
            return True
        at = lowered.find("answer", at + 1)
    return False


def _heading_before(text: str, at: int) -> bool:
    """Whether `at` follows 1-6 hashes and blanks, the hashes up to three spaces into a line."""
    hashes_end = _blanks_before(text, at)
    if hashes_end == at:
        return False  # "#answer": no blank between
    start = hashes_end
    while start > 0 and text[start - 1] == "#" and hashes_end - start <= _MAX_HASHES:
        start -= 1
    if not 1 <= hashes_end - start <= _MAX_HASHES:
        return False
    indent = start
    while indent > 0 and text[indent - 1] == " " and start - indent <= _MAX_INDENT:
        indent -= 1
    if start - indent > _MAX_INDENT:
        return False
    return indent == 0 or text[indent - 1] in "\n\"" or text[max(0, indent - 2):indent] == "\\n"


def _word_follows(text: str, at: int) -> bool:
    """Blanks, then something that is not white space (the part's id)."""
    after = _skip_blanks(text, at)
    return after > at and after < len(text) and not text[after].isspace()


def has_attngrade_fence(text: str) -> bool:
    """A fence of three backticks or more, then `attngrade` (its info string), anywhere."""
    lowered = text.lower()
    at = lowered.find("attngrade")
    while at != -1:
        fence_end = _blanks_before(lowered, at)
        if fence_end >= 3 and lowered[fence_end - 3:fence_end] == "```":
            return True
        at = lowered.find("attngrade", at + 1)
    return False


def has_latex_answer(text: str) -> bool:
    """`\\answer` or `\\attnhomework` as a whole command name (not `\\answers`)."""
    return _command(text, "\\answer") or _command(text, "\\attnhomework")


def _command(text: str, name: str) -> bool:
    at = text.find(name)
    while at != -1:
        end = at + len(name)
        if end == len(text) or not (text[end].isalnum() or text[end] == "_"):
            return True
        at = text.find(name, end)
    return False
