"""A supervisor that fails on its own side still removes the child's temporary folder and kills the child."""

from __future__ import annotations

import os
import signal
import tempfile
import time
from pathlib import Path

import pytest

from attngrade.sandbox import isolate, zygote


def test_an_error_before_the_child_starts_leaves_no_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # mkdtemp's folder, for this test only

    def refuse(_pid: int) -> int:
        raise OSError("no uid to give")

    monkeypatch.setattr(isolate, "sandbox_uid", refuse)
    with pytest.raises(OSError, match="no uid to give"):
        zygote.supervise({"files": {"dataset.py": ""}, "job": {}, "timeout": 1})
    assert list(Path(tmp_path).iterdir()) == []


def test_an_error_while_collecting_still_kills_the_child(tmp_path):
    """The supervisor's own failure after the fork (here `select` raising) must not leave the
    child running. Run in a forked stand-in supervisor, so the sweep reaches only its children."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            isolate.libc().prctl(zygote.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
            tempfile.tempdir = str(tmp_path)
            isolate.sandbox_uid = lambda _pid: None  # the sweep of a grader that is not root
            isolate.enter = lambda *args, **kwargs: time.sleep(30)  # a child that would stay
            zygote.select.select = _broken_select
            try:
                zygote.supervise({"files": {"dataset.py": ""}, "job": {}, "timeout": 5})
            except OSError as err:
                assert "select broke" in str(err)
            else:
                raise AssertionError("the supervisor's error was swallowed")
            assert zygote._descendants(os.getpid()) == [], "the sandbox child outlived the error"
            assert list(Path(tmp_path).iterdir()) == []
            code = 0
        except BaseException as err:  # noqa: BLE001 - reported through the exit code
            os.write(2, f"{type(err).__name__}: {err}\n".encode())
        finally:
            for child in zygote._descendants(os.getpid()):  # a failing run leaks nothing either
                os.kill(child, signal.SIGKILL)
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _broken_select(*args, **kwargs):
    raise OSError("select broke")


def test_a_child_reaped_by_the_kernel_is_no_error(tmp_path):
    """With SIGCHLD ignored, the kernel reaps the child itself and waitpid finds nothing: the job's
    answer still comes back (its exit status unknown), not an error of the supervisor's."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            tempfile.tempdir = str(tmp_path)
            isolate.sandbox_uid = lambda _pid: None
            isolate.enter = lambda *args, **kwargs: isolate.Layers()  # no layers: only the reaping is tested
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)
            answer = zygote.supervise({"files": {"dataset.py": ""}, "job": {"kind": "nothing"}, "timeout": 5})
            assert answer["exit"] == {}, answer
            assert answer["status"] == "failed" and "unknown job kind" in answer["error"], answer  # as the child said
            code = 0
        except BaseException as err:  # noqa: BLE001 - reported through the exit code
            os.write(2, f"{type(err).__name__}: {err}\n".encode())
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
