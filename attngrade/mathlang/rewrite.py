"""Rewriting an answer's text with a map back to what the student wrote.

The normalization stage (`normalize`) changes the text before the grammar reads it; every
change goes through `apply_edits`, which keeps for each character of the new text the
position it came from, so an error still points at the character the student wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Rewritten:
    text: str
    origin: list[int]  # origin[i]: where character i of `text` came from in the original (one extra at the end)
    notes: list[str] = field(default_factory=list)
    chain: list[tuple[int, int, str]] = field(default_factory=list)  # the other members of `a = b = answer`
    labels: list[tuple[int, int, str]] = field(default_factory=list)  # members that only name the answer
    # What conditions after the answer say of a constant: (its name as written, "large" or "small", the
    # text as written, and where that text starts and ends in the original).
    conditions: list[tuple[str, str, str, int, int]] = field(default_factory=list)
    approximate: bool = False  # a member of the chain is only said to be close (`\approx`)
    original: str = ""

    def where(self, position: int) -> int:
        """A position in `text` as a position in the original."""
        return self.origin[max(0, min(position, len(self.origin) - 1))]

    def written(self, start: int, end: int) -> str:
        """The original text of the span start..end of `text` (empty where a rewrite made it from nothing)."""
        return self.original[self.where(start):self.where(end)].strip()

    def note(self, said: str) -> None:
        if said and said not in self.notes:
            self.notes.append(said)


@dataclass(frozen=True)
class Rule:
    """One pattern of the stage: `row` names its row in docs/normalization.md."""

    row: str
    pattern: re.Pattern
    replace: Callable[[re.Match], str]
    note: Callable[[re.Match], str | None] = lambda m: None
    passes: int = 1  # a run such as u_au_bu_c takes one pass per name
    hint: tuple[str, ...] = ()  # the pattern cannot match a text holding none of these (skipped at once)
    gate: re.Pattern | None = field(init=False, default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.hint:
            object.__setattr__(self, "gate", re.compile("|".join(map(re.escape, self.hint))))


def apply_edits(out: Rewritten, edits: list[tuple[int, int, str]]) -> None:
    """Replace the spans (sorted, not overlapping) and carry the map back to the original."""
    text, origin = [], []
    last = 0
    for start, end, new in edits:
        text.append(out.text[last:start])
        origin.extend(out.origin[last:start])
        text.append(new)
        origin.extend([out.origin[start]] * len(new))
        last = end
    text.append(out.text[last:])
    origin.extend(out.origin[last:])
    out.text = "".join(text)
    out.origin = origin


def run_rules(out: Rewritten, rules: list[Rule]) -> None:
    """Apply each rule in order, every match at once, up to its number of passes."""
    for rule in rules:
        if rule.gate is not None and rule.gate.search(out.text) is None:
            continue
        for _ in range(rule.passes):
            edits = []
            for m in rule.pattern.finditer(out.text):
                new = rule.replace(m)
                if new != m.group(0):
                    edits.append((m.start(), m.end(), new))
                    out.note(rule.note(m))
            if not edits:
                break
            apply_edits(out, edits)


def start(text: str) -> Rewritten:
    """The text as written, with the identity map."""
    return Rewritten(text, list(range(len(text) + 1)), original=text)
