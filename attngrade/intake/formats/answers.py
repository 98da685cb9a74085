"""What every carrier (notebook, Markdown, LaTeX) shares: the answer contract and its rules.

A carrier finds answer blocks and hands them here as (part, text, place). This module
turns a block into `{field: value}` (or the value itself for a one-field part), strips
math wrappers, and applies the same rules in every format: two different answers to
one part make the part invalid naming both places; identical duplicates are fine; an
empty (template) answer never overrides a filled one; an unknown part id gets a
"did you mean".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...records import Homework, Part
from ...runtime.text import did_you_mean

# `## Answer 1e.ii`, `###### answer 2d:`; up to three spaces before the hashes, as in CommonMark.
# `## Answer 1b (4 points)`: anything in parentheses after the part id is the student's own note
# Each piece after the id opens with its own character, so no run of spaces or hashes can be
# split between two of them (the matcher would try every split: minutes on a hostile line).
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+answer[ \t]+([^\s:()#]+)[ \t]*(?:\([^)]*\)[ \t]*)?(?::[ \t]*)?"
                     r"(?:#+[ \t]*)?$", re.IGNORECASE)
ANY_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]")
# `V: ...`, `- V: ...`, `**V**: ...`, `**V:** ...`
_FIELD_LINE = re.compile(r"^[ \t]*(?:[-*][ \t]+)?(?:\*\*)?([A-Za-z][\w.]*)(?:\*\*)?[ \t]*:(?:\*\*)?(?:[ \t]+|$)(.*)$")
_WRAPPERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
FENCE = re.compile(r"^ {0,3}(```+|~~~+)[ \t]*attngrade[ \t]*$", re.IGNORECASE)


def unwrap_math(text: str) -> str:
    """`$q$`, `$$q$$`, `\\(q\\)` and `\\[q\\]` around a whole value are only typesetting."""
    value = text.strip()
    for left, right in _WRAPPERS:
        if len(value) > len(left) + len(right) and value.startswith(left) and value.endswith(right):
            inner = value[len(left):-len(right)].strip()
            if left == "$" and "$" in inner:
                continue  # `$a$ and $b$` is two pieces of math, not one wrapped value
            return inner
    return value


def block_answer(part: Part, body: str, notes: list[str] | None = None, place: str = "") -> Any:
    """A block's text as the YAML carrier would give it: a value, or {field: value}.

    Lines `field: value` name the fields. A text field's value continues on the following
    lines until the next `field:` line; a math field's (a matrix over several lines)
    until a blank line, and what follows a blank line is prose, left out with a note.
    Without field lines the whole block (up to a blank line, unless it is text) is the
    answer of a one-field part. Returns None for a block with nothing in it (an unfilled
    template).
    """
    lines = body.replace("\r\n", "\n").replace("\t", "    ").strip("\n").splitlines()
    names = {f.name for f in part.fields}
    kinds = {f.name: f.kind for f in part.fields}
    first = next((line for line in lines if line.strip()), None)
    if first is None:
        return None
    starts = [i for i, line in enumerate(lines) if (m := _FIELD_LINE.match(line)) and m.group(1) in names]
    if starts and not part.single_field and any(line.strip() for line in lines[:starts[0]]):
        _left_out([line for line in lines[:starts[0]] if line.strip()], notes, place,
                  f"part {part.id} (its answers start at the '{_FIELD_LINE.match(lines[starts[0]]).group(1)}:' line)",
                  before=True)
        lines, first = lines[starts[0]:], lines[starts[0]]
    head = _FIELD_LINE.match(first)
    if head is None or head.group(1) not in names:
        kind = kinds.get(part.fields[0].name) if part.single_field else "text"
        kept, rest = _until_blank(lines) if kind != "text" else (lines, [])
        _left_out(rest, notes, place, part.fields[0].name if part.single_field else part.id)
        return _value("\n".join(kept).strip(), kind)
    fields: dict[str, list[str]] = {}
    current = None
    for line in lines:
        match = _FIELD_LINE.match(line)
        if match and match.group(1) in names:
            current = match.group(1)
            fields.setdefault(current, []).append(match.group(2))
        elif current is not None:
            fields[current].append(line)
    out = {}
    for name, pieces in fields.items():
        if kinds[name] != "text":
            pieces, rest = _until_blank(pieces)
            _left_out(rest, notes, place, name)
        text = "\n".join(pieces).strip()
        if text:
            out[name] = _value(text, kinds[name])
    return out or None


def _until_blank(lines: list[str]) -> tuple[list[str], list[str]]:
    """Lines up to the first blank line after some content, and the non-blank lines after it."""
    seen = False
    for i, line in enumerate(lines):
        if line.strip():
            seen = True
        elif seen:
            return lines[:i], [rest for rest in lines[i:] if rest.strip()]
    return lines, []


def _left_out(rest: list[str], notes: list[str] | None, place: str, name: str, before: bool = False) -> None:
    if rest and notes is not None:
        clipped = rest[0].strip()[:60]
        if before:
            notes.append(f"{place}: the text before the fields ('{clipped}'...) was not read as part of {name}")
            return
        notes.append(f"{place}: the text after the blank line ('{clipped}'...) was not read as part of {name}; "
                     "a math answer ends at a blank line")


def _value(text: str, kind: str | None) -> str:
    return text if kind == "text" else unwrap_math(text)


@dataclass
class Collected:
    """Answers gathered from one file, with where each came from."""

    homework: Homework
    answers: dict[str, Any] = field(default_factory=dict)
    places: dict[tuple[str, str], str] = field(default_factory=dict)  # (part, field or "") -> place
    invalid: dict[str, str] = field(default_factory=dict)  # part -> why it cannot be graded
    notes: list[str] = field(default_factory=list)
    blocks: int = 0  # answer blocks found, filled or not

    def add(self, part_id: str, answer: Any, place: str) -> None:
        self.blocks += 1
        part = self.homework.part(part_id)
        if part is None:
            self.notes.append(unknown_part(self.homework, part_id, place))
            return
        if answer is None:
            return  # an empty template answer never overrides a filled one
        if not isinstance(answer, dict) and part.single_field:
            answer = {part.fields[0].name: answer}
        pieces = answer.items() if isinstance(answer, dict) else [("", answer)]
        current = self.answers.get(part_id)
        if isinstance(answer, dict) != isinstance(current, dict) and current is not None:
            self._conflict(part_id, "", place)
            return
        if not isinstance(answer, dict):
            self._put(part_id, "", answer, place)
            return
        for name, value in pieces:
            self._put(part_id, name, value, place)

    def _put(self, part_id: str, name: str, value: Any, place: str) -> None:
        if value is None or (isinstance(value, str) and not value.strip()):
            return
        key = (part_id, name)
        if key in self.places:
            old = self.answers[part_id][name] if name else self.answers[part_id]
            if _same(old, value):
                return
            self._conflict(part_id, name, place)
            return
        self.places[key] = place
        if name:
            self.answers.setdefault(part_id, {})[name] = value
        else:
            self.answers[part_id] = value

    def _conflict(self, part_id: str, name: str, place: str) -> None:
        first = self.places.get((part_id, name)) or next(
            (p for (pid, _), p in self.places.items() if pid == part_id), "another place")
        what = f"field {name} of part {part_id}" if name else f"part {part_id}"
        self.invalid.setdefault(part_id, f"{part_id}: two different answers to {what}, at {first} and at {place}; "
                                         "keep one of them and submit again")


def _same(a: Any, b: Any) -> bool:
    norm = (lambda x: "".join(str(x).split()))  # spacing is not a different answer
    return norm(a) == norm(b)


def unknown_part(homework: Homework, part_id: str, place: str) -> str:
    ids = [p.id for p in homework.parts]
    hint = (did_you_mean(part_id, ids, "; did you mean {}?", cutoff=0.5)
            or f"; this homework's parts are: {', '.join(ids)}")
    return f"{place}: there is no part '{part_id}' in {homework.id}, so this answer was not graded{hint}"
