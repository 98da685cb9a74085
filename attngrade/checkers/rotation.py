"""`shift_block`: a 2×2 block that moves a sinusoidal encoding one step forward.

The property is checked, not the key: for every t, block · (sin ωt, cos ωt) must equal
(sin ω(t+1), cos ω(t+1)). It is tested at random ω and t; the block may depend on ω
only. Its transpose is the right block for (cos, sin) pairs, a real mistake, and is
named as such.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..errors import ConfigError
from ..mathlang.evaluate import NUMERIC, EvaluationError, evaluate
from ..records import CheckSpec, Part
from .base import Context, Outcome
from .messages import Finding

TRIALS = 8


def _pair(order: str, angle: float) -> np.ndarray:
    sin, cos = np.sin(angle), np.cos(angle)
    return np.array([sin, cos]) if order == "sin-cos" else np.array([cos, sin])


def prepare(params: Mapping[str, Any], part: Part, spec: CheckSpec) -> None:
    order = params.get("order", "sin-cos")
    if order not in ("sin-cos", "cos-sin"):
        raise ConfigError(f"order must be sin-cos or cos-sin, not {order!r}")
    frequency = params.get("frequency", "omega")
    if frequency not in part.table.specs:
        raise ConfigError(f"frequency: '{frequency}' is not a symbol of the part")


def check(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    (name,) = ctx.spec.fields
    value = answers[name]
    table = ctx.part.table
    omega = table.specs[ctx.spec.params.get("frequency", "omega")].sympy
    order = ctx.spec.params.get("order", "sin-cos")
    t_spec = table.specs.get(ctx.spec.params.get("time", "t"))
    if value.shape != (2, 2):
        return Outcome(0.0, (Finding(f"expected a 2×2 block, got {value.shape_text()}", field=name),))
    if t_spec is not None and t_spec.sympy in value.expr.free_symbols:
        return Outcome(0.0, (Finding("the block may depend on the frequency only, not on t: "
                                     "one matrix must work for every position", field=name),))
    rng = np.random.default_rng(ctx.seed)
    worst, worst_transposed, example = 0.0, 0.0, None
    for _ in range(TRIALS):
        w, t = float(rng.uniform(0.05, 1.5)), float(rng.uniform(-20, 20))
        env = {omega: w}
        if t_spec is not None:
            env[t_spec.sympy] = t
        try:
            block = np.asarray(evaluate(value.expr, env, {}, NUMERIC), dtype=float)
        except (EvaluationError, ValueError, TypeError) as err:
            return Outcome(0.0, (Finding(f"the block could not be evaluated ({err})", field=name),))
        now, following = _pair(order, w * t), _pair(order, w * (t + 1))
        got = block @ now
        error = float(np.max(np.abs(got - following)))
        worst_transposed = max(worst_transposed, float(np.max(np.abs(block.T @ now - following))))
        if error > worst:
            worst, example = error, (w, t, got, following)
    if worst < 1e-8:
        return Outcome(ctx.points, ())
    first = "sin" if order == "sin-cos" else "cos"
    if worst_transposed < 1e-8:
        return Outcome(0.0, (Finding(
            "this is the transpose of the block that works: it advances pairs written "
            f"({'cos, sin' if first == 'sin' else 'sin, cos'}), but the encoding lists "
            f"({'sin, cos' if first == 'sin' else 'cos, sin'}); with the {first} entry first the "
            "off-diagonal signs swap places", field=name),
        ))
    w, t, got, following = example
    return Outcome(0.0, (Finding(
        f"at ω = {w:.3f}, t = {t:.3f} your block sends the encoding at t to "
        f"({got[0]:.4f}, {got[1]:.4f}), but the encoding at t+1 is ({following[0]:.4f}, {following[1]:.4f})",
        field=name),
    ))
