"""The zygote: a long-lived process that imports torch once and forks one child per job.

    python -m attngrade.sandbox.zygote SOCKET   serve jobs on a Unix socket until stdin closes
    python -m attngrade.sandbox.zygote --once   one job on stdin, its answer on stdout

The zygote never reads keys or gold: a request holds only the student's code files and
a job (inputs the grader chose). For each connection it forks a *supervisor* (trusted,
still the grader's uid) that makes a temporary folder, forks the sandbox child, collects
from a pipe the isolation layers (written before any student code runs, so they cannot be
forged) and at most `MAX_RESULT` bytes of raw data, and a bounded head of its output, and
kills the child's whole process group (and every process of the child's own uid as root,
every descendant otherwise) at the wall timeout or when the child is done. The answer goes
back on the connection.
"""

from __future__ import annotations

import base64
import os
import resource
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import isolate, protocol

MAX_OUTPUT = 8 * 1024  # head of the child's stdout and stderr kept for the report
PR_SET_CHILD_SUBREAPER = 36
EXIT_GRACE = 0.2  # seconds to wait for pipes held open by the child's children after it exits


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


LAYERS_ROOM = 64 * 1024  # the first message: the isolation layers (a few hundred bytes)


def supervise(request: dict[str, Any]) -> dict[str, Any]:
    """Run one job in a sandbox child and return what happened (never raises for the child's doing)."""
    started = time.monotonic()
    files = {}
    for name, data in (request.get("files") or {}).items():
        if not isinstance(name, str) or "/" in name or name.startswith(".") or not name:
            return {"status": "failed", "error": f"not a plain file name: {name!r}"}
        files[name] = base64.b64decode(data)
    job = request.get("job") or {}
    timeout = float(request.get("timeout", 10))
    limits = isolate.Limits.from_json(request.get("limits"))
    base = Path(tempfile.mkdtemp(prefix="attngrade-sandbox-"))
    try:  # the folder goes whatever happens here: a supervisor's error must not leave it in /tmp
        answer, status, result = _run_child(base, files, job, timeout, limits, started)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if status is not None:
        answer["status"] = status
        return answer
    try:
        first, after = protocol.decode_at(result, 0, LAYERS_ROOM)
        if isinstance(first, dict) and "setup_error" in first:  # the sandbox could not be entered
            return {**answer, "status": "failed", "error": str(first["setup_error"])}
        message, _ = protocol.decode_at(result, after, protocol.MAX_RESULT)
    except protocol.TooLarge as err:
        return {**answer, "status": "too_large", "error": str(err)}
    except (EOFError, ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: JSON nested past reading
        return {**answer, "status": "no_result"}
    if not isinstance(first, dict) or not isinstance(message, dict):
        return {**answer, "status": "no_result"}
    if "setup_error" in message:
        return {**answer, "status": "failed", "error": str(message["setup_error"])}
    # The layers as the child wrote them before the student's code ran (`data` may be forged).
    return {**answer, "status": "ok", "data": message.get("data"), "layers": first.get("layers")}


def _run_child(base: Path, files: dict[str, bytes], job: dict[str, Any], timeout: float,
               limits: isolate.Limits, started: float) -> tuple[dict[str, Any], str | None, bytes]:
    """Fork the sandbox child in `base`, collect its pipes until it is done or out of time, and
    kill what it left running: the answer's common fields, a status if the job failed, the raw result."""
    os.chmod(base, 0o711)  # the child's uid may pass through to its folder, not list or write here
    folder = base / "work"
    folder.mkdir()
    uid = isolate.sandbox_uid(os.getpid())
    result_r, result_w = os.pipe()
    out_r, out_w = os.pipe()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    pid = os.fork()
    if pid == 0:  # the sandbox child
        code = 70
        try:
            os.close(result_r)
            os.close(out_r)
            os.dup2(out_w, 1)
            os.dup2(out_w, 2)
            os.close(out_w)
            layers = isolate.enter(folder, files, uid, limits, keep_fds=(result_w,))
            # The layers go first, before any student code runs: what comes after may be forged.
            protocol.write_fd(result_w, {"layers": layers.to_json()})
            from . import drivers

            _forget_attngrade()
            data = drivers.run(job)
            protocol.write_fd(result_w, {"data": data})
            code = 0
        except BaseException as err:  # noqa: BLE001 - whatever happens, say so on the pipe
            try:
                protocol.write_fd(result_w, {"setup_error": f"{type(err).__name__}: {err}"})
            except BaseException:  # noqa: BLE001
                pass
        finally:
            os._exit(code)
    os.close(result_w)
    os.close(out_w)
    result, output, status, exited = bytearray(), bytearray(), None, None
    open_fds = {result_r, out_r}
    deadline = started + timeout
    exited_at = None
    try:
        while open_fds:
            now = time.monotonic()
            if now >= deadline:
                status = "timeout"
                break
            if exited_at is not None and now - exited_at > EXIT_GRACE:
                break
            ready, _, _ = select.select(list(open_fds), [], [], min(deadline - now, 0.05))
            for fd in ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    open_fds.discard(fd)
                elif fd == result_r:
                    result += chunk
                    if len(result) > protocol.MAX_RESULT + LAYERS_ROOM:
                        status = "too_large"
                elif len(output) < MAX_OUTPUT:
                    output += chunk[:MAX_OUTPUT - len(output)]
            if status == "too_large":
                break
            if exited_at is None:
                try:
                    done, wait_status = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:  # reaped already (SIGCHLD ignored): gone, its exit status unknown
                    done, wait_status = pid, None
                if done:
                    exited, exited_at = wait_status, time.monotonic()
    finally:  # even when collecting failed here: nothing the child started outlives its job
        _kill_all(pid, uid)
        if exited_at is None:
            try:
                _, exited = os.waitpid(pid, 0)
            except ChildProcessError:  # collected already: its exit is not known, the job's status says the rest
                pass
        _reap(until_none=True)
        for fd in open_fds:
            os.close(fd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    answer: dict[str, Any] = {
        "wall": round(time.monotonic() - started, 4),
        "cpu": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 4),
        "output": output.decode("utf-8", errors="replace"),
        "exit": _describe_exit(exited),
    }
    return answer, status, bytes(result)


def _forget_attngrade() -> None:
    """Drop attngrade from the child's module table: a student's `import attngrade` finds nothing to patch
    that the grader uses (the grader is another process) and cannot reload it (Landlock)."""
    for name in [n for n in sys.modules if n == "attngrade" or n.startswith("attngrade.")]:
        del sys.modules[name]


def _kill_all(pid: int, uid: int | None) -> None:
    """SIGKILL the child's process group, then every process of the sandbox's uid until none is left
    alive (or the bound is reached)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    if uid is None:
        _kill_descendants()
        return
    helper = os.fork()  # as the child's uid, kill(-1) reaches every process it started, wherever it went
    if helper == 0:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            # Again until none is left: a fork bomb's children may still be forking while the
            # first signal goes out. kill(-1) itself cannot tell (it succeeds while the machine
            # has any other process, even one it may not signal), so /proc is asked. Bounded, so
            # a kernel oddity cannot hang grading.
            for _ in range(400):
                os.kill(-1, signal.SIGKILL)
                if not _alive(uid):
                    break
                time.sleep(0.005)
        except BaseException:  # noqa: BLE001 - the helper must always exit
            pass
        os._exit(0)
    os.waitpid(helper, 0)


def _kill_descendants() -> None:
    """SIGKILL every process descended from this supervisor, again until none is left (bounded).

    The grader is not root, so the child has its uid and kill(-1) would reach the grader too.
    A process that left the child's group (setsid, a daemon) is still a descendant, or an
    orphan this supervisor adopted as their subreaper: either way it is found here."""
    for _ in range(400):
        alive = _descendants(os.getpid())
        if not alive:
            return
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        # Not reaped here: waitpid(-1) would take the sandbox child's own exit status too, which the
        # supervisor then waits for in vain. A killed process is a zombie, which `_descendants` skips
        # (once all its threads are gone) and which cannot fork; `_run_child` collects them all.
        time.sleep(0.005)


def _descendants(root: int) -> list[int]:
    """The processes below `root` that still run (see `_running`), from each process's parent in /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()  # the name before ")" may hold spaces
            running = _running(fields[0], fields[17])  # the state, and the number of threads
        except (OSError, IndexError, ValueError):
            continue  # gone since the listing
        if running:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        below = children.get(todo.pop(), [])
        found += below
        todo += below
    return found


def _running(state: bytes, threads: bytes) -> bool:
    """Whether a process in `state`, with `threads` threads (both from /proc), can still run code.

    A zombie is done, unless only its main thread ended: its other threads still run (and may
    fork), its children are still its own, and a SIGKILL to it ends them all. Its thread count
    says so: it counts the threads not yet gone, the ended main one included."""
    return state not in (b"Z", b"X") or int(threads) > 1


def _alive(uid: int) -> bool:
    """Whether a process of `uid` other than this one still runs (a zombie cannot fork, so it is done,
    unless threads other than its main one still run).

    Checked after a SIGKILL to all of them: a process that had not forked by then never will.
    The uids come from /proc/PID/status, not from who owns /proc/PID: a process that is not
    dumpable (any that changed its uid, or asked not to be) shows that folder as root's."""
    me = str(os.getpid())
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or entry.name == me:
            continue
        try:
            with open(f"/proc/{entry.name}/status", "rb") as status:
                fields = dict(line.split(b":", 1) for line in status.read().splitlines() if b":" in line)
            uids = [int(u) for u in fields[b"Uid"].split()]
            running = _running(fields[b"State"].split()[0], fields[b"Threads"].strip())
        except (OSError, KeyError, ValueError, IndexError):
            continue  # gone since the listing
        if uid in uids and running:
            return True
    return False


def _reap(linger: float = 0.01, until_none: bool = False) -> None:
    """Collect finished children: the child's orphans in a supervisor (its subreaper), supervisors in
    the zygote. Waiting for them is what counts their CPU time in the grader's. `until_none`:
    after a kill, wait (up to two seconds) until every one is collected, so none outlives its job."""
    waited = False
    deadline = time.monotonic() + 2.0
    while True:
        try:
            done, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if done:
            continue
        if until_none and time.monotonic() < deadline:
            time.sleep(0.005)
            continue
        if waited or linger <= 0:
            return
        waited = True
        time.sleep(linger)


def _describe_exit(status: int | None) -> dict[str, Any]:
    if status is None:
        return {}
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return {"signal": name}
    return {"code": os.waitstatus_to_exitcode(status)}


def _handle(conn_fd_in: int, conn_fd_out: int) -> None:
    try:
        isolate.libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
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


def _remove_socket(path: str) -> None:
    """The socket, and its folder if nothing else is in it: a grader that was killed (or a forked
    process that ended with os._exit) never ran the cleanup it registered."""
    for remove in (os.unlink, os.rmdir):
        try:
            remove(path)
        except OSError:
            return
        path = os.path.dirname(path)


def serve(path: str) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".new")
    os.chmod(path + ".new", 0o600)
    listener.listen(64)
    os.rename(path + ".new", path)  # the socket appears only once it accepts connections
    print("ready", flush=True)
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [], 0.5)
        _reap(linger=0)  # supervisors that are done (waited for, so their CPU time is counted upwards)
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1024):
            _remove_socket(path)
            return  # whoever started us is gone
        if listener in ready:
            conn, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                try:
                    isolate.libc().prctl(isolate.PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
                    _handle(conn.fileno(), conn.fileno())
                finally:
                    os._exit(0)
            conn.close()


def main(argv: list[str]) -> int:
    warm()
    if argv[:1] == ["--once"]:
        out = os.dup(1)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        _handle(0, out)
        return 0
    serve(argv[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
