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


def test_without_a_socket_one_is_started(monkeypatch):
    calls = []

    class Started:
        def __init__(self, *args, **kwargs):
            calls.append(args)

    monkeypatch.delenv(sandbox.ENV_SOCKET, raising=False)
    monkeypatch.setattr(sandbox, "_started", {})
    monkeypatch.setattr(subprocess, "Popen", Started)
    monkeypatch.setattr(sandbox.atexit, "register", lambda *a: None)
    sandbox._start_locked()
    assert len(calls) == 1 and os.environ[sandbox.ENV_SOCKET].endswith("/sock")
    os.rmdir(os.path.dirname(os.environ[sandbox.ENV_SOCKET]))
