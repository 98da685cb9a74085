"""Isolation a sandbox job puts itself under before it imports a student's code.

Two processes of a job call it. `detach` runs in the job's first process, which the
supervisor forks: setsid (the job's process group is killed as a whole), then new
namespaces: a user namespace when the grader is not root, then mount, network (no
interfaces), IPC and PID. That process forks the sandbox child, the first process of the
new PID namespace: when the child ends, the kernel ends every process of the namespace,
and the namespace's IPC objects (System V shared memory, semaphores, message queues) go
with the last of them.

`enter` runs in the sandbox child: the IPC namespace's limits, a minimal root
(`rootfs.py`: only the Python installation, the system libraries, its own /proc and a
size-capped tmpfs working folder with the student's files), a clean environment,
resource limits, another uid (when root) and no capabilities, then Landlock
(`landlock.py`). The memory of all the job's processes together is capped by the
supervisor (`watch.py`).

Each layer that could be set up is recorded by name in `Layers`; one that the kernel or
platform refuses is recorded as missing with the reason, never silently dropped. A small
seccomp filter (`seccomp.py`) refuses what neither covers: keyrings, memory-backed files, pinning
pages in pipes, starting a program.
"""

from __future__ import annotations

import os
import resource
import select
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from ..runtime.lifeline import end_with_parent
from . import landlock, rootfs, seccomp
from .linux import (
    CAP_DAC_READ_SEARCH,
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    PR_SET_KEEPCAPS,
    libc,
    set_capabilities,
    unshare,
)

SANDBOX_UID_BASE = 200_000  # a child of supervisor pid P runs as uid BASE + P: unique while P lives
GRADER_ROOM = 64  # processes the grader may start while a child runs (its uid's cap, not root)
ADDRESS_ROOM = 256 * 1024**2  # address space beyond the memory limit: thread stacks, malloc's arenas
IPC_OBJECTS = 32  # System V shared memory segments, semaphore sets and message queues a job may make
SEMAPHORES = 32  # in one set, and (times IPC_OBJECTS) in all: kernel memory the job's memory count cannot see
MESSAGE_BYTES = 16 * 1024  # one message queue's bytes, and one message's
# name (as `missing` lists it), clone flag, what the report says when it took
NAMESPACES = (("mount namespace", CLONE_NEWNS, "mount namespace"),
              ("network namespace", CLONE_NEWNET, "network namespace (no interfaces, not even loopback)"),
              ("IPC namespace", CLONE_NEWIPC, ("IPC namespace (System V IPC and message queues of its own, "
                                               "gone with the job)")),
              ("PID namespace", CLONE_NEWPID, ("PID namespace (it sees only its own processes; all of them end "
                                               "with the job)")))


@dataclass(frozen=True)
class Limits:
    """What one sandbox job may use."""

    cpu_seconds: int = 10
    memory: int = 1024**3  # beyond what the zygote holds already: per process, and for all of them together
    file_size: int = 16 * 1024**2
    open_files: int = 64
    processes: int = 16  # for the whole job (its own uid or user namespace)
    folder_size: int = 64 * 1024**2  # the tmpfs working folder

    @classmethod
    def from_json(cls, data: Mapping | None) -> "Limits":
        known = cls.__dataclass_fields__
        return cls(**{k: int(v) for k, v in (data or {}).items() if k in known})


@dataclass
class Layers:
    """Which isolation layers are active in a job, and why any is missing."""

    active: list[str] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)

    def on(self, name: str) -> None:
        self.active.append(name)

    def off(self, name: str, why: str) -> None:
        self.missing[name] = why

    def has(self, name: str) -> bool:
        return any(label.startswith(name) for label in self.active)

    def to_json(self) -> dict:
        return {"active": list(self.active), "missing": dict(self.missing)}


def is_root() -> bool:
    return os.geteuid() == 0


def sandbox_uid(supervisor_pid: int) -> int | None:
    """The uid a child of this supervisor runs as (None when the grader is not root)."""
    return SANDBOX_UID_BASE + supervisor_pid if is_root() else None


# -- the job's first process ------------------------------------------------------------------
def detach(supervisor: int) -> Layers:
    """Start the job's process group and namespaces in this (forked, single-threaded) process, which then
    forks the sandbox child: the namespaces are the child's; the layers so far."""
    layers = Layers()
    end_with_parent(supervisor)
    os.setsid()
    layers.on("own process group (killed as a whole)")
    if not is_root() and not _user_namespace(layers):
        # Without namespaces the child would be the grader's own uid behind Landlock alone, which
        # does not keep it from the grader's Unix sockets (multiprocessing's among them): no student
        # code runs so. The parts wait for course staff, with the reason.
        raise OSError("a grader that is not root runs student code only in namespaces of its own, and this "
                         f"machine refused a user namespace ({layers.missing.get('user namespace', '')}); run "
                         "grade as root, or allow unprivileged user namespaces (sysctl "
                         "kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0)")
    try:
        unshare(sum(flag for _, flag, _ in NAMESPACES))
        took = list(NAMESPACES)
    except OSError:
        took = []
        for namespace in NAMESPACES:  # one at a time: which does the kernel refuse?
            try:
                unshare(namespace[1], f"unshare {namespace[0]}")
                took.append(namespace)
            except OSError as err:
                layers.off(namespace[0], str(err))
    for _, _, label in took:
        layers.on(label)
    if not is_root() and len(took) < len(NAMESPACES):  # the child would share the grader's uid outside them
        raise OSError("a grader that is not root runs student code only in namespaces of its own, and this machine "
                      "refused " + ", ".join(name for name, _, _ in NAMESPACES if name in layers.missing))
    return layers


def _user_namespace(layers: Layers) -> bool:
    uid, gid = os.getuid(), os.getgid()
    try:
        unshare(CLONE_NEWUSER)
        # Our own uid is the namespace's root: only its root may set the limits of the IPC namespace it
        # owns. The child drops every capability once set up.
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"0 {uid} 1")
        Path("/proc/self/gid_map").write_text(f"0 {gid} 1")
    except OSError as err:
        layers.off("user namespace", str(err))
        return False
    layers.on("user namespace")
    return True


# -- the sandbox child ------------------------------------------------------------------------
def enter(folder: Path, files: Mapping[str, bytes], uid: int | None, limits: Limits, layers: Layers,
          keep_fds: tuple[int, ...], lifeline: int) -> None:
    """Put this process (the sandbox child, forked by `detach`'s process) into the sandbox; adds to `layers`.
    `lifeline`: the read end of a pipe whose write end only the job's first process holds."""
    end_with_parent()
    _ipc_limits(limits, layers)
    wanted = _rlimits(limits, uid, layers)  # read from /proc before the minimal root hides the machine's
    _close_fds((*keep_fds, lifeline))
    own_proc = _file_system(folder, files, uid, limits, layers)
    _environment(folder)
    for name, value, label in wanted:
        try:
            resource.setrlimit(getattr(resource, name), value)
            layers.on(label)
        except (ValueError, OSError, AttributeError) as err:
            layers.off(label, str(err))
    version = landlock.abi()
    installation = dict.fromkeys(sysconfig.get_paths()[name] for name in ("stdlib", "purelib", "platlib"))
    _drop_uid(uid, layers, keep_read=version >= 1 and not layers.has("minimal root"))
    try:
        if version < 1:
            raise OSError("not supported by this kernel")
        for label in landlock.restrict(folder, version, own_proc):
            layers.on(label)
    except OSError as err:
        layers.off("Landlock", str(err))
        if uid is not None and version >= 1:
            set_capabilities(0)  # without Landlock the child must not read what its uid cannot
    if uid is not None and not layers.has("minimal root"):
        _installation_readable(installation)
    if uid is None and layers.has("user namespace"):
        set_capabilities(0)  # those of its own user namespace: no mount, no namespace's sysctl
        layers.on("no capabilities, not even in its own user namespace")
    policy = seccomp.Policy.for_layers(ipc=layers.has("IPC namespace"),
                                       confined_files=layers.has("minimal root") or layers.has("Landlock"))
    try:
        layers.on(seccomp.install(policy))
    except OSError as err:
        layers.off("seccomp", str(err))
    _still_parented(lifeline)


def _installation_readable(installation: Iterable[str]) -> None:
    """Without a minimal root the job's uid reads the Python installation where it is. One it cannot read
    (pyenv under /root, a folder only root may enter, on a kernel without Landlock to grant reading it
    alone) fails every job's first import, the reference's too: the host's failure, said as such here,
    before any student code runs."""
    for path in installation:
        try:
            os.close(os.open(path, os.O_RDONLY | os.O_DIRECTORY))
        except FileNotFoundError:
            continue
        except OSError as err:
            raise OSError(err.errno, f"the job's uid cannot read the Python installation at {path} "
                                     f"({err.strerror}); without a mount namespace or Landlock no job can be "
                                     "granted it alone: install Python where every user may read it, or grade "
                                     "on a kernel with Landlock") from None


def _still_parented(lifeline: int) -> None:
    """Ask again to be killed when the job's first process ends: a change of uid cleared the request. That
    process may have ended meanwhile; then its end of the lifeline is closed, and this one ends now."""
    end_with_parent()
    ready, _, _ = select.select([lifeline], [], [], 0)
    if ready:
        os._exit(70)
    os.close(lifeline)


def _ipc_limits(limits: Limits, layers: Layers) -> None:
    """Cap the job's IPC namespace: shared memory no larger than its memory limit, removed once no
    process has it attached (so none is held outside every process's address-space limit); a few small
    semaphore sets and message queues, whose kernel memory no process's count includes."""
    if not layers.has("IPC namespace"):
        return
    values = {"shmmax": limits.memory, "shmall": limits.memory // os.sysconf("SC_PAGE_SIZE"),
              "shmmni": IPC_OBJECTS, "shm_rmid_forced": 1,
              "sem": f"{SEMAPHORES} {SEMAPHORES * IPC_OBJECTS} {SEMAPHORES} {IPC_OBJECTS}",
              "msgmni": IPC_OBJECTS, "msgmax": MESSAGE_BYTES, "msgmnb": MESSAGE_BYTES}
    label = (f"IPC limits: shared memory up to {limits.memory // 1024**2} MiB, gone once no process has it "
             f"attached; at most {IPC_OBJECTS} semaphore sets of {SEMAPHORES} and {IPC_OBJECTS} message queues "
             f"of {MESSAGE_BYTES // 1024} KiB")
    try:
        for name, value in values.items():
            Path(f"/proc/sys/kernel/{name}").write_text(str(value))
    except OSError as err:
        layers.off("IPC limits", str(err))
        return
    layers.on(label)


def _file_system(folder: Path, files: Mapping[str, bytes], uid: int | None, limits: Limits, layers: Layers) -> bool:
    """The child's view of the files, with the student's in `folder`; True when /proc is its own. Without a
    minimal root /proc is the machine's, with every process's command line: Landlock then keeps the
    child out of it (Python and PyTorch run without /proc, as in a minimal root without a PID namespace)."""
    tmpfs = f"working folder on its own tmpfs of {limits.folder_size // 1024**2} MiB, {rootfs.FILES} files"
    if not layers.has("mount namespace"):
        for name in ("minimal root", "/proc of its own", "tmpfs working folder"):
            layers.off(name, "no mount namespace")
        _write_files(folder, files, uid, mode=0o700)
        return False
    new = folder.parent / "root"
    try:
        rootfs.make_private()
        new.mkdir()
        own_proc = rootfs.build(new, folder, limits.folder_size, own_pids=layers.has("PID namespace"))
        _write_files(new / folder.relative_to("/"), files, uid, mode=0o755)
        rootfs.enter(new)
    except OSError as err:
        rootfs.abandon(new)
        layers.off("minimal root", str(err))
        layers.off("/proc of its own", "no minimal root")
        return _folder_only(folder, files, uid, limits, layers)
    layers.on("minimal root (pivot_root): only the Python installation, the system libraries and its folder; "
              "no /tmp, /run, home folder or socket of the machine")
    if own_proc:
        layers.on("/proc of its own (no other process's entries)")
    else:
        layers.off("/proc of its own", "no PID namespace of its own to show, or the kernel refused to mount one: "
                                       "the child has no /proc at all")
    layers.on(tmpfs)
    os.chdir(folder)
    return own_proc


def _folder_only(folder: Path, files: Mapping[str, bytes], uid: int | None, limits: Limits, layers: Layers) -> bool:
    """Without a minimal root: a tmpfs on the folder where the machine's tree has it (and the machine's /proc,
    which Landlock keeps the child out of)."""
    try:
        rootfs.working_folder(folder, limits.folder_size)
        layers.on(f"working folder on its own tmpfs of {limits.folder_size // 1024**2} MiB, {rootfs.FILES} files")
        mode = 0o755
    except OSError as err:
        layers.off("tmpfs working folder", str(err))
        mode = 0o700
    _write_files(folder, files, uid, mode)
    return False


def _write_files(folder: Path, files: Mapping[str, bytes], uid: int | None, mode: int) -> None:
    for name, data in files.items():
        path = folder / name
        path.write_bytes(data)
        if uid is not None:
            os.chown(path, uid, uid)
    if uid is not None:
        os.chown(folder, uid, uid)
    os.chmod(folder, mode)
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


def _rlimits(limits: Limits, uid: int | None, layers: Layers) -> list[tuple[str, tuple[int, int], str]]:
    """The resource limits to set, as (name, (soft, hard), what the report says)."""
    data = _vm("VmData") + limits.memory
    # Shared mappings (mmap MAP_SHARED, /dev/shm) are not private memory: RLIMIT_DATA lets them
    # through. The address space counts everything, on top of what the zygote maps already.
    space = _vm("VmSize") + limits.memory + ADDRESS_ROOM
    wanted = [
        ("RLIMIT_CPU", (limits.cpu_seconds, limits.cpu_seconds + 1), f"CPU {limits.cpu_seconds} s"),
        ("RLIMIT_DATA", (data, data), f"private memory +{limits.memory // 1024**2} MiB (RLIMIT_DATA)"),
        ("RLIMIT_AS", (space, space), (f"address space +{(limits.memory + ADDRESS_ROOM) // 1024**2} MiB, shared "
                                       "mappings included (RLIMIT_AS)")),
        ("RLIMIT_FSIZE", (limits.file_size, limits.file_size), f"files up to {limits.file_size // 1024**2} MiB"),
        ("RLIMIT_NOFILE", (limits.open_files, limits.open_files), f"{limits.open_files} open files"),
        ("RLIMIT_CORE", (0, 0), "no core dumps"),
    ]
    n = limits.processes
    if uid is not None:
        wanted.append(("RLIMIT_NPROC", (n, n), f"{n} processes for the whole job (RLIMIT_NPROC of its own uid)"))
    elif layers.has("user namespace") and _kernel_at_least(5, 14):
        # Since Linux 5.14 a user namespace counts its own processes against RLIMIT_NPROC, so
        # the job's cap holds though it shares its uid with the grader (not root).
        wanted.append(("RLIMIT_NPROC", (n, n), f"{n} processes for the whole job (counted in its user namespace)"))
    else:
        # Before that the count is every process of the uid: the cap is what the uid runs now,
        # plus the job's share and room for the grader's own processes meanwhile.
        others = _processes_of(os.getuid())
        cap = others + n + GRADER_ROOM
        wanted.append(("RLIMIT_NPROC", (cap, cap), (f"{n} processes (+{GRADER_ROOM} the grader's, "
                                                    f"beside the {others} its uid runs)")))
    return wanted


def _drop_uid(uid: int | None, layers: Layers, keep_read: bool) -> None:
    """Become `uid`. With `keep_read` (no minimal root, but Landlock to confine it) the child keeps one
    capability, CAP_DAC_READ_SEARCH, so it can read the Python installation wherever root put it
    (pyenv under /root, say); Landlock then allows reads only there. With a minimal root the
    installation is reached through folders of its own, and no capability is kept."""
    if uid is None:
        layers.off("separate uid", "the grader is not root, so the child keeps the grader's uid")
        return
    if keep_read:
        libc().prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError("could not drop to the sandbox uid")
    set_capabilities(1 << CAP_DAC_READ_SEARCH if keep_read else 0)
    # The uid is in the supervisor's answer, not here: a report line that names it would differ
    # from run to run for the same code.
    layers.on("separate uid of its own" + (" (only capability: reading files, within Landlock's list)"
                                           if keep_read else ", no capabilities"))


__all__ = ["CLEAN_ENV", "Layers", "Limits", "detach", "enter", "is_root", "sandbox_uid"]
