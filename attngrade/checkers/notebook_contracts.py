"""What a notebook's definitions must do: each contract's properties, the calls that probe them
and the judges that decide them.

The grader draws every input (numpy, from the part's seed), the sandbox child calls the
student's function on it and sends the outputs back, and the judges below decide each property
with numpy from the inputs and those outputs alone: the property is the key, so a student's
self-check decides them as the course's run does. A tolerance is fixed by the inputs, never by
what the student's code returned.

Contracts (EECS182 Fa22 HW8's notebook; a definition may use any name):

* `attention(Q, K, V, mask=None) -> (output, weights)`: `rows` (each query's weights sum to 1
  over the keys), `masked` (masked keys get zero weight), `output` (output = weights @ V), `scale`
  (the scores are QKᵀ/√d: read from the weights whichever axis they were normalised over);
* `causal_mask(n)`: boolean (n, n), True where j ≤ i (leading axes of size 1 are fine);
* `padding_mask(tokens, pad_id)`: boolean, broadcastable to (batch, n_q, n_k) (or with a head
  axis), True where the key is not padding;
* `sinusoidal_encoding(n, d)`: `values` (the transformer paper's sin/cos encodings, interleaved,
  positions from 0; a leading batch axis of size 1 is fine) and `shift` (one fixed d × d matrix
  maps every row t to row t+1);
* `random_features(x, W)`: φ(x) = √(1/D_r) [sin(x Wᵀ/σ), cos(x Wᵀ/σ)] for W of shape (D_r, D)
  drawn from N(0, 1) and σ² = √D: `norm` (φ(x)·φ(x) = 1) and `kernel` (φ(q)·φ(k) approaches
  exp(−‖q − k‖²/(2σ²)) as D_r grows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from ..runtime.text import quoted_from_code
from .messages import raised
from .torch_module import Property, array

Calls = list[dict[str, Any]]
Judge = Callable[[str, Mapping[str, Any], Mapping[str, Any], Mapping[str, float]], list[Property]]


@dataclass(frozen=True)
class Contract:
    """A kind of definition: its stub, its properties, its probes and its judge."""

    name: str
    signature: str  # the stub's parameters, e.g. "(Q, K, V, mask=None)"
    summary: str  # the stub's docstring: what it returns
    properties: tuple[str, ...]
    probes: Callable[[str, np.random.Generator], tuple[Calls, dict[str, Any]]]
    judge: Judge


def tensor(values: np.ndarray, dtype: str = "float32") -> dict[str, Any]:
    return {"tensor": np.asarray(values).tolist(), "dtype": dtype}


def output(data: Mapping[str, Any], call: str, index: int = 0) -> tuple[np.ndarray | None, str | None]:
    """Output `index` of a call as an array, or None and why not."""
    got = data.get(call)
    if not isinstance(got, Mapping):
        return None, "it was not called (the notebook's code did not load)"
    if "error" in got:
        return None, f"calling it, {raised(got['error'])}"
    outputs = got.get("outputs") or []
    if index >= len(outputs):
        return None, f"it returned {got.get('count', len(outputs))} value(s), not {index + 1} or more"
    info = outputs[index]
    value = array(info)
    if value is None:
        return None, f"its output {index + 1} is {_what(info)}, not a tensor"
    return value, None


def _what(info: Any) -> str:
    if isinstance(info, Mapping) and "type" in info:
        return f"of a type your code named {quoted_from_code(info['type'], 100)}"
    if isinstance(info, Mapping) and info.get("shape") is not None and info.get("values") is None:
        return f"a tensor of shape {quoted_from_code(info['shape'], 100)}, too large to send back"
    return "not readable"


def leading_ones_dropped(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`a` of shape (1, ..., 1, *shape) as `shape` (a mask or an encoding with a batch or head axis
    of 1, made to broadcast); `a` itself otherwise."""
    extra = a.ndim - len(shape)
    if extra > 0 and a.shape[extra:] == shape and all(n == 1 for n in a.shape[:extra]):
        return a.reshape(shape)
    return a


def dtype_of(data: Mapping[str, Any], call: str, index: int = 0) -> str:
    """The dtype an output was sent back with (its name as the child wrote it: quote it to show it)."""
    outputs = (data.get(call) or {}).get("outputs") or []
    return str(outputs[index].get("dtype")) if index < len(outputs) and isinstance(outputs[index], Mapping) else ""


def fails(name: str, message: str, weight: float) -> Property:
    return Property(name, False, f"{name}: {message}", weight)


def holds(name: str, message: str, weight: float) -> Property:
    return Property(name, True, f"{name}: {message}", weight)


def finite(a: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(a)))


# -- attention ---------------------------------------------------------------------------------
BATCH, QUERIES, KEYS, WIDTH, VALUE_WIDTH = 2, 5, 6, 16, 4


def attention_probes(name: str, rng: np.random.Generator) -> tuple[Calls, dict[str, Any]]:
    q = rng.normal(size=(BATCH, QUERIES, WIDTH)).astype(np.float32)
    k = rng.normal(size=(BATCH, KEYS, WIDTH)).astype(np.float32)
    v = rng.normal(size=(BATCH, KEYS, VALUE_WIDTH)).astype(np.float32)
    mask = mixed_mask(rng, (BATCH, QUERIES, KEYS))
    args = [tensor(q), tensor(k), tensor(v)]
    calls = [{"id": f"{name}.plain", "function": name, "args": [*args, {"value": None}]},
             {"id": f"{name}.masked", "function": name, "args": [*args, tensor(mask, "bool")]}]
    return calls, {"Q": q.astype(float), "K": k.astype(float), "V": v.astype(float), "mask": mask}


def mixed_mask(rng: np.random.Generator, shape: tuple[int, int, int]) -> np.ndarray:
    """A random mask with a key allowed and a key masked in every row and every column: no query is
    left without a key (a softmax of all −∞ is NaN), whichever axis a softmax runs over."""
    mask = rng.random(shape) < 0.5
    for b in range(shape[0]):
        for i in range(shape[1]):
            mask[b, i, i % shape[2]], mask[b, i, (i + 1) % shape[2]] = True, False
        for j in range(shape[2]):
            if mask[b, :, j].all():
                mask[b, (j + 2) % shape[1], j] = False
            if not mask[b, :, j].any():
                mask[b, (j + 3) % shape[1], j] = True
    return mask


def attention_judge(name: str, data: Mapping[str, Any], inputs: Mapping[str, Any],
                    weights: Mapping[str, float]) -> list[Property]:
    judges = {"rows": _rows, "masked": _masked, "output": _output, "scale": _scale}
    return [judges[p](f"{name}.{p}", name, data, inputs, weights[f"{name}.{p}"]) for p in judges]


def _weights(name: str, data: Mapping[str, Any], call: str) -> tuple[np.ndarray | None, str | None]:
    w, why = output(data, f"{name}.{call}", 1)
    if w is None:
        return None, why + " (it must return (output, weights))" if why and "returned" in why else why
    if w.shape != (BATCH, QUERIES, KEYS):
        return None, f"its weights have shape {list(w.shape)}, not (batch, n_q, n_k) = {[BATCH, QUERIES, KEYS]}"
    return w, None


def _rows(prop: str, name: str, data: Mapping[str, Any], inputs: Mapping[str, Any], weight: float) -> Property:
    w, why = _weights(name, data, "plain")
    if w is None:
        return fails(prop, why, weight)
    sums = w.sum(axis=-1)
    if finite(w) and float(np.max(np.abs(sums - 1.0))) <= 1e-4:
        return holds(prop, "the weights of each query sum to 1 over the keys", weight)
    if finite(w) and float(np.max(np.abs(w.sum(axis=-2) - 1.0))) <= 1e-4:
        return fails(prop, "the weights sum to 1 over the queries (a softmax over the query axis); each query's "
                           "weights must sum to 1 over the keys (softmax over the last axis)", weight)
    if not finite(w):
        return fails(prop, "some weights are NaN or infinite", weight)
    return fails(prop, f"a query's weights sum to {float(sums.min()):.4g} .. {float(sums.max()):.4g} over the "
                       "keys, not 1", weight)


def _masked(prop: str, name: str, data: Mapping[str, Any], inputs: Mapping[str, Any], weight: float) -> Property:
    w, why = _weights(name, data, "masked")
    if w is None:
        return fails(prop, why, weight)
    mask = inputs["mask"]
    if not finite(w):
        return fails(prop, "with a mask, some weights are NaN or infinite (a masked key filled with +inf, or "
                           "every key of a row masked?)", weight)
    leak = float(np.max(np.abs(w[~mask]), initial=0.0))
    if leak <= 1e-6:
        return _renormalised(prop, name, data, w, mask, weight)
    on_masked = float(np.mean(np.abs(w) * ~mask)) > float(np.mean(np.abs(w) * mask))
    hint = (": the weight sits on the masked keys, so the mask is inverted or added with the wrong sign (True "
            "marks a key the query may attend to; masked scores go to −∞ before the softmax)") if on_masked else ""
    return fails(prop, f"masked keys get weight up to {leak:.3g}{hint}", weight)


def _renormalised(prop: str, name: str, data: Mapping[str, Any], w: np.ndarray, mask: np.ndarray,
                  weight: float) -> Property:
    """Masked keys at zero, and the rest the softmax over the allowed keys: the unmasked call's weights
    renormalised over them (a mask that zeroes weights after the softmax leaves rows that do not sum
    to 1). Judged only where the unmasked weights sum to 1 over the keys, so that a softmax over the
    wrong axis costs `rows` alone."""
    plain, _ = _weights(name, data, "plain")
    if plain is None or not finite(plain) or float(np.max(np.abs(plain.sum(axis=-1) - 1.0))) > 1e-4:
        return holds(prop, "masked keys get zero weight", weight)
    sums = w.sum(axis=-1)
    if float(np.max(np.abs(sums - 1.0))) > 1e-4:
        return fails(prop, f"masked keys get zero weight, but a query's weights then sum to {float(sums.min()):.4g} "
                           f".. {float(sums.max()):.4g} over the keys, not 1: the mask was applied after the softmax "
                           "(fill masked scores with −∞ before it)", weight)
    kept = plain * mask
    want = kept / kept.sum(axis=-1, keepdims=True)
    gap = float(np.max(np.abs(w - want)))
    if gap > 1e-4:
        return fails(prop, f"masked keys get zero weight, but the others are not the softmax over the allowed keys "
                           f"(they differ from it by up to {gap:.3g})", weight)
    return holds(prop, "masked keys get zero weight, the others a softmax over the allowed keys", weight)


def _output(prop: str, name: str, data: Mapping[str, Any], inputs: Mapping[str, Any], weight: float) -> Property:
    v = inputs["V"]
    for call in ("plain", "masked"):
        w, why = _weights(name, data, call)
        out, why_out = output(data, f"{name}.{call}", 0)
        if w is None or out is None:
            return fails(prop, why or why_out, weight)
        want = w @ v
        if out.shape != want.shape:
            return fails(prop, f"the output has shape {list(out.shape)}, not (batch, n_q, d_v) = {list(want.shape)}",
                         weight)
        gap = float(np.max(np.abs(out - want))) if finite(out) and finite(want) else float("inf")
        if not gap <= 1e-4 * max(1.0, float(np.max(np.abs(v)))):  # a bound fixed by V, the grader's input
            return fails(prop, f"the output is not weights @ V (it differs by up to {gap:.3g}"
                               f"{' with a mask' if call == 'masked' else ''})", weight)
    return holds(prop, "the output is weights @ V", weight)


def _scale(prop: str, name: str, data: Mapping[str, Any], inputs: Mapping[str, Any], weight: float) -> Property:
    w, why = _weights(name, data, "plain")
    if w is None:
        return fails(prop, why, weight)
    if not (finite(w) and np.all(w > 0)):
        return fails(prop, "without a mask some weights are 0, NaN or infinite, so they are no softmax of scaled "
                           "scores", weight)
    scores = inputs["Q"] @ inputs["K"].transpose(0, 2, 1)
    # Centring the log-weights on both axes removes a softmax's normaliser, whichever axis it ran over.
    logs, centred = _centred(np.log(w)), _centred(scores)
    s = float(np.sum(logs * centred) / np.sum(centred * centred))
    rest = float(np.linalg.norm(logs - s * centred) / max(np.linalg.norm(s * centred), 1e-12))
    want = 1.0 / np.sqrt(WIDTH)
    if rest > 1e-3:
        return fails(prop, "the weights are not a softmax of a multiple of the scores QKᵀ", weight)
    if abs(s - want) <= 1e-3 * want:
        return holds(prop, f"the scores are scaled by 1/√d (d = {WIDTH}, the keys' width)", weight)
    named = {1.0 / WIDTH: f"1/d = {1 / WIDTH:g}", 1.0: "1 (not scaled)", float(np.sqrt(WIDTH)): "√d",
             1.0 / np.sqrt(VALUE_WIDTH): f"1/√d_v = {1 / np.sqrt(VALUE_WIDTH):g} (the values' width)"}
    said = next((text for value, text in named.items() if abs(s - value) <= 1e-3 * value), f"{s:.4g}")
    return fails(prop, f"the scores are scaled by {said}; the scale is 1/√d = {want:g}, d = {WIDTH} the width of "
                       "the queries and keys", weight)


def _centred(a: np.ndarray) -> np.ndarray:
    return a - a.mean(axis=-1, keepdims=True) - a.mean(axis=-2, keepdims=True) + a.mean(axis=(-2, -1), keepdims=True)


# -- masks -------------------------------------------------------------------------------------
CAUSAL_SIZES = (1, 4, 7)


def causal_probes(name: str, rng: np.random.Generator) -> tuple[Calls, dict[str, Any]]:
    return [{"id": f"{name}.{n}", "function": name, "args": [{"value": n}]} for n in CAUSAL_SIZES], {}


def causal_judge(name: str, data: Mapping[str, Any], inputs: Mapping[str, Any],
                 weights: Mapping[str, float]) -> list[Property]:
    weight = weights[name]
    for n in CAUSAL_SIZES:
        m, why = output(data, f"{name}.{n}")
        if m is None:
            return [fails(name, f"{name}({n}): {why}", weight)]
        m = leading_ones_dropped(m, (n, n))
        want = np.tril(np.ones((n, n), dtype=bool))
        if m.shape != (n, n):
            return [fails(name, f"{name}({n}) has shape {list(m.shape)}, not ({n}, {n})", weight)]
        if not np.array_equal(m != 0, want):
            return [fails(name, f"{name}({n}) is {_causal_mistake(m != 0, n)}; it must be True where j ≤ i "
                                "(query i may attend to keys up to itself: torch.tril)", weight)]
        if dtype_of(data, f"{name}.{n}") != "bool":
            return [fails(name, f"{name}({n}) has the right values but dtype {quoted_from_code(dtype_of(data, f'{name}.{n}'), 40)}; "
                                "the mask must be boolean", weight)]
    return [holds(name, "boolean (n, n), True where j ≤ i", weight)]


def _causal_mistake(m: np.ndarray, n: int) -> str:
    if np.array_equal(m, np.triu(np.ones((n, n), dtype=bool))):
        return "True where j ≥ i (torch.triu: each query sees the future)"
    if np.array_equal(m, ~np.tril(np.ones((n, n), dtype=bool))):
        return "True where j > i (the mask inverted)"
    return "not the causal mask"


PAD_CASES = ((0, 3, 7), (5, 3, 7))  # (pad id, batch, length)
PAD_QUERIES, PAD_HEADS = 4, 2


def padding_probes(name: str, rng: np.random.Generator) -> tuple[Calls, dict[str, Any]]:
    calls, inputs = [], {}
    for pad, batch, length in PAD_CASES:
        tokens = rng.integers(0, 10, size=(batch, length))
        tokens[tokens == pad] = (pad + 1) % 10
        for row, used in enumerate((length, length - 2, 3)[:batch]):  # one row without padding
            tokens[row, used:] = pad
        calls.append({"id": f"{name}.{pad}", "function": name, "args": [tensor(tokens, "int64"), {"value": pad}]})
        inputs[f"{name}.{pad}"] = (tokens, pad)
    return calls, inputs


def padding_judge(name: str, data: Mapping[str, Any], inputs: Mapping[str, Any],
                  weights: Mapping[str, float]) -> list[Property]:
    weight = weights[name]
    for pad, batch, length in PAD_CASES:
        tokens, _ = inputs[f"{name}.{pad}"]
        m, why = output(data, f"{name}.{pad}")
        if m is None:
            return [fails(name, f"{name}(tokens, {pad}): {why}", weight)]
        shaped = _broadcast(m, batch, length)
        if shaped is None:
            return [fails(name, f"its mask of shape {list(m.shape)} does not broadcast to (batch, n_q, n_k) = "
                                f"({batch}, n_q, {length}) nor with a head axis; the batch axis comes first and a "
                                "query axis of size 1 before the keys (tokens[:, None, :])", weight)]
        want = tokens != pad
        if not np.all((shaped != 0) == want[:, None, :]):
            inverted = np.all((shaped != 0) == ~want[:, None, :])
            said = ("True where the key is padding (inverted)" if inverted else
                    "right for pad_id 0 only: compare the tokens with pad_id" if pad else
                    "not True exactly where the key is not padding")
            return [fails(name, f"{name}(tokens, {pad}) is {said}; it must be True where the key is not "
                                "padding", weight)]
        if dtype_of(data, f"{name}.{pad}") != "bool":
            return [fails(name, "the values are right but the mask is not boolean", weight)]
    return [holds(name, "boolean, broadcastable to (batch, n_q, n_k), True where the key is not padding", weight)]


def _broadcast(m: np.ndarray, batch: int, length: int) -> np.ndarray | None:
    """The mask broadcast to (batch, n_q, n_k), or with heads (batch, heads, n_q, n_k) read at head 0."""
    for target in ((batch, PAD_QUERIES, length), (batch, PAD_HEADS, PAD_QUERIES, length)):
        try:
            if np.broadcast_shapes(m.shape, target) == target:
                full = np.broadcast_to(m, target)
                return full if len(target) == 3 else full[:, 0]
        except ValueError:
            continue
    return None


# -- positional encodings ----------------------------------------------------------------------
ENCODINGS = ((50, 16), (9, 6))  # (positions, width): the first has more rows than columns, for `shift`


def encoding_probes(name: str, rng: np.random.Generator) -> tuple[Calls, dict[str, Any]]:
    return [{"id": f"{name}.{n}x{d}", "function": name, "args": [{"value": n}, {"value": d}]}
            for n, d in ENCODINGS], {}


def paper_encoding(n: int, d: int, start: int = 0, exponent: float = 2.0, layout: str = "interleaved") -> np.ndarray:
    """The transformer paper's PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i+1] = cos(...), t from `start`
    (variants: another exponent, or the sines and cosines in two halves)."""
    t = np.arange(start, start + n, dtype=float)[:, None]
    i = np.arange(d // 2, dtype=float)[None, :]
    angle = t / 10000 ** (exponent * i / d)
    out = np.zeros((n, d))
    if layout == "interleaved":
        out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    else:
        out[:, :d // 2], out[:, d // 2:] = np.sin(angle), np.cos(angle)
    return out


def encoding_judge(name: str, data: Mapping[str, Any], inputs: Mapping[str, Any],
                   weights: Mapping[str, float]) -> list[Property]:
    return [_values_property(name, data, weights[f"{name}.values"]),
            _shift_property(name, data, weights[f"{name}.shift"])]


def _values_property(name: str, data: Mapping[str, Any], weight: float) -> Property:
    prop = f"{name}.values"
    for n, d in ENCODINGS:
        p, why = output(data, f"{name}.{n}x{d}")
        if p is None:
            return fails(prop, f"{name}({n}, {d}): {why}", weight)
        p = leading_ones_dropped(p, (n, d))
        if p.shape != (n, d):
            return fails(prop, f"{name}({n}, {d}) has shape {list(p.shape)}, not ({n}, {d})", weight)
        if not (finite(p) and float(np.max(np.abs(p - paper_encoding(n, d)))) <= 1e-4):
            return fails(prop, f"{name}({n}, {d}) is not the transformer paper's encoding"
                               f"{_encoding_mistake(p, n, d)}: PE[t, 2i] = sin(t / 10000^(2i/d)), "
                               "PE[t, 2i+1] = cos(t / 10000^(2i/d)), t = 0, 1, ...", weight)
    return holds(prop, "the transformer paper's sinusoidal encodings", weight)


def _encoding_mistake(p: np.ndarray, n: int, d: int) -> str:
    variants = {"the sines in the first half and the cosines in the second": paper_encoding(n, d, layout="halves"),
                "positions counted from 1": paper_encoding(n, d, start=1),
                "frequencies 10000^(-i/d) (i, not 2i)": paper_encoding(n, d, exponent=1.0)}
    for said, variant in variants.items():
        if finite(p) and float(np.max(np.abs(p - variant))) <= 1e-4:
            return f" (it has {said})"
    return ""


def _shift_property(name: str, data: Mapping[str, Any], weight: float) -> Property:
    prop = f"{name}.shift"
    n, d = ENCODINGS[0]
    p, why = output(data, f"{name}.{n}x{d}")
    p = leading_ones_dropped(p, (n, d)) if p is not None else None
    if p is None or p.shape != (n, d) or not finite(p):
        return fails(prop, f"{name}({n}, {d}): {why or 'not a finite (n, d) tensor'}", weight)
    # p_{t+1} = M p_t for every t: the rows satisfy P[1:] = P[:-1] Mᵀ, solved by least squares.
    shift, *_ = np.linalg.lstsq(p[:-1], p[1:], rcond=None)
    # Measured against the paper encoding's size, never the student's: one huge entry would otherwise make
    # any leftover look small.
    rest = float(np.linalg.norm(p[:-1] @ shift - p[1:]) / np.linalg.norm(paper_encoding(n, d)[1:]))
    if rest <= 1e-4:
        return holds(prop, "one fixed d × d matrix maps each position's encoding to the next one's", weight)
    return fails(prop, f"no fixed d × d matrix maps the encoding at t to the one at t+1 for every t (the best "
                       f"leaves {rest:.2g} of the next rows unexplained); sinusoids of fixed frequencies do", weight)


# -- random features ---------------------------------------------------------------------------
POINTS, DIMENSION, SPREAD = 8, 16, 0.5  # vectors, their width D (σ² = √D = 4), their entries' spread
FEATURES = (64, 16384)  # D_random: few, then many
KERNEL_TOLERANCE = 0.05  # at the most features; the sampling error there is a few thousandths


def features_probes(name: str, rng: np.random.Generator) -> tuple[Calls, dict[str, Any]]:
    """The few features' W is the grader's own, sent as it is: their inner products are then known exactly
    ((1/D_r) Σ cos(w·(q−k)/σ)), so a φ that draws frequencies of its own instead of using W is seen. The
    many features' W is drawn in the child (too large to send)."""
    x = (SPREAD * rng.normal(size=(POINTS, DIMENSION))).astype(np.float32)
    few = rng.normal(size=(FEATURES[0], DIMENSION)).astype(np.float32)
    calls = [{"id": f"{name}.{r}", "function": name, "reduce": "gram",
              "args": [tensor(x), tensor(few) if r == FEATURES[0] else
                       {"randn": [r, DIMENSION], "seed": int(rng.integers(1, 2**31))}]} for r in FEATURES]
    sigma = DIMENSION ** 0.25
    distances = ((x[:, None, :].astype(float) - x[None, :, :]) ** 2).sum(axis=-1)
    phases = (x.astype(float) @ few.astype(float).T) / sigma  # (points, features)
    exact = np.cos(phases[:, None, :] - phases[None, :, :]).mean(axis=-1)
    return calls, {"kernel": np.exp(-distances / (2 * sigma ** 2)), "distances": distances, "with_W": exact}


def _gram(data: Mapping[str, Any], call: str) -> tuple[np.ndarray | None, str | None]:
    got = data.get(call)
    if not isinstance(got, Mapping):
        return None, "it was not called (the notebook's code did not load)"
    if "error" in got:
        return None, f"calling it, {raised(got['error'])}"
    info = (got.get("outputs") or [{}])[0]
    values = info.get("gram") if isinstance(info, Mapping) else None
    if not isinstance(values, list) or len(values) != POINTS * POINTS:
        shape = info.get("shape") if isinstance(info, Mapping) else None
        return None, (f"its output has shape {quoted_from_code(shape, 100)}; it must map x of shape (n, D) to features of shape "
                      f"(n, 2·D_random), here ({POINTS}, 2·D_random)")
    return np.asarray(values, dtype=float).reshape(POINTS, POINTS), None


def features_judge(name: str, data: Mapping[str, Any], inputs: Mapping[str, Any],
                   weights: Mapping[str, float]) -> list[Property]:
    grams = {}
    for r in FEATURES:
        g, why = _gram(data, f"{name}.{r}")
        if g is None:
            return [fails(f"{name}.{p}", f"{name}(x, W) with {r} features: {why}", weights[f"{name}.{p}"])
                    for p in ("norm", "kernel")]
        grams[r] = g
    norm = _norm(name, grams, weights[f"{name}.norm"])
    return [norm, _kernel(name, grams, inputs, weights[f"{name}.kernel"], norm.ok)]


def _norm(name: str, grams: Mapping[int, np.ndarray], weight: float) -> Property:
    prop = f"{name}.norm"
    for r, g in grams.items():
        norms = np.diag(g)
        if not (finite(norms) and float(np.max(np.abs(norms - 1.0))) <= 1e-4):
            mean = float(np.mean(norms)) if finite(norms) else float("nan")
            hint = (f": about D_random = {r}, as if the features were not scaled by √(1/D_random)"
                    if abs(mean / r - 1) < 0.1 else ": below 1, as if the cosines (or the sines) were missing"
                    if 0 <= mean < 1 else "")
            return fails(prop, f"φ(x)·φ(x) is {mean:.4g} on average with {r} features{hint}; with sines and "
                               "cosines scaled by √(1/D_random) it is exactly 1", weight)
    return holds(prop, "φ(x)·φ(x) = 1 for every x", weight)


def _kernel(name: str, grams: Mapping[int, np.ndarray], inputs: Mapping[str, Any], weight: float,
            norm_ok: bool) -> Property:
    prop = f"{name}.kernel"
    upper = np.triu_indices(POINTS, 1)
    errors = {r: float(np.max(np.abs(g - inputs["kernel"])[upper])) if finite(g) else float("inf")
              for r, g in grams.items()}
    said = ", ".join(f"{e:.3g} with {r} features" for r, e in errors.items())
    few = grams[FEATURES[0]]
    off = float(np.max(np.abs(few - inputs["with_W"])[upper])) if finite(few) else float("inf")
    if errors[FEATURES[-1]] <= KERNEL_TOLERANCE and off > 1e-3 and norm_ok:
        return fails(prop, f"φ(q)·φ(k) approaches the kernel, but with the {FEATURES[0]} frequencies W passed in it "
                           f"is not (1/D_random) Σ cos(w·(q−k)/σ) (off by up to {off:.3g}): φ must use the W it is "
                           "given (q and k are mapped by separate calls, with one W)", weight)
    if errors[FEATURES[-1]] <= KERNEL_TOLERANCE:
        return holds(prop, f"φ(q)·φ(k) approaches exp(−‖q−k‖²/(2σ²)) as D_random grows (largest error {said})",
                     weight)
    hint = _variance_hint(grams[FEATURES[-1]], inputs)
    if not hint and norm_ok:
        hint = ("; φ(x)·φ(x) = 1 holds, so the sines, cosines and scaling are right: look at the frequencies, "
                "W/σ (variance 1/σ² = 1/√D)")
    return fails(prop, f"φ(q)·φ(k) does not approach exp(−‖q−k‖²/(2σ²)), σ² = √D (largest error {said}){hint}",
                 weight)


def _variance_hint(g: np.ndarray, inputs: Mapping[str, Any]) -> str:
    """What frequency variance the inner products show, when they fall off like a Gaussian of another width."""
    upper = np.triu_indices(POINTS, 1)
    values, distances = g[upper], inputs["distances"][upper]
    usable = (values > 0.02) & (values < 0.98) & np.isfinite(values)
    if usable.sum() < 3:
        return ""
    rate = float(np.median(-np.log(values[usable]) / distances[usable]))  # exp(−rate ‖q−k‖²)
    sigma2 = np.sqrt(DIMENSION)
    named = {sigma2 / 2: "frequencies of variance σ² (W times σ)", 0.5: "frequencies of variance 1 (W as drawn)",
             1 / (2 * sigma2 ** 2): "frequencies of variance 1/σ⁴ (W divided by σ²)"}
    said = next((text for value, text in named.items() if abs(rate / value - 1) < 0.15), None)
    if said is None:
        return ""
    return (f": it falls off like exp(−{rate:.3g}‖q−k‖²), the kernel of {said}; exp(−‖q−k‖²/(2σ²)) needs "
            "frequencies of variance 1/σ² (W divided by σ)")


CONTRACTS: dict[str, Contract] = {c.name: c for c in (
    Contract("attention", "(Q, K, V, mask=None)", "(output, weights) of scaled dot-product attention",
             ("rows", "masked", "output", "scale"), attention_probes, attention_judge),
    Contract("causal_mask", "(n)", "boolean (n, n), True where key j <= query i", (), causal_probes, causal_judge),
    Contract("padding_mask", "(tokens, pad_id)", "boolean mask, True where the key is not padding", (),
             padding_probes, padding_judge),
    Contract("sinusoidal_encoding", "(n, d)", "(n, d) sinusoidal positional encodings", ("values", "shift"),
             encoding_probes, encoding_judge),
    Contract("random_features", "(x, W)", "random Fourier features of x (n, D) for W (D_random, D)",
             ("norm", "kernel"), features_probes, features_judge),
)}


def property_names(definition: str, contract: Contract | None) -> list[str]:
    """The names a definition's properties go by: `name.property`, or `name` for a single one."""
    if contract is None:
        return [f"{definition}.defined"]
    return [f"{definition}.{p}" for p in contract.properties] or [definition]
