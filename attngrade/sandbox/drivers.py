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

- `checkpoint`: load a model checkpoint with `torch.load(weights_only=True)` (tensors and plain
  containers only: a pickled object is refused, never built) into attngrade's own copy of the
  course's GPT (vanilla or synthesizer attention, as its parameter names say; never the student's
  code), then decode the job's dev questions greedily as the handout's evaluation does; returns each
  answer, and how far the prediction file's answer is from the model's own choice where they differ.

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
import math
import os
import random
import re
import sys
import time
import types
import zipfile
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
    if kind == "checkpoint":
        return checkpoint(job)
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
    # Lines as Python counts them: the grader wrote the module with "\n" alone (a form feed in a line is text).
    lines = path.read_text(encoding="utf-8").split("\n")
    for index, (first, last) in enumerate(job.get("chunks") or ()):
        text = "\n" * (int(first) - 1) + "\n".join(lines[int(first) - 1:int(last)]) + "\n"
        try:
            # The student's notebook code, in this sandboxed child: what importing it as a module
            # would run, one top-level statement at a time.
            exec(compile(text, str(path), "exec"), mod.__dict__)  # noqa: S102  # safe: sandbox child only
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



# -- a checkpoint of the course's GPT ---------------------------------------------------------
MASK_CHAR = "\u2047"  # the handout's mask character: it ends a question and its answer
STEPS = 32  # characters the handout's evaluation generates after a question's mask character
MAX_UNPACKED = 256 * 1024**2  # bytes a checkpoint's zip entries may unpack to (an entry may be compressed)
MAX_VALUES_HELD = 64 * 1024**2  # values of the checkpoint's tensors, or of the model built for it
MAX_LISTED = 20  # names sent back of the tensors that are missing, unexpected or of another shape
LARGEST = {"n_layer": 64, "n_embd": 4096, "block_size": 4096}  # past these it is not the course's model
_BLOCKS = re.compile(r"blocks\.([0-9]{1,6})\.")  # anchored, no repetition of a group: linear


class Unusable(Exception):
    """A checkpoint that cannot be the course's model: `kind` names the reason for the grader's wording,
    `detail` carries what the file said (names, shapes, a count)."""

    def __init__(self, kind: str, detail: Any = None) -> None:
        super().__init__(kind)
        self.kind, self.detail = kind, detail


def checkpoint(job: Mapping[str, Any]) -> dict[str, Any]:
    """Load the job's checkpoint into attngrade's GPT and decode its rows, until the job's budget is spent."""
    import torch

    started = (time.process_time(), time.monotonic())
    try:
        state = _state_dict(job["file"])
        config = _gpt_config(state, job)
        model = _reference_gpt(config)
        _load_weights(model, state)
    except Unusable as err:
        return {"unusable": {"kind": err.kind, "detail": err.detail}}
    except BaseException as err:  # noqa: BLE001 - torch's loader on a hostile file, whatever it raises
        return {"unusable": {"kind": "unreadable", "detail": error_text(err)}}
    out: dict[str, Any] = {"config": config, "values": sum(int(t.numel()) for t in state.values()), "rows": [],
                           "load_seconds": round(time.process_time() - started[0], 3)}
    itos = [str(c) for c in job["itos"]]
    stoi = {c: i for i, c in enumerate(itos)}
    with torch.no_grad():
        for row in job["rows"]:
            if (time.process_time() - started[0] > float(job["budget"])
                    or time.monotonic() - started[1] > float(job["wall"])):
                out["stopped"] = True
                break
            try:
                out["rows"].append(_decode_row(model, row, stoi, itos, config["block_size"]))
            except BaseException as err:  # noqa: BLE001 - the checkpoint's numbers may break the forward pass
                out["rows"].append({"row": row["row"], "error": error_text(err)})
    out["seconds"] = round(time.process_time() - started[0], 3)
    return out


def _state_dict(path: str) -> dict[str, Any]:
    """The checkpoint's name -> tensor mapping, loaded with weights_only: only tensors and plain containers
    are built, so a pickled callable (a `__reduce__` payload) is refused before anything runs."""
    import torch

    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
        if unpacked > MAX_UNPACKED:
            raise Unusable("unpacks", unpacked)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - whatever the file makes torch's loader raise
        raise Unusable(*_load_failure(err)) from None
    if not isinstance(state, Mapping) or not state:
        raise Unusable("not_state_dict", type(state).__name__[:100])
    if all(isinstance(k, str) and k.startswith("module.") for k in state):  # saved through nn.DataParallel
        state = {k[len("module."):]: v for k, v in state.items()}
    odd = [str(k)[:200] for k, v in state.items() if not isinstance(k, str) or not isinstance(v, torch.Tensor)]
    if odd:
        raise Unusable("not_state_dict", odd[:MAX_LISTED])
    total = sum(int(v.numel()) for v in state.values())
    if total > MAX_VALUES_HELD:
        raise Unusable("too_large", total)
    return dict(state)


def _load_failure(err: BaseException) -> tuple[str, str]:
    """Why torch's loader refused the file: `refused` (weights_only met a Python object's class or function, a
    global, which it never builds; its own words follow its marker) or `unreadable` (no checkpoint torch can
    read: bytes that are no pickle, a broken zip)."""
    text = str(err)
    marker = "WeightsUnpickler error:"
    if marker in text:
        lines = [line.strip() for line in text.split(marker, 1)[1].splitlines() if line.strip()]
        first = lines[0].split(". ", 1)[0][:300] if lines else ""  # (torch's advice to allow the global stays out)
        return ("refused" if first.startswith("Unsupported global") else "unreadable"), first
    # A global from a module torch blocks outright (os, posix, subprocess) is said without that marker.
    blocked = next((line.strip() for line in text.splitlines()
                    if line.strip().startswith("Trying to load unsupported GLOBAL")), "")
    if blocked:
        return "refused", blocked.split(". ", 1)[0][:300]
    return "unreadable", error_text(err)


def _gpt_config(state: Mapping[str, Any], job: Mapping[str, Any]) -> dict[str, Any]:
    """The GPT the tensors' names and shapes describe: vanilla or synthesizer attention, its layers, width,
    block size and vocabulary. Vanilla attention's head count is not in its shapes: the job gives it."""

    def shape(name: str, dims: int) -> list[int]:
        value = state.get(name)
        if value is None:
            raise Unusable("not_gpt", {"missing": [name]})
        if value.dim() != dims:
            raise Unusable("not_gpt", {"shapes": [[name, list(value.shape)]]})
        return [int(n) for n in value.shape]

    vocab, width = shape("tok_emb.weight", 2)
    block = shape("pos_emb", 3)[1]
    layers = {int(m.group(1)) for name in state if (m := _BLOCKS.match(name))}
    config = {"vocab_size": vocab, "n_embd": width, "block_size": block, "n_layer": max(layers, default=-1) + 1,
              "synthesizer": "blocks.0.attn.w1.weight" in state}
    too_large = {name: config[name] for name, most in LARGEST.items() if config[name] > most}
    if too_large:
        raise Unusable("too_large", too_large)
    if config["n_layer"] == 0:
        raise Unusable("not_gpt", {"missing": ["blocks.0.ln1.weight"]})
    if vocab != len(job["itos"]):
        raise Unusable("vocabulary", vocab)
    if config["synthesizer"]:
        head = shape("blocks.0.attn.w2", 2)[0]
        if not head or width % head:
            raise Unusable("not_gpt", {"shapes": [["blocks.0.attn.w2", [head, block - 1]]]})
        config["n_head"] = width // head
    else:
        config["n_head"] = int(job["n_head"])
        if width % config["n_head"]:
            raise Unusable("heads", {"n_embd": width, "n_head": config["n_head"]})
    per_layer = 12 * width * width + block * block + 16 * width
    if config["n_layer"] * per_layer + 2 * vocab * width + block * width > MAX_VALUES_HELD:
        raise Unusable("too_large", config)
    return config


def _reference_gpt(config: Mapping[str, Any]) -> Any:
    """attngrade's copy of the course's GPT (the handout's model.py and attention.py, its names and its
    computation; dropout left out, as evaluation runs in eval mode), never the student's code."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    d, h, block, synthesizer = config["n_embd"], config["n_head"], config["block_size"], config["synthesizer"]

    class Attention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            if synthesizer:
                self.w1 = nn.Linear(d, d)
                self.w2 = nn.Parameter(torch.zeros(d // h, block - 1))
                self.b2 = nn.Parameter(torch.zeros(block - 1))
            else:
                self.key, self.query = nn.Linear(d, d), nn.Linear(d, d)
            self.value, self.proj = nn.Linear(d, d), nn.Linear(d, d)
            self.register_buffer("mask", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

        def forward(self, x: Any) -> Any:
            b, t, c = x.size()

            def heads(y: Any) -> Any:
                return y.view(b, t, h, c // h).transpose(1, 2)

            if synthesizer:
                scores = F.relu(heads(self.w1(x))) @ self.w2[:, :t] + self.b2[:t]
            else:
                k, q = heads(self.key(x)), heads(self.query(x))
                scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            weights = F.softmax(scores.masked_fill(self.mask[:, :, :t, :t] == 0, -1e10), dim=-1)
            return self.proj((weights @ heads(self.value(x))).transpose(1, 2).contiguous().view(b, t, c))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1, self.ln2, self.attn = nn.LayerNorm(d), nn.LayerNorm(d), Attention()
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d), nn.Dropout(0.0))

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok_emb = nn.Embedding(config["vocab_size"], d)
            self.pos_emb = nn.Parameter(torch.zeros(1, block, d))
            self.blocks = nn.Sequential(*[Block() for _ in range(config["n_layer"])])
            self.ln_f = nn.LayerNorm(d)
            self.head = nn.Linear(d, config["vocab_size"], bias=False)

        def forward(self, idx: Any) -> Any:
            x = self.tok_emb(idx) + self.pos_emb[:, :idx.size(1), :]
            return self.head(self.ln_f(self.blocks(x)))

    return GPT().eval()  # safe: torch's Module.eval (inference mode), not Python's eval


def _load_weights(model: Any, state: Mapping[str, Any]) -> None:
    """The checkpoint's tensors copied into the model, once every name and shape is the model's own. The
    causal masks may be absent (a buffer saved or not); present, they are loaded, as the handout's
    `load_state_dict` loads them."""
    expected = model.state_dict()
    missing = [n for n in expected if n not in state and not n.endswith(".attn.mask")]
    unexpected = [n[:200] for n in state if n not in expected]
    shapes = [[n, list(state[n].shape), list(t.shape)] for n, t in expected.items()
              if n in state and tuple(state[n].shape) != tuple(t.shape)]
    if missing or unexpected or shapes:
        raise Unusable("not_gpt", {"missing": missing[:MAX_LISTED], "unexpected": unexpected[:MAX_LISTED],
                                   "shapes": shapes[:MAX_LISTED],
                                   "counts": [len(missing), len(unexpected), len(shapes)]})
    model.load_state_dict(state, strict=False)


def _decode_row(model: Any, row: Mapping[str, Any], stoi: Mapping[str, int], itos: list[str],
                block: int) -> dict[str, Any]:
    """One dev question answered as the handout's evaluation answers it; where the prediction file's line is
    another answer, how far it is from the model's own choices (the largest logit gap over its characters)."""
    query = str(row["query"]) + MASK_CHAR
    if any(c not in stoi for c in query):
        return {"row": row["row"], "error": "a character of the question is not in the vocabulary"}
    ids = [stoi[c] for c in query]
    found: dict[str, Any] = {"row": row["row"],
                             "answer": "".join(itos[i] for i in _greedy(model, ids, block, stoi[MASK_CHAR]))}
    line = row.get("line")
    if isinstance(line, str) and line != found["answer"]:
        found["gap"] = _gap(model, ids, line, stoi, block)
    return found


def _greedy(model: Any, ids: list[int], block: int, mask: int) -> list[int]:
    """The handout's `sample(model, x, 32, sample=False)`, cut at the first mask character it generates
    (its evaluation keeps only what comes before it: greedy, so nothing after changes what came before)."""
    import torch
    import torch.nn.functional as F

    x = torch.tensor([ids], dtype=torch.long)
    answer: list[int] = []
    for _ in range(STEPS):
        logits = model(x[:, -block:])[:, -1, :]
        _, ix = torch.topk(F.softmax(logits, dim=-1), k=1, dim=-1)
        if int(ix) == mask:
            break
        answer.append(int(ix))
        x = torch.cat((x, ix), dim=1)
    return answer


def _gap(model: Any, ids: list[int], line: str, stoi: Mapping[str, int], block: int) -> float | None:
    """How far the line's characters (and the mask character after them) fall below the model's best logit,
    at worst, fed to it one after another; None when greedy decoding could never give the line."""
    import torch

    if len(line) > STEPS or MASK_CHAR in line or any(c not in stoi for c in line):
        return None
    seq = ids + [stoi[c] for c in line] + ([stoi[MASK_CHAR]] if len(line) < STEPS else [])
    if len(seq) - 1 > block:
        return None
    logits = model(torch.tensor([seq[:-1]], dtype=torch.long))[0, len(ids) - 1:]
    targets = torch.tensor(seq[len(ids):], dtype=torch.long)
    gaps = logits.max(dim=-1).values - logits.gather(1, targets[:, None])[:, 0]
    return float(gaps.max())
