"""A seccomp filter for what neither namespaces nor Landlock cover, chosen by the layers a job has.

Always refused (EPERM):
- the kernel's keyrings: a process's session keyring is inherited (a grader started by systemd or a
  login holds one), and a uid's user keyring outlives every process of that uid, so keys would carry
  messages from one student's job to the next;
- memory the job's memory count cannot see: memory-backed files (memfd_create), pages pinned in pipes
  (vmsplice), io_uring's rings, extended attributes (kept in kernel memory on a tmpfs), userfaultfd;
- starting a program (Landlock refuses executing files, but not a memfd's contents);
- new namespaces of any kind (unshare, setns, clone with a CLONE_NEW* flag): a user namespace of the
  job's own would give it every capability there, and IPC or mount namespaces of its own escape the
  limits set on the job's. clone3 answers ENOSYS, since its flags are out of a filter's reach: the C
  library then falls back to clone, whose flags the filter reads.
- sockets of any family, and socket pairs: the checks never use one. A socket reaches what a namespace
  may not cover (the host's vsock ports, a container's network, listening Unix sockets), and a socket's
  buffers hold kernel memory that no process's count includes;
- growing a pipe's buffer (fcntl F_SETPIPE_SZ), kernel memory the count cannot see either: a pipe keeps
  the default size;
- opening a file by handle (name_to_handle_at, open_by_handle_at), which a kept read capability would
  allow past paths;
- System V IPC and POSIX message queues, where the job has no IPC namespace of its own: their objects
  would be the machine's, and outlive the job.
- every write to the file system, where the job has neither a minimal root nor Landlock (a container on
  a kernel without it): file permissions alone would let it write wherever every user may (/tmp, any
  world-writable file), beyond the count of its working folder. Opening for writing, creating,
  renaming, linking, removing and changing modes or owners all answer EROFS; the student's files were
  written before the filter, and the checks never need a job to write.

On x86_64 the other system-call ABIs (i386's `int 0x80`, x32) are refused whole, so no second number
reaches the same call.

No maintained Python binding of libseccomp installs here, and the program is a few dozen instructions
of classic BPF: `program` writes it with named jump targets, which `_assemble` turns into offsets.
"""

from __future__ import annotations

import ctypes
import errno
import platform
from dataclasses import dataclass

from .linux import check, libc

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
X32_BIT = 0x40000000
NEW_NAMESPACES = 0x7E020000  # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET

ALWAYS = ("add_key", "request_key", "keyctl", "memfd_create", "vmsplice", "execve", "execveat", "unshare",
          "setns", "io_uring_setup", "io_uring_enter", "io_uring_register", "setxattr", "lsetxattr",
          "fsetxattr", "userfaultfd", "socket", "socketpair", "name_to_handle_at", "open_by_handle_at")
IPC_CALLS = ("shmget", "semget", "msgget", "mq_open")
WRITE_CALLS = ("creat", "mkdir", "mkdirat", "rename", "renameat", "renameat2", "link", "linkat", "symlink",
               "symlinkat", "unlink", "unlinkat", "rmdir", "mknod", "mknodat", "truncate", "chmod", "fchmodat",
               "fchmodat2", "chown", "lchown", "fchownat", "openat2")
WRITE_FLAGS = 0o1 | 0o2 | 0o100 | 0o1000  # O_WRONLY | O_RDWR | O_CREAT | O_TRUNC
F_SETPIPE_SZ = 1031


@dataclass(frozen=True)
class Arch:
    audit: int  # AUDIT_ARCH_* as seccomp_data.arch holds it
    numbers: dict[str, int]


ARCHES = {
    "x86_64": Arch(0xC000003E, {
        "add_key": 248, "request_key": 249, "keyctl": 250, "memfd_create": 319, "vmsplice": 278, "execve": 59,
        "execveat": 322, "unshare": 272, "setns": 308, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "userfaultfd": 323,
        "shmget": 29, "semget": 64, "msgget": 68, "mq_open": 240, "clone": 56, "clone3": 435, "socket": 41,
        "socketpair": 53, "name_to_handle_at": 303, "open_by_handle_at": 304, "fcntl": 72, "open": 2, "openat": 257, "creat": 85, "mkdir": 83, "mkdirat": 258, "rename": 82,
        "renameat": 264, "renameat2": 316, "link": 86, "linkat": 265, "symlink": 88, "symlinkat": 266,
        "unlink": 87, "unlinkat": 263, "rmdir": 84, "mknod": 133, "mknodat": 259, "truncate": 76, "chmod": 90,
        "fchmodat": 268, "fchmodat2": 452, "chown": 92, "lchown": 94, "fchownat": 260, "openat2": 437}),
    "aarch64": Arch(0xC00000B7, {
        "add_key": 217, "request_key": 218, "keyctl": 219, "memfd_create": 279, "vmsplice": 75, "execve": 221,
        "execveat": 281, "unshare": 97, "setns": 268, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "userfaultfd": 282,
        "shmget": 194, "semget": 190, "msgget": 186, "mq_open": 180, "clone": 220, "clone3": 435,
        "socket": 198, "socketpair": 199, "name_to_handle_at": 264, "open_by_handle_at": 265, "fcntl": 25,
        "openat": 56, "mkdirat": 34, "renameat": 38, "renameat2": 276,
        "linkat": 37, "symlinkat": 36, "unlinkat": 35, "mknodat": 33, "truncate": 45, "fchmodat": 53,
        "fchmodat2": 452, "fchownat": 54, "openat2": 437}),
}

# Classic BPF: load a word of seccomp_data (nr at 0, arch at 4, the low word of args[0] at 16);
# jump if equal / greater or equal / any bit set; return.
LOAD, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
NR, ARCH_AT, ARG0, ARG1, ARG2 = 0, 4, 16, 24, 32


@dataclass(frozen=True)
class Policy:
    """What a job may do beyond the rules that always hold: whether it may make System V IPC objects (only
    in an IPC namespace of its own) and write files (only where a minimal root or Landlock confines it)."""

    ipc: bool = False
    writes: bool = True  # False: no write to the file system at all (EROFS)

    @classmethod
    def for_layers(cls, ipc: bool, confined_files: bool) -> "Policy":
        return cls(ipc, confined_files)


def program(arch: Arch, policy: Policy) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jump if true, jump if false, value)."""
    nr = arch.numbers
    refused = [nr[name] for name in ALWAYS] + ([] if policy.ipc else [nr[name] for name in IPC_CALLS])
    read_only = [nr[name] for name in WRITE_CALLS if name in nr] if not policy.writes else []
    opens = [] if policy.writes else [(nr[name], at) for name, at in (("open", ARG1), ("openat", ARG2)) if name in nr]
    steps: list[tuple] = [
        ("op", LOAD, ARCH_AT),
        ("jeq", arch.audit, None, "refuse"),  # another ABI (i386 on x86_64): refused whole
        ("op", LOAD, NR),
        ("jge", X32_BIT, "refuse", None),  # an x32 number
        *[("jeq", number, "refuse", None) for number in refused],
        *[("jeq", number, "erofs", None) for number in read_only],
        *[("jeq", number, f"open{at}", None) for number, at in opens],
        ("jeq", nr["clone3"], "enosys", None),
        ("jeq", nr["clone"], "clone", None),
        ("jeq", nr["fcntl"], "fcntl", None),
        ("ret", RET_ALLOW),
        ("label", "clone"), ("op", LOAD, ARG0), ("jset", NEW_NAMESPACES, "refuse", None), ("ret", RET_ALLOW),
        ("label", "fcntl"), ("op", LOAD, ARG1), ("jeq", F_SETPIPE_SZ, "refuse", None), ("ret", RET_ALLOW),
        *[step for _, at in opens for step in (("label", f"open{at}"), ("op", LOAD, at),
                                                ("jset", WRITE_FLAGS, "erofs", None), ("ret", RET_ALLOW))],
        ("label", "allow"), ("ret", RET_ALLOW),
        ("label", "erofs"), ("ret", RET_ERRNO | errno.EROFS),
        ("label", "enosys"), ("ret", RET_ERRNO | errno.ENOSYS),
        ("label", "refuse"), ("ret", RET_ERRNO | errno.EPERM),
    ]
    return _assemble(steps)


def _assemble(steps: list[tuple]) -> list[tuple[int, int, int, int]]:
    """Instructions from steps with named targets: a jump's None goes on to the next instruction."""
    labels, count = {}, 0
    for step in steps:
        if step[0] == "label":
            labels[step[1]] = count
        else:
            count += 1
    codes = {"jeq": JEQ, "jge": JGE, "jset": JSET}
    out: list[tuple[int, int, int, int]] = []
    for step in steps:
        kind = step[0]
        if kind == "label":
            continue
        here = len(out) + 1  # jumps count from the instruction after this one
        if kind == "op":
            out.append((step[1], 0, 0, step[2]))
        elif kind == "ret":
            out.append((RET, 0, 0, step[1]))
        else:
            jt, jf = (0 if target is None else labels[target] - here for target in step[2:4])
            out.append((codes[kind], jt, jf, step[1]))
    return out


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction))]


def install(policy: Policy) -> str:
    """Install the filter in this process (inherited by all it starts, never removed); the layer's name.
    Raises OSError where the kernel or the architecture does not allow it."""
    known = ARCHES.get(platform.machine())
    if known is None:
        raise OSError(0, f"seccomp: no system call numbers known for {platform.machine()}")
    rules = program(known, policy)
    instructions = (_Instruction * len(rules))(*[_Instruction(*rule) for rule in rules])
    prog = _Program(len(rules), instructions)
    check(libc().prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), 0, 0, 0), "prctl PR_SET_NO_NEW_PRIVS")
    check(libc().prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(prog), 0, 0),
          "prctl PR_SET_SECCOMP")
    return describe(policy)


def describe(policy: Policy) -> str:
    """The layer as the report names it."""
    ipc = "" if policy.ipc else ", no System V IPC or message queues (no IPC namespace of its own)"
    ipc += "" if policy.writes else ", no write to any file (neither a minimal root nor Landlock)"
    return ("seccomp: no kernel keyrings, no memory-backed files (memfd_create), no pages pinned in pipes "
            "(vmsplice) or grown pipes, no io_uring, no extended attributes, no program started (execve), no new "
            f"namespaces, no sockets, no file opened by handle{ipc}; one system-call ABI")
