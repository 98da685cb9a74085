"""`attention_query`: a query (or one per head) whose attention weights tend to a target.

The student gives one query (or one per head) against known keys; the weights must tend
to the target as the free large constant grows. The keys are orthonormal, so each score
is the query's exact coordinate along its key, an expression in the free constant C, and
`asymptotics.softmax_limit` gives the limiting weights exactly. Only where that analysis
cannot follow an answer do weights sampled at growing C decide, and the feedback says so.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, Sequence

import numpy as np
import sympy

from ..errors import ConfigError
from ..mathlang.evaluate import EXACT, NUMERIC, EvaluationError, evaluate
from ..records import CheckSpec, Part
from . import asymptotics
from .attention_common import converges, free_scalars, undecided
from .base import Context, Outcome, Param

log = logging.getLogger(__name__)

PARAMS = (Param("n", (int,), required=True), Param("positions", (dict,), required=True),
          Param("target", (dict,), required=True), Param("noise", (float,)), Param("unscaled_points", (float,)))

QUERY_SCALES = (1.0, 4.0, 16.0, 64.0, 256.0)  # the fallback when no exact limit is found
QUERY_CHECK_SCALES = (1.0, 256.0)  # the cross-check of an exact verdict, and the report's evidence


@dataclass(frozen=True)
class _Query:
    """One answer as both the exact limit and the samples read it: the heads, where each key
    sits, and the constants that grow."""

    heads: tuple  # each head's reading
    positions: Mapping[str, int]  # key name -> its 0-based position
    free: frozenset  # the free constants that grow
    ctx: Context

    @property
    def n(self) -> int:
        return int(self.ctx.spec.params["n"])

    @property
    def table(self) -> Any:
        return self.ctx.part.table

    @property
    def target(self) -> np.ndarray:
        target = np.zeros(self.n)
        for name, w in self.ctx.spec.params["target"].items():
            target[self.positions[name]] = float(w)
        return target


@dataclass(frozen=True)
class _Weights:
    """The heads' average weights: at growing scales (the report's evidence, and the verdict when
    no exact limit is found) and in the limit."""

    sampled: list  # np.ndarray per scale
    limit: np.ndarray  # the limiting weights in floating point, or the last sample
    constant: bool  # the weights do not depend on the constant
    exact: list | None = None  # the exact limiting weights; None when the samples decide


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


def check_query(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    """The limit of the weights as the free constant grows decides; samples are evidence.

    The keys are orthonormal (in 1c.i the keys' variance vanishes first, so they are their
    means), so each score is the query's exact coordinate along its key, an expression
    in the free constant C; `asymptotics.softmax_limit` gives the limiting weights exactly.
    """
    query = _query(answers, ctx)
    if isinstance(query, Outcome):
        return query
    notes: list[str] = []
    if any(h.shape and h.shape[0] == 1 for h in query.heads):
        notes.append("read your row vector as the column vector q")
    weights = _weights(query, notes)
    if isinstance(weights, Outcome):
        return weights
    target = query.target
    evidence: dict[str, Any] = {"weights": weights.sampled[-1].round(4).tolist(), "target_weights": target.tolist()}
    probes = _probe_values(ctx.seed, query.n)
    errors = [float(np.linalg.norm(probes @ (w - target)) / np.linalg.norm(probes @ target)) for w in weights.sampled]
    if weights.exact is None:  # a labelled fallback: the samples decide
        right = converges(errors)
        notes.append("decided from the weights at growing values of the constant: attngrade could not work "
                     "out their limit exactly for this answer")
        evidence["method"] = "samples"
    else:
        # floating point rules out a mismatch cheaply; a match is confirmed exactly
        right = all(abs(a - float(want)) < 1e-9 and asymptotics.equal(w, want)
                    for w, a, want in zip(weights.exact, weights.limit, ctx.prepared))
        evidence["method"] = "exact limit"
        evidence["limit_weights"] = [_show_weight(w, a) for w, a in zip(weights.exact, weights.limit)]
        if converges(errors) != right:  # the samples are a cross-check, never the verdict
            log.info("part %s: the samples (%s) disagree with the exact limit (%s)", ctx.part.id,
                     "right" if converges(errors) else "wrong", "right" if right else "wrong")
            evidence["cross_check"] = "the sampled weights disagree with the exact limit; the limit decides"
    if right:
        return Outcome(ctx.points, tuple(notes), evidence)
    return _wrong_query(query, weights, notes, evidence)


def _query(answers: Mapping[str, Any], ctx: Context) -> "_Query | Outcome":
    heads = tuple(answers[f] for f in ctx.spec.fields)
    exprs = [h.expr for h in heads]
    positions = _key_positions(ctx.spec.params["positions"], exprs, ctx.part.table, int(ctx.spec.params["n"]))
    if isinstance(positions, Outcome):
        return positions
    return _Query(heads, positions, frozenset(free_scalars(exprs, ctx.part.table)), ctx)


def _weights(query: _Query, notes: list[str]) -> "_Weights | Outcome":
    """The one path to the weights: their exact limit, with the exact scores at two finite scales
    as evidence; else (the analysis cannot follow the answer) the samples, which then decide."""
    try:
        (exact, approx), constant, scores = _exact_query_weights(query)
    except (asymptotics.Undecided, EvaluationError, ValueError, TypeError) as err:
        log.info("part %s: exact limit not found (%s); deciding from samples", query.ctx.part.id, err)
    else:
        return _Weights(_weights_at(scores, QUERY_CHECK_SCALES), approx, constant, exact)
    exprs = [h.expr for h in query.heads]
    if (swinging := asymptotics.oscillating(exprs, sorted(query.free, key=str))) is not None:
        return undecided(swinging, notes)
    sampled = _sampled_query_weights(query, QUERY_SCALES)
    if isinstance(sampled, Outcome):
        return sampled
    return _Weights(sampled, sampled[-1], bool(np.allclose(sampled[0], sampled[-1], atol=1e-9)))


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


def _dims(query: _Query) -> dict:
    """Every dimension symbol of the part is n: the keys are n orthonormal vectors of length n."""
    return {d: query.n for spec in query.table.specs.values() for d in (spec.dims or ()) if isinstance(d, sympy.Symbol)}


def _sampled_query_weights(query: _Query, scales: Sequence[float]) -> "list[np.ndarray] | Outcome":
    """The heads' average weights at growing values of the constant (evidence for the report)."""
    n, ctx = query.n, query.ctx
    rng = np.random.default_rng(ctx.seed)
    noise = float(ctx.spec.params.get("noise", 0.0))
    keys = np.eye(n) + np.sqrt(noise) * rng.normal(size=(n, n))  # column i is key i
    env = {_key_symbol(query.table, name): np.eye(n)[:, i : i + 1] for name, i in query.positions.items()}
    dims = _dims(query)
    weights_by_scale = []
    for s in scales:
        scaled = {**env, **{c: s for c in query.free}}
        ws = []
        for head in query.heads:
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


def _exact_query_weights(query: _Query) -> tuple[tuple[list[Any], np.ndarray], bool, list]:
    """The heads' average limiting weights (exact, and in floating point), whether they do not
    depend on the constant, and each head's exact scores (with the growth symbol)."""
    n, heads = query.n, query.heads
    t = asymptotics.growth()
    env = {_key_symbol(query.table, name): _unit(n, i) for name, i in query.positions.items()}
    env.update({c: t for c in query.free})
    dims = _dims(query)
    total = [sympy.Integer(0)] * n
    approx = np.zeros(n)
    constant = True
    by_head = []
    keys = {symbol: unit for symbol, unit in env.items() if isinstance(symbol, sympy.MatrixSymbol)}
    growth = {c: t for c in query.free}
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


def _softmax(scores: np.ndarray) -> np.ndarray:
    shifted = scores - np.max(scores)
    w = np.exp(shifted)
    return w / np.sum(w)


def _softmax_of(values: Sequence[float]) -> np.ndarray:
    """Softmax where scores may have overflowed to ±inf (e^{C²} at a large C): the infinite top shares."""
    scores = np.array(values, dtype=float)
    if np.isposinf(scores).any():
        top = np.isposinf(scores).astype(float)
        return top / top.sum()
    return _softmax(np.nan_to_num(scores, neginf=-1e308))


# -- what a wrong query is told -------------------------------------------------------------------
def _wrong_query(query: _Query, weights: _Weights, notes: list[str], evidence: dict) -> Outcome:
    ctx, n, positions, target = query.ctx, query.n, query.positions, query.target
    p, final, constant, heads = ctx.spec.params, weights.limit, weights.constant, len(query.heads)
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


def _label(name: str) -> str:
    """The value a key name goes with: k_a and mu_a both go with v_a."""
    return "v_" + name.split("_", 1)[1] if "_" in name else f"v({name})"


def _fraction(w: float) -> str:
    f = Fraction(w).limit_denominator(8)
    if abs(float(f) - w) < 5e-3:
        return str(f)
    return f"{w:.2f}"


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
