"""`dimensions`: a shape written as `t \\times n`, `t x n`, `(t, n)` or `R^{t×n}`."""

from __future__ import annotations

import functools
import re
from typing import Any, Mapping

from .base import Context, Outcome
from .messages import Finding

_STATED = re.compile(r"^.*?(?:\\in\b|∈)")
_NOISE = re.compile(r"\\mathbb\{R\}|\\R\b|ℝ|\\in|[{}()\[\]$^]|\\left|\\right")
_SEPARATORS = re.compile(r"\\times|×|\*|,|\bx\b|\bby\b")


@functools.lru_cache(maxsize=1024)  # the key's side is the same for every answer
def dimensions(text: str) -> tuple[str, ...]:
    """The sizes named in a shape, in order: `R^{t \\times n}` -> ("t", "n")."""
    text = _STATED.sub(" ", text)  # `H \in R^{t×n}` states the shape of H
    text = _NOISE.sub(" ", text)
    text = re.sub(r"^\s*R\s", " ", text)
    parts = [p.strip().lstrip("\\") for p in _SEPARATORS.split(text)]
    return tuple(p.replace(" ", "") for p in parts if p.strip())


def check(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    (name,) = ctx.spec.fields
    got, want = dimensions(str(answers[name])), dimensions(str(ctx.key[name]))
    if got == want:
        return Outcome(ctx.points, ())
    if len(got) != len(want):
        return Outcome(0.0, (Finding(f"read as {' × '.join(got) or 'nothing'}; "
                                     f"a shape with {len(want)} sizes was expected", field=name),))
    return Outcome(0.0, (Finding(f"read as {' × '.join(got)}; not the shape of the result", field=name),))
