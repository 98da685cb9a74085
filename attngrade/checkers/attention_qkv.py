"""`attention_qkv`: V, K, Q whose self-attention outputs tend to targets as β grows.

The student gives V, K, Q for a self-attention layer over fixed inputs; the outputs c_i
must tend to their targets as β (and any free constant) grow. The inputs live in the span
of an orthogonal family u_a.. of norm β, so every vector is computed exactly in that
family's coordinates (u_x = β e_x): the exact limits of the softmax decide, and samples at
growing scales, in high precision (scores can be β⁶), are their cross-check, or decide
where the exact analysis cannot follow an answer.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping, Sequence

import mpmath
import numpy as np
import sympy

from ..errors import ConfigError
from ..mathlang import parse
from ..mathlang.display import combination
from ..mathlang.evaluate import EXACT, EvaluationError, evaluate
from ..records import CheckSpec, Part
from . import asymptotics
from .attention_common import converges, free_scalars, undecided
from .base import Context, Outcome, Param

log = logging.getLogger(__name__)

PARAMS = (Param("basis", (list,), required=True), Param("norm", (str,), required=True),
          Param("inputs", (list,), required=True), Param("targets", (dict,), required=True),
          Param("partial", (dict,)))

QKV_SCALES = (2, 4, 8, 16, 32, 64)  # the fallback when no exact limit is found
QKV_CHECK_SCALES = (16, 64)  # the cross-check of an exact verdict
GROWTH = {(1, 1): "as β and C grow together", (2, 1): "as β grows like C²", (1, 2): "as C grows like β²"}
SATURATED = 0.99  # a weight this large means "attends to"


# -- the problem, in exact coordinates ------------------------------------------------------------
class _Coordinates:
    """Exact coordinates of the part's orthogonal family: u_x = β e_x."""

    def __init__(self, part: Part, p: Mapping[str, Any]):
        self.table = part.table
        self.names = list(p["basis"])
        self.beta = self.table.specs[p["norm"]].sympy
        k = len(self.names)
        self.env = {}
        for i, name in enumerate(self.names):
            e = sympy.zeros(k, 1)
            e[i] = self.beta
            self.env[self.table.specs[name].sympy] = sympy.ImmutableMatrix(e)
        self.dims = {d: k for spec in self.table.specs.values() for d in (spec.dims or ())
                     if isinstance(d, sympy.Symbol)}

    def exact(self, expr: Any) -> sympy.ImmutableMatrix:
        value = evaluate(expr, self.env, self.dims, EXACT)
        return value.applyfunc(_tidy) if isinstance(value, sympy.MatrixBase) else _tidy(value)

    def parse(self, text: str) -> sympy.ImmutableMatrix:
        return self.exact(parse(text, self.table).expr)

    def show(self, vector: sympy.MatrixBase) -> str:
        return combination({name: vector[i] / self.beta for i, name in enumerate(self.names)})


def _tidy(expr: Any) -> Any:
    """One form for an entry: a sum of terms when its denominators are monomials (the usual
    /β²), else a cancelled fraction. Cheaper than cancelling everything; the same value."""
    expanded = sympy.expand(expr)
    if all(not d.free_symbols or d.is_Symbol or (d.is_Pow and d.base.is_Symbol)
           for term in sympy.Add.make_args(expanded) for d in [sympy.fraction(term)[1]]):
        return expanded
    return sympy.cancel(expr)


@dataclass(frozen=True)
class _QKVSetup:
    """The problem's fixed data in exact coordinates, parsed once when the bank loads."""

    coords: _Coordinates
    inputs: tuple
    targets: Mapping[int, Any]
    required_values: Mapping[int, Any]


def prepare_qkv(p: Mapping[str, Any], part: Part, spec: CheckSpec) -> _QKVSetup:
    if len(spec.fields) != 3:
        raise ConfigError(f"takes the three fields V, K, Q in that order, not {list(spec.fields)}")
    for name in list(p["basis"]) + [p["norm"]]:
        if name not in part.table.specs:
            raise ConfigError(f"'{name}' is not a symbol of the part")
    coords = _Coordinates(part, p)
    require = (p.get("partial", {}).get("values") or {}).get("require", {})
    return _QKVSetup(
        coords=coords,
        inputs=tuple(coords.parse(x) for x in p["inputs"]),
        targets={int(i): coords.parse(t) for i, t in p["targets"].items()},
        required_values={int(j): coords.parse(t) for j, t in require.items()},
    )


@dataclass(frozen=True)
class _Layer:
    """One answer's layer in exact coordinates: what the exact limits and the samples both follow."""

    v: Sequence[Any]  # v_j = V x_j
    scores: Sequence[Sequence[Any]]  # scores[i][j] = k_j^T q_i
    targets: Mapping[int, Any]  # i -> where c_i must tend
    required_values: Mapping[int, Any]  # j -> the v_j the value credit asks for
    beta: Any
    free: frozenset  # the free constants that grow besides β
    q: Sequence[Any] = ()  # q_i = Q x_i, for the feedback

    @property
    def paths(self) -> list[tuple[int, int]]:
        """The ways of letting β and the free constant grow, as (β's rate, C's rate).

        Each must be free to grow: the property has to hold whether C outgrows β or β
        outgrows C, not only when they happen to be equal."""
        return [(1, 1), (2, 1), (1, 2)] if self.free else [(1, 1)]


def _layer(answers: Mapping[str, Any], ctx: Context) -> "_Layer | Outcome":
    setup: _QKVSetup = ctx.prepared
    coords = setup.coords
    fields = ctx.spec.fields
    try:
        V, K, Q = (coords.exact(answers[f].expr) for f in fields)
    except (EvaluationError, ValueError, TypeError, ZeroDivisionError) as err:
        return Outcome(0.0, (f"your matrices could not be evaluated: {err}",))
    X = setup.inputs
    v = [(V * x).applyfunc(_tidy) for x in X]
    k = [(K * x).applyfunc(_tidy) for x in X]
    q = [(Q * x).applyfunc(_tidy) for x in X]
    scores = [[_tidy((k[j].T * q[i])[0, 0]) for j in range(len(X))] for i in range(len(X))]
    free = frozenset(free_scalars([answers[f].expr for f in fields], coords.table))
    return _Layer(v, scores, setup.targets, setup.required_values, coords.beta, free, q)


# -- the check ----------------------------------------------------------------------------------
def check_qkv(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    """The exact limits of the outputs decide; samples at growing β are a cross-check.

    q_i, k_j, v_j and the scores are exact expressions in β (and the free constant C).
    Along each growth path (β = t, C = t; β = t², C = t; β = t, C = t²) the limiting
    weights come from `asymptotics.softmax_limit`, and c_i → target_i when the relative
    error of the limiting mix, ‖Σ_j W_ij v_j − target_i‖ / ‖target_i‖, tends to 0 (the
    weights' own convergence is checked against the values' growth). Where the analysis
    cannot follow an answer, the samples decide, and the feedback says so.
    """
    if not all(f in answers for f in ctx.spec.fields):
        return _qkv_partial(answers, ctx)
    layer = _layer(answers, ctx)
    if isinstance(layer, Outcome):
        return layer
    found = _limits(layer, [answers[f].expr for f in ctx.spec.fields], ctx)
    if isinstance(found, Outcome):
        return found
    evidence: dict[str, Any] = {
        "weights": [[round(w, 4) for w in row] for row in found.final],
        "target_weights": _target_weights(ctx.spec.params, len(layer.v)),
        "method": found.method,
    }
    if all(found.outputs_ok.values()):
        return Outcome(ctx.points, tuple(found.notes), evidence)
    feedback = _misses(layer, found, ctx)
    earned, credits = _partial_credit(layer, found, ctx)
    return Outcome(min(earned, ctx.points), tuple(feedback + credits) + tuple(found.notes), evidence)


@dataclass
class _Found:
    """What decides an answer, from the exact limits or (when none is found) from the samples."""

    final: list  # the weights shown, per query: in the limit, or at the largest scale
    outputs_ok: dict  # target index -> c_i tends to its target
    values_ok: bool  # every required value is given
    routes: Callable[[int, int], bool]  # (i, j) -> query i attends to x_j
    method: str  # "exact limit" or "samples"
    notes: list = field(default_factory=list)


def _limits(layer: _Layer, exprs: Sequence[Any], ctx: Context) -> "_Found | Outcome":
    """The one path to the evidence: the exact limits along every way of growing, and samples of
    the same layer (one way, two scales, as a cross-check; every way at more scales, to decide,
    where no exact limit is found)."""
    paths = layer.paths
    notes: list[str] = []
    try:
        exact = [_exact_path(layer, rates) for rates in paths]
    except (asymptotics.Undecided, TypeError, ValueError, ZeroDivisionError) as err:
        log.info("part %s: exact limit not found (%s); deciding from samples", ctx.part.id, err)
        exact = None
        if (swinging := asymptotics.oscillating(exprs, [layer.beta, *sorted(layer.free, key=str)])) is not None:
            return undecided(swinging, notes)
    try:
        with mpmath.workdps(40):  # scores can be β⁶: double precision would round the softmax to 0/1
            sample_paths, scales = (paths, QKV_SCALES) if exact is None else (paths[:1], QKV_CHECK_SCALES)
            runs = [_follow(layer, rates, scales) for rates in sample_paths]
    except (TypeError, ValueError, ZeroDivisionError, OverflowError) as err:
        if exact is None:
            return Outcome(0.0, (f"your matrices do not give finite attention weights as β grows ({err})",))
        runs = []
    if exact is None:
        return _from_samples(layer, runs, notes)
    return _from_limits(exact, runs, notes, ctx)


def _from_samples(layer: _Layer, runs: list[_Path], notes: list[str]) -> _Found:
    notes.append("decided from the outputs at growing β: attngrade could not work out their limit "
                 "exactly for this answer")
    failing = [r for r in runs if not all(converges(e) for e in r.errors.values())]
    run = failing[0] if failing else runs[0]
    final = run.weights[-1]
    return _Found(final=final, outputs_ok={i: converges(run.errors[i]) for i in layer.targets},
                  values_ok=all(converges(r.value_errors[j]) for r in runs for j in layer.required_values),
                  routes=lambda i, j: final[i - 1][j - 1] >= SATURATED, method="samples", notes=notes)


def _from_limits(exact: list[_ExactPath], runs: list[_Path], notes: list[str], ctx: Context) -> _Found:
    failing = [e for e in exact if not all(e.outputs_ok.values())]
    chosen = failing[0] if failing else exact[0]
    if failing and len(failing) < len(exact):  # right along some ways of growing, not this one: say which
        notes.append(f"the limits shown are {GROWTH[chosen.rates]}; the construction must work "
                     "whichever of β and C grows faster")
    sampled_right = bool(runs) and all(converges(errs) for errs in runs[0].errors.values())
    if runs and sampled_right != all(all(e.outputs_ok.values()) for e in exact):
        log.info("part %s: the samples (%s) disagree with the exact limit (%s)", ctx.part.id,
                 "right" if sampled_right else "wrong", "wrong" if sampled_right else "right")
    return _Found(final=chosen.final, outputs_ok=chosen.outputs_ok,
                  values_ok=all(all(e.values_ok.values()) for e in exact),
                  routes=lambda i, j: all(asymptotics.equal(e.weights[i - 1].values[j - 1], 1) for e in exact),
                  method="exact limit", notes=notes)


def _attend(partial: Mapping[str, Any]) -> dict[int, int]:
    """Where the routing credit wants each query to attend: query i -> input j."""
    return {int(i): int(j) for i, j in ((partial.get("routing") or {}).get("attend") or {}).items()}


def _misses(layer: _Layer, found: _Found, ctx: Context) -> list[str]:
    """A line for each output that misses its target: where its query attends, and what c_i becomes."""
    coords = ctx.prepared.coords
    attend = _attend(ctx.spec.params.get("partial", {}))
    feedback = []
    for i, t in layer.targets.items():
        if found.outputs_ok[i]:
            continue
        row = found.final[i - 1]
        c_limit = _limit_output(row, layer.v, coords)
        expected_j = attend.get(i)
        top = int(np.argmax(row)) + 1
        if expected_j is not None and row[expected_j - 1] >= SATURATED:
            feedback.append(
                f"query {i} attends to x{top} as it should, but with your V, v{top} = "
                f"{coords.show(layer.v[top - 1])}, so c{i} ≈ {c_limit}, not {coords.show(t)}"
            )
        else:
            feedback.append(
                f"with your Q and K, q{i} = {coords.show(layer.q[i - 1])}, so {_describe_attention(i, row)} and "
                f"c{i} ≈ {c_limit}, not {coords.show(t)}"
            )
    return feedback


def _partial_credit(layer: _Layer, found: _Found, ctx: Context) -> tuple[float, list[str]]:
    """The rubric's credits for V and for Q and K of an answer whose outputs miss, and what they are for."""
    coords = ctx.prepared.coords
    partial = ctx.spec.params.get("partial", {})
    attend = _attend(partial)
    earned, lines = 0.0, []
    if "values" in partial and found.values_ok:
        earned += ctx.scaled(partial["values"]["points"])
        shown = " and ".join(f"v{j} = {coords.show(layer.required_values[j])}" for j in sorted(layer.required_values))
        lines.append(f"credit for V: it gives {shown} as needed")
    if "routing" in partial and attend and all(found.routes(i, j) for i, j in attend.items()):
        earned += ctx.scaled(partial["routing"]["points"])
        shown = " and ".join(f"query {i} to x{j}" for i, j in sorted(attend.items()))
        lines.append(f"credit for Q and K: they send {shown} as needed")
    if earned >= ctx.points - 1e-9:
        # Both partial credits, yet an output misses its target (another value leaks into it):
        # the rubric's parts add up to full marks, a wrong answer may not.
        shares = [ctx.scaled(partial[k]["points"]) for k in ("values", "routing") if k in partial]
        earned = ctx.points - min(shares)
    return earned, lines


def _qkv_partial(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    """Credit for what the fields that were read do, when V, K or Q could not be read.

    V alone earns the value credit if it gives the values needed; K and Q together earn
    the routing credit if they send each query where it should go.
    """
    setup: _QKVSetup = ctx.prepared
    coords = setup.coords
    fV, fK, fQ = ctx.spec.fields
    partial = ctx.spec.params.get("partial", {})
    free = frozenset(free_scalars([answers[f].expr for f in answers], coords.table))
    earned, feedback = 0.0, []
    try:
        if fV in answers and "values" in partial and setup.required_values:
            V = coords.exact(answers[fV].expr)
            v = [(V * x).applyfunc(sympy.cancel) for x in setup.inputs]
            alone = _Layer(v, [[sympy.Integer(0)] * len(v)] * len(v), {}, setup.required_values, coords.beta, free)
            right = [_exact_path(alone, rates) for rates in alone.paths]
            if all(all(r.values_ok.values()) for r in right):
                earned += ctx.scaled(partial["values"]["points"])
                shown = " and ".join(f"v{j} = {coords.show(setup.required_values[j])}"
                                     for j in sorted(setup.required_values))
                feedback.append(f"credit for V: it gives {shown} as needed (K and Q were not checked together)")
        attend = _attend(partial)
        if fK in answers and fQ in answers and attend:
            K, Q = coords.exact(answers[fK].expr), coords.exact(answers[fQ].expr)
            k = [(K * x).applyfunc(sympy.cancel) for x in setup.inputs]
            q = [(Q * x).applyfunc(sympy.cancel) for x in setup.inputs]
            scores = [[sympy.cancel((k[j].T * q[i])[0, 0]) for j in range(len(k))] for i in range(len(q))]
            zero = [sympy.zeros(setup.inputs[0].rows, 1)] * len(k)
            alone = _Layer(zero, scores, {}, {}, coords.beta, free)
            runs = [_exact_path(alone, rates) for rates in alone.paths]
            if all(asymptotics.equal(r.weights[i - 1].values[j - 1], 1) for r in runs for i, j in attend.items()):
                earned += ctx.scaled(partial["routing"]["points"])
                shown = " and ".join(f"query {i} to x{j}" for i, j in sorted(attend.items()))
                feedback.append(f"credit for Q and K: they send {shown} as needed (V was not checked with them)")
    except (asymptotics.Undecided, EvaluationError, ValueError, TypeError, ZeroDivisionError) as err:
        feedback.append(f"the fields that were read could not be checked on their own ({err})")
    return Outcome(min(earned, ctx.points), tuple(feedback), {"method": "exact limit, fields read"})


# -- exact limits and samples of one layer -------------------------------------------------------
@dataclass
class _ExactPath:
    """Exact limits along one way of letting β (and the free constant) grow."""

    rates: tuple[int, int]  # (β's rate, C's rate)
    weights: list  # asymptotics.Weights per query
    final: list  # the limiting weights as floats, per query
    outputs_ok: dict  # target index -> c_i tends to its target
    values_ok: dict  # required value index -> v_j tends to it


def _exact_path(layer: _Layer, rates: tuple[int, int]) -> _ExactPath:
    t = asymptotics.growth()
    beta_rate, c_rate = rates
    subs = {layer.beta: t**beta_rate, **{c: t**c_rate for c in layer.free}}
    values = [vec.xreplace(subs) for vec in layer.v]  # symbols for powers of t: xreplace is exact and quick
    weights = [asymptotics.softmax_limit([sc.xreplace(subs) for sc in row], t) for row in layer.scores]
    outputs_ok = {}
    for i, target in layer.targets.items():
        goal = target.xreplace(subs)
        size = sum(x**2 for x in goal)
        row = weights[i - 1]
        for vec in values:
            # How fast each value grows next to the target: polynomially (or the analysis stops
            # here, raising Undecided). Weights that fade like exp(-t^k) outrun any polynomial,
            # but weights that settle slowly only outrun values that stay bounded.
            growth = asymptotics.degree(sum(x**2 for x in vec) / size, t)
            if not row.fast and growth > 0:
                raise asymptotics.Undecided("weights settle slowly next to a large value")
        mix = sum((w * vec for w, vec in zip(row.values, values)), sympy.zeros(goal.rows, 1)) - goal
        outputs_ok[i] = asymptotics.limit(sum(x**2 for x in mix) / size, t) == 0
    values_ok = {}
    for j, want in layer.required_values.items():
        goal = want.xreplace(subs)
        miss = values[j - 1] - goal
        values_ok[j] = asymptotics.limit(sum(x**2 for x in miss) / sum(x**2 for x in goal), t) == 0
    final = [[float(w) for w in row.values] for row in weights]
    return _ExactPath(rates, weights, final, outputs_ok, values_ok)


@dataclass
class _Path:
    """Weights and errors along one way of letting β (and the free constant) grow."""

    weights: list = field(default_factory=list)
    errors: dict = field(default_factory=dict)
    value_errors: dict = field(default_factory=dict)


def _follow(layer: _Layer, rates: tuple[int, int], scales: Sequence[int] = QKV_SCALES) -> _Path:
    """Evaluate the outputs at growing scales s, with β = s^(β's rate) and C = s^(C's rate)."""
    beta_rate, c_rate = rates
    v = layer.v
    path = _Path(errors={i: [] for i in layer.targets}, value_errors={j: [] for j in layer.required_values})
    for s in scales:
        subs = {layer.beta: s**beta_rate, **{c: s**c_rate for c in layer.free}}
        numeric_v = [[_numeric(x, subs) for x in vec] for vec in v]
        weights = []
        for row_scores in layer.scores:
            row = [_numeric(sc, subs) for sc in row_scores]
            top = max(row)
            ex = [mpmath.exp(r - top) for r in row]
            total = sum(ex)
            weights.append([e / total for e in ex])
        path.weights.append([[float(w) for w in row] for row in weights])
        for i, t in layer.targets.items():
            c = [sum(weights[i - 1][j] * numeric_v[j][r] for j in range(len(v))) for r in range(len(t))]
            path.errors[i].append(_rel_error(c, [_numeric(x, subs) for x in t]))
        for j, t in layer.required_values.items():
            path.value_errors[j].append(_rel_error(numeric_v[j - 1], [_numeric(x, subs) for x in t]))
    return path


def _numeric(expr: Any, subs: Mapping[Any, Any]) -> Any:
    """High-precision value (mpmath) of an exact sympy scalar at the given scale.

    At whole-number scales a rational expression is an exact fraction (no evalf needed);
    anything else (exp, log, roots) is evaluated to 40 digits."""
    value = expr.xreplace({k: sympy.Integer(v) for k, v in subs.items()}) if expr.free_symbols else expr
    if value.is_Rational:
        return mpmath.mpf(int(value.p)) / int(value.q)
    return mpmath.mpf(str(sympy.N(value, 40)))


def _rel_error(c: Sequence[Any], t: Sequence[Any]) -> float:
    diff = mpmath.sqrt(sum((a - b) ** 2 for a, b in zip(c, t)))
    norm = mpmath.sqrt(sum(b**2 for b in t))
    if norm == 0:
        return float(diff)
    return float(diff / norm)


# -- what the report and the feedback show -------------------------------------------------------
def _target_weights(p: Mapping[str, Any], n: int) -> list[list[float]] | None:
    attend = ((p.get("partial", {}).get("routing") or {}).get("attend")) or {}
    if not attend:
        return None
    rows = [[0.0] * n for _ in range(n)]
    for i, j in attend.items():
        rows[int(i) - 1][int(j) - 1] = 1.0
    return rows


def _describe_attention(i: int, row: Sequence[float]) -> str:
    top = int(np.argmax(row))
    if row[top] >= SATURATED:
        return f"query {i} attends to x{top + 1}"
    spread = ", ".join(f"x{j + 1} ({w:.2f})" for j, w in enumerate(row) if w > 5e-3)
    return f"query {i} spreads its attention over {spread}"


def _limit_output(row: Sequence[float], v: Sequence[sympy.MatrixBase], coords: _Coordinates) -> str:
    """c_i in the limit, with the weights rounded to simple fractions."""
    total = sympy.zeros(v[0].rows, 1)
    for w, vec in zip(row, v):
        frac = Fraction(w).limit_denominator(12)
        if abs(float(frac) - w) > 5e-3:
            frac = Fraction(round(w, 2)).limit_denominator(100)
        total += sympy.Rational(frac.numerator, frac.denominator) * vec
    return coords.show(total)
