"""Files the instructor hands the store (an overrides file, a list of regrade requests), read bounded:
only a regular file of its own (no link, no second name), of at most a size, as UTF-8 text."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import ConfigError

FILE_LIMIT = 20 * 1024 * 1024


def read_text(path: Path, what: str, limit: int = FILE_LIMIT) -> str:
    """The text of `path`, or ConfigError naming the file, what is wrong and what to do."""
    try:
        info = os.lstat(path)
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the {what} ({err.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path}: the {what} must be a regular file (not a link, folder or device); name the "
                          "file itself")
    if info.st_nlink > 1 or info.st_size > limit:
        why = "has several names (a hard link)" if info.st_nlink > 1 else f"is larger than {limit} bytes"
        raise ConfigError(f"{path}: the {what} {why}; name a copy of it")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the {what} ({err.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        opened = os.fstat(handle.fileno())
        if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
            raise ConfigError(f"{path}: the {what} was replaced while it was read; try again")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ConfigError(f"{path}: the {what} grew past {limit} bytes while it was read")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: the {what} is not UTF-8 text (byte {err.start}); save it as UTF-8") from None
