"""Attention constructions checked by what they do, never by matching a key.

`attention_query`: the student gives one query (or one per head) against known keys;
the weights must tend to the target as the free large constant grows.

`attention_qkv`: the student gives V, K, Q for a self-attention layer over fixed
inputs; the outputs c_i must tend to their targets as β (and any free constant) grow.
The inputs live in the span of an orthogonal family u_a.. of norm β, so every vector
is computed exactly in that family's coordinates (u_x = β e_x) and only the softmax
is evaluated numerically, at growing scales, in high precision (scores can be β⁶).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping, Sequence

import mpmath
import numpy as np
import sympy

from ..errors import ConfigError
from ..mathlang import parse
from ..mathlang.display import combination, reading
from ..mathlang.evaluate import EXACT, NUMERIC, EvaluationError, evaluate
from ..records import CheckSpec, Part
from . import asymptotics
from .base import Context, Outcome

log = logging.getLogger(__name__)

QUERY_SCALES = (1.0, 4.0, 16.0, 64.0, 256.0)  # the fallback when no exact limit is found
QUERY_CHECK_SCALES = (1.0, 256.0)  # the cross-check of an exact verdict, and the report's evidence
QKV_SCALES = (2, 4, 8, 16, 32, 64)  # the fallback when no exact limit is found
QKV_CHECK_SCALES = (16, 64)  # the cross-check of an exact verdict
GROWTH = {(1, 1): "as β and C grow together", (2, 1): "as β grows like C²", (1, 2): "as C grows like β²"}
TOLERANCE = 1e-2  # relative error of the output at the largest scale
SATURATED = 0.99  # a weight this large means "attends to"


def _converges(errors: Sequence[float]) -> bool:
    return all(np.isfinite(errors)) and errors[-1] <= TOLERANCE and errors[-1] <= errors[0] + 1e-12


def _softmax(scores: np.ndarray) -> np.ndarray:
    shifted = scores - np.max(scores)
    w = np.exp(shifted)
    return w / np.sum(w)


def _fraction(w: float) -> str:
    f = Fraction(w).limit_denominator(8)
    if abs(float(f) - w) < 5e-3:
        return str(f)
    return f"{w:.2f}"


# -- one query against known keys ------------------------------------------------------
def _free_scalars(exprs: Sequence[Any], table: Any) -> set[Any]:
    declared = {s.sympy for s in table.specs.values()}
    out = set()
    for e in exprs:
        out |= {s for s in e.free_symbols if isinstance(s, sympy.Symbol) and s not in declared and not s.is_integer}
    return out


def _label(name: str) -> str:
    """The value a key name goes with: k_a and mu_a both go with v_a."""
    return "v_" + name.split("_", 1)[1] if "_" in name else f"v({name})"


def check_query(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    """The limit of the weights as the free constant grows decides; samples are evidence.

    The keys are orthonormal (in 1c.i the keys' variance vanishes first, so they are their
    means), so each score is the query's exact coordinate along its key, an expression
    in the free constant C; `asymptotics.softmax_limit` gives the limiting weights exactly.
    """
    p = ctx.spec.params
    n = int(p["n"])
    table = ctx.part.table
    heads = [answers[f] for f in ctx.spec.fields]
    positions = _key_positions(p["positions"], [h.expr for h in heads], table, n)
    if isinstance(positions, Outcome):
        return positions
    target = np.zeros(n)
    for name, w in p["target"].items():
        target[positions[name]] = float(w)
    free = _free_scalars([h.expr for h in heads], table)
    notes = []
    if any(h.shape and h.shape[0] == 1 for h in heads):
        notes.append("read your row vector as the column vector q")
    try:
        exact, constant, scores = _exact_query_weights(heads, ctx, positions, n, free)
    except (asymptotics.Undecided, EvaluationError, ValueError, TypeError) as err:
        log.info("part %s: exact limit not found (%s); deciding from samples", ctx.part.id, err)
        exact = None
    if exact is None:
        if (swinging := asymptotics.oscillating([h.expr for h in heads], sorted(free, key=str))) is not None:
            return _undecided(swinging, notes)
        sampled = _sampled_query_weights(heads, ctx, positions, n, free, QUERY_SCALES)
        if isinstance(sampled, Outcome):
            return sampled
    else:  # evidence and a cross-check of the limit: the exact scores at two finite scales
        sampled = _weights_at(scores, QUERY_CHECK_SCALES)
    evidence: dict[str, Any] = {"weights": sampled[-1].round(4).tolist(), "target_weights": target.tolist()}
    values = _probe_values(ctx.seed, n)
    errors = [float(np.linalg.norm(values @ (w - target)) / np.linalg.norm(values @ target)) for w in sampled]
    if exact is None:  # a labelled fallback: the samples decide
        limit_weights = sampled[-1]
        right = _converges(errors)
        constant = np.allclose(sampled[0], sampled[-1], atol=1e-9)
        notes.append("decided from the weights at growing values of the constant: attngrade could not work "
                     "out their limit exactly for this answer")
        evidence["method"] = "samples"
    else:
        exact, limit_weights = exact
        # floating point rules out a mismatch cheaply; a match is confirmed exactly
        right = all(abs(a - float(want)) < 1e-9 and asymptotics.equal(w, want)
                    for w, a, want in zip(exact, limit_weights, ctx.prepared))
        evidence["method"] = "exact limit"
        evidence["limit_weights"] = [_show_weight(w, a) for w, a in zip(exact, limit_weights)]
        if _converges(errors) != right:  # the samples are a cross-check, never the verdict
            log.info("part %s: the samples (%s) disagree with the exact limit (%s)", ctx.part.id,
                        "right" if _converges(errors) else "wrong", "right" if right else "wrong")
            evidence["cross_check"] = "the sampled weights disagree with the exact limit; the limit decides"
    if right:
        return Outcome(ctx.points, tuple(notes), evidence)
    return _wrong_query(p, n, positions, target, limit_weights, constant, len(heads), notes, evidence, ctx)


@functools.lru_cache(maxsize=64)
def _probe_values(seed: int, n: int) -> np.ndarray:
    """Three random value vectors per key, fixed per part: a wrong mix of values shows in them."""
    return np.random.default_rng(seed).normal(size=(3, n))


def _show_weight(w: Any, approx: float) -> str:
    """An exact weight as a fraction where it is one, else its value to six digits."""
    if w.is_Integer:
        return str(int(w))
    return f"{w.p}/{w.q}" if w.is_Rational else f"{approx:.6g}"


def _key_positions(declared: Mapping[str, int], exprs: Sequence[Any], table: Any,
                   n: int) -> "dict[str, int] | Outcome":
    """0-based key positions: the problem's own, then any other key the answer names (k_c, k_i).

    A TA reads k_c in an answer about k_a and k_b as one more of the n orthonormal keys;
    each such name takes the next position the problem leaves free.
    """
    positions = {name: int(i) - 1 for name, i in declared.items()}
    spare = [i for i in range(n) if i not in positions.values()]
    named = {spec.name for e in exprs for spec in table.others(e)}
    if len(named) > len(spare):
        return Outcome(0.0, (f"your answer names {len(named)} other keys ({', '.join(sorted(named))}), but there "
                             f"are only n = {n} keys, {len(spare)} of them besides {', '.join(positions)}",),
                       invalid=True)
    positions.update(zip(sorted(named), spare))
    return positions


def _sampled_query_weights(heads: Sequence[Any], ctx: Context, positions: Mapping[str, int], n: int,
                           free: set, scales: Sequence[float]) -> "list[np.ndarray] | Outcome":
    """The heads' average weights at growing values of the constant (evidence for the report)."""
    table = ctx.part.table
    rng = np.random.default_rng(ctx.seed)
    noise = float(ctx.spec.params.get("noise", 0.0))
    keys = np.eye(n) + np.sqrt(noise) * rng.normal(size=(n, n))  # column i is key i
    env = {_key_symbol(table, name): np.eye(n)[:, i : i + 1] for name, i in positions.items()}
    dims = {d: n for spec in table.specs.values() for d in (spec.dims or ()) if isinstance(d, sympy.Symbol)}
    weights_by_scale = []
    for s in scales:
        scaled = {**env, **{c: s for c in free}}
        ws = []
        for head in heads:
            try:
                q = np.asarray(evaluate(head.expr, scaled, dims, NUMERIC), dtype=float).reshape(-1)
            except (EvaluationError, ValueError) as err:
                return Outcome(0.0, (f"your query could not be evaluated: {err}",))
            if not np.all(np.isfinite(q)):
                return Outcome(0.0, ("your query is not finite when the constant grows",))
            ws.append(_softmax(keys.T @ q))
        weights_by_scale.append(np.mean(ws, axis=0))
    return weights_by_scale


@functools.lru_cache(maxsize=256)
def _unit(n: int, i: int) -> sympy.ImmutableMatrix:
    """e_i of length n (0-based), exactly."""
    return sympy.ImmutableMatrix(n, 1, lambda row, _: int(row == i))


def _key_symbol(table: Any, name: str) -> Any:
    spec, _ = table.resolve(name)
    return spec.sympy


def _exact_query_weights(heads: Sequence[Any], ctx: Context, positions: Mapping[str, int], n: int,
                         free: set) -> tuple[tuple[list[Any], np.ndarray], bool, list]:
    """The heads' average limiting weights (exact, and in floating point), whether they do not
    depend on the constant, and each head's exact scores (with the growth symbol)."""
    table = ctx.part.table
    t = asymptotics.growth()
    env = {_key_symbol(table, name): _unit(n, i) for name, i in positions.items()}
    env.update({c: t for c in free})
    dims = {d: n for spec in table.specs.values() for d in (spec.dims or ()) if isinstance(d, sympy.Symbol)}
    total = [sympy.Integer(0)] * n
    approx = np.zeros(n)
    constant = True
    by_head = []
    keys = {symbol: unit for symbol, unit in env.items() if isinstance(symbol, sympy.MatrixSymbol)}
    growth = {c: t for c in free}
    for head in heads:
        scores = _scores(head.expr, keys, growth, n)
        if scores is None:  # not a plain combination of keys: evaluate it as a whole
            q = evaluate(head.expr, env, dims, EXACT)
            scores = list(q) if isinstance(q, sympy.MatrixBase) else [q]
        if len(scores) != n:
            raise asymptotics.Undecided(f"a query of {len(scores)} entries against {n} keys")
        constant &= not any(t in asymptotics.exact(x).free_symbols for x in scores)
        weights = asymptotics.softmax_limit(scores, t)
        total = list(weights.values) if len(heads) == 1 else [a + b for a, b in zip(total, weights.values)]
        approx += weights.approx
        by_head.append((scores, t))
    mean = total if len(heads) == 1 else [w / len(heads) for w in total]
    return (mean, approx / len(heads)), constant, by_head


def _scores(expr: Any, keys: Mapping[Any, sympy.ImmutableMatrix], growth: Mapping[Any, Any],
            n: int) -> list[Any] | None:
    """The scores k_i^T q of a query that is a sum of scalar multiples of keys, read off its
    coefficients (the keys are orthonormal); None for any other form of query."""
    coefficients = _linear_in_keys(expr, keys)
    if coefficients is None:
        return None
    scores = [sympy.Integer(0)] * n
    for key, c in coefficients.items():
        scores[list(keys[key]).index(1)] += c.xreplace(growth)
    return scores


def _linear_in_keys(expr: Any, keys: Mapping[Any, Any]) -> dict | None:
    if expr in keys:
        return {expr: sympy.Integer(1)}
    if isinstance(expr, sympy.MatAdd):
        total: dict = {}
        for term in expr.args:
            part = _linear_in_keys(term, keys)
            if part is None:
                return None
            for key, c in part.items():
                total[key] = total.get(key, 0) + c
        return total
    if isinstance(expr, sympy.MatMul):
        scalars = [a for a in expr.args if not getattr(a, "is_Matrix", False)]
        matrices = [a for a in expr.args if getattr(a, "is_Matrix", False)]
        inner = _linear_in_keys(matrices[0], keys) if len(matrices) == 1 else None
        if inner is None or any(a.free_symbols & set(keys) for a in scalars):
            return None
        factor = sympy.Mul(*scalars)
        return {key: factor * c for key, c in inner.items()}
    return None


def _weights_at(by_head: Sequence[tuple[list, Any]], scales: Sequence[float]) -> list[np.ndarray]:
    """The heads' average weights with the constant at each scale, from the exact scores; a
    scale where a score is undefined (1/log C at C = 1) is doubled until they all are."""
    out = []
    for s in scales:
        for _ in range(16):
            values = [asymptotics.values_at(scores, t, s) for scores, t in by_head]
            if not np.isnan(values).any():
                break
            s *= 2
        out.append(np.mean([_softmax_of(v) for v in values], axis=0))
    return out


def _undecided(swinging: Any, notes: list[str]) -> Outcome:
    """No verdict: the limit is beyond the exact analysis, and samples of an oscillation are no evidence."""
    return Outcome(0.0, (*notes, f"your answer has {reading(swinging)}, which keeps oscillating as the scale "
                                 "grows: attngrade cannot work out the limit of the attention weights, and weights "
                                 "sampled at a few scales would only show where the oscillation happened to be; "
                                 "course staff will grade this part"), {"method": "undecided"}, pending=True)


def _softmax_of(values: Sequence[float]) -> np.ndarray:
    """Softmax where scores may have overflowed to ±inf (e^{C²} at a large C): the infinite top shares."""
    scores = np.array(values, dtype=float)
    if np.isposinf(scores).any():
        top = np.isposinf(scores).astype(float)
        return top / top.sum()
    return _softmax(np.nan_to_num(scores, neginf=-1e308))


def _wrong_query(p: Mapping[str, Any], n: int, positions: Mapping[str, int], target: np.ndarray,
                 final: np.ndarray, constant: bool, heads: int, notes: list[str], evidence: dict,
                 ctx: Context) -> Outcome:
    names = {i: name for name, i in positions.items()}
    on_target = [positions[name] for name in p["target"]]
    described = _describe_weights(final, names)
    others = [w for i, w in enumerate(final) if i not in on_target]
    right_shape = (
        np.allclose(final[on_target], final[on_target][0], atol=1e-6)
        and (not others or min(final[on_target]) > max(others) + 1e-6)
    )
    if constant and right_shape and p.get("unscaled_points"):
        share = float(final[on_target[0]])
        return Outcome(
            ctx.scaled(p["unscaled_points"]),
            (
                f"your q points the right way but stays small: the weights are {described} "
                f"(n = {n}), so every other value still leaks into c",
                f"the weights on {' and '.join(p['target'])} approach "
                f"{_fraction(float(target[on_target[0]]))} only when q is multiplied by a large constant C "
                f"(now {share:.2f})",
            ) + tuple(notes),
            evidence,
        )
    limit = _blend({_label(names[i]): float(final[i]) for i in sorted(names)})
    rest = [float(w) for i, w in enumerate(final) if i not in names]
    if rest and max(rest) > 5e-3:
        spread = (f"{_fraction(rest[0])} of each other value" if np.allclose(rest, rest[0], atol=5e-3)
                  else "the rest spread over the other values")
        limit = spread if limit == "0" else f"{limit} + {spread}"
    want = _blend({_label(name): float(w) for name, w in p["target"].items()})
    head_word = "the heads' average weights" if heads > 1 else "the weights"
    if constant and not right_shape:
        message = f"with your q, {head_word} stay at {described} (nothing in q grows), so c ≈ {limit}, not {want}"
    elif constant:  # the right direction, but nothing in q grows: the weights stay, however close
        exact = ", ".join(f"{names[i]}: {float(final[i]):.6f}" for i in sorted(names))
        message = (f"your {'queries have' if heads > 1 else 'q has'} no large constant, so {head_word} stay at "
                   f"({exact}) and c stays near {limit} without tending to {want}; multiply by a constant "
                   "that can grow, such as C")
    else:
        message = f"with your q, {head_word} tend to {described}, so c → {limit}, not {want}"
    return Outcome(0.0, (message,) + tuple(notes), evidence)


def _blend(weights: Mapping[str, float]) -> str:
    """{"v_a": 0.5, "v_b": 0.5} as "1/2 v_a + 1/2 v_b" (weights under 0.005 left out)."""
    terms = []
    for name, w in weights.items():
        if w <= 5e-3:
            continue
        frac = _fraction(w)
        terms.append(name if frac == "1" else f"{frac} {name}")
    return " + ".join(terms) or "0"


def _describe_weights(w: np.ndarray, names: Mapping[int, str]) -> str:
    named = [f"{names[i]}: {_weight(w[i])}" for i in sorted(names)]
    rest = [w[i] for i in range(len(w)) if i not in names]
    if rest:
        if np.allclose(rest, rest[0], atol=5e-3, rtol=0.05):
            named.append(f"each other key: {_weight(rest[0])}")
        else:
            named.append(f"other keys: up to {_weight(max(rest))}")
    return "(" + ", ".join(named) + ")"


def _weight(w: float) -> str:
    """Two decimals; a weight too small for them but not zero in scientific notation (the 0.00
    that 10(k_a + k_b) leaves on each other key is 4.5e-05: small, yet not gone)."""
    return f"{w:.2g}" if 0 < abs(w) < 5e-3 else f"{w:.2f}"


# -- V, K, Q of a self-attention layer --------------------------------------------------
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


def _numeric(expr: Any, subs: Mapping[Any, Any]) -> Any:
    """High-precision value (mpmath) of an exact sympy scalar at the given scale.

    At whole-number scales a rational expression is an exact fraction (no evalf needed);
    anything else (exp, log, roots) is evaluated to 40 digits."""
    value = expr.xreplace({k: sympy.Integer(v) for k, v in subs.items()}) if expr.free_symbols else expr
    if value.is_Rational:
        return mpmath.mpf(int(value.p)) / int(value.q)
    return mpmath.mpf(str(sympy.N(value, 40)))


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


def prepare_query(p: Mapping[str, Any], part: Part, spec: CheckSpec) -> tuple:
    """The target weights, exactly (0.5 is 1/2), one per key position."""
    n = int(p["n"])
    for name, i in p["positions"].items():
        if name not in part.table.specs:
            raise ConfigError(f"positions: '{name}' is not a symbol of the part")
        if not 1 <= int(i) <= n:
            raise ConfigError(f"positions: {name} = {i} is not between 1 and n = {n}")
    unknown = set(p["target"]) - set(p["positions"])
    if unknown:
        raise ConfigError(f"target names {sorted(unknown)}, which have no position")
    exact = [sympy.Integer(0)] * n
    for name, w in p["target"].items():
        exact[int(p["positions"][name]) - 1] = sympy.Rational(str(w))
    if sum(exact) != 1:
        raise ConfigError(f"the target weights add up to {sum(exact)}, not 1")
    return tuple(exact)


def check_qkv(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    """The exact limits of the outputs decide; samples at growing β are a cross-check.

    q_i, k_j, v_j and the scores are exact expressions in β (and the free constant C).
    Along each growth path (β = t, C = t; β = t², C = t; β = t, C = t²) the limiting
    weights come from `asymptotics.softmax_limit`, and c_i → target_i when the relative
    error of the limiting mix, ‖Σ_j W_ij v_j − target_i‖ / ‖target_i‖, tends to 0 (the
    weights' own convergence is checked against the values' growth). Where the analysis
    cannot follow an answer, the samples decide, and the feedback says so.
    """
    p = ctx.spec.params
    setup: _QKVSetup = ctx.prepared
    coords = setup.coords
    fV, fK, fQ = ctx.spec.fields
    if not all(f in answers for f in (fV, fK, fQ)):
        return _qkv_partial(answers, ctx)
    try:
        V, K, Q = (coords.exact(answers[f].expr) for f in (fV, fK, fQ))
    except (EvaluationError, ValueError, TypeError, ZeroDivisionError) as err:
        return Outcome(0.0, (f"your matrices could not be evaluated: {err}",))
    X = setup.inputs
    v = [(V * x).applyfunc(_tidy) for x in X]
    k = [(K * x).applyfunc(_tidy) for x in X]
    q = [(Q * x).applyfunc(_tidy) for x in X]
    scores = [[_tidy((k[j].T * q[i])[0, 0]) for j in range(len(X))] for i in range(len(X))]
    targets, required_values = setup.targets, setup.required_values
    free = _free_scalars([answers[f].expr for f in (fV, fK, fQ)], coords.table)
    # β and the free constant must each be free to grow: the property has to hold whether
    # C outgrows β or β outgrows C, not only when they happen to be equal.
    paths = [(1, 1), (2, 1), (1, 2)] if free else [(1, 1)]
    notes: list[str] = []
    try:
        exact = [_exact_path(v, scores, targets, required_values, coords.beta, free, rates) for rates in paths]
    except (asymptotics.Undecided, TypeError, ValueError, ZeroDivisionError) as err:
        log.info("part %s: exact limit not found (%s); deciding from samples", ctx.part.id, err)
        exact = None
        growing = [coords.beta, *sorted(free, key=str)]
        if (swinging := asymptotics.oscillating([answers[f].expr for f in (fV, fK, fQ)], growing)) is not None:
            return _undecided(swinging, notes)
    try:
        with mpmath.workdps(40):  # scores can be β⁶: double precision would round the softmax to 0/1
            # With an exact verdict the samples are only a cross-check: one path, two scales.
            sample_paths, scales = (paths, QKV_SCALES) if exact is None else (paths[:1], QKV_CHECK_SCALES)
            runs = [_follow(v, scores, targets, required_values, coords.beta, free, b, c, scales)
                    for b, c in sample_paths]
    except (TypeError, ValueError, ZeroDivisionError, OverflowError) as err:
        if exact is None:
            return Outcome(0.0, (f"your matrices do not give finite attention weights as β grows ({err})",))
        runs = []
    if exact is None:
        notes.append("decided from the outputs at growing β: attngrade could not work out their limit "
                     "exactly for this answer")
        failing = [r for r in runs if not all(_converges(e) for e in r.errors.values())]
        run = failing[0] if failing else runs[0]
        final = run.weights[-1]
        outputs_ok = {i: _converges(run.errors[i]) for i in targets}
        values_ok = all(_converges(r.value_errors[j]) for r in runs for j in required_values)
        routing = lambda i, j: final[i - 1][j - 1] >= SATURATED  # noqa: E731
        method = "samples"
    else:
        failing = [e for e in exact if not all(e.outputs_ok.values())]
        chosen = failing[0] if failing else exact[0]
        if failing and len(failing) < len(exact):  # right along some ways of growing, not this one: say which
            notes.append(f"the limits shown are {GROWTH[paths[exact.index(chosen)]]}; the construction must work "
                         "whichever of β and C grows faster")
        final = chosen.final
        outputs_ok = chosen.outputs_ok
        values_ok = all(all(e.values_ok.values()) for e in exact)
        routing = lambda i, j: all(asymptotics.equal(e.weights[i - 1].values[j - 1], 1) for e in exact)  # noqa: E731
        method = "exact limit"
        sampled_right = bool(runs) and all(_converges(errs) for errs in runs[0].errors.values())
        if runs and sampled_right != all(all(e.outputs_ok.values()) for e in exact):
            log.info("part %s: the samples (%s) disagree with the exact limit (%s)", ctx.part.id,
                        "right" if sampled_right else "wrong", "wrong" if sampled_right else "right")
    evidence: dict[str, Any] = {
        "weights": [[round(w, 4) for w in row] for row in final],
        "target_weights": _target_weights(p, len(X)),
        "method": method,
    }
    if all(outputs_ok.values()):
        return Outcome(ctx.points, tuple(notes), evidence)

    feedback = []
    attend = {int(i): int(j) for i, j in ((p.get("partial", {}).get("routing") or {}).get("attend") or {}).items()}
    for i, t in targets.items():
        if outputs_ok[i]:
            continue
        row = final[i - 1]
        c_limit = _limit_output(row, v, coords)
        where = _describe_attention(i, row)
        expected_j = attend.get(i)
        top = int(np.argmax(row)) + 1
        if expected_j is not None and row[expected_j - 1] >= SATURATED:
            feedback.append(
                f"query {i} attends to x{top} as it should, but with your V, v{top} = {coords.show(v[top - 1])}, "
                f"so c{i} ≈ {c_limit}, not {coords.show(t)}"
            )
        else:
            feedback.append(
                f"with your Q and K, q{i} = {coords.show(q[i - 1])}, so {where} and c{i} ≈ {c_limit}, "
                f"not {coords.show(t)}"
            )
    earned = 0.0
    partial = p.get("partial", {})
    if "values" in partial and values_ok:
        earned += ctx.scaled(partial["values"]["points"])
        shown = " and ".join(f"v{j} = {coords.show(required_values[j])}" for j in sorted(required_values))
        feedback.append(f"credit for V: it gives {shown} as needed")
    if "routing" in partial and attend and all(routing(i, j) for i, j in attend.items()):
        earned += ctx.scaled(partial["routing"]["points"])
        shown = " and ".join(f"query {i} to x{j}" for i, j in sorted(attend.items()))
        feedback.append(f"credit for Q and K: they send {shown} as needed")
    if earned >= ctx.points - 1e-9:
        # Both partial credits, yet an output misses its target (another value leaks into it):
        # the rubric's parts add up to full marks, a wrong answer may not.
        shares = [ctx.scaled(partial[k]["points"]) for k in ("values", "routing") if k in partial]
        earned = ctx.points - min(shares)
    return Outcome(min(earned, ctx.points), tuple(feedback) + tuple(notes), evidence)


def _qkv_partial(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    """Credit for what the fields that were read do, when V, K or Q could not be read.

    V alone earns the value credit if it gives the values needed; K and Q together earn
    the routing credit if they send each query where it should go.
    """
    p = ctx.spec.params
    setup: _QKVSetup = ctx.prepared
    coords = setup.coords
    fV, fK, fQ = ctx.spec.fields
    partial = p.get("partial", {})
    free = _free_scalars([answers[f].expr for f in answers], coords.table)
    paths = [(1, 1), (2, 1), (1, 2)] if free else [(1, 1)]
    earned, feedback = 0.0, []
    try:
        if fV in answers and "values" in partial and setup.required_values:
            V = coords.exact(answers[fV].expr)
            v = [(V * x).applyfunc(sympy.cancel) for x in setup.inputs]
            right = [_exact_path(v, [[sympy.Integer(0)] * len(v)] * len(v), {}, setup.required_values, coords.beta,
                                 free, rates)
                     for rates in paths]
            if all(all(r.values_ok.values()) for r in right):
                earned += ctx.scaled(partial["values"]["points"])
                shown = " and ".join(f"v{j} = {coords.show(setup.required_values[j])}"
                                     for j in sorted(setup.required_values))
                feedback.append(f"credit for V: it gives {shown} as needed (K and Q were not checked together)")
        attend = {int(i): int(j) for i, j in ((partial.get("routing") or {}).get("attend") or {}).items()}
        if fK in answers and fQ in answers and attend:
            K, Q = coords.exact(answers[fK].expr), coords.exact(answers[fQ].expr)
            k = [(K * x).applyfunc(sympy.cancel) for x in setup.inputs]
            q = [(Q * x).applyfunc(sympy.cancel) for x in setup.inputs]
            scores = [[sympy.cancel((k[j].T * q[i])[0, 0]) for j in range(len(k))] for i in range(len(q))]
            zero = [sympy.zeros(setup.inputs[0].rows, 1)] * len(k)
            runs = [_exact_path(zero, scores, {}, {}, coords.beta, free, rates) for rates in paths]
            if all(asymptotics.equal(r.weights[i - 1].values[j - 1], 1) for r in runs for i, j in attend.items()):
                earned += ctx.scaled(partial["routing"]["points"])
                shown = " and ".join(f"query {i} to x{j}" for i, j in sorted(attend.items()))
                feedback.append(f"credit for Q and K: they send {shown} as needed (V was not checked with them)")
    except (asymptotics.Undecided, EvaluationError, ValueError, TypeError, ZeroDivisionError) as err:
        feedback.append(f"the fields that were read could not be checked on their own ({err})")
    return Outcome(min(earned, ctx.points), tuple(feedback), {"method": "exact limit, fields read"})


@dataclass
class _ExactPath:
    """Exact limits along one way of letting β (and the free constant) grow."""

    weights: list  # asymptotics.Weights per query
    final: list  # the limiting weights as floats, per query
    outputs_ok: dict  # target index -> c_i tends to its target
    values_ok: dict  # required value index -> v_j tends to it


def _exact_path(v: Sequence[Any], scores: Sequence[Sequence[Any]], targets: Mapping[int, Any],
                required_values: Mapping[int, Any], beta: Any, free: set, rates: tuple[int, int]) -> _ExactPath:
    t = asymptotics.growth()
    beta_rate, c_rate = rates
    subs = {beta: t**beta_rate, **{c: t**c_rate for c in free}}
    values = [vec.xreplace(subs) for vec in v]  # symbols for powers of t: xreplace is exact and quick
    weights = [asymptotics.softmax_limit([sc.xreplace(subs) for sc in row], t) for row in scores]
    outputs_ok = {}
    for i, target in targets.items():
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
    for j, want in required_values.items():
        goal = want.xreplace(subs)
        miss = values[j - 1] - goal
        values_ok[j] = asymptotics.limit(sum(x**2 for x in miss) / sum(x**2 for x in goal), t) == 0
    final = [[float(w) for w in row.values] for row in weights]
    return _ExactPath(weights, final, outputs_ok, values_ok)


@dataclass
class _Path:
    """Weights and errors along one way of letting β (and the free constant) grow."""

    weights: list = field(default_factory=list)
    errors: dict = field(default_factory=dict)
    value_errors: dict = field(default_factory=dict)


def _follow(v: Sequence[Any], scores: Sequence[Sequence[Any]], targets: Mapping[int, Any],
            required_values: Mapping[int, Any], beta: Any, free: set, beta_rate: int, c_rate: int,
            scales: Sequence[int] = QKV_SCALES) -> _Path:
    """Evaluate the outputs at growing scales, with β = s^beta_rate and C = s^c_rate."""
    path = _Path(errors={i: [] for i in targets}, value_errors={j: [] for j in required_values})
    for s in scales:
        subs = {beta: s**beta_rate, **{c: s**c_rate for c in free}}
        numeric_v = [[_numeric(x, subs) for x in vec] for vec in v]
        weights = []
        for row_scores in scores:
            row = [_numeric(sc, subs) for sc in row_scores]
            top = max(row)
            ex = [mpmath.exp(r - top) for r in row]
            total = sum(ex)
            weights.append([e / total for e in ex])
        path.weights.append([[float(w) for w in row] for row in weights])
        for i, t in targets.items():
            c = [sum(weights[i - 1][j] * numeric_v[j][r] for j in range(len(v))) for r in range(len(t))]
            path.errors[i].append(_rel_error(c, [_numeric(x, subs) for x in t]))
        for j, t in required_values.items():
            path.value_errors[j].append(_rel_error(numeric_v[j - 1], [_numeric(x, subs) for x in t]))
    return path


def _rel_error(c: Sequence[Any], t: Sequence[Any]) -> float:
    diff = mpmath.sqrt(sum((a - b) ** 2 for a, b in zip(c, t)))
    norm = mpmath.sqrt(sum(b**2 for b in t))
    if norm == 0:
        return float(diff)
    return float(diff / norm)


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
