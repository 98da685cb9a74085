"""The supervisor's sweep when the grader is not root and the job has no PID namespace of its own (a kernel
that refuses one): it finds and kills every process below it.

The hard case is a process whose main thread has ended while another thread still runs: /proc
shows it as a zombie, yet its thread goes on forking (tests/data/sandbox/headless.py). Each
scenario runs in a forked process that stands in for the supervisor, so the sweep never reaches
the test runner's own children."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attngrade.sandbox.linux import PR_SET_CHILD_SUBREAPER, libc
from attngrade.sandbox.watch import descendants, kill_descendants

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")


HEADLESS = Path(__file__).resolve().parents[1] / "data" / "sandbox" / "headless.py"
_STARTED: list[int] = []  # in a stand-in supervisor: the process groups to kill however the scenario ends


def _state(pid: int) -> bytes:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return stat.read().rsplit(b")", 1)[1].split()[0]


def _in_a_stand_in_supervisor(scenario) -> int:
    """Run `scenario()` in a forked process and return its exit code (0: every assertion held).
    Whatever the scenario left running is killed and reaped there, so a failing test leaks nothing."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
            scenario()
            code = 0
        except BaseException as err:  # noqa: BLE001 - report through the exit code
            os.write(2, f"{type(err).__name__}: {err}\n".encode())
        finally:
            _clean_up()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _clean_up() -> None:
    for group in _STARTED:  # each started a session, so its group is its pid
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                time.sleep(0.01)
        except ChildProcessError:
            return


def _start_headless_forker() -> int:
    """Start tests/data/sandbox/headless.py (a fresh interpreter: see its docstring) below this process."""
    child = subprocess.Popen([sys.executable, str(HEADLESS)], stdout=subprocess.PIPE)
    pid = child.pid
    _STARTED.append(pid)
    assert child.stdout.read(1) == b"x"
    child.stdout.close()
    deadline = time.monotonic() + 5
    while _state(pid) != b"Z" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _state(pid) == b"Z", "the main thread did not end"
    return pid


def test_a_zombie_whose_other_thread_runs_is_found_with_its_children():
    def scenario() -> None:
        headless = _start_headless_forker()
        found = descendants(os.getpid())
        assert headless in found, found
        assert len(found) == 2, found  # and the sleeper its thread forked

    assert _in_a_stand_in_supervisor(scenario) == 0


def test_the_sweep_leaves_nothing_running_below_the_supervisor():
    def scenario() -> None:
        _start_headless_forker()
        kill_descendants()
        assert descendants(os.getpid()) == []
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # once reaped, not even a zombie is left
            try:
                os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            time.sleep(0.01)
        raise AssertionError("children were left to reap")

    assert _in_a_stand_in_supervisor(scenario) == 0
