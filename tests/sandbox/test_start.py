"""Which process starts a zygote: the first that needs one; processes forked from it use its."""

from __future__ import annotations

import os
import subprocess

import pytest

from attngrade import sandbox


@pytest.fixture()
def no_new_zygote(monkeypatch):
    started = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a) or pytest.fail("a zygote was started"))
    return started


def test_a_forked_worker_uses_the_zygote_of_the_process_that_started_it(monkeypatch, no_new_zygote):
    monkeypatch.setenv(sandbox.ENV_SOCKET, "/tmp/attngrade-zygote-x/sock")
    monkeypatch.setattr(sandbox, "_started", {"pid": os.getpid() + 1})  # as a fork of that process sees it
    sandbox._start_locked()
    assert no_new_zygote == []


def test_a_process_given_only_the_socket_uses_it(monkeypatch, no_new_zygote):
    monkeypatch.setenv(sandbox.ENV_SOCKET, "/tmp/attngrade-zygote-x/sock")
    monkeypatch.setattr(sandbox, "_started", {})
    sandbox._start_locked()
    assert no_new_zygote == []


def test_without_a_socket_one_is_started_and_given_its_socket_not_a_path(monkeypatch, tmp_path):
    calls = []

    class Started:
        def __init__(self, *args, **kwargs):
            calls.append((args, kwargs))

    monkeypatch.setattr(sandbox.tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv(sandbox.ENV_SOCKET, raising=False)
    monkeypatch.setattr(sandbox, "_started", {})
    monkeypatch.setattr(subprocess, "Popen", Started)
    monkeypatch.setattr(sandbox.atexit, "register", lambda *a: None)
    sandbox._start_locked()
    path = os.environ[sandbox.ENV_SOCKET]
    (args,), kwargs = calls[0]
    assert len(calls) == 1 and path.endswith("/sock") and os.path.exists(path)
    assert path not in " ".join(args) and not any(path in v for v in kwargs["env"].values())
    assert args[-2] == "--serve" and int(args[-1]) in kwargs["pass_fds"]
    assert os.stat(os.path.dirname(path)).st_mode & 0o777 == 0o700  # only this uid may reach the socket
    assert os.stat(path).st_mode & 0o777 == 0o600


def test_a_zygote_whose_grader_is_gone_removes_its_socket_its_jobs_and_its_folder(tmp_path):
    # The grader's own cleanup runs at exit; one killed (or a forked process ending with
    # os._exit) never runs it, and the zygote, seeing its stdin closed, cleans up for it.
    pytest.importorskip("torch")
    folder = tmp_path / "attngrade-zygote-test"
    folder.mkdir()
    listener = sandbox.listen(str(folder))
    job = folder / "attngrade-job-left"  # what a supervisor killed with the grader could not remove
    (job / "work").mkdir(parents=True)
    with listener:
        proc = subprocess.Popen(sandbox.zygote_command(["--serve", str(listener.fileno())]),
                                pass_fds=(listener.fileno(),), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                env=sandbox._zygote_env(), cwd=folder)
    try:
        assert proc.stdout.readline().strip() == b"ready"
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
    assert not folder.exists()
