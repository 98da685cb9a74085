"""`torch_module`: a student's nn.Module checked by its properties, in the sandbox.

Also the helpers every check that runs student code shares (`span_corruption`,
`synthesizer`): collecting the code files, running a job in the sandbox, turning a run
that did not finish into feedback, scoring weighted properties, and the isolation line.

The grader never imports torch: the sandbox child returns raw numbers
(`attngrade.sandbox.drivers.module`) and every verdict here is numpy.

Params of `torch_module`
------------------------
* `module` (required): the student's file, without `.py` (e.g. `attention`); the check's
  file fields supply it and any file it imports.
* `class` (required): the class to build (e.g. `CausalSelfAttention`).
* `config` (required): attributes of the config object the class is built from
  (`n_embd`, `n_head`, `block_size`, ...; dropouts are 0).
* `lengths`: the sequence lengths T to run, default 1 .. block_size − 1.
* `properties`: which to check, default all of `shapes`, `causal`, `rows_sum_to_one`,
  `gradients`, and `reference` when a reference is named.
* `reference`: the instructor's module file, relative to the solutions folder
  (`./solutions`), e.g. `cs224n-w21-a5/reference/attention.py`; it is run in the sandbox
  too, and the student's module must give the same outputs with the reference's weights
  copied in (same parameter names and shapes).
* `weights`: mapping property -> relative weight (default 1 each).
* `timeout`: seconds of wall time for the child (default 10).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .. import sandbox
from ..errors import ConfigError
from ..reading import FileReading
from ..records import CheckSpec, Part
from ..runtime.text import escaped_from_code, quoted_from_code
from .base import Context, Outcome, Param
from .messages import SANDBOX_FAILED, names, printed, raised, said

TIMEOUT = 10.0
BATCH = 2
SOLUTIONS = Path("solutions")
# Outputs equal to float32 precision: within ATOL + RTOL * (the largest expected value). The scale
# is always the expected values' (the reference's, or an equation's on attngrade's own weights),
# never the student's output: an output of 1e6 somewhere must not widen the tolerance elsewhere.
ATOL, RTOL = 1e-4, 1e-3
FLOAT32_EPS = 2.0 ** -23  # the spacing of float32 numbers near 1: their relative precision

PROPERTIES = ("shapes", "causal", "rows_sum_to_one", "gradients", "reference")
PARAMS = (Param("module", (str,), required=True), Param("class", (str,), required=True),
          Param("config", (dict,), required=True), Param("lengths", (list,)), Param("properties", (list,)),
          Param("reference", (str,)), Param("weights", (dict,)), Param("timeout", (float,)))


# -- shared by every check that runs student code ---------------------------------------------
@dataclass(frozen=True)
class Property:
    """One property of the student's code: whether it holds, and what to tell the student."""

    name: str
    ok: bool
    message: str
    weight: float = 1.0
    is_pending: bool = False  # could not be decided here (course staff decide)


def code_files(answers: Mapping[str, Any], fields: Sequence[str]) -> dict[str, str]:
    """The student's code files among the check's fields: file name -> text."""
    return {r.name: r.text for name in fields if isinstance(r := answers.get(name), FileReading)}


def run_code(files: Mapping[str, str], job: Mapping[str, Any], timeout: float) -> Any:
    """The sandbox run of `job`, or an Outcome when the code cannot be run here or did not finish."""
    missing = sandbox.torch_missing()
    if missing:
        return Outcome(0.0, (missing,), is_pending=True)
    run = sandbox.run(files, job, timeout=timeout)
    if run.status == "ok" and isinstance(run.data, dict):
        return run
    return not_finished(run, timeout)


def not_finished(run: Any, timeout: float) -> Outcome:
    """Feedback for a job that did not return its data: the student's code, or attngrade's fault.

    Only the sandbox's supervisor can say that attngrade failed (`failed`): nothing the student's
    code sends back can, so every other way a job ends is a verdict on the code (0, never pending)."""
    evidence = {"sandbox": sandbox_evidence(run)}
    if run.status == "failed":
        return Outcome(0.0, (f"{SANDBOX_FAILED} (the sandbox said {quoted_from_code(run.error, 500)}); course staff "
                             "will look at it", isolation_line(run)), evidence, failed=True)
    lines = [f"{_why_not_finished(run, timeout)}: no property could be checked"]
    if run.output.strip():
        lines.append(f"{printed(run.output.strip().splitlines()[-1], 200)} (its last line of output)")
    return Outcome(0.0, (*lines, isolation_line(run)), evidence)


def _why_not_finished(run: Any, timeout: float) -> str:
    exit_ = run.exit or {}
    reasons = {
        "timeout": f"your code was still running after {timeout:g} s (an endless loop?) and was stopped",
        "too_large": "your code sent back more data than a check reads; it was stopped",
        "memory": "your code's processes together held more memory than allowed"
                  + (f" ({run.memory // 1024**2} MiB at the last count)" if run.memory else "") + " and were stopped",
        "disk": "your code wrote more files or bytes than allowed into its folder and was stopped",
        "malformed": "your code sent back something malformed (not what attngrade's driver sends)",
        "crashed": f"your code broke attngrade's driver ({raised(run.error)})",
    }
    if run.status in reasons:
        return reasons[run.status]
    if exit_.get("signal") == "SIGXCPU" or exit_.get("signal") == "SIGKILL" and run.cpu >= timeout - 0.5:
        return "your code used up its CPU time and was stopped"
    if exit_.get("signal") == "SIGXFSZ":
        return "your code wrote a file larger than allowed and was stopped"
    if exit_.get("signal") == "SIGSEGV":
        return "your code crashed the Python process (SIGSEGV; very deep recursion does this)"
    if exit_.get("signal"):
        return f"your code's process was ended by {quoted_from_code(exit_['signal'], 40)}"
    return (f"your code ended the process (exit code {exit_.get('code')}) before the checks finished; "
            "do not call exit() in a module")


# What reading the child's data raises when it is not what the driver sends: student code can
# write to the result pipe itself (it runs in the driver's process) and end before the driver.
MALFORMED = (TypeError, KeyError, ValueError, IndexError, AttributeError, ArithmeticError, RecursionError)
QUOTE = 2000  # characters of any one feedback line (an example, a message of the student's code)
FEEDBACK = 32 * 1024  # characters of a whole part's feedback


def malformed(run: Any, err: Exception) -> Outcome:
    """A child whose data is not the driver's: the student's code's doing, so no property holds (0)."""
    told = (f"the results that came back from your code's process are not what attngrade's driver sends "
            f"({type(err).__name__}: {said(str(err), 160)}), so no property could be checked; your code must not "
            "write to the process's pipes or end it early")
    return Outcome(0.0, (told, isolation_line(run)), {"sandbox": sandbox_evidence(run)})


def guarded(name: str, weight: float, judge: Callable[[], Property]) -> Property:
    """`judge()`, or a failed property when the data it reads is not what the driver sends."""
    try:
        return judge()
    except MALFORMED as err:
        return Property(name, False, f"{name}: your code sent back something malformed for this property "
                                     f"({type(err).__name__}: {said(str(err), 160)})", weight)


def sandbox_evidence(run: Any) -> dict[str, Any]:
    return {"status": run.status, "wall": run.wall, "cpu": run.cpu, "zygote": run.zygote,
            "layers": dict(run.layers or {}), "exit": dict(run.exit or {}), "uid": run.uid}


# What a job lacked on this machine is said to the student too, who must not read it as a fault of theirs.
MISSING_HERE = "Not available on this machine (nothing in your grade depends on it): "


def isolation_line(run: Any) -> str:
    """Every isolation layer the job had, and every one missing here with the reason."""
    layers = run.layers or {}
    # The layers come on the control pipe, which only the sandbox writes before any student code
    # runs; shown escaped all the same, as any text that passed through the child.
    active = [escaped_from_code(a, 300) for a in layers.get("active") or []]
    missing = layers.get("missing") or {}
    if not active and not missing:
        return "your code ran in a sandbox that reported no isolation layers (it ended before it was set up)"
    line = f"your code ran in a sandbox with {len(active)} isolation layers: " + "; ".join(active)
    if missing:
        line += f". {MISSING_HERE}" + "; ".join(f"{escaped_from_code(name, 100)} "
                                                    f"({escaped_from_code(why, 160)})"
                                                    for name, why in sorted(missing.items()))
    return line


def score(properties: Sequence[Property], points: float, run: Any, extra: Sequence[str] = (),
          evidence: Mapping[str, Any] | None = None) -> Outcome:
    """Points in proportion to the weights of the properties that hold; feedback names each failure."""
    total = sum(p.weight for p in properties) or 1.0
    earned = points * sum(p.weight for p in properties if p.ok) / total
    pending = any(p.is_pending for p in properties)
    lines = [("ok: " if p.ok else "pending: " if p.is_pending else "FAILED: ") + p.message for p in properties]
    lines += list(extra)
    ev = {"properties": [{"name": p.name, "ok": p.ok, "weight": p.weight, "is_pending": p.is_pending}
                         for p in properties], "sandbox": sandbox_evidence(run), **dict(evidence or {})}
    return Outcome(round(earned, 6), (*bounded(lines), isolation_line(run)), ev, is_pending=pending and earned < points)


def bounded(lines: Sequence[str]) -> tuple[str, ...]:
    """Each line clipped to QUOTE characters, and all of them to FEEDBACK: what the student's code
    sent back is quoted, and it may be any size."""
    out, left = [], FEEDBACK
    for i, line in enumerate(lines):
        if left <= 0:
            out.append(f"…({len(lines) - i} more lines)")
            break
        out.append(clip(line, min(QUOTE, left)))
        left -= len(out[-1])
    return tuple(out)


def clip(text: str, n: int) -> str:
    """`text`, or its first `n` characters and how many more there were."""
    return text if len(text) <= n else f"{text[:n]}…({len(text) - n} more characters)"


MAX_SIZE = 1 << 22  # values of one array sent back: the result pipe holds no more


def array(info: Any) -> np.ndarray | None:
    """A tensor the child sent back (shape and flat values), as a numpy array; None if it is not one
    (a shape that is not a list of whole numbers, or values that do not fill it)."""
    if not isinstance(info, Mapping) or not isinstance(info.get("values"), list):
        return None
    shape = info.get("shape")
    if not isinstance(shape, list) or any(type(s) is not int or not 0 <= s <= MAX_SIZE for s in shape):
        return None
    size = 1
    for s in shape:
        size *= s
    if size != len(info["values"]) or size > MAX_SIZE:
        return None
    return np.asarray(info["values"], dtype=float).reshape(shape)


def finite(a: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(a)))


def _not_finite(a: np.ndarray) -> str:
    bad = int(np.size(a) - np.count_nonzero(np.isfinite(a)))
    return (f"{bad} of your {np.size(a)} output values are NaN or infinite (a mask multiplied by -inf, "
            "a division by zero or a log of zero?)")


def run_module(files: Mapping[str, str], job: Mapping[str, Any], timeout: float, points: float) -> Any:
    """The run of a `module` job, or the Outcome when it did not finish or the class could not be built."""
    run = run_code(files, job, timeout)
    if not isinstance(run, Outcome) and "construct_error" in run.data:
        return score([Property("build", False, f"{job['class']}(config) fails: "
                                                f"{raised(run.data['construct_error'])}")], points, run)
    return run


# -- module runs ------------------------------------------------------------------------------
def inputs(seed: int, batch: int, length: int, width: int) -> tuple[list, list, int]:
    """Random inputs, a copy changed from position k on, and k."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(batch, length, width))
    k = max(1, length // 2)
    y = x.copy()
    y[:, k:] = rng.normal(size=(batch, length - k, width))
    return x.round(6).tolist(), y.round(6).tolist(), k


def module_job(module: str, cls: str, config: Mapping[str, Any], lengths: Sequence[int], seed: int,
               **extra: Any) -> dict[str, Any]:
    width, longest = int(config["n_embd"]), max(lengths)
    x, y, k = inputs(seed, BATCH, longest, width)
    return {"kind": "module", "module": module, "class": cls, "config": dict(config), "lengths": list(lengths),
            "inputs": x, "perturbed": y, "perturb_from": k, "seed": seed, **extra}


def shapes_property(job: Mapping[str, Any], data: Mapping[str, Any], weight: float = 1.0) -> Property:
    width = int(job["config"]["n_embd"])
    outputs = data.get("outputs") or {}
    bad = []
    for t in job["lengths"]:
        info = outputs.get(str(t)) or {}
        want = [BATCH, t, width]
        if "error" in info:
            bad.append(f"T={t}: {raised(info['error'])}")
        elif info.get("shape") != want:
            got = (f"output shape {said(info['shape'], 100)}" if info.get("shape")
                   else f"an output of type {said(info.get('type'), 100)}")
            bad.append(f"T={t}: {got}, expected {want}")
    if not bad:
        return Property("shapes", True, f"forward gives a (B, T, {width}) output for every T from "
                                        f"{min(job['lengths'])} to {max(job['lengths'])}", weight)
    full = max(job["lengths"])
    only_full = len(bad) == len(job["lengths"]) - 1 and not any(b.startswith(f"T={full}:") for b in bad)
    hint = " (it works only at the full block length: slice to the input's length T)" if only_full else ""
    return Property("shapes", False, f"forward fails for {len(bad)} of {len(job['lengths'])} lengths{hint}; "
                                     f"first: {bad[0]}", weight)


def causal_property(job: Mapping[str, Any], data: Mapping[str, Any], weight: float = 1.0,
                    scale: float = 0.0) -> Property:
    """Outputs before position k unchanged when only the inputs from k on change: to ATOL + RTOL *
    `scale`, the size of the outputs the module should give (the reference's, or the equation's on
    attngrade's weights; 0 where none is known), never the size of the student's own outputs."""
    full = array((data.get("outputs") or {}).get(str(max(job["lengths"]))))
    changed = array(data.get("perturbed"))
    k = int(job["perturb_from"])
    if full is None or changed is None or full.shape != changed.shape:
        error = (data.get("perturbed") or {}).get("error")
        why = raised(error) if error else "no output at the full length"
        return Property("causal", False, f"causality could not be checked: {why}", weight)
    if not (finite(full) and finite(changed)):
        return Property("causal", False, "causality could not be checked: "
                        + _not_finite(full if not finite(full) else changed), weight)
    tolerance = ATOL + RTOL * scale
    size = max(float(np.max(np.abs(full), initial=0.0)), float(np.max(np.abs(changed), initial=0.0)))
    if size * FLOAT32_EPS > tolerance / 4:  # float32 would round a change of the tolerance away
        return Property("causal", False, f"causality could not be checked: your outputs are so large (up to "
                        f"{size:.3g}) that float32 cannot show a change of {tolerance:.3g} in them", weight)
    diff = float(np.max(np.abs(full[:, :k] - changed[:, :k]))) if k else 0.0
    if diff <= tolerance:
        return Property("causal", True, f"causal: changing the inputs from position {k + 1} on leaves the outputs "
                                        f"before it unchanged", weight)
    return Property("causal", False, f"not causal: changing only the inputs from position {k + 1} on changed the "
                                     f"outputs at earlier positions (by up to {diff:.3g}); mask the future", weight)


def gradients_property(data: Mapping[str, Any], weight: float = 1.0) -> Property:
    if "grads_error" in data:
        return Property("gradients", False, f"backward failed: {raised(data['grads_error'])}", weight)
    grads = data.get("grads") or {}
    if not grads:
        return Property("gradients", False, "no gradients came back", weight)
    sizes = {str(name): g for name, g in grads.items()}
    if any(g is not None and type(g) not in (int, float) for g in sizes.values()):
        raise TypeError("a gradient's size is not a number")
    if "params" in data and set(sizes) != set(data.get("params") or {}):  # the driver sends both for one module
        raise ValueError("gradients for parameters other than the module's")
    odd = sorted(name for name, g in sizes.items() if g is not None and not (math.isfinite(g) and g >= 0))
    if odd:
        return Property("gradients", False, f"the gradients of {names(odd)} are NaN or infinite", weight)
    dead = sorted(name for name, g in sizes.items() if not g)
    if dead:
        return Property("gradients", False, f"gradients do not reach {names(dead)}: those parameters are never "
                        "used (or used without a gradient) in forward", weight)
    return Property("gradients", True, "gradients reach every parameter", weight)


def rows_property(job: Mapping[str, Any], data: Mapping[str, Any], weight: float = 1.0) -> Property:
    attention = data.get("attention") or {}
    bad, seen = [], 0
    for t in job["lengths"]:
        a = array(attention.get(str(t)))
        if a is None or a.shape[-2:] != (t, t):
            continue
        seen += 1
        sums = a.sum(axis=-1)
        if not (finite(a) and float(np.max(np.abs(sums - 1.0), initial=0.0)) <= 1e-4):  # NaN is never a pass
            bad.append(f"T={t}: rows sum to {float(sums.min()):.3g}..{float(sums.max()):.3g}")
        elif not float(np.max(np.abs(np.triu(a, 1)), initial=0.0)) <= 1e-6:
            bad.append(f"T={t}: weight on later positions")
    if not seen:
        return Property("rows_sum_to_one", False, "no attention weights (a softmax over T positions) were seen "
                                                  "in forward", weight)
    if bad:
        return Property("rows_sum_to_one", False, "attention weights: " + bad[0], weight)
    return Property("rows_sum_to_one", True, "every row of attention weights sums to 1, none on later positions",
                    weight)


def params_table(data: Mapping[str, Any]) -> dict[str, np.ndarray]:
    return {name: a for name, info in (data.get("params") or {}).items() if (a := array(info)) is not None}


def equal_outputs(job: Mapping[str, Any], data: Mapping[str, Any], expected: Mapping[int, np.ndarray],
                  name: str, what: str, weight: float = 1.0) -> Property:
    """The outputs at every length equal `expected` to float32 precision: within ATOL + RTOL times the
    largest expected value. `expected` is attngrade's (the reference module's outputs, an equation on
    attngrade's own weights), never computed from what the student's code sent back: its scale is
    the tolerance's."""
    outputs = data.get("outputs") or {}
    for t in job["lengths"]:
        got = array(outputs.get(str(t)))
        want = expected.get(t)
        if want is None:
            continue
        if got is None or got.shape != want.shape:
            error = (outputs.get(str(t)) or {}).get("error")
            why = f": {raised(error)}" if error else ""
            return Property(name, False, f"{what}: no output of shape {list(want.shape)} at T={t}{why}", weight)
        if not finite(got):  # NaN compares as neither near nor far: it is never equal
            return Property(name, False, f"{what}: at T={t} {_not_finite(got)}", weight)
        if not finite(want):  # the reference module's own outputs: nothing is equal to them
            return Property(name, False, f"{what}: at T={t} the expected output is NaN or infinite; course staff "
                                         "compare by hand", weight, is_pending=True)
        gaps = np.abs(got - want).ravel()
        gap = float(np.max(gaps, initial=0.0))
        if not gap <= ATOL + RTOL * float(np.max(np.abs(want), initial=0.0)):  # only a clear pass passes
            worst = int(np.argmax(gaps))
            return Property(name, False, f"{what}: at T={t} your output differs by up to {gap:.3g} "
                                         f"(e.g. {got.ravel()[worst]:.4g} where {want.ravel()[worst]:.4g} is "
                                         "expected)", weight)
    return Property(name, True, f"{what}: equal at every T", weight)


# -- the generic check ------------------------------------------------------------------------
def prepare(params: Mapping[str, Any], part: Part, spec: CheckSpec) -> dict[str, Any]:
    p = dict(params)
    config = dict(p["config"])
    for name in ("n_embd", "block_size"):
        if not isinstance(config.get(name), int):
            raise ConfigError(f"config needs a whole number {name}")
    lengths = p.get("lengths") or list(range(1, config["block_size"]))
    if not lengths or any(not isinstance(t, int) or t < 1 for t in lengths):
        raise ConfigError("lengths must be positive whole numbers")
    properties = p.get("properties") or [x for x in PROPERTIES if x != "reference" or p.get("reference")]
    unknown = [x for x in properties if x not in PROPERTIES]
    if unknown:
        raise ConfigError(f"unknown properties {unknown}; the check knows {list(PROPERTIES)}")
    if "reference" in properties and not p.get("reference"):
        raise ConfigError("the reference property needs a 'reference' module file")
    weights = p.get("weights") or {}
    if set(weights) - set(properties):
        raise ConfigError(f"weights name properties the check does not run: {sorted(set(weights) - set(properties))}")
    files = [f.filename for f in part.fields if f.name in spec.fields and f.kind == "file"]
    if f"{p['module']}.py" not in files:
        raise ConfigError(f"module {p['module']!r}: none of the check's file fields is {p['module']}.py")
    return {"module": p["module"], "class": p["class"], "config": config, "lengths": sorted(set(lengths)),
            "properties": list(properties), "reference": p.get("reference"),
            "weights": {x: float(weights.get(x, 1.0)) for x in properties},
            "timeout": float(p.get("timeout") or TIMEOUT)}


@lru_cache(maxsize=16)
def _reference_run(text: str, job_json: str, timeout: float) -> Any:
    """The reference module's run (the same inputs for every student: once per process)."""
    job = json.loads(job_json)
    return run_code({f"{job['module']}.py": text}, job, timeout)


def check(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    p = ctx.prepared
    files = code_files(answers, ctx.spec.fields)
    if f"{p['module']}.py" not in files:
        return Outcome(0.0, (f"no {p['module']}.py was handed in",))
    job = module_job(p["module"], p["class"], p["config"], p["lengths"], ctx.seed,
                     record_softmax="rows_sum_to_one" in p["properties"])
    reference = None
    if "reference" in p["properties"]:
        path = SOLUTIONS / p["reference"]
        if path.is_file():
            ref = _reference_run(path.read_text(encoding="utf-8"),
                                 json.dumps({**job, "redraw": []}, sort_keys=True), p["timeout"])
            if isinstance(ref, Outcome):
                raise ConfigError(f"the reference module {path} did not run: {' '.join(ref.feedback)}")
            reference = ref.data
            job["weights"] = reference.get("params")
    run = run_module(files, job, p["timeout"], ctx.points)
    if isinstance(run, Outcome):
        return run
    try:
        return _judge(run, job, p, reference, ctx.points)
    except MALFORMED as err:
        return malformed(run, err)


def _judge(run: Any, job: Mapping[str, Any], p: Mapping[str, Any], reference: Mapping[str, Any] | None,
           points: float) -> Outcome:
    data = run.data
    w = p["weights"]
    judges: dict[str, Callable[[], Property]] = {
        "shapes": lambda: shapes_property(job, data, w["shapes"]),
        "causal": lambda: causal_property(job, data, w["causal"], largest(reference_outputs(job, reference))),
        "gradients": lambda: gradients_property(data, w["gradients"]),
        "rows_sum_to_one": lambda: rows_property(job, data, w["rows_sum_to_one"]),
        "reference": lambda: _reference_property(job, data, reference, w["reference"]),
    }
    return score([guarded(name, w[name], judges[name]) for name in p["properties"]], points, run)


def reference_outputs(job: Mapping[str, Any], reference: Mapping[str, Any] | None) -> dict[int, np.ndarray]:
    """The reference module's output at each length (none without a reference)."""
    outputs = (reference or {}).get("outputs") or {}
    return {t: a for t in job["lengths"] if (a := array(outputs.get(str(t)))) is not None}


def largest(expected: Mapping[int, np.ndarray]) -> float:
    """The largest finite expected value: the scale of a tolerance (0 when nothing is expected)."""
    sizes = [float(np.max(np.abs(a[np.isfinite(a)]), initial=0.0)) for a in expected.values()]
    return max(sizes, default=0.0)


def _reference_property(job: Mapping[str, Any], data: Mapping[str, Any], reference: Any, weight: float) -> Property:
    if reference is None:
        return Property("reference", False, "the reference module is not at hand; course staff compare by hand",
                        weight, is_pending=True)
    if data.get("weights_missing") or data.get("weights_unexpected"):
        missing, unexpected = data.get("weights_unexpected") or [], data.get("weights_missing") or []
        return Property("reference", False, "your parameters differ from the starter's: "
                        + "; ".join(([f"missing {names(missing)}"] if missing else [])
                                    + ([f"unexpected {names(unexpected)}"] if unexpected else [])), weight)
    expected = reference_outputs(job, reference)
    return equal_outputs(job, data, expected, "reference", "with the reference's weights copied in, the outputs "
                         "match the reference module", weight)
