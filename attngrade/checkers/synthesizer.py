"""`synthesizer`: CS224N A5 2g.i, `SynthesizerAttention` and the GPT that should use it.

The sandbox child builds the student's SynthesizerAttention from a small config, copies
attngrade's own weights into it (drawn here, at scales where every piece of the equation
shows: the starter initialises w2 near zero, which hides bugs), runs it at every length, on
a perturbed input and backwards, and builds `GPT(config)` with the synthesizer option; it
returns the parameters and outputs. The grader computes the handout's equation on its own
weights with numpy:

    per head i:  Y_i = softmax(ReLU(X A_i + b_1) B + b_2, masked causally) (X V_i)
    Y = [Y_1 … Y_h] P + b_P

with A = w1 (all heads), B = w2 shared by the heads (first T columns), b_2 = b2 (first T),
V = value, P = proj.

Properties (weights, out of 8): `parameters` (0.5: the starter's w1, w2 shared across
heads, b2, value, proj, with their shapes), `shapes` (1: an output for every T from 1 to
block_size − 1), `causal` (1), `equation` (3: the output equals the equation at every T),
`gradients` (1: every parameter gets one), `gpt` (1.5: GPT(config) with the synthesizer
option contains a SynthesizerAttention and uses it: re-drawing the synthesizers' weights
changes the model's logits). An output or logits that are NaN or infinite fail the property
that reads them: NaN is never equal to anything.

Every tolerance is set by values attngrade chose: the equation's outputs on attngrade's
weights (whatever the module's own weights were: they are replaced, and a module that does
not use the ones copied in does not give the equation's outputs), or an absolute bound.

Params: `attention` / `model` (fields with attention.py and model.py; default the
check's fields with those file names), `config` (default n_embd 16, n_head 4,
block_size 12, n_layer 2, vocab_size 24), `option` (the config flag, default
`synthesizer`), `timeout` (seconds, default 10).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..errors import ConfigError
from ..records import CheckSpec, Part
from .base import Context, Outcome, Param
from .messages import names, raised, said
from .torch_module import (
    MALFORMED,
    TIMEOUT,
    Property,
    array,
    causal_property,
    code_files,
    equal_outputs,
    finite,
    gradients_property,
    guarded,
    largest,
    malformed,
    module_job,
    run_module,
    score,
    shapes_property,
)

PARAMS = (Param("config", (dict,)), Param("option", (str,)), Param("timeout", (float,)))
CONFIG = {"n_embd": 16, "n_head": 4, "block_size": 12, "n_layer": 2, "vocab_size": 24}
WEIGHTS = {"parameters": 0.5, "shapes": 1.0, "causal": 1.0, "equation": 3.0, "gradients": 1.0, "gpt": 1.5}
# Logits that move less than this when the synthesizers' weights are re-drawn did not move: a model
# that never calls them gives the very same logits. An absolute bound: the logits are the student's.
MOVED = 1e-4


def prepare(params: Mapping[str, Any], part: Part, spec: CheckSpec) -> dict[str, Any]:
    config = {**CONFIG, **dict(params.get("config") or {})}
    if config["n_embd"] % config["n_head"]:
        raise ConfigError("config: n_embd must be a multiple of n_head")
    names = {f.filename for f in part.fields if f.name in spec.fields and f.kind == "file"}
    if "attention.py" not in names:
        raise ConfigError("the check needs a file field with attention.py")
    return {"config": config, "option": params.get("option") or "synthesizer",
            "timeout": float(params.get("timeout") or TIMEOUT), "gpt": "model.py" in names}


def expected_shapes(config: Mapping[str, Any]) -> dict[str, list[int]]:
    d, h, l = config["n_embd"], config["n_head"], config["block_size"] - 1
    return {"w1.weight": [d, d], "w1.bias": [d], "w2": [d // h, l], "b2": [l], "value.weight": [d, d],
            "value.bias": [d], "proj.weight": [d, d], "proj.bias": [d]}


def weights_for(config: Mapping[str, Any], seed: int) -> dict[str, np.ndarray]:
    """attngrade's weights for the module, float32 values (the module's own precision) as float64.

    Linear layers at nn.Linear's scale (1/sqrt(n_embd)), their biases and w2, b2 at scales where
    the ReLU cuts, the softmax is far from uniform and the biases count."""
    rng = np.random.default_rng([seed, 1])  # a stream of its own: the inputs are drawn from `seed`
    d = config["n_embd"]
    scales = {"w1.weight": d ** -0.5, "w1.bias": 0.5, "w2": 1.0, "b2": 1.0, "value.weight": d ** -0.5,
              "value.bias": 0.5, "proj.weight": d ** -0.5, "proj.bias": 0.5}
    return {name: rng.normal(0.0, scales[name], size=shape).astype(np.float32).astype(float)
            for name, shape in expected_shapes(config).items()}


def sent(weights: Mapping[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    """Weights as a job carries them to the sandbox's driver, which copies them in by name."""
    return {name: {"shape": list(w.shape), "values": w.ravel().tolist()} for name, w in weights.items()}


def equation(x: np.ndarray, w: Mapping[str, np.ndarray], heads: int) -> np.ndarray:
    """The handout's synthesizer attention on weights `w` (float64)."""
    b, t, d = x.shape
    hs = d // heads
    hidden = np.maximum(x @ w["w1.weight"].T + w["w1.bias"], 0.0).reshape(b, t, heads, hs).transpose(0, 2, 1, 3)
    scores = hidden @ w["w2"][:, :t] + w["b2"][:t]
    scores = np.where(np.tril(np.ones((t, t), dtype=bool)), scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    values = (x @ w["value.weight"].T + w["value.bias"]).reshape(b, t, heads, hs).transpose(0, 2, 1, 3)
    y = (weights @ values).transpose(0, 2, 1, 3).reshape(b, t, d)
    return y @ w["proj.weight"].T + w["proj.bias"]


def check(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    p = ctx.prepared
    files = code_files(answers, ctx.spec.fields)
    if "attention.py" not in files:
        return Outcome(0.0, ("no attention.py was handed in",))
    config = p["config"]
    lengths = list(range(1, config["block_size"]))
    gpt = {"module": "model", "options": {p["option"]: True}} if "model.py" in files else None
    weights = weights_for(config, ctx.seed)
    job = module_job("attention", "SynthesizerAttention", config, lengths, ctx.seed, weights=sent(weights), gpt=gpt)
    run = run_module(files, job, p["timeout"], ctx.points)
    if isinstance(run, Outcome):
        return run
    data = run.data
    x = np.asarray(job["inputs"], dtype=float)
    expected = {t: equation(x[:, :t], weights, config["n_head"]) for t in lengths}
    judges = {"parameters": lambda: _parameters(data, config),
              "shapes": lambda: shapes_property(job, data, WEIGHTS["shapes"]),
              "causal": lambda: causal_property(job, data, WEIGHTS["causal"], largest(expected)),
              "equation": lambda: _equation(job, data, config, expected),
              "gradients": lambda: gradients_property(data, WEIGHTS["gradients"]),
              "gpt": lambda: _gpt(data, p, "model.py" in files)}
    try:
        found = [guarded(name, WEIGHTS[name] if name != "gpt" or p["gpt"] else 0.0, judge)
                 for name, judge in judges.items()]
    except MALFORMED as err:
        return malformed(run, err)
    return score(found, ctx.points, run)


def _parameters(data: Mapping[str, Any], config: Mapping[str, Any]) -> Property:
    want = expected_shapes(config)
    got = {name: info.get("shape") for name, info in (data.get("params") or {}).items()}
    missing = [n for n in want if n not in got]
    wrong = [f"{n} is {said(got[n], 100)}, not {want[n]}" for n in want if n in got and got[n] != want[n]]
    extra = [n for n in got if n not in want]
    if missing or wrong or extra:
        found = [f"missing {', '.join(missing)}"] if missing else []
        found += wrong + ([f"extra {names(extra)}"] if extra else [])
        return Property("parameters", False, "the parameters differ from the starter's __init__ (which must not "
                        "change): " + "; ".join(found), WEIGHTS["parameters"])
    return Property("parameters", True, "the parameters are the starter's: w1, w2 shared across heads, b2, value, proj",
                    WEIGHTS["parameters"])


def _equation(job: Mapping[str, Any], data: Mapping[str, Any], config: Mapping[str, Any],
              expected: Mapping[int, np.ndarray]) -> Property:
    want = expected_shapes(config)
    got = {name: info.get("shape") for name, info in (data.get("params") or {}).items()}
    if any(got.get(n) != want[n] for n in want):
        return Property("equation", False, "the output could not be compared with the handout's equation: the "
                        "parameters are not the starter's, so attngrade's weights could not be copied in",
                        WEIGHTS["equation"])
    return equal_outputs(job, data, expected, "equation", "the output equals the handout's equation "
                         "softmax(ReLU(X A_i + b1) B + b2) (X V_i), then P, with attngrade's weights copied into "
                         "your module", WEIGHTS["equation"])


def _gpt(data: Mapping[str, Any], p: Mapping[str, Any], handed_in: bool) -> Property:
    weight = WEIGHTS["gpt"]
    if not p["gpt"]:
        return Property("gpt", True, "(the model is not checked for this part)", 0.0)
    if not handed_in:
        return Property("gpt", False, "no model.py was handed in, so the model that uses the synthesizer could not "
                        "be built", weight)
    gpt = data.get("gpt") or {}
    option = f"GPT(config) with {p['option']}=True"
    if "error" in gpt:
        return Property("gpt", False, f"{option} fails: {raised(gpt['error'])}", weight)
    modules = gpt.get("modules") or []
    used = [name for name, _, is_synth in modules if is_synth is True]
    if not used:
        kinds = sorted({str(kind) for _, kind, _ in modules if "Attention" in str(kind)})
        return Property("gpt", False, f"{option} contains no SynthesizerAttention (its attention layers are "
                        f"{names(kinds) if kinds else 'none'}): the synthesizer model is never built, so its "
                        "predictions come from the vanilla model", weight)
    if "run_error" in gpt:
        return Property("gpt", False, f"{option} holds SynthesizerAttention, but running it fails: "
                        f"{raised(gpt['run_error'])}", weight)
    before, after = array(gpt.get("logits")), array(gpt.get("redrawn_logits"))
    if before is None or after is None or before.shape != after.shape:
        return Property("gpt", False, f"{option} holds SynthesizerAttention, but it gave no logits to compare", weight)
    if not (finite(before) and finite(after)):
        return Property("gpt", False, f"{option} gives logits that are NaN or infinite", weight)
    moved = float(np.max(np.abs(after - before), initial=0.0))
    if not moved > MOVED:
        return Property("gpt", False, f"{option} holds SynthesizerAttention ({len(used)} layers) but does not use "
                        "it: re-drawing the synthesizers' weights left the model's logits unchanged, so its "
                        "predictions come from another attention", weight)
    return Property("gpt", True, f"{option} uses SynthesizerAttention ({len(used)} layers): re-drawing their "
                    f"weights changes the logits (by up to {moved:.3g})", weight)


__all__ = ["PARAMS", "check", "equation", "prepare", "array", "weights_for"]
