"""`notebook_code`: the functions a Jupyter notebook must define, checked by their properties in
the sandbox (EECS182 Fa22 HW8: "implement the Summarization.ipynb notebook").

The part's file field holds the notebook. Its code cells are read without a kernel and cut into
the statements worth loading (`notebook_cells`: imports, definitions, constants; shell lines,
magics, plots and training left out, by a rule a homework can override); the sandbox child loads
them as a module and calls each named definition on inputs the grader drew
(`sandbox.drivers.notebook`); the verdict on each property is computed here, with numpy, by its
contract (`notebook_contracts`). Each property is one feedback line; a property that does not
hold costs its weight. Nothing needs a key: the properties are the key, so `grade check` decides
them as `grade run` does. Without PyTorch the part waits for staff (pending), never 0.

Params
------
* `definitions` (required): name -> contract (`attention`, `causal_mask`, `padding_mask`,
  `sinusoidal_encoding`, `random_features`), or null (the name must only be defined), or a
  mapping {contract, signature} (the signature is the template's stub, e.g. "(Q, K, V, mask=None)").
* `notebook`: a glob pattern the handed-in file's name must match (default `*.ipynb`).
* `keep`, `drop`: glob patterns that override the extraction rule for this part (see
  `notebook_cells`): e.g. `keep: [build_vocab]`, `drop: ["*.train", "plt.*"]`.
* `weights`: property name (`attention.scale`, `causal_mask`, ...) -> relative weight (default 1).
* `timeout`: seconds of wall time for the child (default 10).
"""

from __future__ import annotations

import fnmatch
from dataclasses import replace
from typing import Any, Mapping

import numpy as np

from ..errors import ConfigError
from ..reading import FileReading
from ..records import CheckSpec, Part
from .base import Context, Outcome, Param
from .notebook_cells import Extracted, NotebookError, extract
from .notebook_contracts import CONTRACTS, Contract, property_names
from .messages import raised, said
from .torch_module import MALFORMED, TIMEOUT, Property, bounded, malformed, run_code, score

MODULE = "student_notebook"  # the module the kept cells become in the sandbox (no package of that name)
STUB = "(*args)"
MAX_LISTED = 10  # cells or errors named in one line
PARAMS = (Param("definitions", (dict,), required=True), Param("notebook", (str,)), Param("keep", (list,)),
          Param("drop", (list,)), Param("weights", (dict,)), Param("timeout", (float,)))


def prepare(params: Mapping[str, Any], part: Part, spec: CheckSpec) -> dict[str, Any]:
    definitions = {str(name): _definition(str(name), value) for name, value in params["definitions"].items()}
    if not definitions:
        raise ConfigError("definitions: name at least one function or class the notebook must define")
    files = [f for f in part.fields if f.name in spec.fields and f.kind == "file"]
    if len(files) != 1:
        raise ConfigError("the check reads one file field: the notebook")
    pattern = params.get("notebook") or "*.ipynb"
    if files[0].filename and not fnmatch.fnmatchcase(files[0].filename, pattern):
        raise ConfigError(f"the field's file {files[0].filename} does not match the notebook pattern {pattern!r}")
    patterns = {}
    for key in ("keep", "drop"):
        patterns[key] = [str(x) for x in params.get(key) or []]
    names = [n for name, (contract, _) in definitions.items() for n in property_names(name, _contract(contract))]
    weights = dict(params.get("weights") or {})
    if set(weights) - set(names):
        raise ConfigError(f"weights name unknown properties {sorted(set(weights) - set(names))}; the properties "
                          f"are {names}")
    return {"definitions": definitions, "field": files[0].name, "pattern": pattern, **patterns,
            "weights": {n: float(weights.get(n, 1.0)) for n in names},
            "timeout": float(params.get("timeout") or TIMEOUT)}


def _definition(name: str, value: Any) -> tuple[str | None, str]:
    """(contract name or None, the stub's signature) of one definition of the params."""
    if not name.isidentifier():
        raise ConfigError(f"definitions: {name!r} is not a Python name")
    contract, signature = (value.get("contract"), value.get("signature")) if isinstance(value, Mapping) \
        else (value, None)
    if contract is not None and contract not in CONTRACTS:
        raise ConfigError(f"definitions: {name}: unknown contract {contract!r}; the contracts are "
                          f"{', '.join(CONTRACTS)} (or null: only defined)")
    default = CONTRACTS[contract].signature if contract else STUB
    signature = str(signature or default)
    if not (signature.startswith("(") and signature.endswith(")")):
        raise ConfigError(f"definitions: {name}: the signature {signature!r} must be parameters in parentheses")
    return contract, signature


def _contract(name: str | None) -> Contract | None:
    return CONTRACTS[name] if name else None


def check(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    p = ctx.prepared
    reading = answers.get(p["field"])
    if not isinstance(reading, FileReading):
        return Outcome(0.0, ("no notebook was handed in",))
    if not fnmatch.fnmatchcase(reading.name, p["pattern"]):
        return Outcome(0.0, (f"{reading.name} is not the notebook this part reads (a file named like "
                             f"{p['pattern']!r}); hand in the notebook itself",))
    try:
        extracted = extract(reading.text, p["keep"], p["drop"])
    except NotebookError as err:
        return Outcome(0.0, (f"{reading.name}: {err}",), invalid=True)
    summary = summary_lines(reading.name, extracted)
    evidence = {"notebook": {"file": reading.name, "sha256": reading.sha256, "cells": extracted.cells,
                             "kept": len(extracted.chunks), "left_out": dict(extracted.left_out)}}
    definitions = p["definitions"]
    if not any(name in extracted.defined for name in definitions):
        found = [_absent(name, extracted, p) for name in definitions]
        return _not_run(found, ctx.points, summary, evidence)
    calls, inputs = [], {}
    for name, (contract, _) in definitions.items():
        if contract is not None and name in extracted.defined:
            made, inputs[name] = CONTRACTS[contract].probes(name, _rng(ctx.seed, name))
            calls += made
    job = {"kind": "notebook", "module": MODULE, "chunks": [[c.first, c.last] for c in extracted.chunks],
           "names": list(definitions), "calls": calls, "seed": ctx.seed}
    run = run_code({f"{MODULE}.py": extracted.source}, job, p["timeout"])
    if isinstance(run, Outcome):
        return replace(run, feedback=(*summary, *run.feedback))
    try:
        data = {**run.data, "calls": placed(run.data["calls"], extracted)}
        found = judged(data, inputs, p, extracted)
        loaded = chunk_errors(data, extracted)
    except MALFORMED as err:
        return malformed(run, err)
    return score(found, ctx.points, run, extra=(*summary, *loaded, *_left_out_names(found, extracted)),
                 evidence=evidence)


def _left_out_names(found: list[Property], extracted: Extracted) -> list[str]:
    """Where a property failed on a NameError for a name only a left-out statement binds (`NEG_INF =
    torch.finfo(...).min` beside the definitions): which cell binds it, and what to do."""
    said = []
    for prop in found:
        at = prop.message.find("NameError: name '")
        if prop.ok or at < 0:
            continue
        start = at + len("NameError: name '")
        name = prop.message[start:prop.message.find("'", start, start + 200)]
        if name in extracted.dropped_names and name not in said:
            said.append(name)
    return [f"{name} is bound only in cell {extracted.dropped_names[name]}, by a top-level statement that runs code, "
            f"which is left out (see above): give {name} a plain value, compute it inside the function that uses "
            "it, or tag that cell attngrade-keep" for name in said]


def _rng(seed: int, name: str) -> np.random.Generator:
    """The inputs of one definition: the same for every student of the part, different per definition."""
    return np.random.default_rng([seed, *name.encode("utf-8")[:32]])


# -- judging ---------------------------------------------------------------------------------------
def judged(data: Any, inputs: Mapping[str, Any], p: Mapping[str, Any], extracted: Extracted) -> list[Property]:
    """Every property of every definition, from what the child sent back."""
    calls, defined = data["calls"], data["defined"]
    if not isinstance(calls, Mapping) or not isinstance(defined, Mapping):
        raise TypeError("the calls or names sent back are not mappings")
    found: list[Property] = []
    for name, (contract_name, _) in p["definitions"].items():
        contract = _contract(contract_name)
        kind = defined.get(name, "missing")
        problem = _problem(name, kind, extracted, data)
        if contract is None:
            found.append(Property(f"{name}.defined", problem is None, f"{name}.defined: "
                                  + (problem or f"{name} is defined (a {kind})"), p["weights"][f"{name}.defined"]))
        elif problem is not None:
            found += [Property(n, False, f"{n}: {problem}", p["weights"][n]) for n in property_names(name, contract)]
        else:
            found += contract.judge(name, calls, inputs[name], p["weights"])
    return found


def _problem(name: str, kind: Any, extracted: Extracted, data: Mapping[str, Any]) -> str | None:
    """Why a definition cannot be called, or None."""
    if kind in ("function", "class"):
        return None
    if kind != "missing":
        return f"{name} is not a function: {said(kind, 100)}"
    if name in extracted.defined:
        chunk = extracted.defined[name]
        found = next((e for e in chunk_errors(data, extracted) if e.startswith(f"cell {chunk.cell}, line {chunk.line}:")),
                     None)
        return f"the statement that defines {name} did not run" + (f" ({found})" if found else "")
    return _absent_text(name, extracted)


def _absent(name: str, extracted: Extracted, p: Mapping[str, Any]) -> list[Property]:
    contract = _contract(p["definitions"][name][0])
    text = _absent_text(name, extracted)
    return [Property(n, False, f"{n}: {text}", p["weights"][n]) for n in property_names(name, contract)]


def _absent_text(name: str, extracted: Extracted) -> str:
    if name in extracted.dropped_names:
        return (f"{name} is bound only by a top-level statement that runs code (cell {extracted.dropped_names[name]}), "
                "which is left out: define it with def")
    return f"{name} is not defined in the notebook's code cells"


def _not_run(found: list[list[Property]], points: float, summary: list[str], evidence: dict) -> Outcome:
    """None of the definitions is there: nothing to run, every property fails."""
    properties = [prop for group in found for prop in group]
    lines = [f"FAILED: {prop.message}" for prop in properties]
    evidence = {**evidence, "properties": [{"name": x.name, "ok": False, "weight": x.weight, "is_pending": False}
                                           for x in properties]}
    return Outcome(0.0, bounded([*lines, *summary]), evidence)


# -- what the notebook's reading says --------------------------------------------------------------
def summary_lines(file: str, extracted: Extracted) -> list[str]:
    """What was read of the notebook: the code cells, what was kept, and what was left out and where."""
    kept = len(extracted.chunks)
    line = (f"{file}: read {extracted.cells} code cell{'' if extracted.cells == 1 else 's'} without running "
            f"them; kept {kept} top-level statement{'' if kept == 1 else 's'} (imports, definitions, constants)")
    lines = [line]
    if extracted.left_out:
        lines.append("left out: " + "; ".join(f"{why}: {_cells(cells)}" for why, cells in extracted.left_out.items()))
    return lines


def _cells(cells: list[int]) -> str:
    shown = ", ".join(map(str, cells[:MAX_LISTED])) + (f" and {len(cells) - MAX_LISTED} more"
                                                       if len(cells) > MAX_LISTED else "")
    return f"cell{'' if len(cells) == 1 else 's'} {shown}"


def chunk_errors(data: Mapping[str, Any], extracted: Extracted) -> list[str]:
    """The statements that raised as the notebook's code was loaded, each by its cell and line."""
    errors = data.get("chunks") or []
    if not isinstance(errors, list):
        raise TypeError("the loading errors sent back are not a list")
    lines = []
    for item in errors[:MAX_LISTED]:
        chunk = extracted.chunks[int(item["chunk"])]
        where = f"cell {chunk.cell}, line {chunk.line}"
        text = in_cells(str(item["error"]), extracted).removesuffix(f" ({where})")
        lines.append(f"{where}: {raised(text)}; the rest of the notebook's code was loaded without it")
    if len(errors) > MAX_LISTED:
        lines.append(f"…and {len(errors) - MAX_LISTED} more statements that raised")
    return lines


def placed(calls: Any, extracted: Extracted) -> dict[str, Any]:
    """The calls' results with each error's place in the module said as the notebook's cell and line."""
    if not isinstance(calls, Mapping):
        raise TypeError("the calls sent back are not a mapping")
    return {str(k): ({**v, "error": in_cells(str(v["error"]), extracted)} if isinstance(v, Mapping) and "error" in v
                     else v) for k, v in calls.items()}


def in_cells(text: str, extracted: Extracted) -> str:
    """`text` with each `(student_notebook.py line N)` said as the notebook's `(cell C, line L)`."""
    marker = f"({MODULE}.py line "
    pieces, at = [], 0
    while (found := text.find(marker, at)) >= 0:
        end = text.find(")", found)
        digits = text[found + len(marker):end] if end > 0 else ""
        place = extracted.place(int(digits)) if digits.isdigit() and len(digits) < 9 else None
        pieces.append(text[at:found] + (f"({place})" if place else text[found:end + 1]))
        at = end + 1 if end > 0 else len(text)
    return "".join(pieces) + text[at:]
