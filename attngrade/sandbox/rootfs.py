"""The sandbox child's view of the file system: a minimal root of its own.

A small tmpfs becomes the child's root (pivot_root). It holds, each at its own path, a
read-only bind mount of the Python installation and of the system's libraries, the
device files /dev/null, /dev/zero and /dev/urandom, a /proc of the child's own PID
namespace, and the working folder: a size-capped tmpfs with the student's files. The
old root is detached, so nothing else of the machine has a path there: no /tmp, /run or
home folder, no socket of the grader's user or of anyone else, no other process's /proc.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .linux import (
    MNT_DETACH,
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_REMOUNT,
    kept_flags,
    mount,
    pivot_root,
    umount,
)

DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom")
ROOT_SIZE = 1024 * 1024  # the new root holds only the folders the mounts need
FILES = 4096  # files and folders the working folder may hold
OLD = ".old-root"


def readable_roots() -> list[str]:
    """What a child may read: the Python installation and the system's libraries, nothing else."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             "/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/share/zoneinfo", "/etc/ld.so.cache",
             "/etc/localtime", *DEVICES}
    return sorted(r for r in roots if r and r != "/" and os.path.exists(r))


def make_private() -> None:
    """Mounts made from here on stay in this mount namespace (none propagates back to the machine's)."""
    mount("none", "/", None, MS_REC | MS_PRIVATE)


def working_folder(target: Path, size: int) -> None:
    """A tmpfs of `size` bytes at `target`: the only place the child may write. Its inodes are counted too
    (`nr_inodes`): a flood of empty files would otherwise pin kernel memory that no size counts, and the
    same count bounds the space a tmpfs gives extended attributes."""
    mount("tmpfs", str(target), "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},nr_inodes={FILES},mode=0755")


def build(new: Path, folder: Path, folder_size: int, own_pids: bool) -> bool:
    """Fill the (empty) folder `new` as the child's root; True when it holds a /proc of its own (only with
    `own_pids`, a PID namespace of its own: another /proc would show the machine's processes).

    Raises OSError when a step fails; the caller then undoes it with `abandon`."""
    mount("tmpfs", str(new), "tmpfs", MS_NOSUID | MS_NODEV, f"size={ROOT_SIZE},nr_inodes={FILES},mode=0755")
    for source in readable_roots():
        _bind_read_only(source, new)
    own_proc = own_pids
    (new / "proc").mkdir()
    try:  # only the first process of a PID namespace of its own (and its user namespace) may
        if own_pids:
            mount("proc", str(new / "proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:
        own_proc = False  # then no /proc at all: the machine's would show every process
    if own_proc:
        _hide_keys(new / "proc")
    inside = new / folder.relative_to("/")
    inside.mkdir(parents=True)
    working_folder(inside, folder_size)
    return own_proc


def _hide_keys(proc: Path) -> None:
    """/proc/keys and /proc/key-users list the names and sizes of keys the machine holds (a grader's
    session keyring's among them): /dev/null is bound over both. A kernel without keys has neither."""
    for name in ("keys", "key-users"):
        if (proc / name).exists():
            mount("/dev/null", str(proc / name), None, MS_BIND)


def _bind_read_only(source: str, new: Path) -> None:
    target = new / source.lstrip("/")
    if os.path.isdir(source):
        target.mkdir(parents=True, exist_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()
    mount(source, str(target), None, MS_BIND | MS_REC)
    # Read-only on top of Landlock's rules: a grader that is not root may own the installation.
    mount(None, str(target), None, MS_BIND | MS_REMOUNT | MS_RDONLY | kept_flags(str(target)))


def enter(new: Path) -> None:
    """Make `new` (filled by `build`) the root, detach the old one, and make the new root read-only."""
    old = new / OLD
    old.mkdir()
    pivot_root(str(new), str(old))
    os.chdir("/")
    umount("/" + OLD, MNT_DETACH)
    os.rmdir("/" + OLD)
    mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | kept_flags("/"))


def abandon(new: Path) -> None:
    """Undo a `build` that failed half-way: whatever was mounted on `new` goes."""
    try:
        umount(str(new), MNT_DETACH)
    except OSError:
        pass
