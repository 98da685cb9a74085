"""`accuracy_file`: recompute the accuracy of a CS224N W21 A5 prediction file.

A prediction file holds one predicted birth place per line, in the order of the
questions. A gold file holds lines `Where was <Name> born?<TAB><Place>`. The course
counts a prediction as right when it equals the gold place exactly (same case, same
characters), line i against line i. This check does the same and grades what the
student says about it.

Reading the files
-----------------
* Gold: each line is stripped, split on tabs, and its second column (stripped) is the
  place. Blank lines at the very end of a gold file are ignored; any other line without
  a tab is a broken gold file and raises ConfigError (the instructor must act).
  `gold: dev` is the dev set shipped in the package
  (`attngrade/data/cs224n-w21-a5/birth_dev.tsv`, 500 lines, byte-identical to the
  course's file). Any other name (e.g. `test`) is looked up in `ctx.gold`, i.e. the
  instructor's `--gold NAME=PATH`; the test gold is never shipped.
* Predictions are not stripped: "London " is not "London", as in the course. The file is
  split on "\\n" only; the newline that ends the last line does not start an empty extra
  line, but an empty line anywhere else is an (empty) prediction.
* Carriage returns: a line ending "\\r\\n" (a file saved with Windows line endings)
  has that one "\\r" dropped, because it belongs to the line break and not to the
  prediction; the feedback says how many lines this touched. Any other "\\r" (alone, or
  at the end of an unterminated last line) is kept and makes that prediction wrong.
* Nothing in the file can make the check fail: odd characters, very long lines or an
  empty file are just predictions that do not match (or a wrong line count). Content
  is never echoed back. (Bytes that are not UTF-8, and NUL bytes, are refused earlier
  by `reading.read_file` with a message to the student.)

Line count
----------
A file whose line count differs from `lines` is not scored: the feedback gives both
counts. With the gold at hand it also estimates where the lines stop lining up: a small
dynamic programme aligns prediction i with gold line i + s, where the shift s may only
move (monotonically, with a cost of 2 matches per move) from 0 towards the line-count
difference, and picks the alignment with the most exact matches. Only when that beats
the plain in-place comparison by at least 5 matches is a place named, as a range
"between line a+1 and line b" (a: the last line that still matches in place, b: the
first line that matches at the new shift). When no shift helps but the file matches in
place up to its last tenth (and in place beats the full shift by at least 5 matches, so
that a file of one repeated answer says nothing), the missing (or extra) lines are said
to be probably at the end. Otherwise the feedback says no place could be told from the content. Low-accuracy
files give few matches, so the estimate is rougher for them, and the feedback says it
is an estimate.

Params (all optional except as noted)
-------------------------------------
* `gold`: which gold to score against, `dev` (packaged, the default) or a name
  given to `--gold` (e.g. `test`). Without that gold the file is still read and its
  line count checked; the parts that need the gold are left `unchecked` and the
  feedback says only that course staff score it.
* `file`: the field holding the prediction file; default: the first `file` field of the
  check that is not `compare_with`.
* `lines`: expected number of lines; default: the gold's length, else 500 for `dev`
  and 437 for `test`. A gold whose length differs from an explicit `lines` is a
  ConfigError.
* `pass_line`: a fraction of 1 (0.10 for 10%); the pass-line share is earned when the
  recomputed accuracy is at least this. Absent: no threshold, no share, except on a file
  scored against another gold than dev (the test set) in a part whose dev check states a
  pass line: that file is held to the same line (a part asks for one accuracy, whichever
  set measures it; A5 2f's 10%), and its feedback says the line came from the dev check.
  A part whose dev check has no pass line (A5 2d: the baseline only) holds its test file
  to none.
* `reported`: a `number` field with the accuracy the student reports for this file;
  it must equal the recomputed k/N to the places it is written in (9/500 may be 1.8%, 1.80,
  0.018 or 2%, rounded or cut off; a ratio must be k/N itself), and never more coarsely than
  to a whole percentage point (`0` or `0.2` does not stand for 26.6%: as a fraction of 1 it
  needs two places, 0.27),
  under any reading of the number (`NumberReading.fractions()`: 26.6, 26.6%, 0.266,
  133/500).
* `baseline`: a `number` field with the accuracy of always predicting "London" on the
  dev set. It is recomputed from the packaged dev gold (25/500 = 5%) whatever `gold`
  is, and must equal it exactly under some reading (5, 5%, 0.05, 25/500). A value at
  the London share of the training file (91/2000 = 4.55%, give or take half a row)
  and the London count itself (25, 25%) get their own feedback, which does not give
  the right value away.
* `compare_with`: a `file` field holding the vanilla (pretrained) model's predictions
  on the same gold; used only for the integrity flag below, never for the score.
* `flag_margin`: fraction of 1, default 0.02 (two percentage points): see the flags.
* `weights`: mapping from share names (`file`, `reported`, `baseline`, `pass_line`) to
  relative weights; default 1 each.

Points
------
`ctx.points` is split among the shares that are configured, in proportion to
`weights` (equal by default):

* `file`: the prediction file is there and has exactly `lines` lines (always on);
* `reported`: the reported accuracy agrees with the recomputed one (needs `reported`);
* `pass_line`: the recomputed accuracy reaches `pass_line` (needs `pass_line`, or one inherited from
  the part's dev check as above);
* `baseline`: the London baseline is right (needs `baseline`).

`reported` and `pass_line` need a scored file: with a wrong line count they earn
nothing; without the gold they are not decided (the outcome is `unchecked`).
`baseline` does not depend on the file. With the three shares of a part such as
2f (file, reported, pass_line), each is a third of the points.

Integrity flags
---------------
Flags are for course staff: they go to `evidence["flags"]` (a list of strings, present
only when not empty) and never to the feedback, and they never change the score.

1. With `compare_with`, both files scored against the same gold, and this file's
   accuracy at least the other's minus `flag_margin`: a synthesizer run that does as
   well as the vanilla model suggests the synthesizer attention was never used (real
   cases: 131/500 against 134/500; 106/500 against 100/500).
2. A reported accuracy that is not k/N for any whole k under any reading of the number:
   it was not computed from N predictions.
3. A file scored against the public dev gold at `COPIED_SHARE` or more: no model of the
   assignment comes near (the handout's best runs are about a third), but the gold copied
   in does.

Evidence also holds `accuracy:<field>` with the counts (lines, correct, total, the
gold's name, whether the file was scored, carriage returns dropped).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from itertools import islice
from pathlib import Path
from typing import Any, Mapping, NamedTuple

from ..errors import ConfigError
from ..reading import FileReading, NumberReading
from ..records import CheckSpec, Part
from .base import Context, Outcome, Param

PACKAGED = {"dev": ("cs224n-w21-a5", "birth_dev.tsv")}
DEFAULT_LINES = {"dev": 500, "test": 437}
SHARES = ("file", "reported", "pass_line", "baseline")
PARAMS = (Param("gold", (str,)), Param("file", (str,)), Param("lines", (int,)), Param("pass_line", (float,)),
          Param("reported", (str,)), Param("baseline", (str,)), Param("compare_with", (str,)),
          Param("flag_margin", (float,)), Param("weights", (dict,)))
COPIED_SHARE = 0.9  # of the dev set right: only the dev gold itself gets there (flag 3)
FLAG_MARGIN = 0.02

BASELINE_PLACE = "London"
TRAIN_LONDON = (91, 2000)  # London rows of the course's birth_places_train.tsv, and its length

# Locating where a file with the wrong line count stops lining up.
SHIFT_COST = 2  # matches an alignment gives up per change of shift
MIN_GAIN = 5  # matches the shifted alignment must win over the in-place one to be named
MAX_SHIFT = 100  # larger line-count differences are not searched
MAX_RATIO = 5  # nor files more than this many times the expected length

EPS = 1e-9
MAX_STEP = 0.01  # of 1: the coarsest rounding a reported accuracy may have (a whole percentage point)


# -- gold ---------------------------------------------------------------------------
def parse_gold(text: str, where: str) -> tuple[str, ...]:
    """The gold places of a `question<TAB>place` file, one per line."""
    rows = text.lstrip("\ufeff").split("\n")
    while rows and not rows[-1].strip():
        rows.pop()
    if not rows:  # every file would be "too long" against it: the instructor's mistake, not 0 for all
        raise ConfigError(f"{where}: the gold file is empty; it needs one 'question<TAB>place' line per question")
    places = []
    for number, row in enumerate(rows, 1):
        columns = row.strip().split("\t")
        if len(columns) < 2:
            raise ConfigError(f"{where}, line {number}: expected 'question<TAB>place'")
        places.append(columns[1].strip())
    return tuple(places)


@lru_cache(maxsize=None)
def packaged_gold(name: str) -> tuple[str, ...]:
    """A gold file shipped in `attngrade/data/`, e.g. the dev set."""
    folder, filename = PACKAGED[name]
    resource = files("attngrade").joinpath("data").joinpath(folder).joinpath(filename)
    return parse_gold(resource.read_text(encoding="utf-8"), f"attngrade/data/{folder}/{filename}")


@lru_cache(maxsize=32)
def _gold_file(path: str, mtime_ns: int) -> tuple[str, ...]:
    return parse_gold(Path(path).read_text(encoding="utf-8"), path)


def load_gold(name: str, supplied: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The places of gold `name`: the instructor's file (their folder's gold/ or --gold), else a
    packaged one of that name; None if neither. The instructor's comes first: a course's own
    `dev` gold is not the CS224N dev set that ships with attngrade."""
    path = supplied.get(name)
    if path is None:
        return packaged_gold(name) if name in PACKAGED else None
    path = Path(path)
    try:
        return _gold_file(str(path), path.stat().st_mtime_ns)
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"gold '{name}' at {path} could not be read: {err}") from None


# -- predictions --------------------------------------------------------------------
def prediction_lines(text: str) -> tuple[list[str], int]:
    """The predictions of a file's text, and how many CRLF line ends lost their "\\r"."""
    if not text:
        return [], 0
    rows = text.split("\n")
    terminated = len(rows) - 1  # rows followed by a "\n"
    if rows[-1] == "":
        rows.pop()
    dropped = 0
    for i in range(min(terminated, len(rows))):
        if rows[i].endswith("\r"):
            rows[i] = rows[i][:-1]
            dropped += 1
    return rows, dropped


def count_correct(predictions: list[str], gold: tuple[str, ...]) -> int:
    return sum(1 for p, g in zip(predictions, gold) if p == g)


def pct(k: int | float, n: int) -> str:
    """k/n as a percentage, two decimals at most: 26.6%, 7.0%, 12.36%."""
    return _pct_of(k / n)


def _pct_of(fraction: float) -> str:
    text = f"{100 * fraction:.2f}".rstrip("0")
    return (text + "0" if text.endswith(".") else text) + "%"


def locate(predictions: list[str], gold: tuple[str, ...]) -> str | None:
    """Where a file with too few or too many lines stops lining up with the gold (a guess).

    None when the content does not tell. Lines are numbered from 1.
    """
    d = len(gold) - len(predictions)
    if d == 0 or abs(d) > MAX_SHIFT or not predictions or len(predictions) > MAX_RATIO * len(gold):
        return None
    step = 1 if d > 0 else -1
    shifts = list(range(0, d + step, step))
    n_gold = len(gold)
    neg = float("-inf")
    best = [0.0] + [float(-SHIFT_COST)] * (len(shifts) - 1)
    back: list[list[int]] = []
    for i, p in enumerate(predictions):
        row, came = [], []
        run, arg = neg, -1  # the best earlier shift, for a move
        for k, s in enumerate(shifts):
            if k > 0 and best[k - 1] > run:
                run, arg = best[k - 1], k - 1
            if best[k] >= run - SHIFT_COST:
                value, origin = best[k], k
            else:
                value, origin = run - SHIFT_COST, arg
            j = i + s
            row.append(value + (1 if 0 <= j < n_gold and p == gold[j] else 0))
            came.append(origin)
        back.append(came)
        best = row
    k = max(range(len(shifts)), key=lambda x: (best[x], -x))
    path = [0] * len(predictions)
    for i in range(len(predictions) - 1, -1, -1):
        path[i] = shifts[k]
        k = back[i][k]
    in_place = [i for i, p in enumerate(predictions) if i < n_gold and p == gold[i]]
    gain = max(best) - len(in_place)
    first = next((i for i, s in enumerate(path) if s != 0), None)
    if first is not None and gain >= MIN_GAIN:
        s = path[first]
        last_fit = max((i for i in in_place if i < first), default=-1)
        new_fit = next((i for i in range(first, len(predictions))
                        if path[i] == s and 0 <= i + s < n_gold and predictions[i] == gold[i + s]), None)
        if new_fit is not None:
            way = "further down" if s > 0 else "further up"
            happened = "lost" if d > 0 else "added"
            rows = "line" if abs(s) == 1 else "lines"
            grows = (f"; further on the gap grows to {abs(path[-1])} lines" if path[-1] != s else "")
            return (f"comparing with the gold (an estimate), the lines stop lining up between line "
                    f"{last_fit + 2} and line {new_fit + 1}: from there on your predictions fit the gold "
                    f"{abs(s)} {rows} {way} (your line {new_fit + 1} fits gold line {new_fit + 1 + s}), "
                    f"as if lines were {happened} before it{grows}")
    shifted = sum(1 for i, q in enumerate(predictions) if 0 <= i + d < n_gold and q == gold[i + d])
    if (in_place and len(in_place) >= shifted + MIN_GAIN
            and in_place[-1] + 1 >= 0.9 * min(len(predictions), n_gold)):
        where = "missing" if d > 0 else "extra"
        return (f"comparing with the gold (an estimate), your predictions fit the gold in place up to line "
                f"{in_place[-1] + 1}, so the {where} lines are probably at the end")
    return "comparing with the gold could not tell where the lines stop lining up"


# -- numbers ------------------------------------------------------------------------
def agrees(reading: NumberReading, k: int, n: int) -> bool:
    """The reported number is k/n as the student rounded it (or cut it off), under some reading.

    9/500 may be written 1.8%, 1.80, 2% or 0.018: each is k/n to the places written. A
    ratio such as 9/500 must be k/n itself.
    """
    if reading.ratio:
        return abs(reading.value - k / n) <= EPS
    units = (100.0,) if reading.percent_sign else (1.0, 100.0)
    written = 10.0 ** -_decimals(reading.text)
    for unit in units:
        # Rounding to the places written stretches at most to whole percentage points: `0` or `0.2`
        # for a file at 26.6% is not 26.6% rounded, whatever its number of places.
        step = min(written, unit * MAX_STEP)
        true = unit * k / n
        if abs(reading.value - true) <= step / 2 + 1e-9 or 0 <= true - reading.value < step - 1e-12:
            return True
    return False


def _decimals(text: str) -> int:
    """Places after the decimal point as written: '1.80%' has 2, '2' has 0, '1.8e-2' has 2."""
    mantissa, _, exponent = text.strip().rstrip("%").strip().lower().partition("e")
    places = len(mantissa.partition(".")[2])
    return max(0, places - int(exponent)) if exponent.lstrip("+-").isdigit() else places


def whole_count(reading: NumberReading, n: int) -> bool:
    """Some reading of the number is k/n for a whole k between 0 and n."""
    return any(-EPS <= f <= 1 + EPS and abs(f * n - round(f * n)) <= 1e-6 for f in reading.fractions())


def _baseline(reading: NumberReading, field: str) -> tuple[bool, str, dict[str, Any]]:
    dev = packaged_gold("dev")
    k, n = sum(1 for g in dev if g == BASELINE_PLACE), len(dev)
    evidence = {"expected": f"{k}/{n}", "answer": reading.text}
    shown = f"{field} {reading.text}"
    if any(abs(f - k / n) <= EPS for f in reading.fractions()):
        return True, f"{shown}: right, always predicting {BASELINE_PLACE} scores that on the dev set", evidence
    train_k, train_n = TRAIN_LONDON
    if any(abs(f - train_k / train_n) <= 0.5 / train_n + EPS for f in reading.fractions()):
        return False, (f"{shown}: that is {BASELINE_PLACE}'s share of the training file "
                       f"({train_k} of its {train_n} rows); the baseline is measured on the dev set"), evidence
    if not reading.ratio and abs(reading.value - k) <= EPS:
        return False, (f"{shown}: {k} is how many dev rows have {BASELINE_PLACE} as the answer, a count, "
                       f"not a percentage; the accuracy is that count out of the {n} dev rows"), evidence
    return False, f"{shown}: not the accuracy of always predicting {BASELINE_PLACE} on the dev set", evidence


# -- params -------------------------------------------------------------------------
def prepare(params: Mapping[str, Any], part: Part, spec: CheckSpec) -> dict[str, Any]:
    """The params with defaults filled in and every cross-reference checked (once, at load)."""
    raw = dict(params or {})
    where = "params"
    kinds = {f.name: f.kind for f in part.fields}

    def field_param(name: str, kind: str) -> str | None:
        value = raw.get(name)
        if value is None:
            return None
        if value not in spec.fields:
            raise ConfigError(f"{where}: {name} names '{value}', which is not one of the check's fields "
                              f"{list(spec.fields)}")
        if kinds.get(value) != kind:
            raise ConfigError(f"{where}: {name} names '{value}', which must be a {kind} field")
        return str(value)

    p: dict[str, Any] = {}
    gold = raw.get("gold", "dev")
    if not isinstance(gold, str) or not gold:
        raise ConfigError(f"{where}: gold must be a name such as dev or test")
    p["gold"] = gold
    p["compare_with"] = field_param("compare_with", "file")
    p["reported"] = field_param("reported", "number")
    p["baseline"] = field_param("baseline", "number")
    p["file"] = field_param("file", "file")
    if p["file"] is None:
        p["file"] = next((n for n in spec.fields if kinds.get(n) == "file" and n != p["compare_with"]), None)
        if p["file"] is None:
            raise ConfigError(f"{where}: the check needs a file field with the predictions")
    if p["file"] == p["compare_with"]:
        raise ConfigError(f"{where}: compare_with must name another file than the one scored")
    lines = raw.get("lines")
    if lines is not None and (isinstance(lines, bool) or not isinstance(lines, int) or lines <= 0):
        raise ConfigError(f"{where}: lines must be a positive whole number")
    p["lines"] = lines
    for name, default in (("pass_line", None), ("flag_margin", FLAG_MARGIN)):
        value = raw.get(name, default)
        if value is not None and not _fraction(value):
            raise ConfigError(f"{where}: {name} must be a fraction between 0 and 1 (0.10 for 10%)")
        p[name] = value
    p["pass_line_from"] = None
    if p["pass_line"] is None and gold != "dev":
        p["pass_line"] = dev_pass_line(part, spec)
        p["pass_line_from"] = "dev" if p["pass_line"] is not None else None
    weights = raw.get("weights") or {}
    if not isinstance(weights, Mapping) or set(weights) - set(SHARES) or any(
            isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0 for w in weights.values()):
        raise ConfigError(f"{where}: weights maps {', '.join(SHARES)} to non-negative numbers")
    active = {"file": True, "reported": p["reported"] is not None, "pass_line": p["pass_line"] is not None,
              "baseline": p["baseline"] is not None}
    p["weights"] = {s: float(weights.get(s, 1)) for s in SHARES if active[s]}
    if sum(p["weights"].values()) <= 0:
        raise ConfigError(f"{where}: the weights of the configured shares add up to 0")
    return p


def _fraction(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= value <= 1


def dev_pass_line(part: Part, spec: CheckSpec) -> float | None:
    """The pass line another accuracy check of `part` states for the dev set, if one does."""
    for other in part.checks:
        params = other.params or {}
        if other is spec or other.check != "accuracy_file" or params.get("gold", "dev") != "dev":
            continue
        line = params.get("pass_line")
        if line is not None and _fraction(line):
            return float(line)
    return None


def gold_names(parts: Any) -> dict[str, list[int]]:
    """The gold names the accuracy checks of `parts` read: NAME -> the `lines` those checks expect."""
    names: dict[str, list[int]] = {}
    for part in parts:
        for spec in part.checks:
            name = (spec.params or {}).get("gold") if spec.check == "accuracy_file" else None
            if isinstance(name, str):
                lines = (spec.params or {}).get("lines")
                names.setdefault(name, []).extend([lines] if isinstance(lines, int) else [])
    return names


def _gold_label(name: str) -> str:
    return f"the {name} set" if name in DEFAULT_LINES else f"the '{name}' gold"


# -- the check ----------------------------------------------------------------------
def expected_lines(part: Part, prepared: Mapping[str, Any], gold: tuple[str, ...] | None) -> int:
    """How many predictions a file must hold: the check's `lines`, else its gold's length (`gold`,
    as `load_gold` gives it); a gold nobody supplied and no `lines` is the instructor's to fix
    (`grade validate` asks this too)."""
    gold_name = prepared["gold"]
    expected = prepared["lines"] or (len(gold) if gold is not None else DEFAULT_LINES.get(gold_name))
    if expected is None:
        raise ConfigError(f"part {part.id} (problem {part.problem}): gold '{gold_name}' was not supplied and "
                          "the check has no 'lines' param to check the file against; put the gold in the homework "
                          f"folder as gold/{gold_name}.tsv, pass --gold {gold_name}=FILE, or give the check 'lines'")
    return expected


@dataclass(frozen=True)
class FileScore:
    """What one prediction file gives against one gold. A class hands in many copies of a few
    files (each student's own reported accuracy makes their tasks distinct), so it is worked out
    once per file content in a process (`file_score`)."""

    lines: int  # predictions in the file
    dropped: int  # "\\r" dropped from CRLF line ends
    correct: int | None = None  # exact matches, when the line count is right and the gold is known
    where: str | None = None  # where the lines stop lining up, when the line count is wrong
    mismatches: tuple[tuple[int, str, str], ...] | None = None  # the first five, against the public dev gold
    spaced: int = 0  # predictions off by surrounding spaces only


KEPT_SCORES = 4096  # distinct (file, gold) pairs a process remembers
KEPT_TEXT = 200_000  # characters of the largest file whose score is remembered (a dev file is ~5,000)
_SCORES: dict[tuple[str, str, int], tuple[tuple[str, ...] | None, FileScore]] = {}


def file_score(reading: FileReading, gold: tuple[str, ...] | None, gold_name: str, expected: int) -> FileScore:
    """`reading` scored against `gold` (None: not supplied) of `expected` lines, remembered by content."""
    key = (reading.sha256, gold_name, expected)
    kept = _SCORES.get(key)
    if kept is not None and kept[0] is gold:  # the same gold object: a gold file re-read is a new one
        return kept[1]
    text = reading.text
    score = _scored(text, gold, gold_name, expected)
    if len(text) <= KEPT_TEXT:  # (a huge file's first mismatching lines are not kept past its check)
        if len(_SCORES) >= KEPT_SCORES:
            _SCORES.clear()
        _SCORES[key] = (gold, score)
    return score


def _scored(text: str, gold: tuple[str, ...] | None, gold_name: str, expected: int) -> FileScore:
    predictions, dropped = prediction_lines(text)
    if len(predictions) != expected:
        where = locate(predictions, gold) if gold is not None and predictions else None
        return FileScore(len(predictions), dropped, where=where)
    if gold is None:
        return FileScore(len(predictions), dropped)
    mismatches = None
    if gold_name == "dev":
        wrong = ((i + 1, q, g) for i, (q, g) in enumerate(zip(predictions, gold)) if q != g)
        mismatches = tuple(islice(wrong, 5))
    spaced = sum(1 for q, g in zip(predictions, gold) if q != g and q.strip() == g)
    return FileScore(len(predictions), dropped, count_correct(predictions, gold), mismatches=mismatches,
                     spaced=spaced)


class _Gold(NamedTuple):
    """The gold one check scores against: its name, its places (None: not supplied), its length."""

    name: str
    places: tuple[str, ...] | None
    expected: int

    @property
    def label(self) -> str:
        return _gold_label(self.name)


@dataclass(slots=True)
class _Tally:
    """What the shares of one check earn and say, in the order they are decided."""

    share: dict[str, float]
    part: str
    earned: float = 0.0
    unchecked: bool = False
    feedback: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)
    pass_line: float | None = None
    pass_line_from: str | None = None  # the gold whose check states the pass line, when not this one's
    scored: tuple[int, int] | None = None  # (correct, total) when the file was scored
    score_text: str = ""  # "k/n = p%" of the scored file, as every share says it
    aligned: bool = False  # the file has the expected number of lines


def check(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    p = ctx.prepared
    places = load_gold(p["gold"], ctx.gold)
    gold = _Gold(p["gold"], places, expected_lines(ctx.part, p, places))
    if places is not None and len(places) != gold.expected:
        raise ConfigError(f"part {ctx.part.id}: gold '{gold.name}' has {len(places)} lines, the check's "
                          f"'lines' param says {gold.expected}")
    total_weight = sum(p["weights"].values())
    tally = _Tally({s: ctx.points * w / total_weight for s, w in p["weights"].items()}, ctx.part.id,
                   pass_line=p.get("pass_line"), pass_line_from=p.get("pass_line_from"))
    reading = answers.get(p["file"])
    _file_share(tally, reading, p["file"], gold)
    if p["reported"] is not None:
        _reported_share(tally, answers.get(p["reported"]), p["reported"], gold.expected)
    if tally.pass_line is not None:
        _pass_line_share(tally, tally.pass_line)
    if p["baseline"] is not None:
        _baseline_share(tally, answers.get(p["baseline"]), p["baseline"])
    if p["compare_with"] is not None and tally.scored is not None:
        _compare_flag(tally, reading, (p["compare_with"], answers.get(p["compare_with"])), gold, p["flag_margin"])
    if tally.flags:
        tally.evidence["flags"] = tally.flags
    return Outcome(round(tally.earned, 6), tuple(tally.feedback), tally.evidence, unchecked=tally.unchecked)


def _file_share(tally: _Tally, reading: Any, name: str, gold: _Gold) -> None:
    """The prediction file: there, with the expected number of lines; scored when the gold is known."""
    if not isinstance(reading, FileReading):
        tally.feedback.append(f"{name}: no prediction file")
        return
    score = file_score(reading, gold.places, gold.name, gold.expected)
    info: dict[str, Any] = {"file": reading.name, "sha256": reading.sha256, "lines": score.lines,
                            "expected": gold.expected, "gold": gold.name, "crlf_dropped": score.dropped,
                            "scored": False}
    tally.evidence[f"accuracy:{name}"] = info
    if score.dropped:
        tally.feedback.append(f"{reading.name}: {score.dropped} lines ended in \\r\\n (Windows line endings); "
                              "the \\r was dropped before comparing")
    if score.lines != gold.expected:
        if not score.lines:
            tally.feedback.append(f"{reading.name} is empty: {gold.label} needs {gold.expected} predictions, one "
                                  "per line; it was not scored")
        else:
            tally.feedback.append(f"{reading.name} has {score.lines} lines but {gold.label} has {gold.expected}: "
                                  "one prediction per line, in order, is needed, so it was not scored")
            if score.where:
                tally.feedback.append(f"{reading.name}: {score.where}")
        return
    tally.aligned = True
    if gold.places is not None:
        tally.earned += tally.share["file"]  # without the gold, the file's share waits for course staff
    if gold.places is None or score.correct is None:
        tally.unchecked = True
        tally.feedback.append(f"{reading.name}: read, {score.lines} lines as expected; it is scored "
                              f"against {gold.label}, which only course staff have")
        return
    _record_score(tally, reading, score, info, gold)


def _record_score(tally: _Tally, reading: FileReading, score: FileScore, info: dict[str, Any], gold: _Gold) -> None:
    k, n = score.correct, gold.expected
    tally.scored = (k, n)
    tally.score_text = f"{k}/{n} = {pct(k, n)}"
    info.update(scored=True, correct=k, total=n, accuracy=k / n, pass_line=tally.pass_line)
    if tally.pass_line_from is not None:
        info["pass_line_from"] = tally.pass_line_from
    if score.mismatches is not None:  # the dev gold is public; test gold never reaches a report
        info["mismatches"] = list(score.mismatches)
    tally.feedback.append(f"{reading.name}: {tally.score_text} correct on {gold.label}")
    if gold.name == "dev" and k >= COPIED_SHARE * n:
        tally.flags.append(f"{tally.part}: {reading.name} scores {tally.score_text} on the public dev gold, "
                           "far above what the assignment's models reach: copied from it?")
    if score.spaced:
        tally.feedback.append(f"{reading.name}: {score.spaced} predictions differ from the answer only by "
                              "surrounding spaces; the comparison is exact, so they count as wrong")


def _reported_share(tally: _Tally, number: Any, field: str, expected: int) -> None:
    if not isinstance(number, NumberReading):
        tally.feedback.append(f"{field}: no reported accuracy")
        return
    if not whole_count(number, expected):
        tally.flags.append(f"{tally.part}: reported accuracy {number.text} is not k/{expected} for any whole k, "
                           f"so it was not computed from {expected} predictions")
    if tally.scored is not None:
        k, n = tally.scored
        if agrees(number, k, n):
            tally.earned += tally.share["reported"]
            tally.feedback.append(f"{field} {number.text}: agrees with the file's {tally.score_text}")
        else:
            tally.feedback.append(f"{field} {number.text} does not match the file, which scores "
                                  f"{tally.score_text}; they must agree to the places you wrote")
    elif tally.aligned:
        tally.unchecked = True
        tally.feedback.append(f"{field} {number.text}: compared with the file when course staff score it")
    else:
        tally.feedback.append(f"{field} {number.text}: not compared, the prediction file could not be scored")


def _pass_line_share(tally: _Tally, line: float) -> None:
    held = f"pass line of {_pct_of(line)}" + _line_origin(tally)
    if tally.scored is not None:
        k, n = tally.scored
        if k / n >= line - EPS:
            tally.earned += tally.share["pass_line"]
            tally.feedback.append(f"{tally.score_text} reaches the {held}")
        else:
            tally.feedback.append(f"{tally.score_text} is below the {held}")
    elif tally.aligned:
        tally.unchecked = True
    else:
        tally.feedback.append(f"{held}: not reached, the prediction file could not be scored")


def _line_origin(tally: _Tally) -> str:
    """Where an inherited pass line comes from, said wherever the line is named."""
    if tally.pass_line_from is None:
        return ""
    return (f" ({tally.part} states it for {_gold_label(tally.pass_line_from)}; the file scored here is held "
            "to the same line)")


def _baseline_share(tally: _Tally, number: Any, field: str) -> None:
    if not isinstance(number, NumberReading):
        tally.feedback.append(f"{field}: no baseline accuracy")
        return
    right, message, info = _baseline(number, field)
    tally.evidence["baseline"] = info
    tally.feedback.append(message)
    if right:
        tally.earned += tally.share["baseline"]


def _compare_flag(tally: _Tally, reading: FileReading, other: tuple[str, Any], gold: _Gold, margin: float) -> None:
    """A synthesizer run that scores like the vanilla model: flagged for staff, never scored down."""
    other_name, other_reading = other
    if not isinstance(other_reading, FileReading):
        return
    other_score = file_score(other_reading, gold.places, gold.name, gold.expected)
    if other_score.lines != gold.expected or other_score.correct is None:
        return
    k, n = tally.scored
    k2 = other_score.correct
    tally.evidence[f"accuracy:{other_name}"] = {"file": other_reading.name, "sha256": other_reading.sha256,
                                                "lines": n, "correct": k2, "total": n, "accuracy": k2 / n,
                                                "gold": gold.name}
    if k / n >= k2 / n - margin - EPS:
        tally.flags.append(f"{tally.part}: {reading.name} scores {tally.score_text}, not clearly below "
                           f"{other_reading.name} at {k2}/{n} = {pct(k2, n)} (margin {_pct_of(margin)}); "
                           "check that the synthesizer attention was actually used")
