"""Part of a list's work done by a forked child, its results sent back pickled.

For work whose results are cheap to pickle and whose inputs the child inherits: loading a
class's submission files (plain data, which pickles far faster than the files load). The child is forked from this process, does its share, writes the pickled results
to a pipe and exits without Python's exit handlers; this process does its own share
meanwhile, then reads. A child that fails in any way is no failure of the work: its share
is done here (`Share.result` returns None and the caller does it).

The child is forked with the cyclic collector off: a collection in it would write to the
objects it shares with this process, and so copy them.
"""

from __future__ import annotations

import gc
import os
import pickle
import select
import signal
import sys
from functools import partial
from typing import Any, Callable

from .lifeline import end_with_parent


class Share:
    """`work()` run in a child forked now; `result()` is its return value, or None if it failed.

    Work that may end early (`hurried`) is called with a function that says whether this
    process has asked it to (`hurry`): it then returns what it has done so far."""

    def __init__(self, work: Callable[..., Any], *, hurried: bool = False):
        self._pid: int | None = None
        self._read = self._ask = -1
        if not hasattr(os, "fork"):
            return
        execute = sys.modules.get(f"{__package__}.grading.execute")
        if execute is not None:  # (a share forked before the run stage's module is loaded has no pool to wait for)
            execute.settle()  # no fork while a thread joins a finished pool's workers
        pipes: list[int] = []
        try:
            for _ in range(2 if hurried else 1):
                pipes += os.pipe()
        except OSError:  # (out of descriptors, say): the caller does the work itself
            _close(pipes)
            return
        read, write, asked, ask = (*pipes, -1, -1)[:4]
        parent = os.getpid()
        collecting = gc.isenabled()
        gc.disable()
        # Ctrl-C held back over the fork: one landing in the child before it ignores Ctrl-C would
        # unwind this process's stack there, as if the child were the caller.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            pid = os.fork()
        except OSError:
            _close(pipes)
            return
        finally:
            if os.getpid() == parent:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
                if collecting:
                    gc.enable()
        if pid == 0:  # the child: the share, its pickle down the pipe, and out
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
                _close([read, ask])
                end_with_parent(parent)
                done = work(partial(_readable, asked)) if hurried else work()
                data = pickle.dumps(done, protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(data)
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        if hurried:
            os.close(asked)
        self._pid, self._read, self._ask = pid, read, ask

    def hurry(self) -> None:
        """Ask work that may end early to end now, with what it has done."""
        if self._ask >= 0:
            try:  # a byte, not only the end of the pipe: a process forked since may hold this end too
                os.write(self._ask, b"!")
            except OSError:  # the child is gone (a broken pipe): nothing to ask
                pass
            os.close(self._ask)
            self._ask = -1

    def result(self) -> Any:
        if self._pid is None:
            return None
        try:
            fd, self._read = self._read, -1  # closed with the file object
            with os.fdopen(fd, "rb") as pipe:  # read to the end: the child may be blocked writing
                data = pipe.read()
            _, status = os.waitpid(self._pid, 0)
            self._pid = None
            return pickle.loads(data) if os.waitstatus_to_exitcode(status) == 0 else None
        except Exception:  # noqa: BLE001 - a share that did not come back is done by the caller
            return None
        finally:
            self.stop()

    def stop(self) -> None:
        """End the child now (this process stopped before it asked for the result)."""
        self.hurry()
        if self._read >= 0:
            os.close(self._read)
            self._read = -1
        if self._pid is not None:
            try:
                os.kill(self._pid, signal.SIGKILL)
                os.waitpid(self._pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self._pid = None


def _close(fds: list[int]) -> None:
    for fd in fds:
        if fd >= 0:
            os.close(fd)


def _readable(fd: int) -> bool:
    return bool(select.select([fd], [], [], 0)[0])
