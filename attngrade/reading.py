"""The read stage: one raw field value -> a typed reading, or a FieldError.

A FieldError means the answer could not be read (status `invalid`), which is never
the same as a wrong answer. Its message names the part, the field and the column.
"""

from __future__ import annotations

from typing import Any

import sympy

from .errors import MathError
from .mathlang import Value, parse
from .mathlang.display import reading as show
from .mathlang.nodes import shape_text
from .records import Field, Part

_TRUE = {"yes", "y", "true", "t", "1"}
_FALSE = {"no", "n", "false", "f", "0"}


class FieldError(Exception):
    """A field's answer could not be read; `str()` is the full student-facing message."""

    def __init__(self, part: str, field: str, message: str):
        super().__init__(f"{part}, field {field}: {message}")
        self.part = part
        self.field = field


def read_field(part: Part, field: Field, raw: Any) -> Any:
    """The typed value of one field's raw answer."""
    reader = {"math": _read_math, "bool": _read_bool, "choice": _read_choice, "text": _read_text}.get(field.kind)
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


def _text_of(part: Part, field: Field, raw: Any) -> str:
    if isinstance(raw, bool):
        raise FieldError(part.id, field.name, "expected math, got a yes/no value")
    if isinstance(raw, (int, float)):
        return repr(raw)
    if not isinstance(raw, str):
        raise FieldError(part.id, field.name, f"expected math as text, got a {_yaml_kind(raw)}; quote the answer")
    return raw


def _read_math(part: Part, field: Field, raw: Any) -> Value:
    text = _text_of(part, field, raw)
    try:
        value = parse(text, part.table)
    except MathError as err:
        raise FieldError(part.id, field.name, err.render(text)) from None
    _check_shape(part, field, value)
    return value


def _check_shape(part: Part, field: Field, value: Value) -> None:
    expect = field.expect
    if expect is None:
        return
    if expect == "bigO":
        if value.kind != "bigO":
            raise FieldError(part.id, field.name, "expected an order of growth written as O(...)")
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
    if isinstance(raw, (str, int)) and str(raw).strip().lower() in _TRUE | _FALSE:
        return str(raw).strip().lower() in _TRUE
    raise FieldError(part.id, field.name, f"expected yes or no, got {_clip(raw)!r}")


def _read_choice(part: Part, field: Field, raw: Any) -> Any:
    if isinstance(raw, bool) and not field.options:
        return raw
    text = str(raw).strip().lower()
    for option, synonyms in field.options.items():
        if text == option.lower() or text in (s.lower() for s in synonyms):
            return option
    options = ", ".join(field.options) or "yes, no"
    raise FieldError(part.id, field.name, f"expected one of: {options}; got {_clip(raw)!r}")


def _read_text(part: Part, field: Field, raw: Any) -> str:
    if not isinstance(raw, (str, int, float, bool)):
        raise FieldError(part.id, field.name, f"expected text, got a {_yaml_kind(raw)}")
    text = str(raw).strip()
    if len(text) > field.max_length:
        raise FieldError(part.id, field.name,
                         f"the answer is {len(text)} characters long; at most {field.max_length} are read")
    return text


def _yaml_kind(raw: Any) -> str:
    return {dict: "mapping", list: "list", type(None): "empty value"}.get(type(raw), type(raw).__name__)


def _clip(raw: Any, size: int = 40) -> str:
    text = str(raw)
    return text if len(text) <= size else text[:size] + "..."
