"""A job seen from its supervisor: its pipes read within bounds, the memory of all its processes
added up, and every process of it ended once it is done or out of time.

The job's first process is the supervisor's child; it forks the sandbox child, the first
process of the job's own PID namespace, whose end makes the kernel end every other process
of the namespace. Without that namespace (a kernel or platform that refuses it) the sweep
of old is the fallback: every process of the job's uid when the grader is root, every
descendant of the supervisor otherwise.
"""

from __future__ import annotations

import os
import select
import signal
import time
from dataclasses import dataclass
from typing import Any, Callable

from . import protocol

MAX_OUTPUT = 8 * 1024  # head of the child's stdout and stderr kept for the report
CONTROL_ROOM = 64 * 1024  # the control pipe: the isolation layers (a few hundred bytes), or why setup failed
EXIT_GRACE = 0.2  # seconds to wait for pipes held open by the child's children after it exits
TICK = 0.05  # seconds between looks at the job (its exit, its memory)


@dataclass(frozen=True)
class Pipes:
    """The supervisor's read ends of a job's pipes."""

    control: int  # the sandbox's own word: layers or a setup failure, closed before student code runs
    data: int  # what the driver (or the student's code) sends back
    output: int  # the child's stdout and stderr


@dataclass
class Collected:
    """What a job left on its pipes, and how it ended."""

    control: bytes = b""
    data: bytes = b""
    output: bytes = b""
    status: str | None = None  # timeout | too_large | memory, when the supervisor stopped it
    exited: int | None = None  # the first process's wait status (it mirrors the sandbox child's)
    memory: int = 0  # the most its processes held together, when more than one ran (bytes)


@dataclass(frozen=True)
class Disk:
    """The job's working folder as the supervisor sees it, and what it may hold. Where the job has a
    tmpfs of its own the kernel caps it, and this folder (under the tmpfs) stays empty; without one (a
    container that refuses mounts) the files are on the machine's disk, and only this count bounds them."""

    folder: str
    size: int
    files: int


def collect(pipes: Pipes, first: int, deadline: float, memory: int | None, disk: Disk | None = None) -> Collected:
    """Read the pipes until the job's first process is done (and `EXIT_GRACE` more for pipes its
    other processes hold) or `deadline` passes; with `memory`, stop the job once its processes
    together hold more than that beyond what each was forked with; with `disk`, once its folder holds
    more than that."""
    got = Collected()
    open_fds = {pipes.control, pipes.data, pipes.output}
    base = resident(os.getpid())  # what a process forked from the zygote holds before it allocates
    exited_at = None
    while open_fds:
        now = time.monotonic()
        if now >= deadline:
            got.status = "timeout"
            break
        if exited_at is not None and now - exited_at > EXIT_GRACE:
            break
        ready, _, _ = select.select(list(open_fds), [], [], min(deadline - now, TICK))
        for fd in ready:
            if not _read(fd, pipes, got):
                open_fds.discard(fd)
        if got.status is None and memory is not None:
            held = job_memory(first, base)
            got.memory = max(got.memory, held)
            if held > memory:
                got.status = "memory"
        if got.status is None and disk is not None and over(disk):
            got.status = "disk"
        if got.status is not None:
            break
        if exited_at is None:
            try:
                done, wait_status = os.waitpid(first, os.WNOHANG)
            except ChildProcessError:  # reaped already (SIGCHLD ignored): gone, its exit status unknown
                done, wait_status = first, None
            if done:
                got.exited, exited_at = wait_status, time.monotonic()
    if got.status is None and exited_at is None:
        _wait_briefly(first, got)
    return got


def _wait_briefly(first: int, got: Collected) -> None:
    """Every pipe is closed, so nothing more can come: give the first process a moment to end on its
    own (it mirrors the sandbox child's end, which closed them), so its exit is its own, not our kill."""
    deadline = time.monotonic() + 5 * EXIT_GRACE
    while time.monotonic() < deadline:
        try:
            done, wait_status = os.waitpid(first, os.WNOHANG)
        except ChildProcessError:
            return
        if done:
            got.exited = wait_status
            return
        time.sleep(0.002)


def _read(fd: int, pipes: Pipes, got: Collected) -> bool:
    """One chunk from `fd` into `got`, within each pipe's bound; False at its end."""
    chunk = os.read(fd, 1 << 16)
    if not chunk:
        return False
    if fd == pipes.data:
        got.data += chunk
        if len(got.data) > protocol.MAX_RESULT + protocol.HEADER.size:
            got.status = "too_large"
    elif fd == pipes.control:
        got.control += chunk[:max(0, CONTROL_ROOM - len(got.control))]
    elif len(got.output) < MAX_OUTPUT:
        got.output += chunk[:MAX_OUTPUT - len(got.output)]
    return True


def over(disk: Disk) -> bool:
    """Whether the folder holds more files or bytes (as allocated: a sparse file counts what it uses)
    than `disk` allows; the walk stops as soon as it knows."""
    files, size, todo = 0, 0, [disk.folder]
    while todo:
        try:
            entries = os.scandir(todo.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                files += 1
                try:
                    found = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                size += found.st_blocks * 512
                if files > disk.files or size > disk.size:
                    return True
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
    return False


# -- memory of the job's processes together ---------------------------------------------------
def children(pid: int) -> list[int]:
    """The processes `pid`'s threads forked that still have it as their parent (none if it is gone)."""
    found: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as listing:
                found += [int(n) for n in listing.read().split()]
        except (OSError, ValueError):
            continue
    return found


def resident(pid: int) -> int:
    """Bytes of anonymous and shared memory `pid` holds (resident or swapped), 0 if it is gone."""
    return _status_bytes(pid, (b"RssAnon:", b"RssShmem:", b"VmSwap:"))


def _status_bytes(pid: int, fields: tuple[bytes, ...]) -> int:
    total = 0
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(fields):
                    total += int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return 0
    return total


def job_memory(first: int, base: int) -> int:
    """Bytes the job's processes hold, added up: each one's anonymous and shared memory beyond `base`
    (what a process forked from the zygote holds before it allocates), or all it alone maps if that is
    more; and memory-backed files they hold open (memfd, /dev/shm) beyond what is mapped. While the
    sandbox child runs alone, only those files: its address-space limit holds the rest. A page two
    of them share counts twice: never too little.

    Every process of the job descends from this supervisor: the first process, the sandbox child,
    and whatever that forked (an orphan goes to the child, the first of its PID namespace, or to
    this supervisor, the subreaper, when there is no such namespace)."""
    top = children(os.getpid())
    if top == [first]:
        below = children(first)
        if len(below) <= 1 and not any(children(pid) for pid in below):
            return sum(size for pid in below for size in shared_files(pid).values())
    total, mapped, todo, files = 0, 0, list(top), {}
    while todo:
        pid = todo.pop()
        total += max(resident(pid) - base, private(pid))
        mapped += _status_bytes(pid, (b"RssShmem:",))
        files.update(shared_files(pid))
        todo += children(pid)
    # A memory-backed file's pages are in the resident memory of each process that maps it: only
    # what the files hold beyond that is added (files written and never mapped).
    return total + max(0, sum(files.values()) - mapped)


def private(pid: int) -> int:
    """Bytes only `pid` maps (pages it wrote, or swapped): all of a process that started a fresh
    interpreter, which shares nothing with the zygote that `base` stands for; 0 if it is gone."""
    total = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
            for line in rollup:
                if line.startswith((b"Private_Dirty:", b"Swap:")):
                    total += int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return 0
    return total


def shared_files(pid: int) -> dict[tuple[int, int], int]:
    """(device, inode) -> bytes of each memory-backed file `pid` holds open (memfd, /dev/shm): its pages
    stay allocated while the file is open, mapped by no one or not."""
    found = {}
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found
    for fd in fds:
        path = f"/proc/{pid}/fd/{fd}"
        try:
            if not os.readlink(path).startswith(("/memfd:", "/dev/shm/")):
                continue
            info = os.stat(path)
        except OSError:
            continue
        found[(info.st_dev, info.st_ino)] = info.st_blocks * 512
    return found


# -- ending the job ---------------------------------------------------------------------------
def end(first: int, uid: int | None, own_pid_namespace: bool) -> None:
    """SIGKILL every process of the job. Its first process's group goes, and the sandbox child: as the
    first process of its PID namespace, its end ends every other one (the kernel's doing). Without
    that namespace, the sweep of old: every process of the sandbox `uid` (root), else every
    descendant of this supervisor."""
    inner = children(first)
    try:
        os.killpg(first, signal.SIGKILL)
    except OSError:
        pass
    for pid in inner + [p for p in children(os.getpid()) if p != first]:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if own_pid_namespace:
        return
    if uid is None:
        kill_descendants()
    else:
        kill_uid(uid)


def kill_uid(uid: int) -> None:
    """SIGKILL every process of the sandbox's uid, by its pid, from here, again until none is left (bounded).

    Never by becoming that uid (kill(-1) as the job's uid): a job can have the kernel stop any process the
    moment it takes the uid (a signal it arranged to be sent to its group), and a SIGKILL sent from here
    ends a stopped process as any other. A process forked between two looks is found at the next; the
    job's process limit bounds how many there can be."""
    _kill_until_none(lambda: of_uid(uid))


def of_uid(uid: int) -> list[int]:
    """The processes of `uid` (any of its real, effective, saved or file-system uids) that can still run
    code, this one aside. The uids come from /proc/PID/status, not from who owns /proc/PID: a process
    that is not dumpable (any that changed its uid, or asked not to be) shows that folder as root's."""
    me, found = str(os.getpid()), []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or entry.name == me:
            continue
        try:
            with open(f"/proc/{entry.name}/status", "rb") as status:
                fields = dict(line.split(b":", 1) for line in status.read().splitlines() if b":" in line)
            uids = [int(u) for u in fields[b"Uid"].split()]
            is_running = running(fields[b"State"].split()[0], fields[b"Threads"].strip())
        except (OSError, KeyError, ValueError, IndexError):
            continue  # gone since the listing
        if uid in uids and is_running:
            found.append(int(entry.name))
    return found


def kill_descendants() -> None:
    """SIGKILL every process descended from this supervisor, again until none is left (bounded).

    The grader is not root, so the child has its uid and kill(-1) would reach the grader too.
    A process that left the child's group (setsid, a daemon) is still a descendant, or an
    orphan this supervisor adopted as their subreaper: either way it is found here."""
    _kill_until_none(lambda: descendants(os.getpid()))


def _kill_until_none(find: Callable[[], list[int]]) -> None:
    """SIGKILL every process `find` lists, again until it lists none (bounded: a kernel oddity must not hang
    grading). Not reaped here: waitpid(-1) would take the job's first process's exit status too, which the
    supervisor then waits for in vain. A killed process is a zombie, which `find` skips (once all its threads
    are gone) and which cannot fork; `reap` collects them all."""
    for _ in range(400):
        found = find()
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005)


def descendants(root: int) -> list[int]:
    """The processes below `root` that still run (see `running`), from each process's parent in /proc."""
    below: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()  # the name before ")" may hold spaces
            is_running = running(fields[0], fields[17])  # the state, and the number of threads
        except (OSError, IndexError, ValueError):
            continue  # gone since the listing
        if is_running:
            below.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        under = below.get(todo.pop(), [])
        found += under
        todo += under
    return found


def running(state: bytes, threads: bytes) -> bool:
    """Whether a process in `state`, with `threads` threads (both from /proc), can still run code.

    A zombie is done, unless only its main thread ended: its other threads still run (and may
    fork), its children are still its own, and a SIGKILL to it ends them all. Its thread count
    says so: it counts the threads not yet gone, the ended main one included."""
    return state not in (b"Z", b"X") or int(threads) > 1


def alive(uid: int) -> bool:
    """Whether a process of `uid` other than this one still runs (a zombie cannot fork, so it is done,
    unless threads other than its main one still run)."""
    return bool(of_uid(uid))


def reap(linger: float = 0.01, until_none: bool = False) -> None:
    """Collect finished children: the job's in a supervisor (its subreaper), supervisors in the zygote.
    Waiting for them is what counts their CPU time in the grader's. `until_none`: after a kill,
    wait (up to two seconds) until every one is collected, so none outlives its job."""
    waited = False
    deadline = time.monotonic() + 2.0
    while True:
        try:
            done, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if done:
            continue
        if until_none and time.monotonic() < deadline:
            time.sleep(0.005)
            continue
        if waited or linger <= 0:
            return
        waited = True
        time.sleep(linger)


def describe_exit(status: int | None) -> dict[str, Any]:
    if status is None:
        return {}
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return {"signal": name}
    return {"code": os.waitstatus_to_exitcode(status)}
