"""`span_corruption`: CS224N A5 2e, `CharCorruptionDataset.__getitem__`, checked by the
properties the handout states; no reference implementation is needed.

The sandbox child builds the student's dataset on documents the grader made up and
draws items (`attngrade.sandbox.drivers.span_corruption`); everything below reads those
ids. Each draw is decoded with the dataset's own vocabulary and split as

    prefix ⁇ suffix ⁇ content [⁇] □…

(the handout's rule has two mask characters; its own examples show a third after the
content: both are accepted, and the feedback says which the code produces).

Properties (weights in parentheses, out of 10)
-----------------------------------------------
* `tensors` (1): x and y are 1-D long tensors of block_size − 1 ids, y is x shifted by one.
* `layout` (2): every draw decodes to the form above; pads only at the end.
* `content` (2): prefix + content + suffix is a contiguous piece of the document, so the
  masked content is real text.
* `lengths` (2): every truncation length from 4 to ⌊7/8 · block_size⌋ occurs and no other,
  at a block size where 7/8 · block_size is an integer and one where it is not.
* `share` (1.5): the masked share of the truncated document averages about 1/4
  (between 0.15 and 0.35) and varies.
* `short` (1): on documents shorter than the truncation cap the masked span is empty in at
  most 10% of draws.
* `random` (0.5): repeated draws of one document differ.

A crash on a document of 0 to 3 characters is a warning (the course's wiki.txt ends with
an empty document), never a deduction. Feedback shows the first failing draw decoded.

Params: `file` (the field with dataset.py, default the check's first field), `class`
(default CharCorruptionDataset), `block_sizes` (default [24, 28]: 7/8 of 24 is an integer,
of 28 it is not, and both leave room for a third mask character), `draws` (per block size,
default 300), `timeout` (seconds, default 10).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping

import numpy as np

from ..errors import ConfigError
from ..records import CheckSpec, Part
from ..runtime.text import quoted_from_code
from .base import Context, Outcome, Param
from .messages import raised, said
from .torch_module import MALFORMED, TIMEOUT, Property, code_files, malformed, run_code, score

MASK, PAD = "\u2047", "\u25a1"
PARAMS = (Param("file", (str,)), Param("class", (str,)), Param("block_sizes", (list,)), Param("draws", (int,)),
          Param("timeout", (float,)))
WEIGHTS = {"tensors": 1.0, "layout": 2.0, "content": 2.0, "lengths": 2.0, "share": 1.5, "short": 1.0,
           "random": 0.5}
SHARE_RANGE = (0.15, 0.35)
EMPTY_LIMIT = 0.10
SHORT_BLOCK = 32
TINY = ("", "a", "ab", "abc")
CRASH_CONSEQUENCE = ("the course's wiki.txt ends with an empty document, so pretraining stops with this error "
                     "whenever that document is drawn")


def prepare(params: Mapping[str, Any], part: Part, spec: CheckSpec) -> dict[str, Any]:
    sizes = params.get("block_sizes") or [24, 28]
    if any(not isinstance(b, int) or b < 24 for b in sizes):
        raise ConfigError("block_sizes must be whole numbers of at least 24 (room for the cap and three "
                          "mask characters)")
    field = params.get("file") or spec.fields[0]
    if field not in spec.fields:
        raise ConfigError(f"file names '{field}', which is not one of the check's fields")
    return {"file": field, "class": params.get("class") or "CharCorruptionDataset", "block_sizes": list(sizes),
            "draws": int(params.get("draws") or 300), "timeout": float(params.get("timeout") or TIMEOUT)}


# -- the documents ----------------------------------------------------------------------------
def _words(rng: np.random.Generator, length: int) -> str:
    """Made-up text of exactly `length` characters (letters, spaces, full stops)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    out: list[str] = []
    while sum(map(len, out)) < length:
        word = "".join(rng.choice(list(letters), size=int(rng.integers(2, 9))))
        out.append((word.capitalize() if not out or out[-1].endswith(". ") else word)
                   + (". " if rng.random() < 0.15 else " "))
    return "".join(out)[:length].replace("\n", " ")


def job_for(p: Mapping[str, Any], seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    cases = []
    for size in p["block_sizes"]:
        docs = [_words(rng, int(rng.integers(3 * size, 4 * size))) for _ in range(6)]
        cases.append({"name": f"long-{size}", "block_size": size, "documents": docs, "kind": "long",
                      "draws": [int(i) for i in rng.integers(0, len(docs), size=p["draws"])]})
    cap = SHORT_BLOCK * 7 // 8
    shorts = [_words(rng, n) for n in range(5, cap - 4)]
    cases.append({"name": "short", "block_size": SHORT_BLOCK, "documents": shorts, "kind": "short",
                  "draws": [int(i) for i in rng.integers(0, len(shorts), size=200)]})
    tiny_docs = [_words(rng, 40), *TINY]
    cases.append({"name": "tiny", "block_size": p["block_sizes"][0], "documents": tiny_docs, "kind": "tiny",
                  "draws": [i for i in range(1, len(tiny_docs)) for _ in range(2)]})
    repeat = [_words(rng, 60)]
    cases.append({"name": "repeat", "block_size": p["block_sizes"][0], "documents": repeat, "kind": "repeat",
                  "draws": [0] * 20})
    return {"kind": "span_corruption", "class": p["class"], "module": "dataset", "seed": seed, "cases": cases}


# -- reading draws ----------------------------------------------------------------------------
class Draw:
    """One item as drawn: decoded text, and its pieces when it has the expected form.

    Everything here comes from the student's process, which may send anything: a draw whose
    record is not what the driver sends is a draw with a problem, never an error of the check's,
    and the decoded text is at most one character per id (the vocabulary is one of characters)."""

    def __init__(self, case: Mapping[str, Any], record: Mapping[str, Any], itos: list[str] | str | None):
        self.block = int(case["block_size"])
        self.doc = ""
        self.error: str | None = None
        self.problem: str | None = None
        self.text = ""
        self.prefix = self.suffix = self.content = ""
        self.masks = 0
        try:
            self._read(case, record, itos)
        except MALFORMED as err:
            self.problem = f"your code sent back something malformed for this draw ({type(err).__name__})"

    def _read(self, case: Mapping[str, Any], record: Mapping[str, Any], itos: list[str] | str | None) -> None:
        doc = record["doc"]
        if type(doc) is not int or not 0 <= doc < len(case["documents"]):
            raise IndexError("a document the driver never drew")
        self.doc = case["documents"][doc]
        if record.get("error") is not None:
            self.error = raised(record["error"])
            return
        x, y = record.get("x") or {}, record.get("y") or {}
        want = self.block - 1
        for name, t in (("x", x), ("y", y)):
            if "type" in t:
                self.problem = f"{name} is not a tensor ({said(t['type'], 100)} of its type)"
            elif t.get("dtype") != "int64":
                self.problem = f"{name} has dtype {quoted_from_code(t.get('dtype'), 100)}, not torch.long"
            elif t.get("shape") != [want]:
                self.problem = (f"{name} has shape {quoted_from_code(t.get('shape'), 100)}, not [{want}] "
                                "(block_size - 1)")
            elif not isinstance(t.get("values"), list) or len(t["values"]) != want or \
                    any(type(i) is not int for i in t["values"]):
                raise ValueError("ids that are not a list of block_size - 1 whole numbers")
            if self.problem:
                return
        xs, ys = x["values"], y["values"]
        if xs[1:] != ys[:-1]:
            self.problem = "y is not x shifted by one position"
            return
        if isinstance(itos, str) or not itos:
            self.problem = itos or "the dataset has no itos table of its characters"
            return
        if any(not 0 <= i < len(itos) for i in xs + ys[-1:]):
            self.problem = "ids outside the dataset's vocabulary"
            return
        self.text = "".join(itos[i] for i in xs + ys[-1:])
        self._split()

    def _split(self) -> None:
        body = self.text.rstrip(PAD)
        if PAD in body:
            self.layout = f"a pad {PAD} before the end"
            return
        self.masks = body.count(MASK)
        parts = body.split(MASK)
        if self.masks > 3 and all(not piece for piece in parts[2:]):
            self.layout = f"the masked content is replaced by {self.masks - 2} mask characters instead of the text"
            return
        if self.masks not in (2, 3) or (self.masks == 3 and parts[3] != ""):
            self.layout = f"{self.masks} mask characters {MASK} where prefix{MASK}suffix{MASK}content is expected"
            return
        self.prefix, self.suffix, self.content = parts[0], parts[1], parts[2]
        self.layout = None

    layout: str | None = "not decoded"

    @property
    def piece(self) -> str:
        return self.prefix + self.content + self.suffix

    def show(self) -> str:
        doc = self.doc if len(self.doc) <= 60 else self.doc[:59] + "…"
        if self.error:
            return f"document {doc!r}: {self.error}"
        return f"document {doc!r} (block size {self.block}) gave x+y[-1] = {quoted_from_code(self.text, 300)}"


def vocabulary(itos: Any) -> list[str] | str | None:
    """The dataset's itos as sent back, if it is a list of single characters; else why not (None: none)."""
    if itos is None:
        return None
    if not isinstance(itos, list) or any(not isinstance(c, str) or len(c) != 1 for c in itos):
        return "the dataset's itos does not map every id to a single character"
    return itos


def check(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    p = ctx.prepared
    files = code_files(answers, [p["file"]])
    if not files:
        return Outcome(0.0, ("no dataset.py was handed in",))
    job = job_for(p, ctx.seed)
    run = run_code(files, job, p["timeout"])
    if isinstance(run, Outcome):
        return run
    try:
        return _judge(run, job, p, ctx.points)
    except MALFORMED as err:
        return malformed(run, err)


def _judge(run: Any, job: Mapping[str, Any], p: Mapping[str, Any], points: float) -> Outcome:
    data = run.data
    if data.get("import_error"):
        return score([Property("import", False, "dataset.py could not be imported: "
                               + raised(data["import_error"]))], points, run)
    cases = {c["name"]: c for c in job["cases"]}
    draws: dict[str, list[Draw]] = {}
    extra: list[str] = []
    for record in data.get("cases") or []:
        case = cases.get(record.get("name"))
        if case is None:
            continue
        if record.get("error"):
            draws[case["name"]] = []
            extra.append(f"{p['class']}(data, {case['block_size']}) fails: {raised(record['error'])}")
            continue
        itos = vocabulary(record.get("itos"))
        # No more draws than were asked for: the rest could only be forged.
        draws[case["name"]] = [Draw(case, r, itos) for r in (record.get("draws") or [])[:len(case["draws"])]]
    props = properties(job, draws)
    tiny = [d for d in draws.get("tiny", []) if d.error]
    if tiny:
        extra.append(f"warning (no points lost): your code crashes on a document of {len(tiny[0].doc)} characters "
                     f"({tiny[0].error}); {CRASH_CONSEQUENCE}")
    return score(props, points, run, extra)


def properties(job: Mapping[str, Any], draws: Mapping[str, list[Draw]]) -> list[Property]:
    longs = [d for c in job["cases"] if c["kind"] == "long" for d in draws.get(c["name"], [])]
    every = longs + draws.get("short", []) + draws.get("repeat", [])
    out = []

    def prop(name: str, failing: list[Draw], ok_text: str, why: str) -> None:
        if not every:
            out.append(Property(name, False, f"{name}: no item could be drawn", WEIGHTS[name]))
        elif failing:
            out.append(Property(name, False, f"{why}; first: {failing[0].show()}", WEIGHTS[name]))
        else:
            out.append(Property(name, True, ok_text, WEIGHTS[name]))

    crashed = [d for d in every if d.error]
    bad = [d for d in every if d.error or d.problem]
    prop("tensors", bad, "x and y are long tensors of block_size - 1 ids, y is x shifted by one",
         "x, y are not two long tensors of block_size - 1 ids with y = x shifted by one"
         + (f" ({crashed[0].error})" if crashed else f" ({bad[0].problem})" if bad else ""))
    readable = [d for d in every if not d.error and not d.problem]
    misshapen = [d for d in readable if d.layout]
    masks = Counter(d.masks for d in readable if not d.layout)
    third = " (with a third mask character after the content, as in the handout's examples)" if masks.get(3) else ""
    prop("layout", bad + misshapen, f"every item reads prefix{MASK}suffix{MASK}content then pads{third}",
         "items do not read prefix" + MASK + "suffix" + MASK + "content then pads"
         + (f" ({misshapen[0].layout})" if misshapen else ""))
    good = [d for d in readable if not d.layout]
    foreign = [d for d in good if d.piece not in d.doc]
    prop("content", bad + misshapen + foreign, "prefix + masked content + suffix is always a contiguous piece of the "
         "document", "prefix + masked content + suffix is not a contiguous piece of the document")
    out.append(_lengths(job, draws))
    out.append(_share(longs))
    out.append(_short(draws.get("short", [])))
    repeat = [d.text for d in draws.get("repeat", []) if not d.error and not d.problem]
    if len(set(repeat)) > 1:
        out.append(Property("random", True, "repeated draws of one document differ", WEIGHTS["random"]))
    else:
        out.append(Property("random", False, "20 draws of one document were all the same item: the truncation and "
                            "the span must be drawn at random each time", WEIGHTS["random"]))
    return out


def _lengths(job: Mapping[str, Any], draws: Mapping[str, list[Draw]]) -> Property:
    for case in job["cases"]:
        if case["kind"] != "long":
            continue
        size = case["block_size"]
        cap = int(size * 7 / 8)
        seen = Counter(len(d.piece) for d in draws.get(case["name"], []) if not d.error and not d.problem
                       and not d.layout)
        if not seen:
            return Property("lengths", False, f"truncation lengths: no readable item at block size {size}",
                            WEIGHTS["lengths"])
        wanted = set(range(4, cap + 1))
        missing, extra = sorted(wanted - set(seen)), sorted(set(seen) - wanted)
        rule = f"4 to ⌊7/8 · {size}⌋ = {cap}"
        if extra:
            return Property("lengths", False, f"truncation lengths: {sum(seen[e] for e in extra)} of "
                            f"{sum(seen.values())} draws were truncated to {extra[0]} characters, outside {rule}",
                            WEIGHTS["lengths"])
        if missing:
            longest = " (never the longest allowed: an off-by-one in the random range?)" if cap in missing else ""
            return Property("lengths", False, f"truncation lengths: {sum(seen.values())} draws at block size {size} "
                            f"never truncated to {', '.join(map(str, missing[:6]))} characters; every length from "
                            f"{rule} must be possible{longest}", WEIGHTS["lengths"])
    sizes = ", ".join(str(c["block_size"]) for c in job["cases"] if c["kind"] == "long")
    return Property("lengths", True, f"every truncation length from 4 to ⌊7/8 · block_size⌋ occurs (block sizes "
                    f"{sizes})", WEIGHTS["lengths"])


def _share(longs: list[Draw]) -> Property:
    good = [d for d in longs if not d.error and not d.problem and not d.layout and d.piece]
    if not good:
        return Property("share", False, "masked share: no readable item", WEIGHTS["share"])
    shares = np.array([len(d.content) / len(d.piece) for d in good])
    mean = float(shares.mean())
    low, high = SHARE_RANGE
    if not low <= mean <= high:
        worst = max(good, key=lambda d: abs(len(d.content) / len(d.piece) - 0.25))
        return Property("share", False, f"masked share: the masked content averages {mean:.2f} of the truncated "
                        f"document, not about 1/4; first: {worst.show()}", WEIGHTS["share"])
    if float(shares.std()) < 0.01:
        return Property("share", False, f"masked share: always {mean:.2f} of the truncated document; its length must "
                        "be random", WEIGHTS["share"])
    return Property("share", True, f"masked share averages {mean:.2f} of the truncated document and varies",
                    WEIGHTS["share"])


def _short(shorts: list[Draw]) -> Property:
    good = [d for d in shorts if not d.error and not d.problem and not d.layout]
    if not good:
        return Property("short", False, "short documents: no readable item", WEIGHTS["short"])
    empty = [d for d in good if not d.content]
    if len(empty) > EMPTY_LIMIT * len(good):
        return Property("short", False, f"short documents: the masked span is empty in {len(empty)} of {len(good)} "
                        "draws (compute it from the truncated document, not from the drawn length); first: "
                        f"{empty[0].show()}", WEIGHTS["short"])
    return Property("short", True, f"short documents: the masked span is empty in {len(empty)} of {len(good)} draws",
                    WEIGHTS["short"])
