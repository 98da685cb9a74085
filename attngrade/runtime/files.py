"""Files written whole or not at all, their hashes, where a path lies, and a student's file read
within bounds (`read_bounded`)."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
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


# -- a student's file, read within bounds --------------------------------------------------------
# What kept a file from being read (`NotRead.kind`).
ABSENT, LINK, NOT_REGULAR, SECOND_NAME, TOO_LARGE, DENIED, UNREADABLE = (
    "absent", "link", "not regular", "second name", "too large", "denied", "unreadable")


class NotRead(Exception):
    """Why a file was not read. `reason` names no path (the caller says whose file it is and what
    to do): it reads after the file's name ("dataset.py is a link; ..."). `kind` is one of the
    kinds above, for a caller that words it its own way."""

    def __init__(self, reason: str, kind: str):
        super().__init__(reason)
        self.reason = reason
        self.kind = kind

    @property
    def absent(self) -> bool:
        """Nothing by that name: the caller may look elsewhere, or say it is missing."""
        return self.kind == ABSENT


# Opened without following a link (ELOOP if it became one), without blocking on a pipe swapped in
# after the lstat, and never as a terminal of ours.
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
_BLOCK = 1 << 20


def vetted(info: os.stat_result, limit: int | None) -> None:
    """Raise NotRead unless `info` (an lstat, or the fstat of what was opened) is a regular file of
    its own of at most `limit` bytes: a link is read from where it leads (another student's file, the
    gold), a pipe or device never ends or never answers, and a second name (a hard link) may be a
    file of the grader's that the student's folder only names."""
    if stat.S_ISLNK(info.st_mode):
        raise NotRead("is a link; submit the file itself", LINK)
    if not stat.S_ISREG(info.st_mode):
        raise NotRead("is not a regular file (a folder, pipe or device); submit the file itself", NOT_REGULAR)
    if info.st_nlink > 1:
        raise NotRead(f"is a hard link (one file under {info.st_nlink} names on the grader's disk), so it was not "
                      "read; submit a copy of the file itself", SECOND_NAME)
    if limit is not None and info.st_size > limit:
        raise NotRead(f"is {info.st_size} bytes; at most {limit} are read", TOO_LARGE)


def read_bounded(path: Path | str, limit: int, below: Path | str | None = None) -> bytes:
    """The bytes of the regular file at `path`, of at most `limit` bytes, or NotRead saying why not.

    Looked at with lstat first (nothing is opened that is not a regular file of its own), opened
    with O_NOFOLLOW, checked again on the open descriptor (the same file, its size), and read to at
    most `limit` bytes whatever the size said (a file that grows while it is read is refused).
    With `below` (a folder `path` lies in, such as the submission's), every folder on the way from
    it to the file is opened without following a link too: `src/` made a link to the grader's
    solutions folder leads nowhere."""
    with _opened(path, limit, below) as fd:
        pieces = [os.read(fd, min(os.fstat(fd).st_size, limit) + 1)]  # the whole file, in one call as a rule
        read = len(pieces[0])
        while pieces[-1] and read <= limit:
            pieces.append(os.read(fd, min(limit + 1 - read, _BLOCK)))
            read += len(pieces[-1])
    if read > limit:
        raise NotRead(f"grew past {limit} bytes while it was read; at most {limit} are read", TOO_LARGE)
    return pieces[0] if len(pieces) <= 2 and not pieces[-1] else b"".join(pieces)  # (a join would copy it)


def check_readable(path: Path | str, limit: int | None = None, below: Path | str | None = None) -> os.stat_result:
    """What `read_bounded` checks, without reading: the file's fstat, or NotRead."""
    with _opened(path, limit, below) as fd:
        return os.fstat(fd)


_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class _opened:
    """The descriptor of a vetted regular file (see `read_bounded`), closed on leaving."""

    def __init__(self, path: Path | str, limit: int | None, below: Path | str | None = None):
        self.path, self.limit, self.below, self.fd = path, limit, below, -1

    def __enter__(self) -> int:
        folder, name = -1, os.fspath(self.path)
        try:
            if self.below is not None:
                folder, name = _folder_of(Path(self.path), Path(self.below))
            before = os.stat(name, dir_fd=folder if folder >= 0 else None, follow_symlinks=False)
            vetted(before, self.limit)
            self.fd = os.open(name, _OPEN_FLAGS, dir_fd=folder if folder >= 0 else None)
        except OSError as err:
            raise _not_read(err) from None
        except ValueError:  # a NUL in the name: no file can have it
            raise NotRead("is not there", ABSENT) from None
        finally:
            if folder >= 0:
                os.close(folder)
        try:
            opened = os.fstat(self.fd)
            if (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
                raise NotRead("was replaced while it was read; submit it again", UNREADABLE)
            vetted(opened, self.limit)
        except NotRead:
            os.close(self.fd)
            raise
        return self.fd

    def __exit__(self, *exc: Any) -> None:
        os.close(self.fd)


def _folder_of(path: Path, below: Path) -> tuple[int, str]:
    """A descriptor of `path`'s folder, reached from `below` one folder at a time without following a
    link (a link on the way is ELOOP or ENOTDIR, said as a link), and the file's own name."""
    try:
        steps = path.relative_to(below).parts
    except ValueError:
        raise NotRead("is not inside the submission folder", ABSENT) from None
    if not steps:
        raise NotRead("is not a regular file (a folder, pipe or device); submit the file itself", NOT_REGULAR)
    folder = os.open(below, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))  # (its own place may be a link)
    try:
        for step in steps[:-1]:
            try:
                inner = os.open(step, _FOLDER_FLAGS, dir_fd=folder)
            except OSError as err:
                if err.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(step, folder):
                    raise NotRead(f"is reached through a link ({step}); submit the folder itself", LINK) from None
                raise
            os.close(folder)
            folder = inner
    except BaseException:
        os.close(folder)
        raise
    return folder, steps[-1]


def _is_link(name: str, folder: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _not_read(err: OSError) -> NotRead:
    if err.errno in (errno.ENOENT, errno.ENOTDIR):
        return NotRead("is not there", ABSENT)
    if err.errno == errno.ELOOP:
        return NotRead("is a link; submit the file itself", LINK)
    if err.errno in (errno.EACCES, errno.EPERM):
        return NotRead("cannot be read: the grader has no permission to open it; course staff can make it "
                       "readable (chmod a+r) and grade it again", DENIED)
    return NotRead(f"cannot be read ({os.strerror(err.errno) if err.errno else err}); course staff can look "
                   "at the file and grade it again", UNREADABLE)
