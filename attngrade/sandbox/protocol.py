"""Messages between the grader, the zygote and a sandbox child: length-prefixed JSON.

Every read is bounded: a message longer than its limit is refused before it is read,
so nothing a child writes can make the reader hold more than `limit` bytes.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

HEADER = struct.Struct(">Q")
MAX_REQUEST = 64 * 1024 * 1024  # the student's files and the job, grader -> zygote
MAX_RESULT = 4 * 1024 * 1024  # raw data, child -> supervisor -> grader
MAX_DEPTH = 64  # nesting of a child's data the supervisor passes on: far past any driver's, far short of a stack
HELLO = b"\x01"  # the first byte on a connection the zygote serves: torch is imported, the request may come
NO_JOB = b"\x00"  # instead, when it could not start a supervisor: its answer, saying why, follows at once


class TooLarge(Exception):
    """A message over its size limit."""


def deeper_than(obj: Any, limit: int) -> bool:
    """Whether lists and objects in `obj` nest more than `limit` deep (walked without recursion)."""
    todo = [(obj, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, (list, dict)):
            if depth > limit:
                return True
            todo += [(child, depth + 1) for child in (item.values() if isinstance(item, dict) else item)]
    return False


def encode(obj: Any) -> bytes:
    body = json.dumps(obj, separators=(",", ":"), allow_nan=True).encode("utf-8")
    return HEADER.pack(len(body)) + body


def write_fd(fd: int, obj: Any) -> None:
    data = memoryview(encode(obj))
    while data:
        n = os.write(fd, data)
        data = data[n:]


def read_exact_fd(fd: int, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_fd(fd: int, limit: int) -> Any:
    (size,) = HEADER.unpack(read_exact_fd(fd, HEADER.size))
    if size > limit:
        raise TooLarge(f"a message of {size} bytes (at most {limit} are read)")
    return json.loads(read_exact_fd(fd, size).decode("utf-8"))


def decode(buffer: bytes, limit: int) -> Any:
    """One complete message from bytes already read (the supervisor's bounded buffer)."""
    return decode_at(buffer, 0, limit)[0]


def decode_at(buffer: bytes, start: int, limit: int) -> tuple[Any, int]:
    """The complete message at `start` of `buffer`, and where the next one starts."""
    if len(buffer) - start < HEADER.size:
        raise EOFError("no result was written")
    (size,) = HEADER.unpack(buffer[start:start + HEADER.size])
    if size > limit:
        raise TooLarge(f"a result of {size} bytes (at most {limit} are read)")
    body = buffer[start + HEADER.size:start + HEADER.size + size]
    if len(body) < size:
        raise EOFError("the result was cut off")
    return json.loads(body.decode("utf-8")), start + HEADER.size + size
