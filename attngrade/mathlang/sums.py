"""Sums with limits: `\\sum_{h=1}^{m} (T - 1)`, `\\sum_{k=1}^{d} x_{1,k} x_{2,k}`.

The grammar reads `\\sum_{j=a}^{b}` as one token (SUM) and the product after it as the summand.
When the token is read (a lexer callback, before the summand is built) its index is bound, so
that inside the summand `j` is the index and `x_{1,j}` is the j-th entry of the declared vector
`x_1`; when the sum is built the index is released. A sum is read only where its value is sure:

- a summand without the index is counted (b - a + 1) times;
- a polynomial in the index alone is summed exactly (`\\sum_{i=1}^{n} i`);
- entries of vectors, over all of their entries (a = 1, b = their length), in products of two:
  `\\sum_k x_{1,k} x_{2,k}` is the inner product x_1^T x_2 (after expanding the summand).

Anything else (an entry summed alone, entries of vectors of different lengths, limits that
do not cover the vector, an unknown weight such as `\\alpha_{2j}`) is an error, for course staff.
"""

from __future__ import annotations

import re
from typing import Any

import sympy

from ..errors import MathError
from .nodes import MATRIX, SCALAR, Node

_LIMITS = re.compile(r"\\sum\s*(?:_\s*\{\s*(?P<i>[A-Za-z])\s*=\s*(?P<lo>[0-9A-Za-z]{1,3})\s*\}\s*\^\s*(?P<hi>\{[^{}]*\}|\S+)"
                     r"|\^\s*(?P<hi2>\{[^{}]*\}|\S)\s*_\s*\{\s*(?P<i2>[A-Za-z])\s*=\s*(?P<lo2>[0-9A-Za-z]{1,3})\s*\})")
_ENTRY = re.compile(r"(\\?[A-Za-z]+)_\{\s*(\\?[0-9A-Za-z]+)\s*,\s*([A-Za-z])\s*\}")
MAX_TERMS = 64  # terms of an expanded summand


def limits(text: str) -> tuple[str, str, str]:
    """(index, lower limit, upper limit) as written in a SUM token."""
    m = _LIMITS.match(text)
    index, lower = m.group("i") or m.group("i2"), m.group("lo") or m.group("lo2")
    upper = (m.group("hi") or m.group("hi2")).strip("{} ")
    return index, lower, upper


def limit(text: str, table: Any, start: int, end: int) -> Any:
    """A limit: a whole number, a declared scalar, or a size (a single letter such as `d`, the length of
    the vectors whose entries are summed)."""
    text = text.strip().lstrip("\\")
    if text.isdigit():
        return sympy.Integer(int(text))
    hit = table.resolve(text)
    if hit is not None and hit[0].kind == "scalar":
        return hit[0].sympy
    if len(text) == 1 and text.isalpha():
        return sympy.Symbol(text, integer=True, positive=True)
    raise MathError(f"the limit '{text}' of this sum is not a number, a size or a symbol of this part", start, end)


def bound(text: str, sums: list, components: dict, table: Any, start: int, end: int) -> Node | None:
    """Inside a sum: its index, or an entry `x_{1,k}` of a declared vector; None for any other name."""
    indices = {index for index, *_ in sums}
    if text in indices:
        return Node(sympy.Symbol(text, integer=True), SCALAR, start, end, word=text)
    m = _ENTRY.fullmatch(text)
    if m is None or m.group(3) not in indices:
        return None
    hit = table.resolve(f"{m.group(1)}_{m.group(2)}")
    if hit is None or hit[0].kind not in ("vector", "matrix") or hit[0].dims is None or hit[0].dims[1] != 1:
        return None
    spec = hit[0]
    entry = sympy.Symbol(f"{spec.name}[{m.group(3)}]", real=True)
    components[entry] = (spec.sympy, spec.dims[0], m.group(3))
    return Node(entry, SCALAR, start, end, word=text)


def total(summand: Node, index: str, lower: Any, upper: Any, components: dict, inner: Any) -> Node:
    """The value of the sum of `summand` over `index` from `lower` to `upper` (`inner(a, b)`: a^T b)."""
    expr = summand.expr
    at = sympy.Symbol(index, integer=True)
    entries = sorted((s for s in getattr(expr, "free_symbols", ()) if s in components and components[s][2] == index),
                     key=str)
    if summand.kind == MATRIX or not entries:
        if at not in getattr(expr, "free_symbols", ()):
            return Node((upper - lower + 1) * expr, summand.kind, summand.start, summand.end, summand.shape)
        if summand.kind == SCALAR and expr.is_polynomial(at) and sympy.degree(expr, at) <= 4:
            return Node(sympy.summation(expr, (at, lower, upper)), SCALAR, summand.start, summand.end)
        raise MathError(f"this sum over {index} is not read here; write its value", summand.start, summand.end)
    lengths = {components[e][1] for e in entries}
    if len(lengths) != 1 or lower != 1 or upper not in lengths:
        raise MathError(f"this sum runs over {index} = {lower}, ..., {upper}, but the vectors whose entries it adds "
                        f"have {' and '.join(map(str, sorted(lengths, key=str)))} entries", summand.start, summand.end)
    return Node(_inner_products(expr, entries, components, at, inner, summand), SCALAR, summand.start, summand.end)


def _inner_products(expr: Any, entries: list, components: dict, at: Any, inner: Any, summand: Node) -> Any:
    if sympy.Poly(expr, *entries).total_degree() > 2 or len(sympy.Add.make_args(expr)) > MAX_TERMS:
        raise MathError("only sums of products of two entries (inner products) are read here", summand.start,
                        summand.end)
    out = sympy.Integer(0)
    for term in sympy.Add.make_args(sympy.expand(expr)):
        coeff, found = sympy.Integer(1), []
        for factor in sympy.Mul.make_args(term):
            base, power = factor.as_base_exp()
            if base in components:
                found += [base] * int(power)
            else:
                coeff *= factor
        if len(found) != 2 or at in getattr(coeff, "free_symbols", ()):
            raise MathError("a sum of entries that is not an inner product (a product of two entries) is not read "
                            "here; write it with vectors, such as x^T y", summand.start, summand.end)
        out += coeff * inner(components[found[0]][0], components[found[1]][0])
    return out
