"""The zygote: a long-lived process that imports torch once and forks one supervisor per job.

    python -s -c BOOT --serve FD   serve jobs on the listening Unix socket FD until stdin closes
    python -s -c BOOT --once       one job on stdin, its answer on stdout

(BOOT, from `attngrade.sandbox.zygote_command`, puts attngrade's own folder first on the
path, never the working folder.) The zygote is handed its listening socket, never a path:
it serves a connection only from a process of its own uid, user namespace and PID
namespace that it did not start itself (SO_PEERCRED), so a job cannot ask for another.

The zygote never reads keys or gold: a request holds only the student's code files and
a job (inputs the grader chose). For each connection it forks a *supervisor* (trusted,
still the grader's uid) that makes the job's folder inside the zygote's own and forks the
job. The job's first process makes its namespaces (`isolate.detach`) and forks the sandbox
child, which puts itself under the isolation (`isolate.enter`), writes the layers that
took on a control pipe and closes it, and only then imports the student's code and runs a
driver, whose raw data goes on a second pipe. Only the control pipe can say that the
sandbox failed, and nothing student code writes can reach it. The supervisor reads the
pipes within bounds, caps the memory of the job's processes together, and ends every
process of the job when it is done (`watch.py`); the answer goes back on the connection.
"""

from __future__ import annotations

import base64
import os
import resource
import select
import shutil
import signal
import socket
import struct
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from ..runtime.lifeline import end_with_parent
from . import cgroup, isolate, protocol, rootfs, watch
from .linux import PR_SET_CHILD_SUBREAPER, libc

_JOBS: list[str] = []  # the folder for jobs' folders: the zygote's own (set by `main`), else the system's


def warm() -> None:
    """What every child needs, imported once here."""
    os.environ.update(isolate.CLEAN_ENV)
    import torch

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    from . import drivers  # noqa: F401 - imported here so each child inherits it


# -- one job ------------------------------------------------------------------------------------
def supervise(request: dict[str, Any]) -> dict[str, Any]:
    """Run one job in a sandbox and return what happened (never raises for the job's doing)."""
    started = time.monotonic()
    files = {}
    for name, data in (request.get("files") or {}).items():
        if not isinstance(name, str) or "/" in name or name.startswith(".") or not name:
            return {"status": "failed", "error": f"not a plain file name: {name!r}"}
        files[name] = base64.b64decode(data)
    base = Path(tempfile.mkdtemp(prefix="attngrade-job-", dir=_JOBS[0] if _JOBS else None))
    try:  # the folder goes whatever happens here: a supervisor's error must not leave it behind
        os.chmod(base, 0o711)  # the child's uid may pass through to its folder, not list or write here
        (base / "work").mkdir()
        job = Job(base / "work", files, request.get("job") or {}, isolate.Limits.from_json(request.get("limits")),
                  isolate.sandbox_uid(os.getpid()))
        got, answer = _run_job(job, (started, float(request.get("timeout", 10))))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return {**_verdict(got, answer, job.limits), "uid": job.uid}


@dataclass
class Job:
    """What a job's processes are given: the folder for the student's files, the files, the driver's job,
    the limits, the sandbox uid (None when not root), and its cgroup (or why it has none)."""

    folder: Path
    files: dict[str, bytes]
    job: dict[str, Any]
    limits: isolate.Limits
    uid: int | None
    group: cgroup.JobGroup | None = None
    no_group: str = ""


def _run_job(job: Job, clock: tuple[float, float]) -> tuple[watch.Collected, dict[str, Any]]:
    """Fork the job, collect its pipes until it is done or out of time, and end every process of it: what
    it left, and the answer's common fields. `clock`: (when the job began, its timeout)."""
    job.group, job.no_group = _group(job.limits)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    ends = [os.pipe() for _ in range(3)]  # control, data, output
    pipes = watch.Pipes(*(r for r, _ in ends))
    supervisor = os.getpid()
    pid = os.fork()
    if pid == 0:
        _detach(job, [fd for pair in ends for fd in pair], supervisor)
    for _, w in ends:
        os.close(w)
    got = watch.Collected()
    try:
        disk = watch.Disk(str(job.folder), job.limits.folder_size, rootfs.FILES)
        got = watch.collect(pipes, pid, clock[0] + clock[1], job.limits.memory, disk)
    finally:  # even when collecting failed here: nothing the job started outlives it
        _end(job, pid, got)
        for fd in (pipes.control, pipes.data, pipes.output):
            os.close(fd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return got, {
        "wall": round(time.monotonic() - clock[0], 4),
        "cpu": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 4),
        "output": got.output.decode("utf-8", errors="replace"),
        "exit": watch.describe_exit(got.exited),
    }


def _group(limits: isolate.Limits) -> tuple[cgroup.JobGroup | None, str]:
    """The job's own cgroup v2, or None and why there is none."""
    under, why = cgroup.parent()
    if under is None:
        return None, why
    try:
        return cgroup.JobGroup(under, f"attngrade-job-{os.getpid()}", limits.memory, limits.processes), ""
    except OSError as err:
        return None, f"could not make the job's cgroup: {err}"


def _end(job: Job, first: int, got: watch.Collected) -> None:
    """Kill every process of the job and collect them all; remove its cgroup."""
    if job.group is not None:
        job.group.kill()
        if got.status is None and job.group.out_of_memory():
            got.status = "memory"
    layers = _control(got.control).get("layers") or {}
    watch.end(first, job.uid, any(str(a).startswith("PID namespace") for a in layers.get("active") or []))
    if got.exited is None:
        try:
            _, got.exited = os.waitpid(first, 0)
        except ChildProcessError:  # collected already: its exit is not known, the job's status says the rest
            pass
    watch.reap(until_none=True)
    if job.group is not None:
        job.group.remove()


def _control(buffer: bytes) -> dict[str, Any]:
    """The message on the control pipe: the layers, or why the sandbox could not be entered ({} if none)."""
    try:
        message, _ = protocol.decode_at(buffer, 0, watch.CONTROL_ROOM)
    except (EOFError, ValueError, UnicodeDecodeError, RecursionError, protocol.TooLarge):
        return {}
    return message if isinstance(message, dict) else {}


def _verdict(got: watch.Collected, answer: dict[str, Any], limits: isolate.Limits) -> dict[str, Any]:
    """The answer: the supervisor's own word (control pipe, limits) first, then the data, which may be forged."""
    control = _control(got.control)
    layers = control.get("layers")
    if layers is not None:
        layers = {"active": list(layers.get("active") or []) + [_memory_layer(limits)],
                  "missing": dict(layers.get("missing") or {})}
        answer["layers"] = layers
    if "setup_error" in control:
        return {**answer, "status": "failed", "error": f"the sandbox could not be entered: {control['setup_error']}"}
    if got.status is not None:
        return {**answer, "status": got.status, "memory": got.memory}
    if layers is None:
        return {**answer, "status": "failed", "error": "the sandbox child ended before it was set up"}
    try:
        message, _ = protocol.decode_at(got.data, 0, protocol.MAX_RESULT)
    except protocol.TooLarge as err:
        return {**answer, "status": "too_large", "error": str(err)}
    except (EOFError, ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: JSON nested past reading
        return {**answer, "status": "no_result"}
    if isinstance(message, dict) and "data" in message:
        return {**answer, **_vetted(message["data"])}
    if isinstance(message, dict) and isinstance(message.get("error"), str):  # the driver broke, in the student's code
        return {**answer, "status": "crashed", "error": message["error"][:2000]}
    return {**answer, "status": "malformed"}


def _vetted(data: Any) -> dict[str, Any]:
    """The child's data as the grader will read it: shallow enough for any reader's stack, and within
    the grader's bound once encoded as the supervisor sends it (escapes can make text grow sixfold).
    Either way past them is the student's code's doing, never the grader's failure."""
    if protocol.deeper_than(data, protocol.MAX_DEPTH):
        return {"status": "malformed", "error": f"data nested deeper than {protocol.MAX_DEPTH} levels"}
    size = len(protocol.encode(data))
    if size > protocol.MAX_RESULT:
        return {"status": "too_large", "error": f"data of {size} bytes as sent on (at most {protocol.MAX_RESULT})"}
    return {"status": "ok", "data": data}


def _memory_layer(limits: isolate.Limits) -> str:
    return (f"memory of all its processes together: +{limits.memory // 1024**2} MiB (the supervisor adds them up "
            "and stops the job above it)")


# -- the job's processes ------------------------------------------------------------------------
def _detach(job: Job, fds: list[int], supervisor: int) -> NoReturn:
    """The job's first process: its cgroup and namespaces, then the sandbox child, whose end it mirrors."""
    control_r, control_w, data_r, data_w, out_r, out_w = fds
    try:
        for fd in (control_r, data_r, out_r):
            os.close(fd)
        joined = _join(job)  # before the namespaces: the cgroup's files are the grader's
        layers = isolate.detach(supervisor)
        if joined:
            layers.on(f"cgroup v2 of its own: memory +{job.limits.memory // 1024**2} MiB and {job.limits.processes} "
                      "processes for all its processes together (memory.max, pids.max), all killed at once")
        else:
            layers.off("cgroup v2", job.no_group)
        lifeline_r, lifeline_w = os.pipe()  # this process's end stays open as long as it lives
        pid = os.fork()
    except BaseException as err:  # noqa: BLE001 - no student code has run: the sandbox's own failure
        _say(control_w, {"setup_error": f"{type(err).__name__}: {err}"})
        os._exit(70)
    if pid == 0:
        os.close(lifeline_w)
        _run_child(job, layers, (control_w, data_w, out_w, lifeline_r))
    for fd in (control_w, data_w, out_w, lifeline_r):
        os.close(fd)
    _mirror(pid)


def _join(job: Job) -> bool:
    if job.group is None:
        return False
    try:
        job.group.join()
    except OSError as err:
        job.no_group = f"could not join the job's cgroup: {err}"
        return False
    return True


def _run_child(job: Job, layers: isolate.Layers, fds: tuple[int, int, int, int]) -> NoReturn:
    """The sandbox child: the isolation, the layers on the control pipe, which it closes before any
    student code runs, then the driver and its data. Never returns."""
    control, data, output, lifeline = fds
    try:
        os.dup2(output, 1)
        os.dup2(output, 2)
        os.close(output)
        isolate.enter(job.folder, job.files, job.uid, job.limits, layers, (control, data), lifeline)
        protocol.write_fd(control, {"layers": layers.to_json()})
        os.close(control)
    except BaseException as err:  # noqa: BLE001 - no student code has run: the sandbox's own failure
        _say(control, {"setup_error": f"{type(err).__name__}: {err}"})
        os._exit(70)
    code = 0
    try:
        from . import drivers

        _forget_attngrade()
        message: dict[str, Any] = {"data": drivers.run(job.job)}
    except BaseException as err:  # noqa: BLE001 - the student's code broke the driver (it runs in this process)
        message = {"error": _describe(err)}
    try:
        protocol.write_fd(data, message)
    except BaseException:  # noqa: BLE001 - the student's code may have closed or filled the pipe
        code = 71
    os._exit(code)


def _mirror(pid: int) -> NoReturn:
    """Wait for the sandbox child and end the same way: its exit code, or its signal (no core dump)."""
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        os._exit(70)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        try:
            signal.signal(number, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
        except (OSError, ValueError):
            pass
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.waitstatus_to_exitcode(status))


def _say(fd: int, message: dict[str, Any]) -> None:
    try:
        protocol.write_fd(fd, message)
    except BaseException:  # noqa: BLE001 - nothing more to be done: the supervisor sees no layers
        pass


def _describe(err: BaseException) -> str:
    try:
        text = str(err)
    except BaseException:  # noqa: BLE001 - a student's exception whose message itself raises
        text = ""
    return f"{type(err).__name__}: {text}"[:2000]


def _forget_attngrade() -> None:
    """Drop attngrade from the child's module table: a student's `import attngrade` finds nothing to patch
    that the grader uses (the grader is another process) and cannot reload it (Landlock)."""
    for name in [n for n in sys.modules if n == "attngrade" or n.startswith("attngrade.")]:
        del sys.modules[name]


# -- serving --------------------------------------------------------------------------------------
def _handle(conn_fd_in: int, conn_fd_out: int) -> None:
    try:
        libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (AttributeError, OSError):
        pass
    try:
        request = protocol.read_fd(conn_fd_in, protocol.MAX_REQUEST)
        answer = supervise(request)
    except Exception as err:  # noqa: BLE001 - the grader is told, never left waiting
        answer = {"status": "failed", "error": f"{type(err).__name__}: {err}"}
    try:
        protocol.write_fd(conn_fd_out, answer)
    except OSError:
        pass


def _peer(conn: socket.socket) -> tuple[int, int]:
    """The pid and uid of the process at the other end of `conn` (SO_PEERCRED)."""
    pid, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid, uid


def from_the_grader(conn: socket.socket) -> bool:
    """Whether the peer is the grader's: same uid, same user and PID namespace, and not a process this
    zygote started (a job's, whatever uid or namespace it has)."""
    try:
        pid, uid = _peer(conn)
        if pid <= 0 or uid != os.getuid():
            return False
        for kind in ("user", "pid"):
            if os.readlink(f"/proc/{pid}/ns/{kind}") != os.readlink(f"/proc/self/ns/{kind}"):
                return False
        return not _descends_from(pid, os.getpid())
    except (OSError, struct.error):
        return False


def _descends_from(pid: int, ancestor: int) -> bool:
    for _ in range(256):
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
        with open(f"/proc/{pid}/stat", "rb") as stat:
            pid = int(stat.read().rsplit(b")", 1)[1].split()[1])
    return True  # a chain that long is no grader's


def _accept(listener: socket.socket, supervisors: set[int]) -> None:
    """Serve one connection in a supervisor of its own, if it comes from the grader."""
    conn, _ = listener.accept()
    try:
        if not from_the_grader(conn):
            return
        try:
            pid = os.fork()
        except OSError as err:  # no process to spare (a process cap): say so and serve the next one
            conn.sendall(protocol.NO_JOB)
            protocol.write_fd(conn.fileno(), {"status": "failed", "error": f"the sandbox could not start a job: {err}"})
            return
        if pid == 0:
            try:
                listener.close()
                end_with_parent()
                conn.sendall(protocol.HELLO)
                _handle(conn.fileno(), conn.fileno())
            finally:
                os._exit(0)
        supervisors.add(pid)
    except OSError:
        pass  # the grader went away meanwhile
    finally:
        conn.close()


def _reap_supervisors(supervisors: set[int]) -> None:
    """Collect supervisors that are done (waited for, so their CPU time is counted upwards)."""
    for pid in list(supervisors):
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                supervisors.discard(pid)
        except ChildProcessError:
            supervisors.discard(pid)


def _shut_down(listener: socket.socket, supervisors: set[int]) -> None:
    """The grader is gone: end its jobs, and remove their folders and the socket (a grader that was killed,
    or a forked process that ended with os._exit, never ran the cleanup it registered)."""
    path = listener.getsockname()
    listener.close()
    for pid in supervisors:
        try:
            os.kill(pid, signal.SIGKILL)  # its job's processes end with it (each asked to, and a PID namespace)
        except OSError:
            pass
    for pid in supervisors:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        # Without a PID namespace (a container) what a job forked has no one to end it with the supervisor:
        # every process of the job's uid goes now.
        uid = isolate.sandbox_uid(pid)
        if uid is not None:
            watch.kill_uid(uid)
    for folder in (_JOBS or []):
        for entry in Path(folder).glob("attngrade-job-*"):
            shutil.rmtree(entry, ignore_errors=True)
    if isinstance(path, str) and path:
        for remove in (os.unlink, os.rmdir, os.rmdir):
            try:
                remove(path)
            except OSError:
                return
            path = os.path.dirname(path)


def serve(listener: socket.socket) -> None:
    supervisors: set[int] = set()
    print("ready", flush=True)
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [], 0.5)
        _reap_supervisors(supervisors)
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1024):
            _shut_down(listener, supervisors)
            return  # whoever started us is gone
        if listener in ready:
            _accept(listener, supervisors)


def main(argv: list[str]) -> int:
    warm()
    _JOBS.append(os.getcwd())  # private to this zygote (made by whoever started it)
    if argv[:1] == ["--once"]:
        out = os.dup(1)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        _handle(0, out)
        return 0
    if argv[:1] == ["--serve"] and len(argv) == 2:
        serve(socket.socket(fileno=int(argv[1])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
