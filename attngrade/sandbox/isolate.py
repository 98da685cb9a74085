"""Isolation a sandbox child puts itself under before it imports a student's code.

Called in the forked child only, in this order: a new session (so the whole process
group can be killed), a mount and network namespace (a user namespace too when not
root), a size-capped tmpfs as the working folder holding only the student's files, a
clean environment, resource limits, another uid (when root), then Landlock: reads only
under the Python installation and the system libraries, writes only in the folder, no
TCP, and (kernel ABI 6+) no signals or abstract sockets outside the sandbox.

Each layer that could be set up is recorded by name in `Layers`; one that the kernel or
platform refuses is recorded as missing with the reason, never silently dropped. seccomp
is not used: no maintained Python binding installs here (see README).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

# clone(2) flags
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
# mount(2) flags
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 2, 4, 0x4000, 1 << 18
PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1
PR_SET_KEEPCAPS = 8
CAP_DAC_READ_SEARCH = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522

# Landlock (linux/landlock.h)
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1, 2, 4, 8
FS_ALL_V1 = (1 << 13) - 1
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2

SANDBOX_UID_BASE = 200_000  # a child of supervisor pid P runs as uid BASE + P: unique while P lives


GRADER_ROOM = 64  # processes the grader may start while a child runs (its uid's cap, not root)
ADDRESS_ROOM = 256 * 1024**2  # address space beyond the memory limit: thread stacks, malloc's arenas


@dataclass(frozen=True)
class Limits:
    """What one sandbox child may use."""

    cpu_seconds: int = 10
    memory: int = 1024**3  # private memory (RLIMIT_DATA) on top of what the zygote already holds
    file_size: int = 16 * 1024**2
    open_files: int = 64
    processes: int = 16  # per uid (only meaningful with a uid of its own)
    folder_size: int = 64 * 1024**2  # the tmpfs working folder

    @classmethod
    def from_json(cls, data: Mapping | None) -> "Limits":
        known = cls.__dataclass_fields__
        return cls(**{k: int(v) for k, v in (data or {}).items() if k in known})


@dataclass
class Layers:
    """Which isolation layers are active in a child, and why any is missing."""

    active: list[str] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)

    def on(self, name: str) -> None:
        self.active.append(name)

    def off(self, name: str, why: str) -> None:
        self.missing[name] = why

    def to_json(self) -> dict:
        return {"active": list(self.active), "missing": dict(self.missing)}


_libc = None


def libc() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    return _libc


def _check(result: int, what: str) -> None:
    if result < 0 or (result != 0 and what.startswith("unshare")):
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def is_root() -> bool:
    return os.geteuid() == 0


def sandbox_uid(supervisor_pid: int) -> int | None:
    """The uid a child of this supervisor runs as (None when the grader is not root)."""
    return SANDBOX_UID_BASE + supervisor_pid if is_root() else None


def enter(folder: Path, files: Mapping[str, bytes], uid: int | None, limits: Limits,
          keep_fds: tuple[int, ...]) -> Layers:
    """Put this (forked, single-threaded) process into the sandbox; returns the layers that took."""
    layers = Layers()
    os.setsid()
    layers.on("own process group (killed as a whole)")
    try:
        libc().prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
    except (AttributeError, OSError):
        pass
    _namespaces(layers)
    _folder(folder, files, uid, limits, layers)
    _close_fds(keep_fds)
    _environment(folder)
    _rlimits(limits, uid, layers)
    abi = landlock_abi()
    _drop_uid(uid, layers, keep_read=abi >= 1)
    if not _landlock(folder, layers, abi) and uid is not None and abi >= 1:
        _set_capabilities(0)  # without Landlock the child must not read what its uid cannot
    return layers


def _namespaces(layers: Layers) -> None:
    lib = libc()
    if is_root():
        flags = CLONE_NEWNS | CLONE_NEWNET
    else:
        flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET
    uid, gid = os.getuid(), os.getgid()
    try:
        _check(lib.unshare(flags), "unshare")
    except OSError as err:
        layers.off("network namespace", str(err))
        layers.off("mount namespace", str(err))
        return
    if not is_root() or flags & CLONE_NEWUSER:
        try:  # map our own uid into the new user namespace so files keep their owner
            Path("/proc/self/setgroups").write_text("deny")
            Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
            Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
            layers.on("user namespace")
        except OSError as err:
            layers.off("user namespace", str(err))
    layers.on("network namespace (no interfaces, not even loopback)")
    layers.on("mount namespace")


def _folder(folder: Path, files: Mapping[str, bytes], uid: int | None, limits: Limits, layers: Layers) -> None:
    lib = libc()
    mounted = False
    if "mount namespace" in layers.active:
        try:
            _check(lib.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
            options = f"size={limits.folder_size},mode=0755".encode()
            _check(lib.mount(b"tmpfs", str(folder).encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options),
                   "mount tmpfs")
            mounted = True
            layers.on(f"working folder on its own tmpfs of {limits.folder_size // 1024**2} MiB")
        except OSError as err:
            layers.off("tmpfs working folder", str(err))
    else:
        layers.off("tmpfs working folder", "no mount namespace")
    for name, data in files.items():
        path = folder / name
        path.write_bytes(data)
        if uid is not None:
            os.chown(path, uid, uid)
    if uid is not None:
        os.chown(folder, uid, uid)
    os.chmod(folder, 0o755 if mounted else 0o700)
    os.chdir(folder)


def _close_fds(keep: tuple[int, ...]) -> None:
    keep_set = {0, 1, 2, *keep}
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 256))
    for fd in fds:
        if fd not in keep_set:
            try:
                os.close(fd)
            except OSError:
                pass
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
    except OSError:
        pass


CLEAN_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
             "OPENBLAS_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}


def _environment(folder: Path) -> None:
    os.environ.clear()
    os.environ.update(CLEAN_ENV, HOME=str(folder), TMPDIR=str(folder))


def _vm(field: str) -> int:
    """Bytes of this process's `field` in /proc/self/status (VmData, VmSize), 0 if unknown."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0




def _kernel_at_least(major: int, minor: int) -> bool:
    try:
        found = tuple(int(n) for n in os.uname().release.split("-")[0].split(".")[:2])
    except ValueError:
        return False
    return found >= (major, minor)


def _processes_of(uid: int) -> int:
    """How many processes of `uid` run now (by their real uid, as RLIMIT_NPROC counts them)."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/status", "rb") as status:
                    line = next(l for l in status if l.startswith(b"Uid:"))
                count += int(line.split()[1]) == uid
            except (OSError, StopIteration, ValueError, IndexError):
                continue
    return count


def _rlimits(limits: Limits, uid: int | None, layers: Layers) -> None:
    data = _vm("VmData") + limits.memory
    # Shared mappings (mmap MAP_SHARED, /dev/shm) are not private memory: RLIMIT_DATA lets them
    # through. The address space counts everything, on top of what the zygote maps already.
    space = _vm("VmSize") + limits.memory + ADDRESS_ROOM
    wanted = [
        ("RLIMIT_CPU", (limits.cpu_seconds, limits.cpu_seconds + 1), f"CPU {limits.cpu_seconds} s"),
        ("RLIMIT_DATA", (data, data), f"private memory +{limits.memory // 1024**2} MiB (RLIMIT_DATA)"),
        ("RLIMIT_AS", (space, space), f"address space +{(limits.memory + ADDRESS_ROOM) // 1024**2} MiB, shared "
                                      "mappings included (RLIMIT_AS)"),
        ("RLIMIT_FSIZE", (limits.file_size, limits.file_size), f"files up to {limits.file_size // 1024**2} MiB"),
        ("RLIMIT_NOFILE", (limits.open_files, limits.open_files), f"{limits.open_files} open files"),
        ("RLIMIT_CORE", (0, 0), "no core dumps"),
    ]
    if uid is not None:
        wanted.append(("RLIMIT_NPROC", (limits.processes, limits.processes), f"{limits.processes} processes"))
    elif "user namespace" in layers.active and _kernel_at_least(5, 14):
        # Since Linux 5.14 a user namespace counts its own processes against RLIMIT_NPROC, so
        # the child's cap holds though it shares its uid with the grader (not root).
        wanted.append(("RLIMIT_NPROC", (limits.processes, limits.processes),
                       f"{limits.processes} processes (counted in its user namespace)"))
    else:
        # Before that the count is every process of the uid: the cap is what the uid runs now,
        # plus the child's share and room for the grader's own processes meanwhile.
        others = _processes_of(os.getuid())
        cap = others + limits.processes + GRADER_ROOM
        wanted.append(("RLIMIT_NPROC", (cap, cap), f"{limits.processes} processes (+{GRADER_ROOM} the grader's, "
                                                   f"beside the {others} its uid runs)"))
    for name, value, label in wanted:
        try:
            resource.setrlimit(getattr(resource, name), value)
            layers.on(label)
        except (ValueError, OSError, AttributeError) as err:
            layers.off(label, str(err))


def _drop_uid(uid: int | None, layers: Layers, keep_read: bool) -> None:
    """Become `uid`. With `keep_read` (Landlock is there to confine it) the child keeps one
    capability, CAP_DAC_READ_SEARCH, so it can read the Python installation wherever root
    put it (pyenv under /root, say); Landlock then allows reads only there."""
    if uid is None:
        layers.off("separate uid", "the grader is not root; the child keeps the grader's uid")
        return
    lib = libc()
    if keep_read:
        lib.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError("could not drop to the sandbox uid")
    _set_capabilities(1 << CAP_DAC_READ_SEARCH if keep_read else 0)
    layers.on(f"separate uid {uid}" + (" (only capability: reading files, within Landlock's list)"
                                        if keep_read else ", no capabilities"))


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _set_capabilities(mask: int) -> None:
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)(_CapData(mask, mask, 0), _CapData(0, 0, 0))
    _check(libc().capset(ctypes.byref(header), data), "capset")


# -- Landlock --------------------------------------------------------------------------------
class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    try:
        return int(libc().syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                                  ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION)))
    except (AttributeError, OSError):
        return -1


def readable_roots() -> list[str]:
    """Where a child may read: the Python installation and the system's libraries, nothing else."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             "/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/share/zoneinfo", "/etc/ld.so.cache",
             "/etc/localtime", "/proc", "/dev/urandom", "/dev/zero", "/dev/null"}
    return sorted(r for r in roots if r and r != "/" and os.path.exists(r))


def _landlock(folder: Path, layers: Layers, abi: int) -> bool:
    if abi < 1:
        layers.off("Landlock", "not supported by this kernel")
        return False
    lib = libc()
    fs = FS_ALL_V1 | (FS_REFER if abi >= 2 else 0) | (FS_TRUNCATE if abi >= 3 else 0) | \
        (FS_IOCTL_DEV if abi >= 5 else 0)
    attr = _RulesetAttr(fs, (NET_BIND_TCP | NET_CONNECT_TCP) if abi >= 4 else 0,
                        (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = lib.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        layers.off("Landlock", os.strerror(ctypes.get_errno()))
        return False
    read = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
    rules = [(r, read) for r in readable_roots()]
    rules += [(str(folder), fs & ~FS_IOCTL_DEV), ("/dev/null", FS_READ_FILE | FS_WRITE_FILE)]
    try:
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    access &= FS_EXECUTE | FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE
                rule = _PathBeneath(access & fs, fd)
                if lib.syscall(SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH),
                               ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        _check(lib.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(int(lib.syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))),
               "landlock_restrict_self")
    except OSError as err:
        layers.off("Landlock", str(err))
        return False
    finally:
        os.close(ruleset)
    layers.on(f"Landlock ABI {abi}: reads only under the Python installation and system libraries, "
              "writes only in the working folder")
    if abi >= 4:
        layers.on("Landlock: no TCP bind or connect")
    if abi >= 6:
        layers.on("Landlock: no signals or abstract sockets outside the sandbox")
    return True
