"""`shift_block`: the matrix M that moves a sinusoidal encoding one step forward, p_{t+1} = M p_t.

The property is checked, not a key. The encoding holds d/2 pairs (sin ω_k t, cos ω_k t) with
ω_k = base^{-2k/d}, k = 0 .. d/2 − 1 (the transformer paper's, base 10000), so M is
block-diagonal and its k-th 2×2 block must send (sin ω_k t, cos ω_k t) to
(sin ω_k (t+1), cos ω_k (t+1)) for every t. Two answers are read (`block_diagonal.read`):

* the whole d × d matrix: block-diagonal (diag(...), \\bigoplus, words, or written out with
  dots), with a general k-th block in ω_k, in k and d, or with the frequency spelled out. It is
  tested at random d, k and t; the blocks must run over k = 0 .. d/2 − 1 where the answer names
  their range (M_1 .. M_{d/2} with ω_k as defined is one pair off: left to course staff);
* a single 2×2 block, for one frequency ω (tested at random ω and t) or the general k-th one,
  with nothing said of the rest of M: it earns `single_block` of the points (a fraction, 1 by
  default: a part that asks for the block alone gives it all).

A field of kind `math` (a 2×2 matrix read before the check) is a single block. The block may
depend on the frequency only, never on t. Its transpose is the right block for (cos, sin) pairs,
a real mistake, and is named as such.

Params: `frequency` (the symbol ω, default omega), `time` (t), `order` (sin-cos or cos-sin),
`index` and `dimension` (the symbols k and d, when the part declares them), `base` (10000),
`single_block` (0..1, default 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import sympy

from ..errors import ConfigError
from ..mathlang.evaluate import NUMERIC, EvaluationError, evaluate
from ..records import CheckSpec, Part
from .base import Context, Outcome, Param
from .block_diagonal import Block, Unread, Written, read
from .messages import Finding

TRIALS = 8
TOLERANCE = 1e-8
MAX_DIMENSION = 1024  # d drawn up to this (even)
PARAMS = (Param("frequency", (str,)), Param("order", (str,)), Param("time", (str,)), Param("index", (str,)),
          Param("dimension", (str,)), Param("base", (float,)), Param("single_block", (float,)))


@dataclass(frozen=True)
class Trial:
    """One instance a block is tested at: d, k, t and the frequency ω the block rotates by."""

    d: int
    k: int
    t: float
    omega: float


def _pair(order: str, angle: np.ndarray) -> np.ndarray:
    """The encoding's pair at each angle, in its order: (angle, 2)."""
    sin, cos = np.sin(angle), np.cos(angle)
    return np.stack([sin, cos] if order == "sin-cos" else [cos, sin], axis=-1)


def prepare(params: Mapping[str, Any], part: Part, spec: CheckSpec) -> dict[str, Any]:
    order = params.get("order", "sin-cos")
    if order not in ("sin-cos", "cos-sin"):
        raise ConfigError(f"order must be sin-cos or cos-sin, not {order!r}")
    table = part.table_for(spec.fields[0])
    names = {}
    for param, default, required in (("frequency", "omega", True), ("time", "t", False), ("index", "k", False),
                                     ("dimension", "d", False)):
        name = params.get(param, default)
        if name not in table.specs:
            if required or param in params:
                raise ConfigError(f"{param}: '{name}' is not a symbol of the part")
            name = None
        names[param] = name
    share = float(params.get("single_block", 1.0))
    base = float(params.get("base", 10000.0))
    if not 0 <= share <= 1:
        raise ConfigError("single_block must be a fraction of the points between 0 and 1")
    if base <= 1:
        raise ConfigError("base must be more than 1 (the transformer paper's is 10000)")
    return {"order": order, **names, "single_block": share, "base": base}


def check(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    (name,) = ctx.spec.fields
    value = answers[name]
    p = ctx.prepared or prepare(ctx.spec.params, ctx.part, ctx.spec)
    table = ctx.part.table_for(name)
    try:
        written = read(value, table) if isinstance(value, str) else Written((Block("", value),), False)
    except Unread as err:
        return Outcome(0.0, (Finding(err.message, field=f"{ctx.part.id}, field {name}"),), invalid=True)
    symbols = {role: table.specs[p[role]].sympy for role in ("frequency", "time", "index", "dimension") if p[role]}
    rng = np.random.default_rng(ctx.seed)
    for block in written.blocks:
        problem = _block_problem(block, symbols, p, rng)
        if problem is not None:
            return Outcome(0.0, (Finding(problem, field=name),))
    return _placed(written, symbols, p, ctx.points, name)


def _block_problem(block: Block, symbols: Mapping[str, Any], p: Mapping[str, Any], rng: np.random.Generator) -> str | None:
    """Why a block does not advance its pair by one step, or None when it does at every trial."""
    value = block.value
    if getattr(value, "shape", None) != (2, 2):
        shape = value.shape_text() if hasattr(value, "shape_text") else "not a matrix"
        return f"expected a 2×2 block, got {shape}"
    if "time" in symbols and symbols["time"] in value.expr.free_symbols:
        return "the block may depend on the frequency only, not on t: one matrix must work for every position"
    trials = _trials(block, symbols, p, rng)
    try:
        matrices = np.array(_at_trials(value.expr, trials, symbols), dtype=float)  # (trial, 2, 2)
    except (EvaluationError, ValueError, TypeError, ZeroDivisionError, OverflowError) as err:
        return f"the block could not be evaluated ({err})"
    omega, t = np.array([trial.omega for trial in trials]), np.array([trial.t for trial in trials])
    with np.errstate(all="ignore"):
        now, following = _pair(p["order"], omega * t), _pair(p["order"], omega * (t + 1))  # (trial, 2)
        got = np.einsum("nij,nj->ni", matrices, now)
        errors = np.max(np.abs(got - following), axis=1)
        transposed = np.max(np.abs(np.einsum("nji,nj->ni", matrices, now) - following), axis=1)
    errors = np.where(np.isnan(errors), np.inf, errors)  # NaN is never a pass
    worst = float(np.max(errors))
    if worst < TOLERANCE:
        return None
    if float(np.max(np.where(np.isnan(transposed), np.inf, transposed))) < TOLERANCE:
        first = "sin" if p["order"] == "sin-cos" else "cos"
        return ("this is the transpose of the block that works: it advances pairs written "
                f"({'cos, sin' if first == 'sin' else 'sin, cos'}), but the encoding lists "
                f"({'sin, cos' if first == 'sin' else 'cos, sin'}); with the {first} entry first the "
                "off-diagonal signs swap places")
    at = int(np.argmax(errors))
    trial, got, following = trials[at], got[at], following[at]
    where = f"at ω = {trial.omega:.4g}, t = {trial.t:.3f}"
    if block.index is not None or block.at is not None or _uses_index(block, symbols):
        where = f"for the pair k = {trial.k} of d = {trial.d} (ω_k = {trial.omega:.4g}), t = {trial.t:.3f}"
    return (f"{where} your block sends the encoding's pair at t to ({got[0]:.4f}, {got[1]:.4f}), but the pair "
            f"at t+1 is ({following[0]:.4f}, {following[1]:.4f})")


def _at_trials(expr: Any, trials: list[Trial], symbols: Mapping[str, Any]) -> list[np.ndarray]:
    """The block's 2×2 matrix at each trial. A matrix of four formulas (as blocks are written) is walked
    once, over every trial's numbers together; anything else is evaluated a trial at a time."""
    if isinstance(expr, sympy.MatrixBase) and expr.shape == (2, 2):
        envs = [_env(trial, symbols) for trial in trials]
        columns = {symbol: np.array([env[symbol] for env in envs], dtype=float) for symbol in envs[0]}
        try:
            with np.errstate(all="ignore"):
                entries = [[_over_trials(expr[i, j], columns, len(trials)) for j in range(2)] for i in range(2)]
        except _NotScalar:
            pass
        else:
            return list(np.moveaxis(np.array(entries, dtype=float), -1, 0))
    return [np.asarray(evaluate(expr, _env(trial, symbols), {}, NUMERIC), dtype=float) for trial in trials]


class _NotScalar(Exception):
    """A formula the walk over trials does not read (a matrix, a function of the student's)."""


def _over_trials(e: Any, columns: Mapping[Any, np.ndarray], n: int) -> np.ndarray:
    """A scalar formula at every trial at once, as `evaluate` with the NUMERIC backend has it."""
    if e in columns:
        return columns[e]
    if e.is_Number or isinstance(e, sympy.NumberSymbol):
        return np.full(n, float(e))
    if isinstance(e, (sympy.Add, sympy.Mul)):
        values = [_over_trials(a, columns, n) for a in e.args]
        out = values[0]
        for v in values[1:]:
            out = out + v if isinstance(e, sympy.Add) else out * v
        return out
    if isinstance(e, sympy.Pow):
        return np.power(_over_trials(e.base, columns, n), _over_trials(e.exp, columns, n))
    func = NUMERIC.functions.get(type(e)) or NUMERIC.functions.get(getattr(e, "func", None))
    if func is not None and len(e.args) == 1:
        return func(_over_trials(e.args[0], columns, n))
    raise _NotScalar(type(e).__name__)


def _uses_index(block: Block, symbols: Mapping[str, Any]) -> bool:
    free = block.value.expr.free_symbols
    return any(symbols.get(role) in free for role in ("index", "dimension") if role in symbols)


def _trials(block: Block, symbols: Mapping[str, Any], p: Mapping[str, Any], rng: np.random.Generator) -> list[Trial]:
    """Where a block is tested: pairs k of encodings of size d (the first and last pair among them);
    a block written for one free ω also at frequencies off the encoding's (any ω must work)."""
    trials = []
    for n in range(TRIALS):
        d = 2 * int(rng.integers(1, MAX_DIMENSION // 2 + 1))
        k = 0 if n == 0 else d // 2 - 1 if n == 1 else int(rng.integers(0, d // 2))
        k = {"first": 0, "last": d // 2 - 1}.get(block.at, k)  # a block placed by its position, not its index
        t = float(rng.uniform(-20, 20))
        index = k if block.index is None else _index_at(block.index, k, d, symbols)
        trials.append(Trial(d, k, t, float(p["base"] ** (-2.0 * index / d))))
    if block.index is None and block.at is None and not _uses_index(block, symbols):
        trials += [Trial(0, 0, float(rng.uniform(-20, 20)), float(rng.uniform(0.05, 1.5))) for _ in range(TRIALS)]
    return trials


def _index_at(index: Any, k: int, d: int, symbols: Mapping[str, Any]) -> float:
    env = {symbols[role]: value for role, value in (("index", k), ("dimension", d)) if role in symbols}
    try:
        return float(evaluate(index, env, {}, NUMERIC))
    except (EvaluationError, ValueError, TypeError, ZeroDivisionError, OverflowError):
        return float("nan")


def _env(trial: Trial, symbols: Mapping[str, Any]) -> dict[Any, float]:
    env = {symbols["frequency"]: trial.omega}
    for role, value in (("time", trial.t), ("index", trial.k), ("dimension", trial.d)):
        if role in symbols:
            env[symbols[role]] = value
    return env


def _placed(written: Written, symbols: Mapping[str, Any], p: Mapping[str, Any], points: float, name: str) -> Outcome:
    """Every block is right: the points for M, or the single block's share, or staff for a range one off."""
    if not written.structure:
        share = p["single_block"]
        if share >= 1:
            return Outcome(points, ())
        return Outcome(round(points * share, 6), (Finding(
            "your block is right, but the answer is the whole d×d matrix M: say how the blocks make it up "
            "(block-diagonal, one block per frequency ω_k, k = 0, ..., d/2 − 1)", field=name),))
    if written.first is None:
        return Outcome(points, ())
    sizes = (8, 64, 512)
    spans = [_range_at(written, symbols, d) for d in sizes]
    if all(a == 0 and b == d // 2 - 1 for (a, b), d in zip(spans, sizes)):
        return Outcome(points, ())
    if all(a == 1 and b == d // 2 for (a, b), d in zip(spans, sizes)):
        return Outcome(0.0, (Finding(
            "every block is right, but your blocks run from k = 1 to d/2, while the encoding's pairs use "
            f"ω_0, ..., ω_{{d/2−1}} (ω_k = {p['base']:g}^(−2k/d)); course staff will decide whether this is only "
            "numbering", field=name),), is_pending=True)
    (a, b), d = spans[1], sizes[1]
    return Outcome(0.0, (Finding(
        f"your blocks run from k = {a:g} to k = {b:g} at d = {d}, but M needs one block for each of the "
        f"{d // 2} pairs, k = 0 to {d // 2 - 1}", field=name),))


def _range_at(written: Written, symbols: Mapping[str, Any], d: int) -> tuple[float, float]:
    return _index_at(written.first, 0, d, symbols), _index_at(written.last, 0, d, symbols)
