"""Only the grader can start jobs: the zygote is handed its listening socket (never a path in its
command line or environment) and serves only a peer of its own uid, user namespace and PID
namespace that it did not start itself (SO_PEERCRED); and a zygote that cannot fork for a job says
so and serves the next one."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_cases import NOBODY, confinable, owned_folder, run_confined  # noqa: E402

from attngrade.sandbox.linux import CLONE_NEWUSER, unshare  # noqa: E402
from attngrade.sandbox.zygote import from_the_grader  # noqa: E402

FORK_FAILS = Path(__file__).resolve().parents[1] / "data" / "sandbox" / "fork_fails.py"
PEERS = ["the grader", "another uid", "a user namespace of its own", "a process the zygote started"]


def _connect(path: str, become: str) -> None:
    """In a forked process: become what `become` names, connect to `path` and wait to be closed."""
    code = 1
    try:
        if become == "another uid":
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
        elif become == "a user namespace of its own":
            uid = os.getuid()
            unshare(CLONE_NEWUSER)
            Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(20)
            conn.connect(path)
            conn.recv(1)
        code = 0
    finally:
        os._exit(code)


@pytest.fixture()
def public_socket():
    """A listening socket any uid may reach (in the temporary folder, not the test's own): the peer's
    uid and namespaces decide, not permissions."""
    folder = tempfile.mkdtemp(prefix="attngrade-test-public-")
    os.chmod(folder, 0o755)
    path = os.path.join(folder, "sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o777)
    listener.listen(4)
    listener.settimeout(20)  # a peer that could not connect fails the test, never hangs it
    yield listener, path
    listener.close()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("peer", PEERS)
def test_the_zygote_serves_only_the_graders_own_processes(public_socket, peer):
    if peer == "another uid" and os.geteuid() != 0:
        pytest.skip("only root can make a process of another uid")
    listener, path = public_socket
    zygote = os.fork()
    if zygote == 0:  # a stand-in zygote: the peer it judges must not be its own child, but for the last case
        verdict = 2
        try:
            if peer == "a process the zygote started" and os.fork() == 0:
                _connect(path, peer)
            conn, _ = listener.accept()
            verdict = 0 if from_the_grader(conn) else 1
            conn.close()
        finally:
            os._exit(verdict)
    others = []
    if peer != "a process the zygote started":
        others.append(os.fork())
        if others[0] == 0:
            _connect(path, peer)
    _, status = os.waitpid(zygote, 0)
    for pid in others:
        os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == (0 if peer == "the grader" else 1)


@pytest.mark.skipif(not confinable(), reason="needs unshare (and setpriv as root) and PID namespaces")
def test_a_zygote_that_cannot_fork_says_so_and_serves_the_next_job(tmp_path):
    """As a user (nobody, when the tests run as root): RLIMIT_NPROC caps no fork of root's."""
    pytest.importorskip("torch")
    folder = owned_folder("user")
    try:
        report = run_confined(tmp_path, "user", [sys.executable, str(FORK_FAILS), str(folder)], {})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    answers = json.loads((tmp_path / "stdout").read_text() or "[]")
    assert len(answers) == 2, (tmp_path / "stderr").read_text()[-2000:]
    refused, served = answers
    assert refused["status"] == "failed" and "could not start a job" in refused["error"] and refused["alive"]
    assert served["status"] == "ok" and served["alive"]
    assert report["left"] == []
