"""The supervisor's sweep as root, for a job without a PID namespace of its own (a kernel that refuses
one): every process of a sandbox uid is killed, and the sweep knows when none is left."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from attngrade.sandbox.isolate import SANDBOX_UID_BASE
from attngrade.sandbox.watch import alive, kill_uid

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a sandbox uid needs root to take")

HEADLESS = Path(__file__).resolve().parents[1] / "data" / "sandbox" / "headless.py"
UID = SANDBOX_UID_BASE + 4_194_305  # no supervisor has it: Linux pids stay at or below 4,194,304


def _as_uid(uid: int, *, escape: bool = False, headless: bool = False) -> int:
    """Fork a process running as `uid` that sleeps; with `escape`, it first leaves its process
    group and starts a grandchild (what student code can do to dodge a killpg); `headless`: it runs
    tests/data/sandbox/headless.py --alone, whose main thread ends while another runs on."""
    pid = os.fork()
    if pid == 0:
        try:
            if headless:  # a fresh interpreter (see the script's docstring), which takes the uid itself
                os.execv(sys.executable, [sys.executable, str(HEADLESS), "--alone", str(uid)])
            os.setsid()
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            if escape and os.fork() == 0:
                os.setsid()
            time.sleep(60)
        finally:
            os._exit(0)
    return pid


def _wait_until(condition, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def test_alive_sees_a_running_process_of_the_uid_and_not_a_zombie():
    assert not alive(UID)
    pid = _as_uid(UID)
    try:
        assert _wait_until(lambda: alive(UID))
        os.kill(pid, signal.SIGKILL)
        assert _wait_until(lambda: not alive(UID))  # dead but not yet reaped: a zombie does not count
    finally:
        os.waitpid(pid, 0)
    assert not alive(UID)


def test_kill_uid_reaches_processes_that_left_the_group():
    pid = _as_uid(UID, escape=True)
    try:
        assert _wait_until(lambda: alive(UID))
        kill_uid(UID)
        assert not alive(UID)  # the grandchild in a session of its own too
    finally:
        os.waitpid(pid, 0)


def test_alive_sees_a_process_whose_main_thread_ended_while_another_runs():
    pid = _as_uid(UID, headless=True)
    try:
        assert _wait_until(lambda: _state(pid) == b"Z")
        assert alive(UID)  # a zombie to /proc, and nothing else of the uid, yet its thread could still fork
        kill_uid(UID)
        assert not alive(UID)
    finally:
        os.kill(pid, signal.SIGKILL)  # (a failed assertion above must not wait out its sleep)
        os.waitpid(pid, 0)


def _state(pid: int) -> bytes:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return stat.read().rsplit(b")", 1)[1].split()[0]
