"""Typed values the parser builds: a sympy object plus its kind, shape and source span."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import sympy

SCALAR = "scalar"
MATRIX = "matrix"
FUNCTION = "function"
LIST = "list"
BIGO = "bigO"


@dataclass(frozen=True)
class Node:
    """An intermediate value while building; `start`/`end` index the source text."""

    expr: Any
    kind: str
    start: int
    end: int
    shape: tuple[sympy.Expr, sympy.Expr] | None = None
    word: str | None = None  # the raw text of a bare name (to read `^T` as a transpose)
    bracket: str | None = None  # "[" for a bracketed group (a matrix row in [[a, b], [c]])
    applied: tuple | None = None  # (function node, argument node) of `\log N`, to read `\log N^2` as log(N^2)
    pieces: tuple | None = None  # the names of a split run such as `kM`, to read `kM^2` as k M^2

    def spanning(self, other: "Node") -> tuple[int, int]:
        return min(self.start, other.start), max(self.end, other.end)

    @property
    def is_column(self) -> bool:
        return self.kind == MATRIX and self.shape[1] == 1 and self.shape[0] != 1

    @property
    def is_row(self) -> bool:
        return self.kind == MATRIX and self.shape[0] == 1 and self.shape[1] != 1


# A number written with decimals that are not all zeros: 0.5, .5, 1.41421, not 1.0 (which is 1,
# and would let `1.0 \cdot` in front of a wrong formula dodge the exact comparison).
DECIMAL = re.compile(r"\.\d*[1-9]")


@dataclass(frozen=True)
class Value:
    """A parsed answer: what the checks receive.

    `expr` is a sympy scalar expression, a sympy matrix expression, or (for `O(...)`)
    the scalar inside the O. `notes` are lenient readings the student should hear about.
    """

    expr: Any
    kind: str
    text: str
    shape: tuple[sympy.Expr, sympy.Expr] | None = None
    notes: tuple[str, ...] = field(default=())
    # Other members of a chain of orders of growth (`O(N^2 d + N^2) = O(N^2 d)`), which only the
    # bigO check can compare with the answer.
    members: tuple[Any, ...] = field(default=())

    @cached_property
    def decimals(self) -> bool:
        """Whether a number was written with decimals (0.5, .5, 1.41421; not 1.0): floating point, not
        exact arithmetic, then judges the answer (see checkers.equivalent)."""
        return DECIMAL.search(self.text or "") is not None

    @cached_property
    def canonical(self) -> str:
        """A stable key for memoizing: equal for answers that were read the same. Read the same but
        written with decimals is another key: its verdict may differ (`decimals`), and a task is
        checked once for everyone whose answer has its key."""
        members = "".join(f"={sympy.srepr(m)}" for m in self.members)
        return f"{self.kind}:{'decimals:' if self.decimals else ''}{sympy.srepr(self.expr)}{members}"

    def shape_text(self) -> str:
        return shape_text(self.shape) if self.shape else "scalar"


def shape_text(shape: tuple[Any, Any]) -> str:
    return f"{shape[0]}\u00d7{shape[1]}"
