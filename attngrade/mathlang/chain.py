"""Whether two members of a chain of equalities mean the same, under the part's assumptions.

`V = \\frac{1}{\\beta^2}(u_b u_b^T - u_c u_c^T) = \\beta^{-2}u_b u_b^T - \\beta^{-2}u_c u_c^T` is one
answer written twice: the two members are different sympy trees with one value. Scalars are
compared by expansion first; otherwise both members are evaluated at a few random instances
that honour the part's symbols: members of an orthogonal family are orthogonal with their
norm (so `u_b^T u_b = \\beta^2` holds), declared functions are values of their own (an
application is compared as a whole), sizes are fixed small numbers.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Mapping

import numpy as np
import sympy
from sympy.core.function import AppliedUndef

from .evaluate import NUMERIC, EvaluationError, evaluate
from .functions import AppliedFunction
from .symbols import SymbolTable

TRIALS = 3
_SIZE = 5  # of every dimension a part leaves symbolic (a family gets one more than its members)


def _opaque(exprs: list[Any], defined: Mapping[str, Any]) -> tuple[list[Any], list[Any]]:
    """Each function application replaced by a symbol of its own (the same for equal applications),
    except applications of the scalar functions the part defines (`defined`), which are worked out."""
    found: dict[Any, Any] = {}
    for expr in exprs:
        for node in sympy.preorder_traversal(expr):
            if isinstance(node, AppliedFunction) and node not in found:
                found[node] = sympy.MatrixSymbol(f"_f{len(found)}", *node.shape)
            elif isinstance(node, AppliedUndef) and node not in found and node.func.__name__ not in defined:
                found[node] = sympy.Symbol(f"_f{len(found)}", real=True)
    return [e.xreplace(found) for e in exprs], list(found.values())


_DEFINED: "weakref.WeakKeyDictionary[SymbolTable, dict]" = weakref.WeakKeyDictionary()


def _defined(table: SymbolTable, reader: Callable[..., Any] | None) -> dict[str, tuple[Any, list[Any]]]:
    """The part's scalar functions given by a formula (`K_Gauss(a, b) = exp(-|a - b|^2 / (2 sigma^2))`):
    name -> (body, parameters), read once per table with `reader` (the parser)."""
    if reader is None:
        return {}
    if table not in _DEFINED:
        known = {}
        for spec in table.specs.values():
            if spec.kind == "function" and spec.define is not None and spec.result == "scalar":
                params = SymbolTable.from_data(spec.params)
                local = SymbolTable(list(table.without(spec.name).specs.values()) + list(params.specs.values()))
                try:
                    known[spec.name] = (reader(spec.define, local).expr, [params.specs[n].sympy for n in spec.params])
                except Exception:  # noqa: BLE001 - an unreadable definition leaves the function opaque
                    continue
        _DEFINED[table] = known
    return _DEFINED[table]


def _with_functions(env: dict, dims: dict, defined: Mapping[str, tuple[Any, list[Any]]]) -> dict:
    for name, (body, params) in defined.items():
        def value(*args: Any, body: Any = body, params: list = params) -> Any:
            return evaluate(body, {**env, **dict(zip(params, args))}, dims, NUMERIC)

        env[("function", name)] = value
    return env


def _instance(exprs: list[Any], table: SymbolTable, rng: np.random.Generator) -> tuple[dict, dict]:
    symbols = sorted(set().union(*(e.free_symbols for e in exprs)), key=str)
    matrices = [s for s in symbols if isinstance(s, sympy.MatrixSymbol)]
    dims: dict[Any, int] = {d: _SIZE for s in matrices for d in s.shape if not d.is_Integer}
    dims.update({s: _SIZE for s in symbols if isinstance(s, sympy.Symbol) and s.is_integer})
    families: dict[str, list[Any]] = {}
    for s in matrices:
        hit = table.resolve(s.name)
        if hit is not None and hit[0].family:
            families.setdefault(hit[0].family, []).append((s, hit[0]))
    for members in families.values():
        rows = members[0][0].shape[0]
        if not rows.is_Integer:
            dims[rows] = max(dims[rows], len(members) + 1)
    env: dict[Any, Any] = {}
    for s in symbols:
        if isinstance(s, sympy.Symbol):
            env[s] = float(dims[s]) if s in dims else float(rng.uniform(0.6, 2.2))
    size = {d: (int(d) if d.is_Integer else dims[d]) for s in matrices for d in s.shape}
    for s in matrices:
        env[s] = rng.normal(size=(size[s.shape[0]], size[s.shape[1]]))
    for members in families.values():
        basis, _ = np.linalg.qr(rng.normal(size=(size[members[0][0].shape[0]], len(members))))
        for i, (s, spec) in enumerate(members):
            norm = table.specs[spec.norm].sympy if spec.norm in table.specs else None
            env[s] = env.get(norm, 1.0) * basis[:, i:i + 1]
    return env, dims


def same_meaning(a: Any, b: Any, table: SymbolTable, *, rtol: float = 1e-8, seed: int = 0,
                 reader: Callable[..., Any] | None = None) -> bool | None:
    """True when `a` and `b` agree (to `rtol`: a member said to be close, `\\approx`, is compared to a
    few digits), False when they differ somewhere, None when they cannot be worked out. With `reader`
    (the parser), the part's functions given by a formula are worked out rather than left opaque."""
    if a == b:
        return True
    if getattr(a, "shape", None) != getattr(b, "shape", None) or a.is_Matrix != b.is_Matrix:
        return False
    if not a.is_Matrix:
        try:
            if sympy.expand(a - b) == 0:
                return True
        except (TypeError, ValueError):
            pass
    defined = _defined(table, reader)
    (a, b), _ = _opaque([a, b], defined)
    rng = np.random.default_rng(seed)
    for _ in range(TRIALS):
        env, dims = _instance([a, b], table, rng)
        env = _with_functions(env, dims, defined)
        try:
            x = np.asarray(evaluate(a, env, dims, NUMERIC), dtype=float)
            y = np.asarray(evaluate(b, env, dims, NUMERIC), dtype=float)
        except (EvaluationError, ValueError, TypeError, np.linalg.LinAlgError, OverflowError):
            return None
        if x.shape != y.shape or not np.all(np.isfinite(x)) or not np.all(np.isfinite(y)):
            return None if x.shape == y.shape else False
        if not np.allclose(x, y, rtol=rtol, atol=1e-10 * (1 + float(np.max(np.abs(y), initial=0)))):
            return False
    return True
