"""Run a student's PyTorch code in a sandbox child and get back raw data only.

The grading process never imports torch and never runs student code. `run(files, job)`
sends the student's code files and a job (what to call, on which inputs) to a *zygote*:
a long-lived process that imported torch once and forks one sandbox child per job
(`zygote.py`); the child puts itself under the isolation in `isolate.py` and runs one of
the trusted drivers in `drivers.py`, which import the student's modules and return lists
of numbers and strings. Verdicts are computed by the checks, in the grader, with numpy.

The zygote is started on first use (or ahead of time by `prestart()`, which the plan
stage calls when a batch holds code parts). This process makes its listening socket, in
a folder only its uid may enter, and hands the zygote the socket itself, never its path;
the path is published in the environment, so worker processes forked later share the
zygote. The zygote serves only processes of the grader's uid and namespaces that it did
not start itself. When it cannot be started, each job runs in a fresh interpreter
(`--once`, in a private working folder, with only attngrade's own folder on its path):
the same isolation, ~1.5 s slower.
"""

from __future__ import annotations

import atexit
import base64
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from . import protocol
from .isolate import CLEAN_ENV, Limits

ENV_SOCKET = "ATTNGRADE_SANDBOX_SOCKET"
TORCH_REQUIREMENT = "torch==2.13.0"  # the [torch] extra's pin (pyproject.toml); its CPU wheel
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"  # a plain `pip install torch` pulls CUDA builds
START_SECONDS = 60.0  # importing torch on a loaded machine
# Seconds the grader waits past a job's own timeout for the supervisor's answer. The supervisor ends
# the job at its timeout itself; after that it still reads and vets what the job sent, which for a
# result of many small pieces takes seconds on a loaded machine. Past this the supervisor is hung:
# attngrade's failure, never to be within the student's reach.
MARGIN = 60.0
TORCH_MISSING = ("this part runs your code with PyTorch, which is not installed where it is graded: "
                 "install attngrade[torch] (pip install 'attngrade[torch]'); its points wait until then")


@dataclass(frozen=True)
class Run:
    """What came back from one sandbox job."""

    status: str  # ok | timeout | too_large | memory | disk | no_result | malformed | crashed | failed
    data: Any = None
    error: str = ""
    output: str = ""  # the head of the child's stdout and stderr
    exit: Mapping[str, Any] = field(default_factory=dict)  # {"code": n} or {"signal": "SIGKILL"}
    layers: Mapping[str, Any] = field(default_factory=dict)  # isolation layers active / missing
    wall: float = 0.0
    cpu: float = 0.0
    zygote: bool = True  # False: a fresh interpreter ran the job
    memory: int = 0  # bytes the job's processes held together at most, when more than one ran
    uid: int | None = None  # the uid the job ran as, when the grader is root


def torch_missing() -> str | None:
    """Why code cannot be run here, or None when torch is installed (found, never imported)."""
    return None if importlib.util.find_spec("torch") is not None else TORCH_MISSING


def run(files: Mapping[str, bytes | str], job: Mapping[str, Any], *, timeout: float = 10.0,
        limits: Limits | None = None) -> Run:
    """Run `job` on the student's `files` (plain names -> content) in a sandbox job."""
    request = {
        "files": {name: base64.b64encode(data.encode("utf-8") if isinstance(data, str) else data).decode("ascii")
                  for name, data in files.items()},
        "job": dict(job), "timeout": timeout,
        "limits": (limits or Limits(cpu_seconds=max(1, int(timeout) + 1))).__dict__,
    }
    path = _zygote_socket()
    if path is not None:
        try:
            return _answer(_ask_socket(path, request, timeout + MARGIN), zygote=True)
        except (OSError, EOFError, protocol.TooLarge) as err:
            if not isinstance(err, (ConnectionRefusedError, FileNotFoundError)):
                return Run("failed", error=f"the sandbox supervisor went away ({type(err).__name__}: {err})")
    return _answer(_ask_fresh(request, timeout + MARGIN + START_SECONDS), zygote=False)


def _answer(message: Mapping[str, Any], zygote: bool) -> Run:
    return Run(status=str(message.get("status", "failed")), data=message.get("data"),
               error=str(message.get("error", "")), output=str(message.get("output", "")),
               exit=dict(message.get("exit") or {}), layers=dict(message.get("layers") or {}),
               wall=float(message.get("wall", 0.0)), cpu=float(message.get("cpu", 0.0)), zygote=zygote,
               memory=int(message.get("memory") or 0),
               uid=message["uid"] if isinstance(message.get("uid"), int) else None)


def _ask_socket(path: str, request: Mapping[str, Any], wait: float) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(START_SECONDS)  # the zygote may still be importing torch: it says hello once it serves
        conn.connect(path)
        reader = conn.makefile("rb")
        first = reader.read(1)
        if first not in (protocol.HELLO, protocol.NO_JOB):
            raise ConnectionRefusedError("the sandbox zygote did not serve this process")
        conn.settimeout(wait)
        if first == protocol.HELLO:  # else it could not start a job, and says why
            conn.sendall(protocol.encode(request))
        (size,) = protocol.HEADER.unpack(_read(reader, protocol.HEADER.size))
        if size > protocol.MAX_RESULT + 1024 * 1024:
            raise protocol.TooLarge(f"an answer of {size} bytes")

        return json.loads(_read(reader, size).decode("utf-8"))


def _read(reader: Any, n: int) -> bytes:
    data = reader.read(n)
    if data is None or len(data) < n:
        raise EOFError("the sandbox supervisor closed the connection")
    return data


def _ask_fresh(request: Mapping[str, Any], wait: float) -> dict:
    """One job in a fresh interpreter: the fallback when no zygote can run. Its working folder is its own
    (a shared one such as /tmp could hold a planted module), and its path holds only attngrade's folder."""
    folder = tempfile.mkdtemp(prefix="attngrade-once-")
    os.chmod(folder, 0o711)  # the child's uid may pass through to its job's folder, not list or write here
    try:
        proc = subprocess.run(zygote_command(["--once"]), input=protocol.encode(request), capture_output=True,
                              timeout=wait, env=_zygote_env(), cwd=folder, check=False)
    except subprocess.TimeoutExpired:
        return {"status": "failed", "error": "the sandbox did not answer in time"}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    try:
        return protocol.decode(proc.stdout, protocol.MAX_RESULT + 1024 * 1024)
    except (EOFError, ValueError, protocol.TooLarge):
        tail = proc.stderr.decode("utf-8", errors="replace")[-500:]
        return {"status": "failed", "error": f"the sandbox could not start: {tail}"}


# -- the zygote ------------------------------------------------------------------------------
_lock = threading.Lock()
_started: dict[str, Any] = {}
# Only attngrade's own folder goes on the zygote's path, first: never its working folder (`-c` would
# put it there), and no user site-packages (-s).
BOOT = ("import sys; sys.path[:] = [{package!r}] + [p for p in sys.path if p not in ('', '.')]; "
        "from attngrade.sandbox.zygote import main; sys.exit(main(sys.argv[1:]))")


def zygote_command(args: list[str]) -> list[str]:
    """The command line of a zygote (`--serve FD` or `--once`)."""
    package_parent = str(Path(__file__).resolve().parents[2])
    return [sys.executable, "-s", "-c", BOOT.format(package=package_parent), *args]


def _zygote_env() -> dict[str, str]:
    return dict(CLEAN_ENV)


def prestart() -> None:
    """Start the zygote now, without waiting for it (it imports torch in the background)."""
    if torch_missing() is None:
        with _lock:
            _start_locked()


def listen(folder: str) -> socket.socket:
    """A listening socket in `folder`/ctl, a folder only this uid may enter (the socket is 0600 too)."""
    os.chmod(folder, 0o711)  # the jobs' folders in it are reached by their sandbox uid, never listed
    private = os.path.join(folder, "ctl")
    os.mkdir(private, 0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(os.path.join(private, "sock"))
        os.chmod(os.path.join(private, "sock"), 0o600)
        listener.listen(64)
    except OSError:
        listener.close()
        raise
    return listener


def _start_locked() -> None:
    if os.environ.get(ENV_SOCKET):
        return  # started here, or by the process this one was forked from (or given the socket by): it serves us
    folder = tempfile.mkdtemp(prefix="attngrade-zygote-")
    try:
        listener = listen(folder)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return
    with listener:
        try:
            proc = subprocess.Popen(zygote_command(["--serve", str(listener.fileno())]), pass_fds=(listener.fileno(),),
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env=_zygote_env(), cwd=folder, start_new_session=True)
        except OSError:
            shutil.rmtree(folder, ignore_errors=True)
            return
    _started.update(pid=os.getpid(), proc=proc, folder=folder)
    os.environ[ENV_SOCKET] = os.path.join(folder, "ctl", "sock")
    atexit.register(_stop, proc, folder)


def _stop(proc: subprocess.Popen, folder: str) -> None:
    if _started.get("pid") != os.getpid():
        return  # a forked worker: the process that started the zygote stops it
    try:
        proc.stdin.close()
        proc.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
    shutil.rmtree(folder, ignore_errors=True)


def _zygote_socket() -> str | None:
    """The socket of a zygote that is up or starting (starting one if needed), or None."""
    with _lock:
        _start_locked()
    path = os.environ.get(ENV_SOCKET)
    if not path or not os.path.exists(path):
        return None
    proc = _started.get("proc") if _started.get("pid") == os.getpid() else None
    if proc is not None and proc.poll() is not None:
        return None  # it could not start (its socket refuses too): each job runs in a fresh interpreter
    return path


__all__ = ["Limits", "Run", "TORCH_MISSING", "prestart", "run", "torch_missing", "zygote_command"]
