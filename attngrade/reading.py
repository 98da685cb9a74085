"""The read stage: one raw field value -> a typed reading, or a FieldError.

A FieldError means the answer could not be read (status `invalid`), which is never
the same as a wrong answer. Its message names the part, the field and the column.
"""

from __future__ import annotations

import hashlib
import math
import re
import zlib
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

import sympy

from .errors import MathError
from .mathlang import Value, frontend, parse, words
from .mathlang.display import reading as show
from .mathlang.nodes import shape_text
from .records import Field, Part
from .runtime.deadline import BudgetExceeded, time_limit
from .runtime.files import TOO_LARGE, UNREADABLE, NotRead, read_bounded
from .runtime.text import did_you_mean, safe_text

# A yes/no question is answered in words as often as with yes or no ("Could c_2 approximate
# u_b?" "Impossible."), in English and in the languages of the write-ups we have read.
_TRUE = {"yes", "y", "true", "t", "1", "possible", "it is possible", "it's possible", "can", "it can",
         "yes it can", "yes it is", "是", "能", "可以", "可能", "oui", "ja", "sí", "si", "tak"}
_FALSE = {"no", "n", "false", "f", "0", "impossible", "not possible", "it is impossible", "it's impossible",
          "it is not possible", "cannot", "can't", "it cannot", "no it cannot", "no it can't", "no it is not",
          "否", "不", "不能", "不可以", "不可能", "non", "nein", "nie"}


class FieldError(Exception):
    """A field's answer could not be read; `str()` is the full student-facing message."""

    def __init__(self, part: str, field: str, message: str):
        super().__init__(f"{part}, field {field}: {message}")
        self.part = part
        self.field = field
        self.message = message  # without the part and field, for a caller that names them itself


class UnclearAnswer(FieldError):
    """Words that answer more than one way ("yes, it is impossible"; two options named): not a format
    problem the student can fix by rewriting, but an answer a person should read."""


def read_field(part: Part, field: Field, raw: Any, folder: Path | None = None,
               files: dict[tuple[str, str], "FileReading"] | None = None) -> Any:
    """The typed value of one field's raw answer (files are looked up in `folder`; `files`: the
    readings of files read before, by name and content hash, see `read_file`)."""
    if field.kind == "file":
        return read_file(part, field, raw, folder, files)
    reader = {"math": _read_math, "bool": _read_bool, "choice": _read_choice, "text": _read_text,
              "number": read_number}.get(field.kind)
    if reader is None:
        raise FieldError(part.id, field.name, f"fields of kind '{field.kind}' are not graded yet")
    return reader(part, field, raw)


def describe(value: Any) -> str:
    """How a reading is shown back to the student ("read as ...")."""
    if isinstance(value, Value):
        text = show(value.expr)
        return f"O({text})" if value.kind == "bigO" else text
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _refuse_odd_scalars(part: Part, field: Field, raw: Any, wanted: str) -> None:
    """YAML turns `yes` into a bool and long digit runs into huge ints: neither is an answer here."""
    if isinstance(raw, bool):
        raise FieldError(part.id, field.name, f"expected {wanted}, got a yes/no value")
    if isinstance(raw, int) and abs(raw).bit_length() > 128:
        raise FieldError(part.id, field.name, f"this number has {abs(raw).bit_length()} bits; write a smaller one")


def _text_of(part: Part, field: Field, raw: Any) -> str:
    _refuse_odd_scalars(part, field, raw, "math")
    if isinstance(raw, (int, float)):
        return repr(raw)
    if not isinstance(raw, str):
        raise FieldError(part.id, field.name, f"expected math as text, got a {_yaml_kind(raw)}; quote the answer")
    return raw


# A reading takes milliseconds; sympy can take minutes and gigabytes over a short hostile one
# (ln ln ln ... ln C, ((C+1)^16+1)^16 inside a log, a chain of equals signs to expand). Reading
# happens in the grading process itself, for the whole class, so it is bounded here.
READ_SECONDS = 2.0

_LOST_BACKSLASH = re.compile(r"[\x07\x08\x0b\x0c\r]|\t(?=[a-z])")  # \b \f \t... eaten by YAML double quotes


def _read_math(part: Part, field: Field, raw: Any) -> Value:
    text = _text_of(part, field, raw)
    if _LOST_BACKSLASH.search(text):
        raise FieldError(part.id, field.name, "your LaTeX lost backslashes: in YAML double quotes \\b, \\f, \\t "
                                              "and \\r are escapes (\\beta became a control character); put the "
                                              "answer in single quotes ('\\beta') or leave out the quotes")
    try:
        with time_limit(READ_SECONDS):
            value = parse(str(text), field.table or part.table, name=field.name,
                          definitions=getattr(raw, "definitions", ()))
    except MathError as err:
        raise FieldError(part.id, field.name, err.render(text)) from None
    except (BudgetExceeded, MemoryError) as err:
        # sympy may have been stopped halfway through working out what it caches (an expression's
        # assumptions): what it cached goes, so that no later reading inherits a half-made fact.
        sympy.core.cache.clear_cache()
        why = f"took more than {READ_SECONDS:g} s" if isinstance(err, BudgetExceeded) else "took too much memory"
        raise FieldError(part.id, field.name, f"reading this answer {why}; write it more simply (fewer nested "
                                              "powers, logs or equals signs)") from None
    except Exception as err:  # noqa: BLE001 - a reader bug must cost one part, not the submission
        raise FieldError(part.id, field.name, f"attngrade could not read this answer ({type(err).__name__}); "
                                              "rewrite it more simply, or ask course staff") from None
    _check_shape(part, field, value)
    return value


def _check_shape(part: Part, field: Field, value: Value) -> None:
    expect = field.expect
    if expect is None:
        return
    if expect == "bigO":
        # A bare cost such as M^2 k is read as its order (the check says so in a note).
        if value.kind not in ("bigO", "scalar"):
            raise FieldError(part.id, field.name, "expected an order of growth written as O(...); "
                                                  f"your answer is a {value.kind}")
        return
    if expect == "scalar":
        if value.kind != "scalar":
            raise FieldError(part.id, field.name, f"expected a scalar; your answer is a {value.shape_text()} matrix")
        return
    want = _dims(field.shape) if field.shape else None
    if value.kind != "matrix":
        hint = "; write I for the identity" if expect == "matrix" else ""
        wanted = shape_text(want) if want else expect
        raise FieldError(part.id, field.name, f"expected a {wanted} {expect}; your answer is a {value.kind}{hint}")
    if want is None or value.shape == want:
        return
    if expect == "vector" and value.shape == (want[1], want[0]):
        return  # a row vector for a column vector: the checks read it leniently, with a note
    raise FieldError(part.id, field.name,
                     f"expected a {shape_text(want)} {expect}; your answer is {shape_text(value.shape)}")


def _dims(shape: tuple[Any, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    return tuple(sympy.Integer(x) if isinstance(x, int) else sympy.Symbol(str(x), integer=True, positive=True)
                 for x in shape)


def _read_bool(part: Part, field: Field, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, (str, int)) and _choice_text(raw) in _TRUE | _FALSE:
        return _choice_text(raw) in _TRUE
    if isinstance(raw, str):
        try:
            said = words.yes_no(safe_text(raw, words.MAX_TEXT + 1), field.options)
        except words.Unclear as err:
            raise UnclearAnswer(part.id, field.name, f"could not read a yes or no in {_clip(raw)!r}: {err}") from None
        if said is not None:
            return said
    raise FieldError(part.id, field.name, f"expected yes or no, got {_clip(raw)!r}")


def _choice_text(raw: Any) -> str:
    """A choice as compared: any case, math wrappers, spacing and end punctuation ignored."""
    text = safe_text(raw, 200).strip().strip("$").strip()
    text = re.sub(r"\\(?:left|right)\b|\\,|\\;", "", text)
    return " ".join(text.rstrip(".,;:!").split()).lower()


def _read_choice(part: Part, field: Field, raw: Any) -> Any:
    if isinstance(raw, bool) and not field.options:
        return raw
    text = _choice_text(raw)
    for option, synonyms in field.options.items():
        if text == _choice_text(option) or text in (_choice_text(s) for s in synonyms):
            return option
    if isinstance(raw, str) and field.options:
        try:
            named = words.choose(safe_text(raw, words.MAX_TEXT + 1), field.options)
        except words.Unclear as err:
            raise UnclearAnswer(part.id, field.name, f"could not read one option in {_clip(raw)!r}: {err}") from None
        if named is not None:
            return named
    options = ", ".join(field.options) or "yes, no"
    raise FieldError(part.id, field.name, f"expected one of: {options}; got {_clip(raw)!r}")


def _read_text(part: Part, field: Field, raw: Any) -> str:
    if not isinstance(raw, (str, int, float, bool)):
        raise FieldError(part.id, field.name, f"expected text, got a {_yaml_kind(raw)}")
    if isinstance(raw, str) and len(raw.strip()) > field.max_length:
        raise FieldError(part.id, field.name,
                         f"the answer is {len(raw.strip())} characters long; at most {field.max_length} are read")
    text = safe_text(raw, field.max_length + 1).strip()
    if len(text) > field.max_length:
        raise FieldError(part.id, field.name, f"the answer is longer than the {field.max_length} characters read")
    if any(spec.check in _SHAPE_CHECKS and field.name in spec.fields for spec in part.checks):
        return words.shape(text) or text  # `t-by-n (one column per query)` is the shape t × n
    if any(spec.check != "manual" and field.name in spec.fields for spec in part.checks):
        # a check reads this text as math: the student's macros, a table or `;` rows as a matrix
        try:
            return frontend.for_check(text, getattr(raw, "definitions", ()), field.max_length)
        except MathError as err:
            raise FieldError(part.id, field.name, err.message) from None
    return text


_SHAPE_CHECKS = ("dimensions",)  # checks that read a text field as a shape


def _yaml_kind(raw: Any) -> str:
    return {dict: "mapping", list: "list", type(None): "empty value"}.get(type(raw), type(raw).__name__)


def _clip(raw: Any, size: int = 40) -> str:
    text = safe_text(raw)
    return text if len(text) <= size else text[:size] + "..."


# -- numbers and files ---------------------------------------------------------------
_NUMBER = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d{1,3})?)\s*(%)?\s*$")
_RATIO = re.compile(r"^\s*(\d{1,12})(?:\.0{1,6})?\s*/\s*(\d{1,12})(?:\.0{1,6})?\s*$")  # 9/500, 9.0/500.0


@dataclass(frozen=True)
class NumberReading:
    """A number as written. `fractions()` lists what it may mean on a percent field."""

    value: float
    text: str
    percent_sign: bool = False
    ratio: bool = False

    def fractions(self) -> tuple[float, ...]:
        """Candidate values as a fraction of 1: "5%" is 0.05; a bare 5 may be 5% or 500%."""
        if self.percent_sign:
            return (self.value / 100,)
        if self.ratio:
            return (self.value,)
        return (self.value / 100, self.value) if self.value > 1 else (self.value, self.value / 100)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class FileReading:
    """A file from the submission folder: its name, its content hash and its text.

    The text is kept compressed: only the check reads it, while the reading lives as long as
    the run (in a class of 100,000, tens of thousands of prediction files)."""

    name: str
    sha256: str
    lines: int
    packed: bytes = dataclass_field(repr=False)

    @classmethod
    def of(cls, name: str, text: str, sha256: str) -> "FileReading":
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        return cls(name, sha256, lines, zlib.compress(text.encode("utf-8"), 1))

    @property
    def text(self) -> str:
        return zlib.decompress(self.packed).decode("utf-8")

    def __str__(self) -> str:
        return f"{self.name} ({self.lines} lines)"


@dataclass(frozen=True)
class BinaryFileReading(FileReading):
    """A binary file of a submission (a model checkpoint): vetted, sized and hashed when it is read, and
    read again, within the same bound and to the same hash, only by the check that needs its bytes, so a
    class's checkpoints are never all held in memory. Tasks, groups and reports know it by name and hash."""

    path: str = ""
    size: int = 0
    limit: int = 0

    @classmethod
    def at(cls, path: Path | str, limit: int) -> "BinaryFileReading":
        """The file at `path`: a regular file of its own (never a link or a second name) of at most `limit`
        bytes, or `runtime.files.NotRead` saying why not."""
        data = read_bounded(path, limit)
        return cls(Path(path).name, hashlib.sha256(data).hexdigest(), 0, b"", str(path), len(data), limit)

    def data(self) -> bytes:
        """Its bytes, read again within the same bound; NotRead if they are no longer the ones hashed."""
        data = read_bounded(self.path, self.limit)
        if hashlib.sha256(data).hexdigest() != self.sha256:
            raise NotRead("changed after it was read; submit it again", UNREADABLE)
        return data

    @property
    def text(self) -> str:
        raise TypeError(f"{self.name} is a binary file: no check reads it as text")

    def __str__(self) -> str:
        return f"{self.name} ({self.size} bytes)"


def read_number(part: Part, field: Field, raw: Any) -> NumberReading:
    _refuse_odd_scalars(part, field, raw, "a number")
    if isinstance(raw, (int, float)):
        raw = repr(raw)
    if not isinstance(raw, str) or len(raw) > words.MAX_NUMBER_TEXT:
        raise FieldError(part.id, field.name, f"expected a number such as 5, 5% or 0.05; got {_clip(raw)!r}")
    raw = words.plain_number_text(str(raw))  # `1.8\,\%`, `1.8 per cent`, `\text{Correct: ...}`
    single = _one_number(part, field, raw)
    if single is not None:
        return single
    pieces = words.numbers(raw)
    if not pieces:
        raise FieldError(part.id, field.name, f"expected a number such as 5, 5% or 0.05; got {_clip(raw)!r}")
    # `12.0% (60/500)`: the first number is the answer, read when every other agrees with it
    readings = [_one_number(part, field, piece) for piece in pieces]
    first = readings[0]
    for piece, other in zip(pieces[1:], readings[1:]):
        if other is None or not _agree(first, other):
            raise FieldError(part.id, field.name, f"the numbers in {raw.strip()!r} disagree: {first.text} is not "
                                                  f"{piece}; write one number")
    return first


def _one_number(part: Part, field: Field, raw: str) -> NumberReading | None:
    """`raw` as one number or one ratio, or None."""
    ratio = _RATIO.match(raw)
    if ratio:
        num, den = int(ratio.group(1)), int(ratio.group(2))
        if den == 0:
            raise FieldError(part.id, field.name, f"{raw.strip()!r} divides by zero")
        return NumberReading(num / den, raw.strip(), ratio=True)
    m = _NUMBER.match(raw)
    if not m:
        return None
    value = float(m.group(1))
    if not math.isfinite(value) or abs(value) > 1e12:
        raise FieldError(part.id, field.name, f"{raw.strip()!r} is not a usable number")
    return NumberReading(value, raw.strip(), percent_sign=bool(m.group(2)))


def _readings(number: NumberReading) -> list[tuple[float, float]]:
    """(fraction of 1, one unit of its last written place) for each way the number may be read."""
    if number.ratio:
        return [(number.value, 0.0)]
    mantissa = number.text.rstrip("%").strip().lower().partition("e")[0]
    step = 10.0 ** -len(mantissa.partition(".")[2])
    if number.percent_sign:
        return [(number.value / 100, step / 100)]
    return [(number.value, step), (number.value / 100, step / 100)]


def _agree(a: NumberReading, b: NumberReading) -> bool:
    """Two numbers of one answer say the same, to the places the less precise is written (rounded or cut off)."""
    return any(abs(x - y) <= max(sx, sy) + 1e-12 for x, sx in _readings(a) for y, sy in _readings(b))


def read_file(part: Part, field: Field, raw: Any, folder: Path | None,
              files: dict[tuple[str, str], FileReading] | None = None) -> FileReading:
    """A regular file inside the submission folder, by name; never a link, never outside it.

    With `files`, a file whose name and content were read before is that reading (a class
    hands in many copies of one file: it is decoded and compressed once), and a new one is
    added to it."""
    name = raw if isinstance(raw, str) and raw.strip() else field.filename
    if folder is None:
        raise FieldError(part.id, field.name, f"needs the file {name}: submit a folder holding your answers "
                                              "file and this file")
    if not name or "/" in name or "\\" in name or name.startswith(".") or "\x00" in name:
        raise FieldError(part.id, field.name, f"{_clip(name)!r} is not a plain file name in your folder")
    path = folder / name
    if path.is_symlink():
        raise FieldError(part.id, field.name, f"{name} is a link; submit the file itself")
    if path.exists() and not path.is_file():
        raise FieldError(part.id, field.name, f"{name} is not a regular file (a folder, pipe or device); "
                                              "submit the file itself")
    if not path.is_file():
        try:
            present = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))[:500]
        except OSError:
            present = []
        hint = did_you_mean(name, present, " (did you mean {}?)", cutoff=0.8)
        raise FieldError(part.id, field.name, f"{name} is not in your submission folder{hint}; put it next to "
                                              "your answers file, with exactly this name, and submit again")
    if field.binary:
        try:
            return BinaryFileReading.at(path, field.max_bytes)
        except NotRead as err:
            raise FieldError(part.id, field.name, f"{name} {err.reason}") from None
    try:
        data = read_bounded(path, field.max_bytes, below=folder)
    except NotRead as err:
        # (a notebook is large for its outputs, which no part reads)
        advice = ("; clear its outputs (in Jupyter: Kernel, Restart and Clear Output), save it and submit again"
                  if err.kind == TOO_LARGE and name.endswith(".ipynb") else "")
        raise FieldError(part.id, field.name, f"{name} {err.reason}{advice}") from None
    sha256 = hashlib.sha256(data).hexdigest()
    if files is not None and (name, sha256) in files:
        return files[(name, sha256)]
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise FieldError(part.id, field.name, f"{name}: byte {err.start} is not UTF-8 text") from None
    if "\x00" in text:
        raise FieldError(part.id, field.name, f"{name} contains NUL bytes; it is not a text file")
    reading = FileReading.of(name, text, sha256)
    if files is not None:
        files[(name, sha256)] = reading
    return reading
