"""The processes a run forks end with it.

A worker idle in a pool waits on a pipe whose other end it holds too (it was forked with
it), so a run killed on its own (the OOM killer, `kill PID`) would leave it waiting for
ever, holding the lock on OUT it inherited and the memory of its share of the class: every
later run into that OUT would be refused. On Linux the kernel kills such a child when the
process that forked it goes; elsewhere nothing is done.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def end_with_parent(parent: int | None = None) -> None:
    """First thing in a forked child: be killed when the process that forked it ends.
    `parent`: its pid, if known, to catch a parent that ended before the kernel was asked."""
    if not sys.platform.startswith("linux"):
        return  # no such request elsewhere

    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (AttributeError, OSError):
        return
    if parent is not None and os.getppid() != parent:
        os._exit(1)
