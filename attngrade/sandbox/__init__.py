"""Run a student's PyTorch code in a sandbox child and get back raw data only.

The grading process never imports torch and never runs student code. `run(files, job)`
sends the student's code files and a job (what to call, on which inputs) to a *zygote*:
a long-lived process that imported torch once and forks one sandbox child per job
(`zygote.py`); the child puts itself under the isolation in `isolate.py` and runs one of
the trusted drivers in `drivers.py`, which import the student's modules and return lists
of numbers and strings. Verdicts are computed by the checks, in the grader, with numpy.

The zygote is started on first use (or ahead of time by `prestart()`, which the plan
stage calls when a batch holds code parts) and its socket is published in the
environment, so worker processes forked later share it. When it cannot be started, each
job runs in a fresh interpreter (`--once`): the same isolation, ~1.5 s slower.
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
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from . import protocol
from .isolate import CLEAN_ENV, Limits

ENV_SOCKET = "ATTNGRADE_SANDBOX_SOCKET"
TORCH_REQUIREMENT = "torch==2.13.0"  # the [torch] extra's pin (pyproject.toml); its CPU wheel
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"  # a plain `pip install torch` pulls CUDA builds
START_SECONDS = 60.0  # importing torch on a loaded machine
MARGIN = 5.0  # seconds the grader waits past a job's own timeout for the supervisor's answer
TORCH_MISSING = ("this part runs your code with PyTorch, which is not installed where it is graded: "
                 "install attngrade[torch] (pip install 'attngrade[torch]'); its points wait until then")


@dataclass(frozen=True)
class Run:
    """What came back from one sandbox child."""

    status: str  # ok | timeout | too_large | no_result | failed
    data: Any = None
    error: str = ""
    output: str = ""  # the head of the child's stdout and stderr
    exit: Mapping[str, Any] = field(default_factory=dict)  # {"code": n} or {"signal": "SIGKILL"}
    layers: Mapping[str, Any] = field(default_factory=dict)  # isolation layers active / missing
    wall: float = 0.0
    cpu: float = 0.0
    zygote: bool = True  # False: a fresh interpreter ran the job


def torch_missing() -> str | None:
    """Why code cannot be run here, or None when torch is installed (found, never imported)."""
    return None if importlib.util.find_spec("torch") is not None else TORCH_MISSING


def run(files: Mapping[str, bytes | str], job: Mapping[str, Any], *, timeout: float = 10.0,
        limits: Limits | None = None) -> Run:
    """Run `job` on the student's `files` (plain names -> content) in a sandbox child."""
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
               wall=float(message.get("wall", 0.0)), cpu=float(message.get("cpu", 0.0)), zygote=zygote)


def _ask_socket(path: str, request: Mapping[str, Any], wait: float) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(wait)
        conn.connect(path)
        conn.sendall(protocol.encode(request))
        reader = conn.makefile("rb")
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
    """One job in a fresh interpreter: the fallback when no zygote can run."""
    try:
        proc = subprocess.run([sys.executable, "-m", "attngrade.sandbox.zygote", "--once"],
                              input=protocol.encode(request), capture_output=True, timeout=wait,
                              env=_zygote_env(), cwd=tempfile.gettempdir(), check=False)
    except subprocess.TimeoutExpired:
        return {"status": "failed", "error": "the sandbox did not answer in time"}
    try:
        return protocol.decode(proc.stdout, protocol.MAX_RESULT + 1024 * 1024)
    except (EOFError, ValueError, protocol.TooLarge):
        tail = proc.stderr.decode("utf-8", errors="replace")[-500:]
        return {"status": "failed", "error": f"the sandbox could not start: {tail}"}


# -- the zygote ------------------------------------------------------------------------------
_lock = threading.Lock()
_started: dict[str, Any] = {}


def _zygote_env() -> dict[str, str]:
    package_parent = str(Path(__file__).resolve().parents[2])
    return {**CLEAN_ENV, "PYTHONPATH": package_parent}


def prestart() -> None:
    """Start the zygote now, without waiting for it (it imports torch in the background)."""
    if torch_missing() is None:
        with _lock:
            _start_locked()


def _start_locked() -> None:
    if os.environ.get(ENV_SOCKET):
        return  # started here, or by the process this one was forked from (or given the socket by): it serves us
    folder = tempfile.mkdtemp(prefix="attngrade-zygote-")
    path = os.path.join(folder, "sock")
    try:
        proc = subprocess.Popen([sys.executable, "-m", "attngrade.sandbox.zygote", path],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=_zygote_env(), cwd=folder, start_new_session=True)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return
    _started.update(pid=os.getpid(), proc=proc, folder=folder)
    os.environ[ENV_SOCKET] = path
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
    """The socket of a zygote that is up (starting one if needed), or None."""
    with _lock:
        _start_locked()
    path = os.environ.get(ENV_SOCKET)
    if not path:
        return None
    proc = _started.get("proc") if _started.get("pid") == os.getpid() else None
    deadline = time.monotonic() + START_SECONDS
    while not os.path.exists(path):
        if time.monotonic() > deadline or (proc is not None and proc.poll() is not None):
            return None
        if not os.path.isdir(os.path.dirname(path)):
            return None
        time.sleep(0.02)
    return path


__all__ = ["Limits", "Run", "TORCH_MISSING", "prestart", "run", "torch_missing"]
