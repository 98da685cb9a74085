"""The Linux system calls the sandbox makes through libc (ctypes), and their constants.

Nothing here decides anything: `isolate.py`, `rootfs.py`, `landlock.py` and the supervisor
call these and record what the kernel refused.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform

# clone(2) / unshare(2) flags
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
# mount(2) flags
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 0x4000, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2
# statvfs(3) f_flag bits -> the mount flags a remount must keep (a user namespace may not drop them)
KEPT_FLAGS = ((1, MS_RDONLY), (2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC), (1024, MS_NOATIME),
              (2048, MS_NODIRATIME), (4096, MS_RELATIME))
# prctl(2)
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_KEEPCAPS = 8
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
CAP_DAC_READ_SEARCH = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
# pivot_root(2) has no libc wrapper: its number per architecture
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}

_libc = None


def libc() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    return _libc


def check(result: int, what: str) -> None:
    """Raise OSError (with errno's text) for a failed call (a negative or, for unshare, any non-zero result)."""
    if result < 0 or (result != 0 and what.startswith("unshare")):
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int, what: str = "unshare") -> None:
    check(libc().unshare(flags), what)


def mount(source: str | None, target: str, fstype: str | None, flags: int, options: str | None = None) -> None:
    enc = (lambda s: None if s is None else s.encode())
    check(libc().mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(options)),
          f"mount {fstype or source or ''} on {target}")


def kept_flags(path: str) -> int:
    """The mount flags of the mount holding `path` that a remount must keep."""
    found = os.statvfs(path).f_flag
    return sum(flag for bit, flag in KEPT_FLAGS if found & bit)


def umount(target: str, flags: int = 0) -> None:
    check(libc().umount2(target.encode(), flags), f"umount {target}")


def pivot_root(new: str, put_old: str) -> None:
    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(0, f"pivot_root: no system call number known for {platform.machine()}")
    check(int(libc().syscall(ctypes.c_long(number), new.encode(), put_old.encode())), "pivot_root")


def prctl(option: int, value: int) -> None:
    check(libc().prctl(option, ctypes.c_ulong(value), 0, 0, 0), f"prctl {option}")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def set_capabilities(mask: int) -> None:
    """Keep only the capabilities in `mask` (effective and permitted; none inheritable)."""
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)(_CapData(mask, mask, 0), _CapData(0, 0, 0))
    check(libc().capset(ctypes.byref(header), data), "capset")
