"""`equivalent`: the answer equals the key as a formula, whatever the notation.

Two steps, cheapest first: sympy's expansion of the difference (exact); otherwise
evaluation at random instances that honour the part's assumptions. A difference decides
"not equivalent", and the instance where the two sides differ is kept as evidence, so
the report can show it the way pytest's `approx` shows a mismatch. Agreement at every
instance is equivalence ("numeric" in the evidence) once the last instance, worked out
exactly, agrees to 50 digits too: floating point alone would pass 1/sqrt(d) + 10^-9.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import sympy

from ..mathlang.evaluate import EXACT, NUMERIC, EvaluationError, evaluate
from ..mathlang.functions import AppliedFunction
from ..mathlang.nodes import Value
from ..runtime.deadline import time_limit
from .base import Context, Outcome
from .instances import random_instance
from .messages import Finding

TRIALS = 6
EXACT_DIGITS = 50  # the exact confirmation of a numeric agreement compares this many digits
EXACT_SECONDS = 0.5
SHOWN_ENTRIES = 6  # of a vector or matrix, in the mismatch evidence


@dataclass
class Comparison:
    """Whether two readings are one formula, how that was decided, and what to show."""

    same: bool
    method: str  # "expansion" (exact), "numeric" (every random instance agrees), "shape", "evaluation"
    notes: list[str] = field(default_factory=list)
    mismatch: dict[str, Any] | None = None  # the instance where the sides differ, and both values there


def compare(answer: Value, key: Value, ctx: Context) -> Comparison:
    notes: list[str] = []
    a, b = answer.expr, key.expr
    if answer.kind == "matrix" and key.kind == "matrix" and answer.shape != key.shape:
        if (answer.shape[1], answer.shape[0]) == key.shape and 1 in answer.shape:
            a = a.T
            wrote, read = ("row", "column") if answer.shape[0] == 1 else ("column", "row")
            notes.append(f"read as a {read} vector (you wrote a {wrote} vector)")
        else:
            return Comparison(False, "shape", [f"your answer is {answer.shape_text()}, "
                                               f"the expected one is {key.shape_text()}"])
    if answer.kind != key.kind:
        return Comparison(False, "shape", [f"your answer is a {answer.kind}, the expected one is a {key.kind}"])
    try:
        if sympy.expand(a - b) == 0:
            return Comparison(True, "expansion", notes)
    except (TypeError, ValueError, sympy.ShapeError):
        pass
    rng = np.random.default_rng(ctx.seed)
    for _ in range(TRIALS):
        env, dims = random_instance(ctx.table, [a, b], rng)
        try:
            x = np.asarray(evaluate(a, env, dims, NUMERIC), dtype=float)
            y = np.asarray(evaluate(b, env, dims, NUMERIC), dtype=float)
        except (EvaluationError, ValueError, np.linalg.LinAlgError, OverflowError):
            return Comparison(False, "evaluation", notes + ["your answer could not be evaluated at test values"])
        if x.shape != y.shape or not np.allclose(x, y, rtol=1e-7, atol=1e-9 * (1 + float(np.max(np.abs(y), initial=0)))):
            return Comparison(False, "numeric", notes, _mismatch(env, x, y))
    # Written with decimals, the answer is a float, and floats judged it (the task is the answer's
    # alone: `decimals` is part of its key).
    if not answer.decimals and _differs_exactly(a, b, env, dims, ctx.table):  # 7 digits are not equality: 1/sqrt(d) + 1e-9
        return Comparison(False, "exact", notes + ["it agrees with the expected answer to many digits, but worked "
                                                   "out exactly the two differ"], _mismatch(env, x, y))
    return Comparison(True, "numeric", notes)


def _differs_exactly(a: Any, b: Any, env: Mapping[Any, Any], dims: Mapping[Any, int], table: Any) -> bool:
    """Whether the two sides differ at the last instance, worked out exactly (its floats are exact
    binary fractions) and compared to EXACT_DIGITS digits. Not asked (by the caller) of an answer
    written with decimals (0.7071 for 1/sqrt(2): what was written is a float, and floating point
    judged it), nor of declared functions (evaluated numerically only), nor where the instance
    honours a constraint only to floating point (an orthonormal family: u_a^T u_a is 1 to 16
    digits, so u_a u_a^T u_a is not exactly u_a there); an evaluation that fails or runs out of
    time leaves the numeric verdict."""
    if any(callable(v) for v in env.values()):
        return False
    if any(spec.family for spec in table.specs.values()):
        return False
    exact_env = {k: _exact(v) for k, v in env.items()}
    try:
        with time_limit(EXACT_SECONDS):
            yours, expected = (_values(evaluate(side, exact_env, dims, EXACT)) for side in (a, b))
            if len(yours) != len(expected):
                return False  # the shapes were compared already: nothing exact to add
            size = max((abs(sympy.N(x - y, EXACT_DIGITS)) for x, y in zip(yours, expected)), default=0)
            scale = max((abs(sympy.N(y, EXACT_DIGITS)) for y in expected), default=0)
            return bool(size > sympy.Float(10, EXACT_DIGITS) ** (12 - EXACT_DIGITS) * (1 + scale))
    except Exception:  # noqa: BLE001 - sympy fails in many ways on what it cannot work out: no verdict from it
        return False


def _values(x: Any) -> list[Any]:
    return list(x) if isinstance(x, sympy.MatrixBase) else [x]


def _exact(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return sympy.ImmutableMatrix(value.shape[0], value.shape[1], [sympy.Rational(float(v)) for v in value.ravel()])
    if isinstance(value, (float, np.floating)):
        return sympy.Rational(float(value))
    return value


def same_value(answer: Value, key: Value, ctx: Context) -> tuple[bool, list[str]]:
    """Whether two readings are the same formula, and notes on lenient readings."""
    result = compare(answer, key, ctx)
    return result.same, result.notes


def _mismatch(env: Mapping[Any, Any], yours: np.ndarray, expected: np.ndarray) -> dict[str, Any]:
    """The scalar values of the instance and both sides there (vectors clipped), as plain data."""
    at = {str(s): round(float(v), 6) for s, v in env.items()
          if isinstance(v, (int, float, np.floating)) and not isinstance(v, bool)}
    return {"at": dict(sorted(at.items())), "yours": _entries(yours), "expected": _entries(expected)}


def _entries(x: np.ndarray) -> list[float]:
    return [round(float(v), 6) for v in np.ravel(x)[:SHOWN_ENTRIES]]


def _applications(expr: Any, function: str) -> list[tuple[Any, ...]]:
    """The argument tuples of every application of the declared function `function` in `expr`."""
    found = []
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, AppliedFunction) and node.name == function:
            found.append(tuple(node.arguments))
        elif isinstance(node, sympy.Function) and type(node).__name__ == function:
            found.append(tuple(node.args))
    return found


def _on_itself(args: tuple[Any, ...]) -> bool:
    return len(args) > 1 and all(a == args[0] for a in args[1:])


def _constant_on_itself(calls: list[tuple[Any, ...]], function: str, ctx: Context, rng: np.random.Generator) -> bool:
    """Whether the function of a point with itself, K(x, x), is one number at every instance (a Gaussian
    kernel's is 1): such an application is a constant, not a use of the function."""
    seen: list[float] = []
    for _ in range(3):
        env, dims = random_instance(ctx.table, [a for call in calls for a in call], rng)
        f = env.get(("function", function))
        if f is None:
            return False
        try:
            for call in calls:
                x = evaluate(call[0], env, dims, NUMERIC)
                seen.append(float(np.asarray(f(*[x] * len(call)), dtype=float).reshape(-1)[0]))
        except (EvaluationError, ValueError, TypeError, np.linalg.LinAlgError, OverflowError):
            return False
    return bool(np.allclose(seen, seen[0], rtol=1e-9, atol=1e-12))


def depends_on(expr: Any, function: str, ctx: Context) -> bool:
    """Whether the value of `expr` changes when the declared function is swapped for another.

    `must_use` asks for an answer in terms of a function; writing its name in a term that
    cancels is not using it, nor is applying a kernel to a point and itself (K(q, q) is 1
    whatever the kernel's width). Where the function cannot be swapped (no numeric meaning),
    the name decides.
    """
    calls = _applications(expr, function)
    if not calls:
        return False
    rng = np.random.default_rng(ctx.seed + 1)
    diagonal = [c for c in calls if _on_itself(c)]
    constant = bool(diagonal) and _constant_on_itself(diagonal, function, ctx, rng)
    if constant and len(diagonal) == len(calls):
        return False
    for _ in range(3):
        env, dims = random_instance(ctx.table, [expr], rng)
        key = ("function", function)
        if key not in env:
            return True
        original = env[key]

        def other(*args: Any, f: Any = original) -> Any:
            value = np.asarray(f(*args), dtype=float)
            if constant and len(args) > 1 and all(np.array_equal(args[0], a) for a in args[1:]):
                return value  # K(x, x) is a constant: the same for any kernel of this kind
            return 1.37 * value + 0.21

        try:
            base = np.asarray(evaluate(expr, env, dims, NUMERIC), dtype=float)
            swapped = np.asarray(evaluate(expr, {**env, key: other}, dims, NUMERIC), dtype=float)
        except (EvaluationError, ValueError, np.linalg.LinAlgError, OverflowError, TypeError):
            return True  # cannot tell by value: the name stands
        if base.shape != swapped.shape or not np.allclose(base, swapped, rtol=1e-9, atol=1e-12):
            return True
    return False


def check(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    (name,) = ctx.spec.fields
    answer = answers[name]
    result = compare(answer, ctx.key[name], ctx)
    decided: dict[str, Any] = {"field": name, "method": result.method}
    if result.mismatch:
        decided["mismatch"] = result.mismatch
    evidence = {f"equivalent:{name}": decided}  # one entry per field: a part may check several
    required = [f for f in ctx.spec.params.get("must_use", ()) if not depends_on(answer.expr, f, ctx)]
    if result.same and required:
        return Outcome(0.0, (Finding("equal to the expected value, but the question asks for it in terms of "
                                     f"{', '.join(required)}", field=name),) + tuple(result.notes), evidence)
    if result.same:
        return Outcome(ctx.points, tuple(result.notes), evidence)
    feedback: list[Any] = [Finding("not equivalent to the expected answer", field=name), *result.notes]
    if required:  # the likelier reason: the answer is not written in terms of what the question asks for
        feedback.append(f"the question asks for it in terms of {', '.join(required)}, which your answer does not use")
    why = ctx.explain.get(name)
    if why:
        feedback.append(why)
    return Outcome(0.0, tuple(feedback), evidence)
