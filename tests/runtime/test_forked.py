"""Work shared with a forked child (attngrade/forked.py), and a class loaded by two processes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from attngrade.grading import load_all
from attngrade.runtime.forked import Share

from attngrade.grading import loading as plan_module

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="shares are done by forked children")

ROOT = Path(__file__).resolve().parents[2]
CLASS = ROOT / "examples" / "cs224n-w21-a5"


def _pid_and(value):
    return os.getpid(), value


def test_a_share_is_done_by_another_process_and_comes_back_whole():
    big = ["x" * 1000] * 500  # more than a pipe holds: the child waits for this process to read
    pid, value = Share(lambda: _pid_and(big)).result()
    assert pid != os.getpid() and value == big


def test_a_share_that_fails_comes_back_as_none_for_the_caller_to_do():
    def broken():
        raise RuntimeError("the child's own failure")

    child = Share(broken)
    pid = child._pid
    assert child.result() is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # ended and reaped


@pytest.fixture
def cls(tmp_path) -> Path:
    """The example class and a file that cannot be read (an error row)."""
    import shutil

    shutil.copytree(CLASS, tmp_path / "class")
    (tmp_path / "class" / "zz-broken.yaml").write_text("homework: cs224n-w21-a5\nanswers:\n\t1a: x\n")
    return tmp_path / "class"


def _loaded(cls: Path, workers: int) -> list:
    return [(type(item).__name__, vars(item)) for item in load_all([cls], workers=workers)]


def test_two_processes_load_a_class_as_one_does(monkeypatch, cls):
    monkeypatch.setattr(plan_module, "SHARE_LOAD_FROM", 2)  # the example class is small
    came = []
    real = Share.result
    monkeypatch.setattr(Share, "result", lambda self: came.append(real(self)) or came[-1])
    two = _loaded(cls, 2)
    assert len(came) == 1 and came[0], "the later half was loaded by a child and came back"
    assert two == _loaded(cls, 1)
    assert any(kind == "Result" and "tab" in (item["error"] or "") for kind, item in two), "error rows come back too"


def test_a_share_whose_child_failed_is_loaded_here(monkeypatch, cls):
    monkeypatch.setattr(plan_module, "SHARE_LOAD_FROM", 2)
    monkeypatch.setattr(Share, "result", lambda self: self.stop())  # as if the child had died
    assert _loaded(cls, 2) == _loaded(cls, 1)


def test_a_stopped_share_leaves_no_open_pipe():
    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    before = open_fds()
    for _ in range(5):
        Share(lambda: 1).stop()
        Share(lambda hurried: 1, hurried=True).stop()
        Share(lambda hurried: 1, hurried=True).result()
    assert open_fds() == before


def _until_asked(hurried) -> int:
    import time

    looked, give_up = 0, time.monotonic() + 60
    while not hurried() and time.monotonic() < give_up:
        looked += 1
        time.sleep(0.001)
    return looked if time.monotonic() < give_up else -1


def test_work_that_may_end_early_ends_when_asked_with_what_it_has():
    child = Share(_until_asked, hurried=True)
    child.hurry()
    assert child.result() >= 0  # asked, not given up


def test_asking_a_child_that_is_gone_is_no_error():
    child = Share(lambda hurried: 1, hurried=True)
    os.waitpid(child._pid, 0)
    child._pid = None
    child.hurry()  # its end of the pipe is closed: nothing to ask
    child.stop()


def test_no_pipe_to_be_had_means_no_child_and_the_caller_does_the_work(monkeypatch):
    def no_pipe():
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(os, "pipe", no_pipe)
    child = Share(lambda: 1)
    assert child._pid is None and child.result() is None
