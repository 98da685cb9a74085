"""`checkpoint`: the model checkpoint behind a CS224N W21 A5 dev prediction file, decoded again.

A student of A5 trains the course's GPT, saves it (`torch.save(model.state_dict(), path)`:
`vanilla.model.params` for 2d, `vanilla.finetune.params` for 2f, `synthesizer.finetune.params`
for 2g.i) and writes the dev predictions with it. Where the submission holds that checkpoint,
this check loads it in the sandbox with `torch.load(path, weights_only=True)` (tensors and plain
containers only: a pickled object is refused and nothing in the file runs) into attngrade's own
copy of the course's GPT (`attngrade.sandbox.drivers`; never the student's code, so the
checkpoint is judged by itself), vanilla or synthesizer attention as its parameter names say. It
then answers a sample of dev questions as the handout's evaluation does (the question, the mask
character ⁇, greedy decoding of at most 32 characters, cut at the next ⁇), with the vocabulary
the handout's `CharCorruptionDataset` builds from the course's wiki.txt
(`attngrade/data/cs224n-w21-a5/wiki-vocabulary.json`), and compares the answers with the
prediction file's lines for those rows.

The rows are drawn by the grader from the checkpoint's and the file's hashes (the same files give
the same rows on every run). Where an answer differs from the file's line, the driver also feeds
the line to the model and sends how far its characters fall below the model's best choice: a gap
within `TIE` is a tie that another machine's rounding decides either way (a checkpoint trained on
a GPU and decoded here on the CPU), and the row counts as reproduced, said as such.

Outcomes (`ctx.points` is the check's points; the bundled A5 parts give it none, so the check
only informs and flags there):

* reproduced (every decoded row, ties at most `MAX_TIES` of them): the points, and "the checkpoint
  reproduces 30 of 30 sampled rows of your dev predictions";
* not reproduced: an integrity flag for course staff (`evidence["flags"]`, with the rows that
  differ), the agreement in the feedback, and the points wait for staff: never a 0; so do they where
  the file's rows cannot be matched with the dev set's (not compared) and the checkpoint is required;
* no checkpoint: graded as without this check (the points, no feedback), unless the params say
  `require: checkpoint`: then the points wait for staff, with the reason;
* a checkpoint that is not the course's model (not a checkpoint torch reads, a pickled payload,
  other names or shapes, another vocabulary, too large, too slow, too much memory): the student's
  problem, with a clear message; it costs the points only where the checkpoint is required;
* what the host cannot decide (no PyTorch, too few rows decoded in the time): pending.

The checkpoint's size is bounded (`MAX_BYTES`) before a byte of it is read, and everything that
parses it runs in the sandbox child, under its memory and time limits.

Params: `file` (the field with the dev predictions; default the check's file field whose name
ends in `.predictions`), `checkpoint` (the field with the checkpoint; default the other file
field), `variant` (`vanilla` or `synthesizer`: the model the part's predictions come from; a
checkpoint of the other is flagged), `rows` (sampled dev rows, default 30), `n_head` (heads of
vanilla attention, which its shapes do not show; default 8, the handout's), `require`
(`checkpoint`), `timeout` (seconds for loading and decoding, default 30).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .. import sandbox
from ..errors import ConfigError
from ..reading import BinaryFileReading, FileReading
from ..records import CheckSpec, Part
from ..runtime.files import NotRead
from ..runtime.text import GRADER_OWN, quoted_from_code
from .accuracy import prediction_lines
from .base import Context, Outcome, Param
from .torch_module import sandbox_evidence

PARAMS = (Param("file", (str,)), Param("checkpoint", (str,)), Param("variant", (str,)), Param("rows", (int,)),
          Param("n_head", (int,)), Param("require", (str,)), Param("timeout", (float,)))
VARIANTS = ("vanilla", "synthesizer")
MAX_BYTES = 32 * 1024**2  # a checkpoint read at most: room for the handout's GPT, not for a model far past it
ROWS = 30  # dev rows decoded
MIN_ROWS = 10  # rows that must be decoded in the time for a verdict
N_HEAD = 8  # the handout's head count
TIMEOUT = 30.0  # seconds of CPU for loading one checkpoint and decoding its rows
# Logits this close are equal to another machine's rounding (float32 on a GPU against the CPU): an
# absolute bound, never sized by the checkpoint's own logits.
TIE = 1e-3
MAX_TIES = 0.1  # of the decoded rows: more rows decided only by ties is a flag of its own
SHOWN_ROWS = 10  # rows that differ named in a flag (evidence holds them all)
ANSWER = 32  # characters the handout's evaluation decodes at most: a longer line is sent clipped past them
JOB_FILE = "checkpoint.params"  # the checkpoint's name in the sandbox's folder (the student's may be any)
DEV = ("cs224n-w21-a5", "birth_dev.tsv")
VOCABULARY = ("cs224n-w21-a5", "wiki-vocabulary.json")


# -- the file -------------------------------------------------------------------------------------
class CheckpointFile(BinaryFileReading):
    """A model checkpoint of a submission: the reader's binary file (sized and hashed when read, its bytes
    read again only here), bounded by the checkpoint's own limit unless told otherwise."""

    @classmethod
    def at(cls, path: Path | str, limit: int = MAX_BYTES) -> "CheckpointFile":
        return super().at(path, limit)


# -- the course's data ----------------------------------------------------------------------------
@lru_cache(maxsize=1)
def vocabulary() -> tuple[str, ...]:
    """The handout's id -> character table for wiki.txt (pad, mask, then its characters sorted)."""
    folder, name = VOCABULARY
    text = files("attngrade").joinpath("data").joinpath(folder).joinpath(name).read_text(encoding="utf-8")
    return tuple(json.loads(text)["itos"])


@lru_cache(maxsize=1)
def dev_questions() -> tuple[str, ...]:
    """The questions of the packaged dev set, in its order."""
    folder, name = DEV
    text = files("attngrade").joinpath("data").joinpath(folder).joinpath(name).read_text(encoding="utf-8")
    return tuple(row.split("\t")[0] for row in text.split("\n") if row.strip())


def sample_rows(checkpoint_sha: str, file_sha: str, seed: int, count: int, total: int, salt: bytes = b"") -> list[int]:
    """`count` of `total` rows (0-based, in order), drawn from the two files' hashes and the grader's secret
    `salt`: the same submission gets the same rows in every run into one OUT, and a student who edits
    the file cannot work out which rows to leave alone."""
    digest = hashlib.sha256(f"{seed}:{checkpoint_sha}:{file_sha}:{salt.hex()}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    return sorted(int(i) for i in rng.choice(total, size=min(count, total), replace=False))


# -- params ---------------------------------------------------------------------------------------
def prepare(params: Mapping[str, Any], part: Part, spec: CheckSpec) -> dict[str, Any]:
    fields = {f.name: f for f in part.fields}
    on_file = [n for n in spec.fields if fields[n].kind == "file"]
    file = params.get("file") or next((n for n in on_file if str(fields[n].filename or "").endswith(".predictions")),
                                      None)
    checkpoint = params.get("checkpoint") or next((n for n in on_file if n != file), None)
    for role, name in (("file", file), ("checkpoint", checkpoint)):
        if name is None:
            raise ConfigError(f"the check needs a file field for its {role}")
        if name not in on_file:
            raise ConfigError(f"{role} names '{name}', which is not one of the check's file fields {on_file}")
    if file == checkpoint:
        raise ConfigError("file and checkpoint must be two different fields")
    variant = params.get("variant")
    if variant is not None and variant not in VARIANTS:
        raise ConfigError(f"variant must be one of {list(VARIANTS)}")
    rows, n_head = params.get("rows", ROWS), params.get("n_head", N_HEAD)
    if not 1 <= rows <= len(dev_questions()) or n_head < 1:
        raise ConfigError(f"rows must be 1 to {len(dev_questions())} and n_head at least 1")
    require = params.get("require")
    if require not in (None, "checkpoint"):
        raise ConfigError("require takes one value, checkpoint")
    if require and spec.points <= 0:
        raise ConfigError("require: checkpoint holds the check's points back for staff; give the check the "
                          "points of the dev share it guards")
    timeout = float(params.get("timeout") or TIMEOUT)
    if not 1 <= timeout <= 600:
        raise ConfigError("timeout must be 1 to 600 seconds")
    return {"file": file, "checkpoint": checkpoint, "variant": variant, "rows": rows, "n_head": n_head,
            "require": bool(require), "timeout": timeout, "filename": fields[checkpoint].filename or checkpoint,
            "file_filename": fields[file].filename or file}


# -- what was found -------------------------------------------------------------------------------
# States of a checkpoint, and who they are for (see the module's docstring).
REPRODUCED, ABSENT, UNUSABLE, DIFFERS, NOT_COMPARED, UNDECIDED = (
    "reproduced", "absent", "unusable", "differs", "not compared", "undecided")


@dataclass
class Found:
    """What the check found: a state, what the student reads, what staff read, the evidence."""

    state: str
    lines: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)
    failed: bool = False


def outcome(found: Found, ctx: Context) -> Outcome:
    """The points of a state: earned when reproduced, or where nothing is required of a checkpoint that is
    absent or unusable; waiting for staff where it differs or nothing could be decided (never a 0 for a
    file the checkpoint does not reproduce); 0 for a required checkpoint that is unusable."""
    p, points = ctx.prepared, ctx.points
    if found.state == REPRODUCED:
        earned, pending = points, False
    elif found.state in (DIFFERS, UNDECIDED) or found.state == NOT_COMPARED and p["require"]:
        earned, pending = 0.0, points > 0  # (a file whose rows cannot be matched: not a 0 either)
    elif found.state == ABSENT:
        earned, pending = (0.0, True) if p["require"] else (points, False)
    else:  # UNUSABLE, or NOT_COMPARED where nothing is required: the student's files
        earned, pending = (0.0, False) if p["require"] else (points, False)
    evidence = dict(found.evidence)
    if found.flags:
        evidence["flags"] = list(found.flags)
    if pending:
        found.lines.append("its points wait for course staff")
    return Outcome(round(earned, 6), tuple(found.lines), evidence, is_pending=pending,
                   failed=found.failed and points > 0)


# -- the check ------------------------------------------------------------------------------------
def code_fields(spec: Any) -> tuple[str, ...]:
    """The field holding the checkpoint: only a submission that hands one in starts a sandbox job."""
    prepared = spec.prepared or {}
    return (prepared.get("checkpoint") or (spec.params or {}).get("checkpoint") or "checkpoint",)


def check(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    p = ctx.prepared
    reading = answers.get(p["checkpoint"])
    if isinstance(reading, FileReading) and not callable(getattr(reading, "data", None)):
        return outcome(Found(UNUSABLE, [f"{reading.name} is a text file, not a checkpoint: torch.save writes a "
                                        "binary one"]), ctx)
    if not isinstance(reading, FileReading):
        if not p["require"]:
            return outcome(Found(ABSENT), ctx)
        return outcome(Found(ABSENT, [f"{p['filename']}: this homework asks for the checkpoint your dev "
                                      f"predictions were decoded with, and none was handed in"]), ctx)
    return outcome(_examine(reading, answers.get(p["file"]), ctx), ctx)


def _examine(reading: Any, predictions: Any, ctx: Context) -> Found:
    p = ctx.prepared
    if not isinstance(predictions, FileReading):
        return Found(NOT_COMPARED, [f"{reading.name}: not compared, no dev prediction file ({p['file_filename']}) "
                                    "was handed in"])
    lines, _ = prediction_lines(predictions.text)
    questions = dev_questions()
    if len(lines) != len(questions):
        return Found(NOT_COMPARED, [f"{reading.name}: not compared, {predictions.name} has {len(lines)} lines and "
                                    f"the dev set {len(questions)}, so its rows cannot be matched"])
    if sandbox.torch_missing():
        return Found(UNDECIDED, [f"{reading.name}: not decoded: PyTorch is not installed where this is graded "
                                 "(pip install 'attngrade[torch]')"])
    try:
        data = reading.data()
    except (NotRead, OSError) as err:
        why = err.reason if isinstance(err, NotRead) else f"could not be read ({err.strerror})"
        return Found(UNUSABLE, [f"{reading.name} {why}"])
    rows = sample_rows(reading.sha256, predictions.sha256, ctx.seed, p["rows"], len(questions), ctx.salt)
    job = {"kind": "checkpoint", "file": JOB_FILE, "itos": list(vocabulary()), "n_head": p["n_head"],
           "rows": [{"row": i, "query": questions[i], "line": lines[i][:ANSWER + 1]} for i in rows],
           "budget": 0.6 * p["timeout"], "wall": 0.8 * p["timeout"]}
    run = sandbox.run({JOB_FILE: data}, job, timeout=p["timeout"])
    evidence = {"file": reading.name, "sha256": reading.sha256, "size": reading.size, "rows": [i + 1 for i in rows],
                "sandbox": sandbox_evidence(run)}
    if run.status != "ok" or not isinstance(run.data, dict):
        found = _not_finished(run, reading.name, p["timeout"])
    else:
        try:
            found = _judge(run.data, job, reading.name, predictions.name, ctx)
        except (TypeError, KeyError, ValueError, IndexError, AttributeError) as err:
            found = Found(UNDECIDED, [f"{reading.name}: what came back from decoding it could not be read "
                                      f"({type(err).__name__}); course staff will look at it"], failed=True)
    found.evidence = {f"checkpoint:{p['checkpoint']}": {**evidence, **found.evidence}}
    return found


def _not_finished(run: Any, name: str, timeout: float) -> Found:
    """A sandbox job that returned no data: attngrade's failure only when the supervisor says so; a job
    stopped for its time is undecided (a loaded host is slow too); any other end is the file's doing."""
    if run.status == "failed":
        return Found(UNDECIDED, [f"{GRADER_OWN[1]} while decoding {name} (the sandbox said "
                                 f"{quoted_from_code(run.error, 300)}); course staff will look at it"], failed=True)
    if run.status == "timeout":
        return Found(UNDECIDED, [f"{name}: loading and decoding it took more than {timeout:g} s and was stopped "
                                 "(the course's GPT loads in about a second)"])
    reasons = {"memory": "loading it needed more memory than allowed and was stopped",
               "disk": "loading it wrote more into its folder than allowed and was stopped",
               "too_large": "loading it sent back more than a check reads",
               "malformed": "loading it sent back something malformed",
               "crashed": f"loading it broke attngrade's loader ({quoted_from_code(run.error, 300)})"}
    signal = (run.exit or {}).get("signal")
    why = reasons.get(run.status) or (f"loading it ended the process that read it ({quoted_from_code(signal, 40)})"
                                      if signal else "loading it ended the process that read it")
    return Found(UNUSABLE, [f"{name}: {why}; it is not a checkpoint of the course's GPT as torch.save writes one"])


def unusable(name: str, said: Mapping[str, Any]) -> str:
    """Why a checkpoint cannot be the course's model, from what the sandbox's loader found in it."""
    kind, detail = said.get("kind"), said.get("detail")
    save = "save the model with torch.save(model.state_dict(), path), as the handout's run.py does"
    if kind == "refused":
        return (f"{name}: torch.load(weights_only=True) refused it: it holds something other than tensors "
                f"({quoted_from_code(detail, 300)}), and nothing in it was run; {save}")
    if kind == "unreadable":
        return f"{name} is not a checkpoint torch can read ({quoted_from_code(detail, 300)}); {save}"
    if kind == "unpacks":
        return f"{name}: its zip entries unpack to {int(detail)} bytes, far more than the course's GPT needs"
    if kind == "not_state_dict":
        held = quoted_from_code(detail if isinstance(detail, str) else ", ".join(map(str, detail)), 300)
        return f"{name} does not map names to tensors (it holds {held}); {save}"
    if kind == "too_large":
        return f"{name} describes a model far larger than the course's GPT ({quoted_from_code(detail, 200)})"
    if kind == "vocabulary":
        return (f"{name}: its token embedding has {int(detail)} rows, but the vocabulary the handout builds from "
                f"wiki.txt has {len(vocabulary())} characters, so it cannot have written these predictions")
    if kind == "heads":
        return (f"{name}: its width {int(detail['n_embd'])} is not a multiple of {int(detail['n_head'])} heads, the "
                "course's GPT's head count")
    if kind == "not_gpt":
        return f"{name} is not the course's GPT: {_differences(detail)}"
    raise ValueError(f"unknown reason {kind!r}")


def _differences(detail: Mapping[str, Any]) -> str:
    """Missing, unexpected and misshapen tensors, each list clipped, with how many there were."""
    counts = detail.get("counts") or [len(detail.get(k) or ()) for k in ("missing", "unexpected", "shapes")]
    said = []
    for (label, key), count in zip((("missing", "missing"), ("unexpected", "unexpected")), counts):
        names = [quoted_from_code(n, 100) for n in (detail.get(key) or ())[:5]]
        if names:
            more = f" and {count - len(names)} more" if count > len(names) else ""
            said.append(f"{label} {', '.join(names)}{more}")
    for entry in (detail.get("shapes") or ())[:5]:
        expected = f", expected {list(map(int, entry[2]))}" if len(entry) > 2 else ""
        said.append(f"{quoted_from_code(entry[0], 100)} has shape {list(map(int, entry[1]))}{expected}")
    return "; ".join(said)


def describe_model(config: Mapping[str, Any]) -> str:
    kind = "synthesizer" if config["synthesizer"] is True else "vanilla"
    return (f"a {kind} GPT: {int(config['n_layer'])} layers, {int(config['n_head'])} heads, width "
            f"{int(config['n_embd'])}, block {int(config['block_size'])}")


def _judge(data: Mapping[str, Any], job: Mapping[str, Any], name: str, file_name: str, ctx: Context) -> Found:
    """The decoded rows against the file's lines: reproduced, tied to rounding, or different."""
    if "unusable" in data:
        return Found(UNUSABLE, [unusable(name, data["unusable"])])
    config, wanted = data["config"], {r["row"]: r["line"] for r in job["rows"]}
    exact, ties, differ, errors = [], [], [], []
    for row in data["rows"]:
        line = wanted[row["row"]]
        if "error" in row:
            errors.append({"row": row["row"] + 1, "error": str(row["error"])[:300]})
        elif not isinstance(row["answer"], str):
            raise TypeError("an answer that is not text")
        elif row["answer"] == line:
            exact.append(row["row"])
        elif tie(row.get("gap")):
            ties.append(row["row"])
        else:
            differ.append({"row": row["row"] + 1, "file": line, "checkpoint": row["answer"], "gap": row.get("gap")})
    decoded, sampled = len(exact) + len(ties) + len(differ), len(job["rows"])
    found = Found(REPRODUCED, evidence={"model": dict(config), "decoded": decoded, "reproduced": len(exact),
                                        "ties": [i + 1 for i in ties], "differ": differ, "errors": errors,
                                        "stopped": bool(data.get("stopped")), "seconds": data.get("seconds")})
    _variant(found, config, name, ctx)
    if decoded < min(MIN_ROWS, sampled):
        found.state = UNDECIDED
        found.lines.append(f"{name}: only {decoded} of {sampled} sampled dev rows could be decoded in the time, too "
                           "few to compare with your predictions")
        return found
    agreed = f"{name}: the checkpoint ({describe_model(config)}) reproduces {len(exact) + len(ties)} of {decoded} " \
             f"sampled rows of your dev predictions ({file_name}), decoded as the handout's evaluation decodes"
    if ties:
        agreed += f" ({len(ties)} of them only up to a tie between two characters, which rounding decides)"
    many_ties = len(ties) > MAX_TIES * decoded
    if not differ and not many_ties:
        found.lines.insert(0, agreed)
        return found
    found.state = DIFFERS
    found.lines.insert(0, agreed + "; course staff will compare the rows that differ")
    found.flags.append(_differ_flag(ctx.part.id, name, file_name, differ, decoded) if differ else
                       f"{ctx.part.id}: {name} agrees with {file_name} on {len(ties)} of {decoded} sampled dev rows "
                       "only up to ties between characters: a trained model rarely ties so often")
    return found


def tie(gap: Any) -> bool:
    """A gap the file's answer is below the model's best choice that rounding may close: finite, small."""
    return type(gap) in (int, float) and math.isfinite(gap) and 0 <= gap <= TIE


def _differ_flag(part: str, name: str, file_name: str, differ: list[dict[str, Any]], decoded: int) -> str:
    shown = []
    for d in differ[:SHOWN_ROWS]:
        gap = d["gap"]
        below = (f" (the model scores the file's answer up to {gap:.3g} below its own choice)"
                 if type(gap) in (int, float) and math.isfinite(gap) else "")
        shown.append(f"row {d['row']}: the file says {quoted_from_code(d['file'], 60)}, the checkpoint gives "
                     f"{quoted_from_code(d['checkpoint'], 60)}{below}")
    more = f"; and {len(differ) - SHOWN_ROWS} more" if len(differ) > SHOWN_ROWS else ""
    return (f"{part}: {name} does not reproduce {file_name}: {len(differ)} of {decoded} sampled dev rows differ "
            f"({'; '.join(shown)}{more}): were the predictions written by this model?")


def _variant(found: Found, config: Mapping[str, Any], name: str, ctx: Context) -> None:
    """A checkpoint of the other model than the part's: a flag for staff, and said to the student."""
    expected = ctx.prepared["variant"]
    actual = "synthesizer" if config["synthesizer"] is True else "vanilla"
    if expected is None or actual == expected:
        return
    found.lines.append(f"{name} holds a {actual} GPT, not the {expected} model this part's predictions come from")
    found.flags.append(f"{ctx.part.id}: {name} holds a {actual} GPT, but the part's predictions should come from the "
                       f"{expected} model: were they made with the other one?")


__all__ = ["PARAMS", "CheckpointFile", "check", "prepare", "sample_rows", "unusable", "vocabulary"]
