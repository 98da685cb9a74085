"""Evaluate a parsed sympy tree on concrete values, exactly or in floating point.

The checks never call sympy's `lambdify` or `subs` on whole matrix expressions: this
walker knows the handful of node types the grammar can build, so evaluation is as
bounded as parsing, and the same tree can be run on exact coordinates (sympy
matrices in β) or on random float instances (numpy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np
import sympy
from sympy.core.function import AppliedUndef
from sympy.matrices.expressions.matexpr import MatrixElement

from .functions import AppliedFunction


class EvaluationError(ValueError):
    """The tree holds something the environment gives no value for."""


@dataclass(frozen=True)
class Backend:
    """How numbers, matrices and functions are made in one kind of evaluation."""

    name: str
    number: Callable[[Any], Any]
    eye: Callable[[int], Any]
    zeros: Callable[[int, int], Any]
    matrix: Callable[[list[list[Any]]], Any]
    matpow: Callable[[Any, int], Any]
    functions: Mapping[type, Callable[[Any], Any]]
    blocks: Callable[[list[list[Any]]], Any] = np.block  # a block matrix from its evaluated blocks


def _np_matpow(m: np.ndarray, k: int) -> np.ndarray:
    if k < 0:
        return np.linalg.matrix_power(np.linalg.inv(m), -k)
    return np.linalg.matrix_power(m, k)


NUMERIC = Backend(
    name="numeric",
    number=lambda x: float(x),
    eye=lambda n: np.eye(n),
    zeros=lambda r, c: np.zeros((r, c)),
    matrix=lambda rows: np.array(rows, dtype=float),
    matpow=_np_matpow,
    functions={
        sympy.exp: np.exp, sympy.log: np.log, sympy.sin: np.sin, sympy.cos: np.cos,
        sympy.Abs: np.abs,
    },
)

EXACT = Backend(
    name="exact",
    number=lambda x: x,
    eye=lambda n: sympy.ImmutableMatrix.eye(n),
    zeros=lambda r, c: sympy.ImmutableMatrix.zeros(r, c),
    matrix=lambda rows: sympy.ImmutableMatrix(rows),
    matpow=lambda m, k: m**k,
    blocks=lambda rows: sympy.ImmutableMatrix(sympy.Matrix.vstack(*[sympy.Matrix.hstack(*row) for row in rows])),
    functions={
        sympy.exp: sympy.exp, sympy.log: sympy.log, sympy.sin: sympy.sin, sympy.cos: sympy.cos,
        sympy.Abs: sympy.Abs,
    },
)


def _is_matrix(x: Any) -> bool:
    return isinstance(x, (np.ndarray, sympy.MatrixBase))


def _times(a: Any, b: Any) -> Any:
    if _is_matrix(a) and _is_matrix(b):
        return a @ b
    return a * b


def evaluate(expr: Any, env: Mapping[Any, Any], dims: Mapping[Any, int], backend: Backend) -> Any:
    """Value of `expr` with symbols from `env` and dimension symbols from `dims`."""

    def dim(d: Any) -> int:
        if isinstance(d, (int, sympy.Integer)):
            return int(d)
        if d in dims:
            return dims[d]
        raise EvaluationError(f"no size given for dimension {d}")

    def walk(e: Any) -> Any:
        if not isinstance(e, sympy.MatrixBase) and e in env:
            return env[e]
        if isinstance(e, sympy.Symbol) and backend is EXACT:
            return e  # scalars the caller did not fix stay symbolic (β, the free C)
        if isinstance(e, (sympy.Symbol, sympy.MatrixSymbol)):
            raise EvaluationError(f"no value for {e}")
        if isinstance(e, sympy.Identity):
            return backend.eye(dim(e.shape[0]))
        if isinstance(e, sympy.ZeroMatrix):
            return backend.zeros(dim(e.shape[0]), dim(e.shape[1]))
        if isinstance(e, sympy.MatrixBase):
            return backend.matrix([[walk(e[i, j]) for j in range(e.cols)] for i in range(e.rows)])
        if isinstance(e, sympy.BlockMatrix):
            return backend.blocks([[walk(b) for b in row] for row in e.blocks.tolist()])
        if e.is_Number or isinstance(e, sympy.NumberSymbol):
            return backend.number(e)
        if isinstance(e, (sympy.Add, sympy.MatAdd)):
            args = [walk(a) for a in e.args]
            total = args[0]
            for a in args[1:]:
                total = total + a
            return total
        if isinstance(e, (sympy.Mul, sympy.MatMul)):
            out = walk(e.args[0])
            for a in e.args[1:]:
                out = _times(out, walk(a))
            return out
        if isinstance(e, sympy.Transpose):
            return walk(e.arg).T
        if isinstance(e, sympy.MatPow):
            return backend.matpow(walk(e.base), int(e.exp))
        if isinstance(e, sympy.Pow):
            base, exp = walk(e.base), walk(e.exp)
            if backend is NUMERIC:
                return np.power(np.float64(base), exp)
            return base**exp
        if isinstance(e, MatrixElement):
            return walk(e.parent)[int(e.i), int(e.j)]
        if isinstance(e, AppliedFunction):
            func = env.get(("function", e.name))
            if func is None:
                raise EvaluationError(f"no definition for the function {e.name}")
            return func(*[walk(a) for a in e.arguments])
        if isinstance(e, (sympy.Max, sympy.Min)):
            values = [walk(a) for a in e.args]
            if backend is NUMERIC:
                return (np.max if isinstance(e, sympy.Max) else np.min)(np.asarray(values, dtype=float))
            return type(e)(*values)
        if isinstance(e, AppliedUndef):
            func = env.get(("function", e.func.__name__))
            if func is None:
                raise EvaluationError(f"no definition for the function {e.func}")
            return func(*[walk(a) for a in e.args])
        func = backend.functions.get(type(e)) or backend.functions.get(e.func)
        if func is not None:
            return func(walk(e.args[0]))
        raise EvaluationError(f"cannot evaluate {type(e).__name__}")

    with np.errstate(all="ignore"):
        return walk(expr)
