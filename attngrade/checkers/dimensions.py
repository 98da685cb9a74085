"""`dimensions`: a shape written as `t \\times n`, `t x n`, `(t, n)` or `R^{t×n}`."""

from __future__ import annotations

import functools
import re
from typing import Any, Mapping

from .base import Context, Outcome
from .messages import Finding

_STATED = re.compile(r"^.*?(?:\\in\b|∈)")
_NOISE = re.compile(r"\\mathbb\{R\}|\\R\b|ℝ|\\in|[{}()\[\]$^]|\\left|\\right|\\text")
_SEPARATORS = re.compile(r"\\times|×|\*|,|\bx\b|\bby\b")
# `t × n matrix`, `a t by n array`: words around a shape that name no size
_WORDS = re.compile(r"\b(?:matrix|matrices|array|tensor|shaped?|size|of|dimensions?)\b", re.IGNORECASE)
_ARTICLE = re.compile(r"^an?\s+(?=\S)", re.IGNORECASE)  # `a t` of `a t by n matrix`; a size named a stays
_ROWS_COLUMNS = re.compile(r"^\s*(\S+)\s+rows?\s*(?:,|and|by|×|x)?\s*(\S+)\s+col(?:umn)?s?\s*$", re.IGNORECASE)
_SIZE = re.compile(r"^[A-Za-z0-9_']+$")  # t, n, d_k, 64


@functools.lru_cache(maxsize=1024)  # the key's side is the same for every answer
def dimensions(text: str) -> tuple[str, ...]:
    """The sizes named in a shape, in order: `R^{t \\times n}` -> ("t", "n")."""
    text = _STATED.sub(" ", text)  # `H \in R^{t×n}` states the shape of H
    text = _NOISE.sub(" ", text)
    text = re.sub(r"^\s*R\s", " ", text)
    text = _WORDS.sub(" ", text)
    rows_columns = _ROWS_COLUMNS.match(text)  # `t rows and n columns`
    if rows_columns:
        return rows_columns.group(1), rows_columns.group(2)
    parts = [p.strip().lstrip("\\") for p in _SEPARATORS.split(text)]
    if parts and len(parts[0].split()) > 1:  # an article before the first size: "a t" of "a t by n"
        parts[0] = _ARTICLE.sub("", parts[0])
    # `d_{k}` lost its braces (d_ k); two words left in one place (n roughly) are no size
    return tuple(re.sub(r"\s+", " ", re.sub(r"\s*_\s*", "_", p)) for p in parts if p.strip())


def check(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    (name,) = ctx.spec.fields
    got, want = dimensions(str(answers[name])), dimensions(str(ctx.key[name]))
    if got == want:
        return Outcome(ctx.points, ())
    if not all(_SIZE.match(size) for size in got):  # not a shape attngrade can read: no verdict on it
        return Outcome(0.0, (Finding(f"attngrade could not read a shape in {str(answers[name])!r}; write the sizes "
                                     "with × between them, such as t × n", field=name),), invalid=True)
    if len(got) != len(want):
        return Outcome(0.0, (Finding(f"read as {' × '.join(got) or 'nothing'}; "
                                     f"a shape with {len(want)} sizes was expected", field=name),))
    return Outcome(0.0, (Finding(f"read as {' × '.join(got)}; not the shape of the result", field=name),))
