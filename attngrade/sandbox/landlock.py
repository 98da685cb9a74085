"""Landlock (linux/landlock.h) for the sandbox child: the last layer, set after every other.

Reads only under the Python installation, the system's libraries and /proc; writes only in
the working folder; with ABI 4 and later no TCP bind or connect; with ABI 6 and later no
signal or abstract Unix socket outside the sandbox; with ABI 9 and later no connection to
a path-named Unix socket created outside it.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from .linux import PR_SET_NO_NEW_PRIVS, check, libc
from .rootfs import readable_roots

SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1, 2, 4, 8
FS_ALL_V1 = (1 << 13) - 1
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV, FS_RESOLVE_UNIX = 1 << 13, 1 << 14, 1 << 15, 1 << 16
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi() -> int:
    """The kernel's Landlock ABI version (-1 where there is none)."""
    try:
        return int(libc().syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                                  ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION)))
    except (AttributeError, OSError):
        return -1


def handled(version: int) -> int:
    """The file-system rights ABI `version` knows: all of them are restricted, some granted back."""
    return (FS_ALL_V1 | (FS_REFER if version >= 2 else 0) | (FS_TRUNCATE if version >= 3 else 0)
            | (FS_IOCTL_DEV if version >= 5 else 0) | (FS_RESOLVE_UNIX if version >= 9 else 0))


def restrict(folder: Path, version: int, own_proc: bool = True) -> list[str]:
    """Restrict this process (and what it starts) for good; the layers that took. Raises OSError."""
    lib = libc()
    fs = handled(version)
    attr = _RulesetAttr(fs, (NET_BIND_TCP | NET_CONNECT_TCP) if version >= 4 else 0,
                        (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if version >= 6 else 0)
    size = 24 if version >= 6 else 16 if version >= 4 else 8
    ruleset = lib.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    check(int(ruleset), "landlock_create_ruleset")
    # No execute anywhere: the child is forked from a zygote that has imported all it needs (shared
    # libraries are loaded by reading, not executing), and a program it started would be a fresh
    # process whose memory nothing it shares with the zygote accounts for.
    read = FS_READ_FILE | FS_READ_DIR
    rules = [(r, read) for r in readable_roots()] + ([("/proc", read)] if own_proc else [])
    rules += [(str(folder), fs & ~(FS_IOCTL_DEV | FS_EXECUTE)), ("/dev/null", FS_READ_FILE | FS_WRITE_FILE)]
    try:
        for path, access in rules:
            _add_rule(ruleset, path, access & fs)
        check(lib.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        check(int(lib.syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))),
              "landlock_restrict_self")
    finally:
        os.close(ruleset)
    took = [(f"Landlock ABI {version}: reads only under the Python installation and system libraries, "
             "writes only in the working folder, starts no program")]
    if version >= 4:
        took.append("Landlock: no TCP bind or connect")
    if version >= 6:
        took.append("Landlock: no signals or abstract sockets outside the sandbox")
    if version >= 9:
        took.append("Landlock: no path-named Unix socket made outside the sandbox")
    return took


def _add_rule(ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # not there: nothing to allow
    try:
        if not os.path.isdir(path):
            access &= FS_EXECUTE | FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE
        rule = _PathBeneath(access, fd)
        check(int(libc().syscall(SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH),
                                 ctypes.byref(rule), ctypes.c_uint32(0))), f"landlock_add_rule {path}")
    finally:
        os.close(fd)
