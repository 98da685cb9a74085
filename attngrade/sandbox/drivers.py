"""Trusted drivers that run inside the sandbox child: import the student's modules, call
them on the inputs the grader chose, and return raw data (lists of numbers and strings).

Nothing here decides anything: every verdict is computed by the checks in the grader.
A driver catches whatever the student's code raises and reports it as text, so one
failing call costs only the properties that need it.

Jobs:

- `span_corruption`: build the dataset class on each case's documents and draw items;
  returns each draw's x and y (ids, dtype, shape) or the error, and the vocabulary.
- `module`: build an nn.Module from a config, optionally re-draw or load its parameters,
  run it at each sequence length, on a perturbed input, backwards once; optionally build
  the course's GPT with an option set, list its modules, and run it twice on one input:
  as built, and with the parameters of every module of the checked class re-drawn (a
  model that holds one but never calls it gives the same logits twice).

- `notebook`: load the code a notebook's kept cells hold (`attngrade.checkers.notebook_cells`
  cut it into chunks, one per top-level statement) as a module, chunk by chunk, so that one
  that raises (an import the sandbox lacks) costs only what needs it; then call the named
  functions on the inputs the job gives and return their outputs (or, for `gram`, the inner
  products of the first output's rows: a feature map's values are too many to send).

Every call on the student's objects (its methods may be anything) is inside a `try`: a
failure costs the properties that need it and is reported as the student's.
"""

from __future__ import annotations

import importlib.util
import os
import random
import sys
import types
from collections import deque
from pathlib import Path
from typing import Any, Mapping

MAX_MODULES = 400  # modules of a GPT listed back
MAX_VOCABULARY = 4096  # entries of a dataset's itos sent back (characters, in the handout)


def run(job: Mapping[str, Any]) -> Any:
    kind = job.get("kind")
    if kind == "span_corruption":
        return span_corruption(job)
    if kind == "module":
        return module(job)
    if kind == "notebook":
        return notebook(job)
    raise ValueError(f"unknown job kind {kind!r}")


# -- helpers ----------------------------------------------------------------------------------
def _seed(seed: int) -> None:
    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(seed % 2**32)


def error_text(err: BaseException) -> str:
    """`Type: message (file.py line n)`, naming the last line of the student's own files."""
    here = str(Path.cwd())
    last: deque = deque(maxlen=64)  # a runaway recursion leaves millions of frames: keep the last few
    tb = err.__traceback__
    while tb is not None:
        last.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    where = next((f"{os.path.basename(name)} line {line}" for name, line in reversed(last)
                  if os.path.dirname(name) == here), None)
    try:
        said = str(err).strip()
    except BaseException:  # noqa: BLE001 - a student's exception whose message itself raises
        said = ""
    message = said.splitlines()[0][:300] if said else ""
    text = str(type(err).__name__)[:100] + (f": {message}" if message else "")
    return text + (f" ({where})" if where else "")


def import_student(name: str) -> types.ModuleType:
    """The student's `name.py` from the working folder, registered under its own name."""
    folder = str(Path.cwd())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == str(Path(folder) / f"{name}.py"):
        return sys.modules[name]
    path = Path(folder) / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(f"{name}.py is not among the files")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


def _tensor_info(value: Any) -> dict[str, Any]:
    import torch

    if not isinstance(value, torch.Tensor):
        return {"type": type(value).__name__}
    return {"dtype": str(value.dtype).replace("torch.", ""), "shape": list(value.shape),
            "values": value.detach().reshape(-1).tolist() if value.numel() <= 4096 else None}


# -- span corruption --------------------------------------------------------------------------
def span_corruption(job: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"cases": []}
    try:
        mod = import_student(job.get("module", "dataset"))
        cls = getattr(mod, job.get("class", "CharCorruptionDataset"))
    except BaseException as err:  # noqa: BLE001 - the student's code, whatever it raises
        out["import_error"] = error_text(err)
        return out
    for case in job["cases"]:
        _seed(int(job.get("seed", 0)) + len(out["cases"]))
        record: dict[str, Any] = {"name": case["name"], "draws": []}
        out["cases"].append(record)
        try:
            ds = cls("\n".join(case["documents"]), int(case["block_size"]))
            itos = getattr(ds, "itos", None)
            record["itos"] = _vocabulary(itos) if isinstance(itos, Mapping) else None
        except BaseException as err:  # noqa: BLE001
            record["error"] = error_text(err)
            continue
        for index in case["draws"]:
            try:
                x, y = ds[index]
                record["draws"].append({"doc": index, "x": _tensor_info(x), "y": _tensor_info(y)})
            except BaseException as err:  # noqa: BLE001
                record["draws"].append({"doc": index, "error": error_text(err)})
    return out


def _vocabulary(itos: Mapping) -> list | None:
    """The dataset's id -> character table as a list (None past MAX_VOCABULARY entries); an entry
    that is not a string is sent as None."""
    size = len(itos)
    if size > MAX_VOCABULARY:
        return None
    return [(value if isinstance(value := itos[i], str) else None) for i in range(size)]


# -- an nn.Module -----------------------------------------------------------------------------
class _SoftmaxRecorder:
    """Keeps the last softmax taken over the last dimension while recording is on."""

    def __init__(self) -> None:
        import torch
        import torch.nn.functional as F

        self.on = False
        self.last: Any = None
        self._torch, self._F = torch, F
        self._originals = (torch.softmax, F.softmax, torch.Tensor.softmax)
        recorder = self

        def wrap(original):
            def softmax(*args, **kwargs):
                result = original(*args, **kwargs)
                if recorder.on and isinstance(result, torch.Tensor) and result.dim() >= 2:
                    recorder.last = result
                return result
            return softmax

        torch.softmax = wrap(torch.softmax)
        F.softmax = wrap(F.softmax)
        torch.Tensor.softmax = wrap(torch.Tensor.softmax)


def _config(job: Mapping[str, Any]) -> types.SimpleNamespace:
    values = {"attn_pdrop": 0.0, "resid_pdrop": 0.0, "embd_pdrop": 0.0, **dict(job.get("config") or {})}
    return types.SimpleNamespace(**values)


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, (tuple, list)) and value else value


def module(job: Mapping[str, Any]) -> dict[str, Any]:
    import torch

    out: dict[str, Any] = {}
    recorder = _SoftmaxRecorder() if job.get("record_softmax") else None
    _seed(int(job.get("seed", 0)))
    try:
        mod = import_student(job["module"])
        cls = getattr(mod, job["class"])
        m = cls(_config(job))
        params = dict(m.named_parameters())
        g = torch.Generator().manual_seed(int(job.get("seed", 0)))
        _set_weights(job, params, g, out)
        out["params"] = {name: {"shape": list(p.shape), "values": p.detach().reshape(-1).tolist()}
                         for name, p in params.items()}
        m.eval()  # safe: torch's Module.eval (inference mode), not Python's eval
    except BaseException as err:  # noqa: BLE001 - the student's class, whatever it raises
        out.pop("params", None)
        out["construct_error"] = error_text(err)
        return out
    x = torch.tensor(job["inputs"], dtype=torch.float32)
    out["outputs"], out["attention"] = _outputs(m, x, job["lengths"], recorder)
    if job.get("perturbed") is not None:
        try:
            with torch.no_grad():
                out["perturbed"] = _tensor_info(_first(m(torch.tensor(job["perturbed"], dtype=torch.float32))))
        except BaseException as err:  # noqa: BLE001
            out["perturbed"] = {"error": error_text(err)}
    try:
        m.zero_grad()
        y = _first(m(x))
        weights_out = torch.randn(y.shape, generator=g)
        (y * weights_out).sum().backward()
        out["grads"] = {name: (None if p.grad is None else float(p.grad.abs().sum())) for name, p in params.items()}
    except BaseException as err:  # noqa: BLE001
        out["grads_error"] = error_text(err)
    if job.get("gpt"):
        out["gpt"] = _gpt(job["gpt"], job, cls)
    return out


def _set_weights(job: Mapping[str, Any], params: dict[str, Any], g: Any, out: dict[str, Any]) -> None:
    """Re-draw the parameters the job names, or copy in the weights it gives (the reference's)."""
    import torch

    with torch.no_grad():
        for name in job.get("redraw") or ():
            if name in params:
                params[name].copy_(torch.randn(params[name].shape, generator=g) * float(job.get("redraw_scale", 1.0)))
        weights = job.get("weights")
        if weights is not None:
            out["weights_missing"] = sorted(n for n in params if n not in weights)
            out["weights_unexpected"] = sorted(n for n in weights if n not in params)
            for name, p in params.items():
                if name in weights and list(p.shape) == list(weights[name]["shape"]):
                    p.copy_(torch.tensor(weights[name]["values"], dtype=p.dtype).reshape(p.shape))


def _outputs(m: Any, x: Any, lengths: list[int], recorder: _SoftmaxRecorder | None) -> tuple[dict, dict]:
    """The module's output at each length, and the last softmax it took there (when recorded)."""
    import torch

    outputs: dict[str, Any] = {}
    attention: dict[str, Any] = {}
    for t in lengths:
        try:
            if recorder is not None:
                recorder.on, recorder.last = True, None
            with torch.no_grad():
                y = _first(m(x[:, :t]))
            outputs[str(t)] = _tensor_info(y)
            if recorder is not None and recorder.last is not None:
                attention[str(t)] = _tensor_info(recorder.last)
        except BaseException as err:  # noqa: BLE001
            outputs[str(t)] = {"error": error_text(err)}
        finally:
            if recorder is not None:
                recorder.on = False
    return outputs, attention


def _gpt(spec: Mapping[str, Any], job: Mapping[str, Any], target: type) -> dict[str, Any]:
    """The course's GPT built with the option set: its modules, and its logits on one input as built and
    with every `target` module's parameters re-drawn."""
    import torch

    try:
        mod = import_student(spec.get("module", "model"))
        config_cls = getattr(mod, spec.get("config_class", "GPTConfig"))
        model_cls = getattr(mod, spec.get("model_class", "GPT"))
        config = dict(job.get("config") or {})
        vocab, block = config.pop("vocab_size", 32), config.pop("block_size")
        kwargs = {**config, "embd_pdrop": 0.0, "resid_pdrop": 0.0, "attn_pdrop": 0.0,
                  **dict(spec.get("options") or {})}
        model = model_cls(config_cls(vocab, block, **kwargs))
        listed = []
        for name, sub in list(model.named_modules())[:MAX_MODULES]:
            listed.append([str(name)[:200], str(type(sub).__name__)[:200], isinstance(sub, target)])
    except BaseException as err:  # noqa: BLE001
        return {"error": error_text(err)}
    found: dict[str, Any] = {"modules": listed}
    try:
        model.eval()  # safe: torch's Module.eval (inference mode), not Python's eval
        g = torch.Generator().manual_seed(int(job.get("seed", 0)) + 1)
        idx = torch.randint(0, vocab, (2, block - 1), generator=g)
        with torch.no_grad():
            found["logits"] = _tensor_info(_first(model(idx)))
            for sub in [s for s in model.modules() if isinstance(s, target)]:
                for p in sub.parameters():
                    p.copy_(torch.randn(p.shape, generator=g))
            found["redrawn_logits"] = _tensor_info(_first(model(idx)))
    except BaseException as err:  # noqa: BLE001
        found["run_error"] = error_text(err)
    return found


# -- a notebook's code ------------------------------------------------------------------------
MAX_VALUES = 65536  # values of one output sent back (a feature map's are reduced to inner products)
MAX_CHUNK_ERRORS = 50  # failed chunks reported


def notebook(job: Mapping[str, Any]) -> dict[str, Any]:
    """Load the notebook's chunks as one module, then make the job's calls on it."""
    out: dict[str, Any] = {"chunks": [], "defined": {}, "calls": {}}
    _seed(int(job.get("seed", 0)))
    mod = _notebook_module(job, out)
    for name in job.get("names") or ():
        value = getattr(mod, str(name), None)
        out["defined"][str(name)] = ("missing" if value is None else "class" if isinstance(value, type)
                                     else "function" if callable(value) else type(value).__name__[:100])
    for call in job.get("calls") or ():
        out["calls"][str(call["id"])] = _notebook_call(mod, call)
    return out


def _notebook_module(job: Mapping[str, Any], out: dict[str, Any]) -> types.ModuleType:
    """The module the chunks make, each run in its namespace in turn (line numbers kept)."""
    name = str(job["module"])
    path = Path.cwd() / f"{name}.py"
    mod = types.ModuleType(name)
    mod.__file__ = str(path)
    sys.modules[name] = mod  # classes and dataclasses defined in it look their module up
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for index, (first, last) in enumerate(job.get("chunks") or ()):
        text = "\n" * (int(first) - 1) + "".join(lines[int(first) - 1:int(last)])
        try:
            # The student's notebook code, in this sandboxed child: what importing it as a module
            # would run, one top-level statement at a time.
            exec(compile(text, str(path), "exec"), mod.__dict__)  # noqa: S102
        except BaseException as err:  # noqa: BLE001 - the student's code, whatever it raises
            if len(out["chunks"]) < MAX_CHUNK_ERRORS:
                out["chunks"].append({"chunk": index, "error": error_text(err)})
    return mod


def _notebook_call(mod: types.ModuleType, call: Mapping[str, Any]) -> dict[str, Any]:
    """One call of a notebook's function on the job's inputs: its outputs, or the error."""
    import torch

    try:
        function = getattr(mod, str(call["function"]))
        args = [_argument(a) for a in call.get("args") or ()]
        with torch.no_grad():
            result = function(*args)
        several = isinstance(result, tuple) or (isinstance(result, list) and 0 < len(result) <= 4
                                                 and all(isinstance(x, torch.Tensor) for x in result))
        outputs = list(result) if several else [result]
        if call.get("reduce") == "gram":
            return {"count": len(outputs), "outputs": [_gram(outputs[0])] if outputs else []}
        return {"count": len(outputs), "outputs": [_values(o) for o in outputs[:4]]}
    except BaseException as err:  # noqa: BLE001 - the student's function, whatever it raises
        return {"error": error_text(err)}


def _argument(spec: Mapping[str, Any]) -> Any:
    """An input the grader described: a tensor of values, random normal values from a seed, or a plain value."""
    import torch

    if "tensor" in spec:
        dtype = {"float32": torch.float32, "bool": torch.bool, "int64": torch.int64}[spec.get("dtype", "float32")]
        return torch.tensor(spec["tensor"], dtype=dtype)
    if "randn" in spec:
        g = torch.Generator().manual_seed(int(spec["seed"]))
        return torch.randn([int(n) for n in spec["randn"]], generator=g)
    return spec.get("value")


def _as_tensor(value: Any) -> Any:
    """A student's output as a tensor: a tensor, a numpy array or nested lists of numbers; else None."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach()
    if type(value).__module__ == "numpy" or isinstance(value, (list, tuple, bool, int, float)):
        try:
            return torch.as_tensor(value)
        except BaseException:  # noqa: BLE001 - not numbers
            return None
    return None


def _values(value: Any) -> dict[str, Any]:
    import torch

    tensor = _as_tensor(value)
    if tensor is None:
        return {"type": type(value).__name__[:100]}
    info = {"dtype": str(tensor.dtype).replace("torch.", ""), "shape": list(tensor.shape)}
    if tensor.numel() <= MAX_VALUES:
        flat = tensor.reshape(-1)
        info["values"] = (flat if flat.dtype == torch.bool else flat.double()).tolist()
    return info


def _gram(value: Any) -> dict[str, Any]:
    """The inner products of a 2-D output's rows (its shape alone when it is not 2-D)."""
    tensor = _as_tensor(value)
    if tensor is None:
        return {"type": type(value).__name__[:100]}
    info: dict[str, Any] = {"dtype": str(tensor.dtype).replace("torch.", ""), "shape": list(tensor.shape)}
    if tensor.dim() == 2 and tensor.shape[0] <= 256 and tensor.is_floating_point():
        rows = tensor.double()
        info["gram"] = (rows @ rows.T).reshape(-1).tolist()
    return info

