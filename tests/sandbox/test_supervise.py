"""The supervisor: a failure on its own side still removes the job's folder and kills the job; only the
sandbox's control pipe, never the student's process, can say that the sandbox failed."""

from __future__ import annotations

import base64
import os
import signal
import tempfile
import time
from pathlib import Path

import pytest

from attngrade.sandbox import isolate, watch, zygote
from attngrade.sandbox.linux import PR_SET_CHILD_SUBREAPER, libc


def _in_a_stand_in_supervisor(scenario) -> None:
    """Run `scenario()` in a forked process (so the sweeps reach only its children) and fail with what it
    raised; whatever it left running is killed there."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
            scenario()
            code = 0
        except BaseException as err:  # noqa: BLE001 - reported through the exit code
            os.write(2, f"{type(err).__name__}: {err}\n".encode())
        finally:
            for child in watch.descendants(os.getpid()):  # a failing run leaks nothing either
                os.kill(child, signal.SIGKILL)
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_an_error_before_the_job_starts_leaves_no_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # mkdtemp's folder, for this test only

    def refuse(_pid: int) -> int:
        raise OSError("no uid to give")

    monkeypatch.setattr(isolate, "sandbox_uid", refuse)
    with pytest.raises(OSError, match="no uid to give"):
        zygote.supervise({"files": {"dataset.py": ""}, "job": {}, "timeout": 1})
    assert list(Path(tmp_path).iterdir()) == []


def test_an_error_while_collecting_still_kills_the_job(tmp_path):
    """The supervisor's own failure after the fork (here `select` raising) must not leave the job running."""
    def scenario() -> None:
        tempfile.tempdir = str(tmp_path)
        isolate.sandbox_uid = lambda _pid: None  # the sweep of a grader that is not root
        isolate.enter = lambda *args, **kwargs: time.sleep(30)  # a child that would stay
        watch.select.select = _broken_select
        try:
            zygote.supervise({"files": {"dataset.py": ""}, "job": {}, "timeout": 5})
        except OSError as err:
            assert "select broke" in str(err)
        else:
            raise AssertionError("the supervisor's error was swallowed")
        assert watch.descendants(os.getpid()) == [], "the job outlived the error"
        assert list(Path(tmp_path).iterdir()) == []

    _in_a_stand_in_supervisor(scenario)


def _broken_select(*args, **kwargs):
    raise OSError("select broke")


def test_a_job_reaped_by_the_kernel_is_no_error(tmp_path):
    """With SIGCHLD ignored, the kernel reaps the job itself and waitpid finds nothing: the job's answer
    still comes back (its exit status unknown), not an error of the supervisor's."""
    def scenario() -> None:
        tempfile.tempdir = str(tmp_path)
        isolate.sandbox_uid = lambda _pid: None
        isolate.enter = lambda *args, **kwargs: None  # no layers beyond the namespaces: only the reaping is tested
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        answer = zygote.supervise({"files": {"dataset.py": ""}, "job": {"kind": "nothing"}, "timeout": 5})
        assert answer["exit"] == {}, answer
        # The driver failed after the sandbox was set up: in the student's process, so the student's doing.
        assert answer["status"] == "crashed" and "unknown job kind" in answer["error"], answer

    _in_a_stand_in_supervisor(scenario)


@pytest.mark.parametrize("claim", ['{"setup_error": "the sandbox could not be entered"}',
                                   '{"layers": {"active": [], "missing": {}}}'])
def test_what_student_code_writes_is_never_the_sandboxs_word(tmp_path, claim):
    """Student code that writes the sandbox's own messages, on every descriptor it has, is the student's
    malformed result: the control pipe is closed before it runs."""
    pytest.importorskip("torch")
    code = ("import json, os, struct\nbody = " + repr(claim.encode()) + "\n"
            "for fd in range(3, 64):\n    try:\n        os.write(fd, struct.pack('>Q', len(body)) + body)\n"
            "    except OSError:\n        pass\nos._exit(0)\n")
    request = {"files": {"dataset.py": base64.b64encode(code.encode()).decode()},
               "job": {"kind": "span_corruption", "cases": []}, "timeout": 20}

    def scenario() -> None:
        tempfile.tempdir = str(tmp_path)
        zygote.warm()
        answer = zygote.supervise(request)
        assert answer["status"] == "malformed", answer
        assert "network namespace" in " ".join(answer["layers"]["active"])  # the layers are the sandbox's own

    _in_a_stand_in_supervisor(scenario)


def test_a_sandbox_that_cannot_be_entered_is_the_sandboxs_failure(tmp_path):
    """A failure before any student code runs comes on the control pipe: attngrade's, said so."""
    def scenario() -> None:
        tempfile.tempdir = str(tmp_path)

        def broken(*args, **kwargs):
            raise OSError("no tmpfs today")

        isolate.enter = broken
        answer = zygote.supervise({"files": {"dataset.py": ""}, "job": {"kind": "nothing"}, "timeout": 5})
        assert answer["status"] == "failed" and "no tmpfs today" in answer["error"], answer

    _in_a_stand_in_supervisor(scenario)
