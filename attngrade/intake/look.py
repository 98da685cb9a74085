"""Whether a file of an answers format has answers in it: its first bytes, read within bounds and
looked at in linear time (`formats.sniff`)."""

from __future__ import annotations

import os
import stat
from functools import lru_cache
from pathlib import Path

from ..runtime.files import NotRead, read_bounded, vetted
from .formats import MAX_BYTES
from .formats.sniff import kind_of, looks_like

MAX_YAML_BYTES = 2_000_000


def looks_like_answers(path: Path) -> bool:
    """Whether a file of an answers format has answers in it (a cheap look, no parsing).

    Only a regular file of its own is opened (`runtime.files.read_bounded`): a named pipe would
    block, a device never end, a link or a second name lead to a file that is not the student's.
    Finding a class's submissions asks about a file more than once: each file is read once."""
    try:
        info = os.lstat(path)
        vetted(info, MAX_BYTES.get(path.suffix.lower(), MAX_YAML_BYTES))
    except (OSError, ValueError, NotRead):  # ValueError: a NUL in the name
        return False
    return stat.S_ISREG(info.st_mode) and _sniff(str(path), info.st_ino, info.st_mtime_ns, info.st_size)


@lru_cache(maxsize=4096)
def _sniff(path: str, inode: int, mtime_ns: int, size: int) -> bool:  # noqa: ARG001 - the last three key the cache
    suffix = Path(path).suffix.lower()
    try:
        data = read_bounded(path, MAX_BYTES.get(suffix, MAX_YAML_BYTES))
    except NotRead:
        return False
    return looks_like(kind_of(suffix), data.decode("utf-8", errors="replace"))
