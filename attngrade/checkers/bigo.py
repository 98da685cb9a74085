"""`bigO`: an order of growth O(f) compared with the key's O(g) as the variables grow.

Every variable is positive and may grow without bound, alone or with the others, so
the comparison is of f/g along growth paths: x_i = t^(a_i) for an exponent vector
a ≥ 0 (a variable with a_i = 0 stays fixed at a moderate value), with t → ∞. The
basic paths are each variable alone, all together and every pair together; then a
grid of small integer exponent vectors (every vector in {0..3}^n up to three
variables, {0..2}^n for four, rates 2:1 for each ordered pair beyond) and a few
random positive ones, seeded per part so a rerun gives the same verdict.

On one path each side is worked out exactly, not sampled: a sum of products of
powers and logs of the variables tends to c · t^p · (log t)^q · (log log t)^r, and
the triple (p, q, r) is its order. Log factors are therefore told apart exactly
(O(N log N) is not O(N)); there is no slope tolerance to tune. What this cannot
follow (exponentials, powers with a variable exponent, leading terms that cancel,
functions) is decided on every path by sympy's `limit` of f/g under a time budget;
if that does not settle every path and no path showed the answer wrong, the answer
goes to course staff.

Verdicts: f/g tends to a positive constant on every path → same order (full marks,
with a note when constant factors or lower-order terms were left inside the O);
f/g → ∞ somewhere and never → 0 → a true upper bound that is not tight
(`loose_points`); f/g → 0 somewhere → too small (zero); both → not comparable (zero).

Lower-order terms are found wherever they sit: at the top (O(N^2 d + N^2)) or inside a factor
(O(N^2 (d + 1)), O((N + 1)^2 d)); both get the same treatment.

Params: `loose_points` (points for a bound that is not tight, default 0); `lower_order`, how
the right order written with lower-order terms or constant factors inside the O is graded:
`full` (full marks with a note; the default) or `half` (half the check's points with the
reason, PrairieLearn's convention for its big-O inputs); `untidy_points` (the points for
that case as a number instead, for a course with another rule; not together with
`lower_order`); and `variables` (names of the symbols that grow; default: every declared
scalar the answer or key uses; any other symbol is a constant).
"""

from __future__ import annotations

import itertools
import math
import random
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import sympy

from ..errors import ConfigError
from ..mathlang.display import reading
from ..records import CheckSpec, Part
from ..runtime.deadline import BudgetExceeded, time_limit
from ..runtime.text import did_you_mean
from .base import Context, Outcome, Param
from .messages import Finding

PARAMS = (Param("loose_points", (float,)), Param("lower_order", (str,)), Param("untidy_points", (float,)),
          Param("variables", (list,)))
LOWER_ORDER = {"full": None, "half": 0.5}  # `lower_order`: the share of the points for an untidy right order
MAX_TERMS = 12  # terms of one sum searched for lower-order ones (each costs a comparison along every path)
# Values of the variables that do not grow on a path: all above e, so log log x > 0,
# and unrelated to each other, so no term cancels by accident.
FIXED = (5.3, 7.1, 3.7, 11.3, 4.9, 13.7, 6.1, 9.7, 8.3, 12.1)
RANDOM_PATHS = 6
CANCEL = 1e-9  # leading coefficients summing below this (relative) cancel: not followed exactly
LIMIT_SECONDS = 1.0  # one sympy limit
FALLBACK_SECONDS = 3.0  # all sympy limits of one check together

SAME, FASTER, SLOWER, INVALID, UNDECIDED = "same", "faster", "slower", "invalid", "undecided"

Path = tuple[Fraction, ...]


class _Unsupported(Exception):
    """The exact growth of this expression on this path is beyond the analysis."""


_ZERO = Fraction(0)


class _Growth(NamedTuple):  # a tuple: made millions of times on the paths, so cheap to build
    """c · t^power · (log t)^logs · (log log t)^loglogs, the leading term along a path."""

    coef: float
    power: Fraction = _ZERO
    logs: Fraction = _ZERO
    loglogs: Fraction = _ZERO

    @property
    def order(self) -> tuple[Fraction, Fraction, Fraction]:
        return (self.power, self.logs, self.loglogs)


Node = Callable[[Path], "_Growth | None"]  # None is exactly zero


# -- exact growth along one path -----------------------------------------------------------
def _fraction(number: Any) -> Fraction:
    if number.is_Rational:
        return Fraction(int(number.p), int(number.q))
    if number.is_Float:
        return Fraction(str(number))
    raise _Unsupported(f"exponent {number}")


def _finite(x: float) -> float:
    if x != x or x in (float("inf"), float("-inf")):
        raise _Unsupported("overflow")
    return x


def _compile(expr: Any, index: Mapping[Any, int], constants: Mapping[Any, float]) -> Node:
    """A function from a path to the leading term of `expr` on it (raises _Unsupported)."""
    if not expr.free_symbols:
        try:
            value = float(expr)
        except (TypeError, ValueError):
            raise _Unsupported(str(expr)) from None
        _finite(value)
        grown = None if value == 0 else _Growth(value)
        return lambda a: grown
    if isinstance(expr, sympy.Symbol):
        if expr in index:
            i, rest = index[expr], FIXED[index[expr] % len(FIXED)]
            return lambda a: _Growth(1.0, a[i]) if a[i] > 0 else _Growth(rest)
        value = constants[expr]
        return lambda a: _Growth(value)
    if isinstance(expr, sympy.Add):
        return _add([_compile(x, index, constants) for x in expr.args])
    if isinstance(expr, sympy.Mul):
        return _mul([_compile(x, index, constants) for x in expr.args])
    if isinstance(expr, sympy.Pow):
        if expr.exp.free_symbols:
            raise _Unsupported("a variable exponent")
        return _pow(_compile(expr.base, index, constants), _fraction(expr.exp))
    if isinstance(expr, sympy.log) and len(expr.args) == 1:
        return _log(_compile(expr.args[0], index, constants))
    if isinstance(expr, (sympy.Max, sympy.Min)):
        return _extreme([_compile(x, index, constants) for x in expr.args], isinstance(expr, sympy.Max))
    raise _Unsupported(type(expr).__name__)


def _add(terms: Sequence[Node]) -> Node:
    def run(a: Path) -> _Growth | None:
        grown = [g for g in (term(a) for term in terms) if g is not None]
        if not grown:
            return None
        top = max(g.order for g in grown)
        leading = [g.coef for g in grown if g.order == top]
        coef = sum(leading)
        if abs(coef) <= CANCEL * max(abs(c) for c in leading):
            raise _Unsupported("leading terms cancel")
        return _Growth(coef, *top)

    return run


def _extreme(terms: Sequence[Node], largest: bool) -> Node:
    """max(f, g) grows like the faster of the two, min(f, g) like the slower (both positive)."""
    def run(a: Path) -> _Growth | None:
        grown = [term(a) for term in terms]
        if any(g is None or g.coef <= 0 for g in grown):
            raise _Unsupported("max or min of a term that is not positive")
        pick = max if largest else min
        top = pick(g.order for g in grown)
        return _Growth(pick(g.coef for g in grown if g.order == top), *top)

    return run


def _mul(factors: Sequence[Node]) -> Node:
    def run(a: Path) -> _Growth | None:
        coef, power, logs, loglogs = 1.0, _ZERO, _ZERO, _ZERO
        for factor in factors:
            g = factor(a)
            if g is None:
                return None
            coef = _finite(coef * g.coef)
            if g.power:  # adding Fractions is slow; most factors add nothing
                power += g.power
            if g.logs:
                logs += g.logs
            if g.loglogs:
                loglogs += g.loglogs
        return _Growth(coef, power, logs, loglogs)

    return run


def _pow(base: Node, exponent: Fraction) -> Node:
    def run(a: Path) -> _Growth | None:
        g = base(a)
        if g is None:
            if exponent > 0:
                return None
            raise _Unsupported("division by zero")
        if g.coef < 0 and exponent.denominator != 1:
            raise _Unsupported("root of a negative number")
        try:
            coef = _finite(g.coef ** float(exponent))
        except (OverflowError, ZeroDivisionError):
            raise _Unsupported("overflow") from None
        return _Growth(coef, g.power * exponent, g.logs * exponent, g.loglogs * exponent)

    return run


def _log(arg: Node) -> Node:
    def run(a: Path) -> _Growth | None:
        g = arg(a)
        if g is None or g.coef <= 0:
            raise _Unsupported("log of a number that is not positive")
        if g.power != 0:  # log(c t^p ...) = p log t + ...
            return _Growth(float(g.power), Fraction(0), Fraction(1))
        if g.logs != 0:  # log(c (log t)^q ...) = q log log t + ...
            return _Growth(float(g.logs), Fraction(0), Fraction(0), Fraction(1))
        if g.loglogs != 0 or g.coef == 1.0:
            raise _Unsupported("log log log, or a log tending to zero")
        return _Growth(math.log(g.coef))

    return run


# -- the paths -----------------------------------------------------------------------------
def _direction(vector: Sequence[int | Fraction]) -> Path:
    top = max(vector)
    return tuple(Fraction(x) / top for x in vector)


def _paths(n: int, seed: int) -> tuple[list[Path], int]:
    """Growth paths, the basic ones first; returns (paths, how many are basic)."""
    if n == 0:
        return [()], 1
    unit = [tuple(int(i == j) for j in range(n)) for i in range(n)]
    basic = unit + ([tuple([1] * n)] if n > 1 else [])
    if n > 2:
        basic += [tuple(int(k in (i, j)) for k in range(n)) for i, j in itertools.combinations(range(n), 2)]
    grid: list[tuple[int, ...]] = []
    if n <= 4:
        levels = range(4) if n <= 3 else range(3)
        grid = [v for v in itertools.product(levels, repeat=n) if any(v)]
    else:
        for i, j in itertools.permutations(range(n), 2):
            grid.append(tuple(2 if k == i else 1 if k == j else 0 for k in range(n)))
    rng = random.Random(seed)
    randoms = [tuple(Fraction(rng.randint(1, 9), rng.randint(1, 4)) for _ in range(n)) for _ in range(RANDOM_PATHS)]
    out: dict[Path, None] = {}
    for v in basic:
        out.setdefault(_direction(v))
    n_basic = len(out)
    for v in [*grid, *randoms]:
        out.setdefault(_direction(v))
    return list(out), n_basic


def _describe(path: Path, names: Sequence[str]) -> str:
    growing = [(name, a) for name, a in zip(names, path) if a > 0]
    fixed = [name for name, a in zip(names, path) if a == 0]
    if not growing:
        return ""
    if len(names) == 1:
        return f"as {names[0]} grows"
    rest = f" with {_and(fixed)} fixed" if fixed else ""
    if len(growing) == 1:
        return f"when {growing[0][0]} grows{rest}"
    if len({a for _, a in growing}) == 1:
        return f"when {_and([n for n, _ in growing])} grow together{rest}"
    base, low = min(growing, key=lambda g: g[1])
    like = [f"{name} like {_power(base, a / low)}" for name, a in growing if name != base]
    like[0] = like[0].replace(" like ", " grows like ", 1)
    return f"when {_and(like)}{rest}"


def _power(name: str, a: Fraction) -> str:
    if a == 1:
        return name
    return f"{name}^{a}" if a.denominator == 1 else f"{name}^({a})"


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# -- comparing two orders ------------------------------------------------------------------
@dataclass
class _Comparison:
    verdict: str
    faster: Path | None = None
    slower: Path | None = None
    invalid: Path | None = None


class _Orders:
    """Compares answers with one key over one set of variables and paths."""

    def __init__(self, key: Any, variables: Sequence[Any], constants: Mapping[Any, float], seed: int, label: str):
        self.key = key
        self.variables = list(variables)
        self.index = {x: i for i, x in enumerate(self.variables)}
        self.constants = dict(constants)
        self.paths, self.n_basic = _paths(len(self.variables), seed)
        self.label = label  # "part 2a, field cost", for configuration errors
        self.budget = FALLBACK_SECONDS
        try:
            self.key_node: Node | None = _compile(key, self.index, self.constants)
        except _Unsupported:
            self.key_node = None
        self._key_growth: dict[Path, _Growth | None] = {}

    def _key_on(self, path: Path) -> _Growth:
        if path not in self._key_growth:
            self._key_growth[path] = self.key_node(path)
        g = self._key_growth[path]
        if g is None or g.coef <= 0:
            raise ConfigError(f"{self.label}: the key {_shown(self.key)} is not a positive order of growth "
                              f"{_describe(path, [reading(x) for x in self.variables])}")
        return g

    def _exact(self, node: Node | None, path: Path) -> str:
        if node is None or self.key_node is None:
            raise _Unsupported("not compiled")
        g = self._key_on(path)
        f = node(path)
        if f is None or f.coef <= 0:
            return INVALID
        return SAME if f.order == g.order else FASTER if f.order > g.order else SLOWER

    def _limit(self, expr: Any, path: Path) -> str:
        if self.budget <= 0:
            return UNDECIDED
        t = sympy.Symbol("t", positive=True)
        subs = {x: (t ** sympy.Rational(a.numerator, a.denominator) if a > 0
                    else sympy.Rational(str(FIXED[i % len(FIXED)])))
                for i, (x, a) in enumerate(zip(self.variables, path))}
        subs.update({x: sympy.Rational(str(v)) for x, v in self.constants.items()})
        start = time.monotonic()
        try:
            with time_limit(min(LIMIT_SECONDS, self.budget)):
                ratio = sympy.limit(expr.subs(subs) / self.key.subs(subs), t, sympy.oo)
        except BudgetExceeded:
            return UNDECIDED
        except Exception:  # noqa: BLE001 - sympy raises many kinds on what it cannot do
            return UNDECIDED
        finally:
            self.budget -= time.monotonic() - start
        if ratio is sympy.oo:
            return FASTER
        if ratio == 0:
            return SLOWER
        if ratio is sympy.S.NegativeInfinity or ratio.is_extended_negative:
            return INVALID
        if ratio.is_extended_real and ratio.is_positive and ratio.is_finite:
            return SAME
        return UNDECIDED

    def compare(self, expr: Any, *, fallback: bool = True) -> _Comparison:
        try:
            node: Node | None = _compile(expr, self.index, self.constants)
        except _Unsupported:
            node = None
        out = _Comparison(SAME)
        undecided = False
        for number, path in enumerate(self.paths):
            try:
                verdict = self._exact(node, path)
            except _Unsupported:
                if not fallback:
                    undecided |= number < self.n_basic
                    continue
                # Every path, not only the basic ones: an answer can agree with the key whenever one
                # or two variables grow alike and still be wrong where N grows like M^2. The budget
                # bounds the limits; a path left without one leaves the verdict undecided.
                verdict = self._limit(expr, path)
            if verdict == INVALID:
                return _Comparison(INVALID, invalid=path)
            if verdict == UNDECIDED:
                undecided = True
            elif verdict == FASTER and out.faster is None:
                out.faster = path
            elif verdict == SLOWER and out.slower is None:
                out.slower = path
        if out.faster and out.slower:
            out.verdict = "incomparable"
        elif out.faster:
            out.verdict = FASTER
        elif out.slower:
            out.verdict = SLOWER
        elif undecided:
            out.verdict = UNDECIDED
        return out

    def where(self, path: Path | None) -> str:
        return _describe(path, [reading(x) for x in self.variables]) if path is not None else ""


# -- the check -----------------------------------------------------------------------------
def _variables(ctx: Context, exprs: Sequence[Any]) -> tuple[list[Any], dict[Any, float]]:
    table = ctx.table  # the field's own symbols, if it declares them
    free: set[Any] = set()
    for e in exprs:
        free |= {s for s in e.free_symbols if isinstance(s, sympy.Symbol)}
    names = ctx.spec.params.get("variables")
    if names is None:
        declared = {spec.sympy for spec in table.scalars()}
        growing = [s for s in free if s in declared]
    else:
        growing = []
        for name in names:
            hit = table.resolve(str(name))
            if hit is None or hit[0].kind != "scalar":
                raise ConfigError(f"part {ctx.part.id}: bigO variable '{name}' is not a scalar of this part")
            growing.append(hit[0].sympy)
    growing = sorted(set(growing), key=lambda s: s.name)
    others = sorted((s for s in free if s not in growing), key=lambda s: s.name)
    constants = {s: FIXED[(len(growing) + i) % len(FIXED)] for i, s in enumerate(others)}
    return growing, constants


def prepare(params: Mapping[str, Any], part: Part, spec: CheckSpec) -> dict[str, Any]:
    raw = params.get("loose_points", 0)
    if not isinstance(raw, (int, float)) or raw < 0:
        raise ConfigError("loose_points must be a number of points ≥ 0")
    untidy = params.get("untidy_points")
    if untidy is not None and (not isinstance(untidy, (int, float)) or untidy < 0):
        raise ConfigError("untidy_points must be a number of points ≥ 0")
    lower = params.get("lower_order", "full")
    if lower not in LOWER_ORDER:
        raise ConfigError(f"lower_order must be one of {', '.join(LOWER_ORDER)}, not {lower!r}"
                          + did_you_mean(str(lower), LOWER_ORDER))
    if untidy is not None and "lower_order" in params:
        raise ConfigError("give lower_order or untidy_points, not both")
    names = params.get("variables")
    if names is not None:
        table = part.table_for(spec.fields[0])
        for name in names:
            hit = table.resolve(str(name))
            if hit is None or hit[0].kind != "scalar":
                raise ConfigError(f"variable '{name}' is not a scalar of this part")
    return {"loose_points": float(raw) * spec.scale,
            "untidy_points": None if untidy is None else float(untidy) * spec.scale,
            "untidy_share": LOWER_ORDER[lower]}


def _bare(expr: Any, variables: Sequence[Any]) -> Any:
    """The term without its constant factor: 2 M^2 k -> M^2 k."""
    if not variables:
        return sympy.Integer(1)
    return expr.as_independent(*variables, as_Add=False)[1]


def _monomial(expr: Any) -> bool:
    return not expr.has(sympy.Add)


def _shown(expr: Any) -> str:
    return f"O({reading(expr)})"


def _lower_terms(terms: list[Any], whole: Callable[[list[Any]], Any], orders: _Orders,
                 piece: Callable[[Any], Any]) -> list[Any]:
    """The terms of a sum left once the lower-order ones are dropped: a term is lower-order when its
    own contribution (`piece`) grows more slowly than the key somewhere and the sum without it
    (`whole`) has the key's order."""
    needed = list(terms)
    if len(terms) < 2 or len(terms) > MAX_TERMS:
        return needed
    for term in terms:
        rest = [x for x in needed if x is not term]
        size = -term if term.could_extract_minus_sign() else term
        if (rest and orders.compare(piece(size), fallback=False).verdict == SLOWER
                and orders.compare(whole(rest), fallback=False).verdict == SAME):
            needed = rest
    return needed


def _inside(term: Any, others: list[Any], orders: _Orders) -> Any:
    """`term` with the lower-order terms of its factors dropped: N^2 (d + 1) -> N^2 d, (N + 1)^2 -> N^2."""
    factors = list(term.args) if isinstance(term, sympy.Mul) else [term]
    for i, factor in enumerate(factors):
        power = factor.exp if isinstance(factor, sympy.Pow) and factor.exp.is_positive else sympy.Integer(1)
        base = factor.base if power != 1 else factor
        if not isinstance(base, sympy.Add):
            continue

        def rebuilt(inner: Any, i: int = i, power: Any = power) -> Any:
            return sympy.Mul(*factors[:i], inner ** power, *factors[i + 1:])

        kept = _lower_terms(list(base.args), lambda rest: sympy.Add(*others, rebuilt(sympy.Add(*rest))), orders,
                            rebuilt)
        factors[i] = sympy.Add(*kept) ** power
    return sympy.Mul(*factors)


def _tidiness(expr: Any, orders: _Orders) -> tuple[str | None, str | None]:
    """A note on constant factors or lower-order terms left inside the O, and the tidy form."""
    # A symbol the key itself uses is not a factor to drop, even when it does not grow.
    variables = sorted(set(orders.variables) | orders.key.free_symbols, key=lambda x: x.name)
    terms = list(expr.args) if isinstance(expr, sympy.Add) else [expr]
    needed = _lower_terms(terms, lambda rest: sympy.Add(*rest), orders, lambda term: term)
    tidied = [_inside(x, [y for y in needed if y is not x], orders) for x in needed]
    lower = len(needed) < len(terms) or tidied != needed
    constant = any(_bare(x, variables) != x for x in tidied)
    if not (lower or constant):
        return None, None
    tidy = sympy.Add(*[_bare(x, variables) for x in tidied])
    what = " and ".join(w for w, on in (("constant factors", constant), ("lower-order terms", lower)) if on)
    return what, tidy


def _chain_differs(answer: Any, variables: list[Any], constants: dict[Any, float], seed: int) -> Any:
    """In `O(N^2 d + N^2) = O(N^2 d)` every member must be the answer's order: the first that is not, else None."""
    members = getattr(answer, "members", ())
    if not members:
        return None
    if any(s not in variables and s not in constants for m in members for s in m.free_symbols):
        return members[0]  # a member in other symbols than the answer's and the key's
    own = _Orders(answer.expr, variables, constants, seed, "your answer")
    for member in members:
        try:
            if own.compare(member).verdict not in (SAME, UNDECIDED):
                return member
        except ConfigError:  # the answer itself is no positive order: the check says so next
            return None
    return None


def check(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    (name,) = ctx.spec.fields
    answer = answers[name]
    key = ctx.key[name]
    if getattr(key, "kind", None) not in ("bigO", "scalar"):
        raise ConfigError(f"part {ctx.part.id}: the key of {name} is not an order of growth O(...)")
    notes: list[str] = []
    if answer.kind == "scalar":
        notes.append(f"{name}: read {reading(answer.expr)} as {_shown(answer.expr)}")
    elif answer.kind != "bigO":
        return Outcome(0.0, (Finding(f"expected an order of growth written as O(...); your answer is a {answer.kind}",
                                     field=name),), {"order": INVALID})
    f, g = answer.expr, key.expr
    loose_points = min(ctx.prepared["loose_points"], ctx.points)
    variables, constants = _variables(ctx, [f, g, *getattr(answer, "members", ())])
    differs = _chain_differs(answer, variables, constants, ctx.seed)
    if differs is not None:
        return Outcome(0.0, (*notes, Finding(f"your chain of equalities says {_shown(differs)} is your answer "
                                             f"{_shown(f)}, but the two are different orders; write only your answer",
                                             field=name)), {"order": INVALID}, invalid=True)
    orders = _Orders(g, variables, constants, ctx.seed, f"part {ctx.part.id}, field {name}")
    result = orders.compare(f)
    yours, expected = _shown(f), reading(g)
    evidence: dict[str, Any] = {"order": result.verdict}

    def wrong(message: str, earned: float = 0.0) -> Outcome:
        feedback: list[Any] = [*notes, Finding(message, field=name)]
        if ctx.explain.get(name):
            feedback.append(ctx.explain[name])
        return Outcome(earned, tuple(feedback), evidence)

    if result.verdict == SAME:
        what, tidy = _tidiness(f, orders)
        untidy = ctx.prepared.get("untidy_points")
        if untidy is None and ctx.prepared.get("untidy_share") is not None:
            untidy = ctx.prepared["untidy_share"] * ctx.points
        if what and untidy is not None and untidy < ctx.points:  # the course asks for the tidy form
            return Outcome(untidy, (*notes, Finding(f"the right order, but {what} do not belong inside O(...): "
                                                    f"write {_shown(tidy)}", field=name)), evidence)
        if what:
            notes.append(f"{name}: {what} are unnecessary inside O(...); {_shown(tidy)} says the same")
        return Outcome(ctx.points, tuple(notes), evidence)
    if result.verdict == UNDECIDED:
        return Outcome(0.0, (*notes, Finding(f"attngrade could not compare {yours} with the expected order; "
                                             "course staff will grade it by hand", field=name)), evidence, is_pending=True)
    if result.verdict == INVALID:
        where = orders.where(result.invalid)
        evidence["path"] = where
        if f == 0:
            return wrong(f"{yours} is not an order of growth: it is zero")
        return wrong(f"{yours} is not an order of growth: it is not positive{' ' + where if where else ''}")
    both_monomials = _monomial(f) and _monomial(g)
    if result.verdict == FASTER:
        evidence["path"] = orders.where(result.faster)
        if both_monomials:
            by = f"by a factor of {reading(_bare(f, variables) / _bare(g, variables))}"
        else:
            by = orders.where(result.faster)
        return wrong(f"{yours} is an upper bound but not tight: it grows faster than the expected order {by}",
                     loose_points)
    if result.verdict == SLOWER:
        evidence["path"] = orders.where(result.slower)
        if both_monomials:
            miss = f"misses a factor of {reading(_bare(g, variables) / _bare(f, variables))}"
        else:
            miss = f"grows more slowly {orders.where(result.slower)}"
        return wrong(f"too small: the cost grows like {expected}; your {yours} {miss}")
    evidence["path"] = [orders.where(result.faster), orders.where(result.slower)]
    off = ""
    if both_monomials:
        off = f" (it is off by a factor of {reading(_bare(f, variables) / _bare(g, variables))})"
    return wrong(f"{yours} is not the expected order: it grows faster {orders.where(result.faster)} "
                 f"but more slowly {orders.where(result.slower)}{off}; the cost grows like {expected}")
