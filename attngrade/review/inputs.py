"""What a request may hold, checked before anything reads it: a bounded body of UTF-8 JSON, shallow,
with finite numbers and Unicode text only, then each field of the type its route takes. Anything
else is a 4xx saying what was wrong (`BadInput`), never a 500.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

MAX_BODY = 256 * 1024  # bytes of a request body: the longest comment or transcription fits many times
MAX_DEPTH = 8  # of nested arrays and objects: no route takes more than three
MAX_ITEMS = 5_000  # of a list (the answers of one group, rubric item ids)
MAX_QUERY = 1_000  # characters of a search


class BadInput(Exception):
    """A request that is not one the route takes: its status (4xx) and what to put right."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def _number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadInput(f"{text[:40]} is not a finite number")
    return value


def _refused(name: str) -> Any:
    raise BadInput(f"{name} is not a number JSON allows (no NaN or Infinity)")


def parse_body(data: bytes, content_type: str) -> dict[str, Any]:
    """The JSON object of a request body, or BadInput."""
    if content_type.split(";")[0].strip().lower() != "application/json":
        raise BadInput("a change is sent as JSON (Content-Type: application/json)", 415)
    if len(data) > MAX_BODY:
        raise BadInput(f"the body is larger than {MAX_BODY} bytes", 413)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadInput(f"the body is not UTF-8 (byte {err.start})") from None
    if _depth(text) > MAX_DEPTH:
        raise BadInput(f"the body nests deeper than {MAX_DEPTH} levels")
    try:
        value = json.loads(text, parse_float=_number, parse_constant=_refused)
    except BadInput:
        raise
    except (ValueError, RecursionError) as err:
        raise BadInput(f"the body is not JSON ({str(err)[:120]})") from None
    if not isinstance(value, dict):
        raise BadInput("the body is a JSON object ({...})")
    _unicode(value)
    return value


def _depth(text: str) -> int:
    """How deep arrays and objects nest in JSON `text` (strings skipped), in one pass."""
    depth = deepest = 0
    inside = escaped = False
    for char in text:
        if inside:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                inside = False
        elif char == '"':
            inside = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _unicode(value: Any) -> None:
    """Refuse text that is not Unicode (a lone surrogate, which `\\ud800` in JSON makes): nothing could store it."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise BadInput("a text of the body holds a lone surrogate: not Unicode text") from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def text(body: Mapping[str, Any], name: str, limit: int, required: bool = False) -> str:
    value = body.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise BadInput(f"{name} is text")
    if len(value) > limit:
        raise BadInput(f"{name} is at most {limit} characters")
    return value


def whole(body: Mapping[str, Any], name: str, required: bool = True) -> int | None:
    value = body.get(name)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not -2**62 < value < 2**62:
        raise BadInput(f"{name} is a whole number")
    return value


def number(body: Mapping[str, Any], name: str) -> float:
    value = body.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadInput(f"{name} is a finite number")
    return float(value)


def strings(body: Mapping[str, Any], name: str, limit: int = MAX_ITEMS) -> list[str]:
    value = body.get(name)
    if not isinstance(value, list) or not value or len(value) > limit or not all(isinstance(v, str) for v in value):
        raise BadInput(f"{name} is a list of ids (at most {limit})")
    return value


def wholes(body: Mapping[str, Any], name: str) -> list[int]:
    value = body.get(name)
    if not isinstance(value, list) or len(value) > MAX_ITEMS or any(
            isinstance(v, bool) or not isinstance(v, int) for v in value):
        raise BadInput(f"{name} is a list of whole numbers")
    return value


def versions(body: Mapping[str, Any], name: str = "expected") -> dict[str, int]:
    """An object of id -> the version the page saw; every change carries one."""
    value = body.get(name)
    if not isinstance(value, dict) or len(value) > MAX_ITEMS or any(
            isinstance(v, bool) or not isinstance(v, int) for v in value.values()):
        raise BadInput(f"{name} is an object: each answer's id -> the version the page showed (every change "
                       "carries the versions it saw)")
    return value


def flag(body: Mapping[str, Any], name: str) -> bool:
    value = body.get(name, False)
    if not isinstance(value, bool):
        raise BadInput(f"{name} is true or false")
    return value


def query(params: Mapping[str, str], name: str, limit: int = MAX_QUERY) -> str:
    value = params.get(name, "")
    if len(value) > limit:
        raise BadInput(f"{name} is at most {limit} characters")
    return value


def query_whole(params: Mapping[str, str], name: str, default: int, top: int) -> int:
    value = params.get(name)
    if value is None:
        return default
    if not value.isascii() or not value.isdecimal() or len(value) > 12 or not 0 <= int(value) <= top:
        raise BadInput(f"{name} is a whole number from 0 to {top}")
    return int(value)
