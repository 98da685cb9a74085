"""Exact limits as one growth parameter t goes to infinity: scores, softmax weights, outputs.

Attention answers are graded by what their outputs tend to. The scores of the bank's
attention problems are exact expressions in the growing constants (polynomials in β
and C, sometimes with logs or roots), so the limit is decided from the expressions,
not from samples: a term that dominates eventually dominates however small its
coefficient, and a scale that grows slowly (log C) still grows.

- `limit(expr, t)`: rational functions by their degrees and leading coefficients;
  anything else by sympy's `limit` under a time budget. What neither settles raises
  `Undecided`; the caller then says so (and may fall back to sampling, labelled).
- `softmax_limit(scores, t)`: the limiting softmax weights. Scores whose differences
  to the largest tend to a finite L share the weight as exp(L) (ties share equally);
  the others get 0.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import sympy

from ..runtime.deadline import BudgetExceeded, time_limit

LIMIT_SECONDS = 0.5  # one sympy limit, for what the rational analysis cannot follow
EQUAL_DIGITS = 40  # exact constants are compared at this many digits


class Undecided(Exception):
    """The exact analysis cannot settle this limit."""


def growth(name: str = "t") -> sympy.Symbol:
    return sympy.Symbol(name, positive=True)


def _rational_parts(expr: Any, t: sympy.Symbol) -> tuple[sympy.Poly, sympy.Poly] | None:
    if expr.is_polynomial(t):  # most scores: no division to cancel
        return sympy.Poly(expr, t), sympy.Poly(1, t)
    num, den = sympy.fraction(sympy.cancel(sympy.together(expr)))
    if num.is_polynomial(t) and den.is_polynomial(t):
        return sympy.Poly(num, t), sympy.Poly(den, t)
    return None


@functools.lru_cache(maxsize=4096)  # the same scores are analysed, then sampled
def _terms(expr: Any, t: sympy.Symbol) -> dict | None:
    """{power: coefficient} of a sum of c·t^k terms (k a number, c free of t), else None.

    The cheap exact path for the common case (scores are polynomials in the constants).
    """
    out: dict = {}
    for term in sympy.Add.make_args(sympy.expand(expr)):
        split = _term(term, t)
        if split is None:
            return None
        coef, power = split
        out[power] = out.get(power, 0) + coef
    return {k: v for k, v in out.items() if not (v == 0 or (v.is_zero is None and equal(v, 0)))}


def _term(term: Any, t: sympy.Symbol) -> tuple[Any, Any] | None:
    """c·t^k as (c, k), or None when t appears otherwise (log t, exp t, t^t)."""
    coef, power = [], sympy.Integer(0)
    for factor in sympy.Mul.make_args(term):
        if factor == t:
            power += 1
        elif factor.is_Pow and factor.base == t and factor.exp.is_number:
            power += factor.exp
        elif t in factor.free_symbols:
            return None
        else:
            coef.append(factor)
    return sympy.Mul(*coef), power


def exact(value: Any) -> sympy.Basic:
    """A sympy object as it is, a Python int as an exact Integer; nothing else (never text)."""
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, int):
        return sympy.Integer(value)
    raise TypeError(f"expected an exact sympy value, got {type(value).__name__}")


def limit(expr: Any, t: sympy.Symbol, seconds: float = LIMIT_SECONDS) -> Any:
    """lim_{t→∞} expr: a number, oo or -oo; raises Undecided otherwise."""
    expr = exact(expr)
    if t not in expr.free_symbols:
        return _constant(expr)
    terms = _terms(expr, t)
    if terms is not None:
        if not terms:
            return sympy.Integer(0)
        top = max(terms)
        lead = _constant(terms[top])
        if top > 0:
            return sympy.oo if _sign(lead) > 0 else -sympy.oo
        return lead if top == 0 else sympy.Integer(0)
    parts = _rational_parts(expr, t)
    if parts is not None:
        num, den = parts
        if num.is_zero:
            return sympy.Integer(0)
        lead = _constant(num.LC() / den.LC())
        if num.degree() > den.degree():
            return sympy.oo if _sign(lead) > 0 else -sympy.oo
        if num.degree() == den.degree():
            return lead
        return sympy.Integer(0)
    try:
        with time_limit(seconds):
            value = sympy.limit(expr, t, sympy.oo)
    except BudgetExceeded:
        raise Undecided(f"no limit of {expr} within {seconds:g} s") from None
    except Exception as err:  # noqa: BLE001 - sympy raises many kinds on what it cannot do
        raise Undecided(f"no limit of {expr} ({type(err).__name__})") from None
    value = _settled(value)
    if value in (sympy.oo, -sympy.oo):
        return value
    return _constant(value)


def _settled(value: Any) -> Any:
    """sympy's limit with bounded oscillation resolved where it has one sign: C (2 + sin C) gives
    oo·sign(⟨1, 3⟩), which is oo. An oscillation that changes sign, or stays in the value
    (sin C itself), has no limit: Undecided."""
    if not value.has(sympy.AccumBounds):
        return value

    def sign_of(bounds: Any) -> Any:
        if bounds.min.is_positive:
            return sympy.Integer(1)
        if bounds.max.is_negative:
            return sympy.Integer(-1)
        raise Undecided(f"oscillates between {bounds.min} and {bounds.max}: no limit")

    value = value.replace(lambda e: isinstance(e, sympy.sign) and isinstance(e.args[0], sympy.AccumBounds),
                          lambda e: sign_of(e.args[0]))
    if value.has(sympy.AccumBounds):
        raise Undecided(f"oscillates ({value}): no limit")
    return value


PERIODIC = (sympy.sin, sympy.cos, sympy.tan, sympy.cot, sympy.sec, sympy.csc)


def oscillating(exprs: Sequence[Any], growing: Sequence[sympy.Symbol]) -> Any | None:
    """A periodic function in `exprs` whose argument grows without bound with one of
    `growing` (cos C), or None. Samples at growing scales cannot stand for a limit then:
    they see whatever phase the scales happen to land on. An argument whose limit cannot
    be found counts as growing (the caller then decides nothing from samples)."""
    for expr in exprs:
        for call in expr.atoms(*PERIODIC):  # a reading: sympy already, built by our parser
            arg = call.args[0]
            for t in growing:
                if t not in arg.free_symbols:
                    continue
                try:
                    bounded = limit(arg.subs({u: t for u in growing}), t) not in (sympy.oo, -sympy.oo)
                except Undecided:
                    bounded = False
                if not bounded:
                    return call
    return None


def _sign(value: Any) -> int:
    """+1 or -1 for a nonzero constant; Undecided for one that may be zero (sqrt(3+2√2) - 1 - √2)."""
    if value.is_Number and value != 0:  # a plain number: no assumption system needed
        return 1 if value > 0 else -1
    if value.is_positive:
        return 1
    if value.is_negative:
        return -1
    if equal(value, 0):
        raise Undecided(f"{value} may be zero; its sign cannot be told")
    number = sympy.N(value, EQUAL_DIGITS)
    if not number.is_real:
        raise Undecided(f"{value} is not real")
    return 1 if number > 0 else -1


def _constant(value: Any) -> Any:
    if value.free_symbols or value.has(sympy.zoo, sympy.nan, sympy.AccumBounds):
        raise Undecided(f"{value} is not a number")
    if value.is_real is False:
        raise Undecided(f"{value} is not real")
    return value


def degree(expr: Any, t: sympy.Symbol) -> Any:
    """The power of t that `expr` grows like, for a rational function of t (else Undecided)."""
    terms = _terms(expr, t) if t in expr.free_symbols else {0: expr}
    if terms is not None:
        return max(terms) if terms else -sympy.oo
    parts = _rational_parts(expr, t)
    if parts is None:
        raise Undecided(f"{expr} is not a rational function of {t}")
    num, den = parts
    if num.is_zero:
        return -sympy.oo
    return num.degree() - den.degree()


@dataclass(frozen=True)
class Weights:
    """The limiting softmax weights of one row of scores, and how fast they settle."""

    values: tuple  # exact weights, summing to 1
    top: tuple[int, ...]  # the indices that keep weight
    fast: bool  # every other weight decays like exp(-t^k), k > 0, and the top's gaps are exact constants
    approx: tuple[float, ...] = ()  # the same weights in floating point (for feedback and the report)


def _weights(limits: Sequence[Any], fast: bool) -> Weights:
    """Softmax of the limiting gaps to the top score (-oo for the scores that lose)."""
    keep = tuple(i for i, L in enumerate(limits) if L != -sympy.oo)
    if all(limits[i] == 0 for i in keep):  # a plain tie (the usual case): equal shares
        share = sympy.Rational(1, len(keep))
        values = tuple(share if i in keep else sympy.Integer(0) for i in range(len(limits)))
    else:
        total = sum(sympy.exp(limits[i]) for i in keep)
        values = tuple(sympy.exp(limits[i]) / total if i in keep else sympy.Integer(0) for i in range(len(limits)))
    floats = np.array([float(L) for L in limits])
    approx = np.exp(floats - floats.max())
    return Weights(values, keep, fast, tuple((approx / approx.sum()).tolist()))


def softmax_limit(scores: Sequence[Any], t: sympy.Symbol) -> Weights:
    """lim_{t→∞} softmax(scores), exactly; raises Undecided where the analysis cannot follow."""
    return _softmax_limit(tuple(exact(s) for s in scores), t)


# Answers that differ only in how they are written (C k_c, λ k_c) have the
# same scores once the constant is t: their limit is worked out once per process.
@functools.lru_cache(maxsize=4096)
def _softmax_limit(scores: tuple, t: sympy.Symbol) -> Weights:
    polys = _polynomials(scores, t)
    if polys is not None:
        return _polynomial_softmax_limit(polys)
    top = 0
    for i in range(1, len(scores)):
        if limit(scores[i] - scores[top], t) == sympy.oo:
            top = i
    gaps = [_tidy(s - scores[top], t) for s in scores]
    limits = [limit(g, t) for g in gaps]
    if any(L == sympy.oo for L in limits):
        raise Undecided("the scores have no largest one")
    keep = [i for i, L in enumerate(limits) if L != -sympy.oo]
    fast = all(t not in gaps[i].free_symbols for i in keep) and all(
        _decays_polynomially(gaps[i], t) for i in range(len(scores)) if i not in keep)
    return _weights(limits, fast)


def values_at(scores: Sequence[Any], t: sympy.Symbol, x: float) -> list[float]:
    """The scores at t = x in floating point (for samples beside an exact limit)."""
    out = []
    for s in scores:
        terms = _float_terms(s, t)
        try:
            out.append(sum(c * x ** k for k, c in terms) if terms is not None else float(s.subs(t, x)))
        except OverflowError:  # e^{t^2} at a large t: as large as a float gets
            out.append(float("inf"))
        except (TypeError, ZeroDivisionError):  # not defined there (1/log t at t = 1): the caller moves on
            out.append(float("nan"))
    return out


@functools.lru_cache(maxsize=4096)
def _float_terms(score: Any, t: sympy.Symbol) -> tuple[tuple[float, float], ...] | None:
    """A score as (power, coefficient) pairs in floating point, when it is a sum of c·t^k."""
    terms = _terms(score, t) if t in score.free_symbols else {0: score}
    return None if terms is None else tuple((float(k), float(c)) for k, c in terms.items())


def _polynomials(scores: Sequence[Any], t: sympy.Symbol) -> list[dict] | None:
    """Each score as {power: coefficient} (sums of c·t^k, k any number), when they all are."""
    out = []
    for s in scores:
        terms = _terms(s, t) if t in s.free_symbols else ({0: s} if s != 0 else {})
        if terms is None:
            return None
        out.append(terms)
    return out


def _difference(a: dict, b: dict) -> tuple[Any, Any, bool]:
    """(degree, leading coefficient, whether smaller terms remain) of a − b; (None, 0, False) when equal."""
    gap = {k: a.get(k, 0) - b.get(k, 0) for k in set(a) | set(b)}
    live = [k for k, v in gap.items() if not (v == 0 or (v.is_zero is None and equal(v, 0)))]
    if not live:
        return None, sympy.Integer(0), False
    top = max(live)
    return top, gap[top], len(live) > 1


def _polynomial_softmax_limit(polys: Sequence[dict]) -> Weights:
    """The common case, decided on coefficients alone: a gap that grows tends to ±∞ by the
    sign of its leading coefficient, a gap of degree 0 is its constant."""
    top = 0
    for i in range(1, len(polys)):
        power, lead, _ = _difference(polys[i], polys[top])
        if power is not None and power > 0 and _sign(lead) > 0:
            top = i
    limits, settled = [], True
    for p in polys:
        power, lead, rest = _difference(p, polys[top])
        if power is None or power < 0:
            settled &= power is None  # a gap that only tends to 0 settles slowly
            limits.append(sympy.Integer(0))
        elif power == 0:
            settled &= not rest  # 1 + 1/t tends to 1 as slowly as 1/t tends to 0
            limits.append(_constant(lead))
        elif _sign(lead) < 0:
            limits.append(-sympy.oo)
        else:
            raise Undecided("the scores have no largest one")
    return _weights(limits, fast=settled)


def _tidy(expr: Any, t: sympy.Symbol) -> Any:
    """A difference of scores with what cancels cancelled (cheaply for polynomials)."""
    if t not in expr.free_symbols:
        return expr
    return sympy.expand(expr) if expr.is_polynomial(t) else sympy.cancel(sympy.together(expr))


def _decays_polynomially(gap: Any, t: sympy.Symbol) -> bool:
    try:
        return degree(gap, t) > 0
    except Undecided:
        return False


def equal(a: Any, b: Any) -> bool:
    """Two exact constants are equal (compared at EQUAL_DIGITS digits when sympy cannot tell)."""
    difference = exact(a) - exact(b)
    if difference.is_Rational:  # settled without numerics
        return difference == 0
    value = sympy.N(difference, EQUAL_DIGITS + 10)
    return bool(abs(value) < sympy.Float(10) ** (-EQUAL_DIGITS))
