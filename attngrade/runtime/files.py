"""Files written whole or not at all, their hashes, and where a path lies."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

from .text import UNENCODABLE


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Write via a temporary file in the same folder and rename: never a torn file.

    `text` may be an iterable of pieces, written as they come (never joined in memory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="", errors=UNENCODABLE) as handle:
            _put(handle, text)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; outputs are ordinary files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_new(path: Path, text: str | Iterable[str]) -> None:
    """Write a file that no one can be reading yet: one in a staged OUT (`outputs.folder.staged`), whose
    whole folder is switched in at the end. No temporary file and rename, which would cost a
    report two more file-system calls than it needs; its folder is made if it is not there."""
    try:
        handle = open(path, "x", encoding="utf-8", newline="", errors=UNENCODABLE)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "x", encoding="utf-8", newline="", errors=UNENCODABLE)
    with handle:
        _put(handle, text)


def _put(handle: Any, text: str | Iterable[str]) -> None:
    if isinstance(text, str):
        handle.write(text)
    else:
        handle.writelines(text)


_UMASK = os.umask(0)  # read by setting it; set back at once
os.umask(_UMASK)


def file_sha256(path: Path) -> str:
    """A file's SHA-256, read a megabyte at a time (a large class's overrides.yaml is large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def within(real: str, folder: str) -> bool:
    """Whether the resolved path `real` lies inside the resolved `folder` (not the folder itself)."""
    return real.startswith(folder.rstrip(os.sep) + os.sep)
