"""Random instances of a part's symbols that honour their declared assumptions.

Members of an orthogonal family get orthogonal random vectors of the family's norm;
positive scalars get positive values; every dimension symbol gets one size, so the
same instance can evaluate a student's answer and the key side by side.
"""

from __future__ import annotations

import weakref
from typing import Any, Iterable

import numpy as np
import sympy

from ..errors import ConfigError, MathError
from ..mathlang import SymbolTable, parse
from ..mathlang.evaluate import NUMERIC, evaluate
from ..mathlang.functions import implementation

_SIZES = {"d": 6, "n": 7, "m": 5, "t": 4, "k": 5, "r": 8}


def dimension_sizes(table: SymbolTable) -> dict[Any, int]:
    sizes: dict[Any, int] = {}
    for spec in table.specs.values():
        for dim in spec.dims or ():
            if isinstance(dim, sympy.Symbol) and dim not in sizes:
                sizes[dim] = _SIZES.get(dim.name, 5)
    return sizes


def random_instance(table: SymbolTable, exprs: Iterable[Any], rng: np.random.Generator) -> tuple[dict, dict]:
    """(env, dims) for numeric evaluation of `exprs` with the symbols of `table`."""
    dims = dimension_sizes(table)
    env: dict[Any, Any] = {}
    free = set()
    for expr in exprs:
        free |= {s for s in expr.free_symbols if isinstance(s, (sympy.Symbol, sympy.MatrixSymbol))}
    for spec in table.scalars():
        positive = "positive" in spec.assumptions
        env[spec.sympy] = float(rng.uniform(0.6, 2.2)) if positive else float(rng.normal())
    for sym in sorted(free, key=str):  # a fixed order: the same seed gives the same instance
        if isinstance(sym, sympy.Symbol) and sym not in env and not sym.is_integer:
            env[sym] = float(rng.uniform(0.6, 2.2))  # the part's free positive constant
    families: dict[str, list] = {}
    for spec in table.specs.values():
        if spec.kind in ("vector", "matrix") and spec.define is None:
            if spec.family:
                families.setdefault(spec.family, []).append(spec)
            else:
                rows, cols = (dims.get(x, None) or int(x) for x in spec.dims)
                env[spec.sympy] = rng.normal(size=(rows, cols))
    for members in families.values():
        size = dims.get(members[0].dims[0]) or int(members[0].dims[0])
        size = max(size, len(members))
        basis, _ = np.linalg.qr(rng.normal(size=(size, len(members))))
        for i, spec in enumerate(members):
            scale = env[table.specs[spec.norm].sympy] if spec.norm else 1.0
            env[spec.sympy] = scale * basis[:, i : i + 1]
        if size != (dims.get(members[0].dims[0]) or size):
            dims[members[0].dims[0]] = size
    for spec in table.specs.values():
        if spec.kind == "function":
            env[("function", spec.name)] = _function(spec, table, env, dims, rng)
    return env, dims


_DEFINITIONS: "weakref.WeakKeyDictionary[SymbolTable, dict]" = weakref.WeakKeyDictionary()


def check_functions(table: SymbolTable, where: str) -> None:
    """Read every declared function's definition and impl_params now, as the checks will: an
    instructor's typo (`scale: betta`) is refused when the homework loads, not mid-run."""
    for spec in table.specs.values():
        if spec.kind != "function":
            continue
        to_read = [("define", lambda: _definition(spec, table))] if spec.define is not None else []
        to_read += [(f"impl_params {key}", lambda value=value: parse(str(value), table))
                    for key, value in spec.impl_params.items()]
        for what, read in to_read:
            try:
                read()
            except MathError as err:
                raise ConfigError(f"{where}: function {spec.name}: {what} cannot be read ({err})") from None


def _definition(spec: Any, table: SymbolTable) -> tuple[Any, list]:
    """A defined function's body and parameters, parsed once per part's table (not per answer)."""
    known = _DEFINITIONS.setdefault(table, {})
    if spec.name not in known:
        params = SymbolTable.from_data(spec.params)
        local = SymbolTable(list(table.without(spec.name).specs.values()) + list(params.specs.values()))
        known[spec.name] = (parse(spec.define, local).expr, [params.specs[name].sympy for name in spec.params])
    return known[spec.name]


def _function(spec: Any, table: SymbolTable, env: dict, dims: dict, rng: np.random.Generator) -> Any:
    """A numeric callable for a declared function, from its definition or built-in impl."""
    if spec.define is not None:
        body, names = _definition(spec, table)

        def defined(*args: Any) -> Any:
            return evaluate(body, {**env, **dict(zip(names, args))}, dims, NUMERIC)

        return defined
    known = _DEFINITIONS.setdefault(table, {})
    if ("impl", spec.name) not in known:
        known[("impl", spec.name)] = {k: parse(str(v), table).expr for k, v in spec.impl_params.items()}
    values = {k: evaluate(expr, env, dims, NUMERIC) for k, expr in known[("impl", spec.name)].items()}
    rows = None
    if spec.dims is not None:
        rows = dims.get(spec.dims[0]) or int(spec.dims[0])
    return implementation(spec.impl, values, rows, rng)
