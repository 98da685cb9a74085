"""`equivalent`: the answer equals the key as a formula, whatever the notation.

Three steps, cheapest first: sympy's expansion of the difference; evaluation at
random instances that honour the part's assumptions (decides "different", with the
instance as evidence); sympy's simplify on scalars under a time budget (confirms).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import sympy

from ..deadline import BudgetExceeded, time_limit
from ..mathlang.evaluate import NUMERIC, EvaluationError, evaluate
from ..mathlang.nodes import Value
from .base import Context, Outcome
from .instances import random_instance

TRIALS = 6
SIMPLIFY_SECONDS = 1.0


def same_value(answer: Value, key: Value, ctx: Context) -> tuple[bool, list[str]]:
    """Whether two readings are the same formula, and notes on lenient readings."""
    notes: list[str] = []
    a, b = answer.expr, key.expr
    if answer.kind == "matrix" and key.kind == "matrix" and answer.shape != key.shape:
        if (answer.shape[1], answer.shape[0]) == key.shape and 1 in answer.shape:
            a = a.T
            notes.append("read as a column vector (you wrote a row vector)")
        else:
            return False, [f"your answer is {answer.shape_text()}, the expected one is {key.shape_text()}"]
    if answer.kind != key.kind:
        return False, [f"your answer is a {answer.kind}, the expected one is a {key.kind}"]
    try:
        if sympy.expand(a - b) == 0:
            return True, notes
    except (TypeError, ValueError, sympy.ShapeError):
        pass
    rng = np.random.default_rng(ctx.seed)
    for _ in range(TRIALS):
        env, dims = random_instance(ctx.table, [a, b], rng)
        try:
            x = np.asarray(evaluate(a, env, dims, NUMERIC), dtype=float)
            y = np.asarray(evaluate(b, env, dims, NUMERIC), dtype=float)
        except (EvaluationError, ValueError, np.linalg.LinAlgError, OverflowError):
            return False, notes + ["your answer could not be evaluated at test values"]
        if x.shape != y.shape or not np.allclose(x, y, rtol=1e-7, atol=1e-9 * (1 + float(np.max(np.abs(y), initial=0)))):
            return False, notes
    if answer.kind == "scalar":
        try:
            with time_limit(SIMPLIFY_SECONDS):
                sympy.simplify(a - b)
        except BudgetExceeded:
            pass  # numeric agreement at every trial stands on its own
    return True, notes


def _uses(expr: Any, function: str) -> bool:
    """Whether `expr` applies the declared function `function`."""
    from ..mathlang.functions import AppliedFunction

    for node in sympy.preorder_traversal(expr):
        if isinstance(node, AppliedFunction) and node.name == function:
            return True
        if isinstance(node, sympy.Function) and type(node).__name__ == function:
            return True
    return False


def check(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    (name,) = ctx.spec.fields
    answer = answers[name]
    key = ctx.key[name]
    same, notes = same_value(answer, key, ctx)
    required = [f for f in ctx.spec.params.get("must_use", ()) if not _uses(answer.expr, f)]
    if same and required:
        return Outcome(0.0, (f"{name}: equal to the expected value, but the question asks for it in terms of "
                             f"{', '.join(required)}",) + tuple(notes))
    if same:
        return Outcome(ctx.points, tuple(notes))
    why = ctx.explain.get(name)
    feedback = [f"{name}: not equivalent to the expected answer"] + notes
    if why:
        feedback.append(why)
    return Outcome(0.0, tuple(feedback))
