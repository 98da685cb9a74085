"""A seccomp filter of a few rules, for what neither namespaces nor Landlock cover.

- The kernel's keyrings: a process's session keyring is inherited (a grader started by systemd or a
  login holds one, with whatever keys its owner keeps there), and a uid's user keyring outlives every
  process of that uid, so keys would carry messages from one student's job to the next.
- Memory the job's memory count cannot see: memory-backed files (memfd_create) mapped untouched,
  closed, or held in flight on a socket, and pages pinned in pipes (vmsplice).
- Starting a program: Landlock refuses executing files, but not a memfd's contents.

The sandbox child and everything it starts get EPERM for add_key, request_key, keyctl, memfd_create,
vmsplice, execve and execveat; on x86_64 the other system-call ABIs (i386's `int 0x80`, x32) are
refused whole, so no second number reaches the same call.

No maintained Python binding of libseccomp installs here, and the program is a dozen instructions
of classic BPF: it is written out below, each instruction with what it does.
"""

from __future__ import annotations

import ctypes
import errno
import platform

from .linux import check, libc

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
X32_BIT = 0x40000000

REFUSED = ("add_key", "request_key", "keyctl", "memfd_create", "vmsplice", "execve", "execveat")
# Each architecture's AUDIT_ARCH value and its numbers of the REFUSED calls, in that order.
ARCHES = {"x86_64": (0xC000003E, (248, 249, 250, 319, 278, 59, 322)),
          "aarch64": (0xC00000B7, (217, 218, 219, 279, 75, 221, 281))}

# Classic BPF: load a word of seccomp_data (nr at 0, arch at 4); jump if equal / greater or equal; return.
LOAD, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction))]


def program(arch: int, numbers: tuple[int, ...]) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jump if true, jump if false, value): jumps count instructions skipped."""
    refuse = RET_ERRNO | errno.EPERM
    head = [
        (LOAD, 0, 0, 4),  # the call's architecture
        (JEQ, 1, 0, arch),  # this machine's own ABI: go on to the number
        (RET, 0, 0, refuse),  # another ABI (i386 on x86_64): refused whole
        (LOAD, 0, 0, 0),  # the call's number
        (JGE, len(numbers) + 1, 0, X32_BIT),  # an x32 number: to the last instruction, refused
    ]
    # Each refused number jumps over the ones after it and the ALLOW to the last instruction.
    checks = [(JEQ, len(numbers) - i, 0, number) for i, number in enumerate(numbers)]
    return head + checks + [(RET, 0, 0, RET_ALLOW), (RET, 0, 0, refuse)]


def install() -> str:
    """Install the filter in this process (inherited by all it starts, never removed); the layer's name.
    Raises OSError where the kernel or the architecture does not allow it."""
    known = ARCHES.get(platform.machine())
    if known is None:
        raise OSError(0, f"seccomp: no system call numbers known for {platform.machine()}")
    rules = program(*known)
    instructions = (_Instruction * len(rules))(*[_Instruction(*rule) for rule in rules])
    prog = _Program(len(rules), instructions)
    check(libc().prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), 0, 0, 0), "prctl PR_SET_NO_NEW_PRIVS")
    check(libc().prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(prog), 0, 0),
          "prctl PR_SET_SECCOMP")
    return ("seccomp: no kernel keyrings, no memory-backed files (memfd_create), no pages pinned in pipes "
            "(vmsplice), no program started (execve); one system-call ABI")
