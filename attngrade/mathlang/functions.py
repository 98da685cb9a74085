"""Functions a part may declare: scalar ones (sympy Functions) and vector/matrix ones.

sympy's `Function` only returns scalars, so a vector-valued feature map such as
φ(q) or a column-wise softargmax is an `AppliedFunction`: a matrix expression with a
declared shape whose meaning is supplied at evaluation time by a built-in
implementation named in the problem file, never by student text.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
import sympy
from sympy.matrices.expressions.matexpr import MatrixExpr


class AppliedFunction(MatrixExpr):
    """`name(arg, ...)` with a declared (rows, cols) result."""

    def __new__(cls, name: str, rows: Any, cols: Any, *args: Any) -> "AppliedFunction":
        rows = sympy.Integer(rows) if isinstance(rows, int) else rows
        cols = sympy.Integer(cols) if isinstance(cols, int) else cols
        name = name if isinstance(name, sympy.Symbol) else sympy.Symbol(str(name))
        return super().__new__(cls, name, rows, cols, *args)

    @property
    def name(self) -> str:
        return self.args[0].name

    @property
    def shape(self) -> tuple[Any, Any]:
        return (self.args[1], self.args[2])

    @property
    def arguments(self) -> tuple[Any, ...]:
        return self.args[3:]

    def _entry(self, i: Any, j: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{self.name}(...) has no symbolic entries")

    def _sympystr(self, printer: Any) -> str:
        return f"{self.name}({', '.join(printer._print(a) for a in self.arguments)})"


def _softargmax_columns(scale: float) -> Callable[[np.ndarray], np.ndarray]:
    def apply(x: np.ndarray) -> np.ndarray:
        z = scale * np.asarray(x, dtype=float)
        z = z - z.max(axis=0, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=0, keepdims=True)

    return apply


def _random_features(rows: int, rng: np.random.Generator, sigma: float) -> Callable[[np.ndarray], np.ndarray]:
    half = rows // 2
    cache: dict[int, np.ndarray] = {}

    def apply(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float).reshape(-1, 1)
        if x.shape[0] not in cache:
            cache[x.shape[0]] = rng.normal(scale=sigma, size=(half, x.shape[0]))
        w = cache[x.shape[0]]
        return np.sqrt(1.0 / half) * np.vstack([np.sin(w @ x), np.cos(w @ x)])

    return apply


def _positive_features(rows: int, rng: np.random.Generator, sigma: float) -> Callable[[np.ndarray], np.ndarray]:
    cache: dict[int, np.ndarray] = {}

    def apply(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float).reshape(-1, 1)
        if x.shape[0] not in cache:
            cache[x.shape[0]] = rng.normal(size=(rows, x.shape[0]))
        return np.exp(cache[x.shape[0]] @ x - float((x.T @ x)[0, 0]) / 2) / np.sqrt(rows)

    return apply


def implementation(impl: str, params: Mapping[str, Any], rows: int | None,
                   rng: np.random.Generator) -> Callable[..., Any]:
    """A numeric implementation for a declared function.

    `params` holds the values of the scalars the implementation needs (already drawn
    for the instance), e.g. {"scale": β} for a softargmax.
    """
    if impl == "softargmax_columns":
        return _softargmax_columns(float(params.get("scale", 1.0)))
    if impl == "random_features":
        return _random_features(rows or 8, rng, float(params.get("sigma", 1.0)))
    if impl == "positive_features":
        return _positive_features(rows or 8, rng, float(params.get("sigma", 1.0)))
    raise KeyError(impl)
