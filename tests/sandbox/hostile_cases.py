"""The hostile corpus (tests/data/code/hostile/) and what each case must get, wherever it runs: in the
test process (test_hostile_code.py) or as a whole class through `grade run`, as root and as a user
(test_hostile_code_in_a_class.py). Shared helpers: a submission with one hostile file, what lies outside a
job's folder (files, sockets) that it must not reach, the System V IPC objects the machine holds,
and a command run in a PID namespace of the test's own, as root or as an ordinary user, which
reports every process that outlived it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkers"))
from code_fixtures import CODE, code_submission  # noqa: E402

HOSTILE = CODE / "hostile"
POINTS = {"2e": 10.0, "2g.i": 4.0}  # the code checks' points of each part (2g.i's prediction files hold the rest)
IPC_KEY = 0x61676E72  # the key sysv_ipc.py uses
INTERNAL = ("attngrade could not run your code", "attngrade itself failed")  # only the grader may begin a line so
SECRET = "attngrade-secret-7f3c1e"  # in a file outside every job's folder: no output may show it


@dataclass(frozen=True)
class Expect:
    """What a hostile case gets in the part its file belongs to: one of `words` in the feedback, the score
    (None: some points, fewer than the part's), and a property that must fail."""

    words: tuple[str, ...]
    score: float | None = 0.0
    fails: str | None = None


CASES = {
    "infinite_loop": Expect(("still running after",)),
    "huge_allocation": Expect(("MemoryError",)),
    "shared_memory": Expect(("Cannot allocate memory", "MemoryError")),
    "fork_bomb": Expect(("still running after",)),
    "big_file": Expect(("File too large", "wrote a file larger than allowed", "Read-only file system")),
    "write_outside": Expect(("SystemExit",)),
    "loopback_socket": Expect(("could not be imported",)),
    "read_secrets": Expect(("FAILED",), score=1.0),  # well-formed tensors of garbage: that one property holds
    "fake_result": Expect(("no item could be drawn",)),
    "malformed_result": Expect(("something malformed",)),
    "forged_layers": Expect(("no item could be drawn",)),
    "nested_result": Expect(("exit code 0",)),
    # Its signals reach nothing outside its PID namespace (and, with Landlock, nothing outside it).
    "kill_parent": Expect(("could not be imported",)),
    "deep_recursion": Expect(("SIGSEGV", "RecursionError", "MemoryError", "still running after")),
    "patch_attngrade": Expect(("could not be imported",)),
    # A NaN weight made the recomputed equation NaN, and NaN passed as equal; attngrade now sets the weights
    # the equation is checked with, so the NaN is gone and the zeros differ from it.
    "nan_parameter": Expect(("differs by up to",), score=None, fails="equation"),
    # Claims attngrade failed: only the sandbox's own control pipe can say so.
    "claims_setup_error": Expect(("something malformed",)),
    "raising_eval": Expect(("eval is not for graders",)),
    "raising_parameters": Expect(("no parameters for graders",)),
    "infinite_shape": Expect(("no output of shape", "could not be compared")),
    "sysv_ipc": Expect(("left shared memory",)),
    "memory_across_processes": Expect(("held more memory than allowed",)),
    "unix_sockets": Expect(("unix sockets reached: 0 ",)),
    "zygote_request": Expect(("served 0",)),
    "huge_vocabulary": Expect(("single character",)),
    "huge_message": Expect(("could not be imported",)),
    "read_command_lines": Expect(("nothing found",), score=1.0),  # its own PID namespace: no other process
    "gpt_discards_synthesizer": Expect(("does not use it",), score=None, fails="gpt"),
    # No namespace covers the kernel's keyrings: a seccomp filter refuses them.
    "keyrings": Expect(("keys added: 0, session keyring read: False, key names seen: 0",)),
    # What the child sends is bounded as the supervisor passes it on, so the grader's reader never
    # fails on it: the part is the code's to answer for, never left pending as the grader's failure.
    "escaped_text": Expect(("more data than a check reads",)),
    "deep_data": Expect(("something malformed",)),
    # Memory the job holds outside any process's resident set, or in processes of a fresh interpreter.
    "memfd_hoard": Expect(("could not make a memory-backed file", "held more memory than allowed")),
    "refused_calls": Expect(("memfd_create: Operation not permitted; vmsplice: Operation not permitted; "
                             "execve: Operation not permitted",)),
    "fresh_interpreter": Expect(("could not start a program", "held more memory than allowed")),
    # Kernel memory outside every process's count: each kind is capped by the job's IPC namespace or
    # tmpfs, or refused by seccomp; on a disk outside a tmpfs, the supervisor counts the folder.
    "semaphores": Expect(("semaphore sets made: at most 32",)),
    "xattrs": Expect(("xattr bytes stored: 0",)),
    "user_namespace": Expect(("namespaces made: none",)),
    "inode_flood": Expect(("empty files made: at most 4096", "wrote more files or bytes than allowed")),
    "disk_flood": Expect(("bytes written: at most 64 MiB", "wrote more files or bytes than allowed")),
    "socket_families": Expect(("socket families opened: none",)),
    "io_uring": Expect(("io_uring set up: False",)),
    # Found by attacking the sandbox in a container without Landlock: the sweep that ends a job cannot be
    # stopped, kernel buffers of sockets and grown pipes are refused, and the grader's folders are its own.
    "stop_the_sweep": Expect(("the sweep's stopper is armed",)),
    "kernel_buffers": Expect(("kernel buffers parked: at most 4 MiB",)),
    "read_classmates": Expect(("classmates' files read: 0",)),
    # A wrong module whose one huge number once widened a tolerance relative to its own output.
    "scaled_tolerance": Expect(("FAILED",), score=None, fails="equation"),
    # Student text is the student's: escaped for every output, and never read as the grader's word.
    "control_characters": Expect(("could not be imported",)),
    "claims_grader_wording": Expect(("could not be imported",)),
}
# Where a host gives a case less than the table above: a container on a kernel without Landlock has
# neither a PID namespace nor Landlock to keep the machine's /proc from the job, so the grader's command
# line (folder names, never their contents) is seen there; docs/explanation/sandbox.md says so.
WITHOUT_LANDLOCK = {"read_command_lines": Expect(("FAILED",), score=None)}
RAW = ("\x1b", "\u202e", "\u2066", "\r")  # characters no output may hold raw (written as escapes)


def replaces(case: str) -> str:
    """The student file a hostile case is handed in as (its first line says, else dataset.py)."""
    first = (HOSTILE / f"{case}.py").read_text().splitlines()[0]
    return first.split(":", 1)[1].strip() if first.startswith("# replaces:") else "dataset.py"


def part_of(case: str) -> str:
    return "2e" if replaces(case) == "dataset.py" else "2g.i"


def other_part(case: str) -> str:
    return "2g.i" if part_of(case) == "2e" else "2e"


def hostile_submission(folder: Path, case: str, fill: dict[str, str], student: str = "s1") -> Path:
    """The correct submission with `case` in place of its file, each `__NAME__` replaced by fill[NAME]."""
    code_submission(folder, student=student)
    text = (HOSTILE / f"{case}.py").read_text()
    for name in ("TARGET", "PORT", "SECRET", "SOCKETS", "ZYGOTE"):
        text = text.replace(f"__{name}__", fill.get(name, ""))
    (folder / "src" / replaces(case)).write_text(text)
    return folder


class Outside:
    """What lies outside a job's folder and within its reach but for the sandbox: a folder anyone may
    enter (in the temporary folder, not the test's own, which only its uid may) holding a file anyone
    may overwrite, a secret anyone may read, a path-named Unix socket anyone may connect to (0777)
    and one only the grader's uid may (0600, in a folder of its own: ssh-agent's, D-Bus's); and a
    TCP port on the loopback. `owner`: the grader's uid, when it is not this process's."""

    def __init__(self, owner: int | None = None, secret_mode: int = 0o644):
        self.folder = Path(tempfile.mkdtemp(prefix="attngrade-test-outside-"))
        self.folder.chmod(0o755)
        self.open = self.folder / "open"
        self.open.mkdir()
        self.open.chmod(0o777)
        self.target, self.keep, self.secret = self.open / "target.txt", self.open / "target.txt.keep", \
            self.open / "keys.yaml"
        self.keep.write_text("keep me")
        self.keep.chmod(0o666)
        self.secret.write_text(f"token: {SECRET}\n")
        self.secret.chmod(secret_mode)
        self.listeners = [self._unix(self.folder / "public", 0o755, "world.sock", 0o777, None),
                          self._unix(self.folder / "private", 0o700, "agent.sock", 0o600, owner)]
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.tcp.setblocking(False)

    @staticmethod
    def _unix(folder: Path, folder_mode: int, name: str, mode: int, owner: int | None) -> socket.socket:
        folder.mkdir()
        folder.chmod(folder_mode)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(folder / name))
        (folder / name).chmod(mode)
        if owner is not None:
            os.chown(folder, owner, owner)
            os.chown(folder / name, owner, owner)
        listener.listen(8)
        listener.setblocking(False)
        return listener

    def fill(self) -> dict[str, str]:
        """The placeholders of the hostile files that name something outside."""
        return {"TARGET": str(self.target), "PORT": str(self.tcp.getsockname()[1]), "SECRET": str(self.secret),
                "SOCKETS": ":".join(s.getsockname() for s in self.listeners)}

    def reached(self) -> bool:
        """Whether any socket took a connection (each is accepted now, so the next look starts afresh)."""
        came = False
        for listener in [self.tcp, *self.listeners]:
            try:
                listener.accept()[0].close()
                came = True
            except BlockingIOError:
                pass
        return came

    def untouched(self) -> bool:
        return not self.target.exists() and self.keep.read_text() == "keep me"

    def close(self) -> None:
        for listener in [self.tcp, *self.listeners]:
            listener.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def ipc_keys() -> set[int]:
    """The keys of the System V shared memory segments and message queues this IPC namespace holds."""
    keys = set()
    for kind in ("shm", "msg"):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        except OSError:
            continue
        keys |= {int(line.split()[0]) for line in lines if line.strip()}
    return keys


# -- a command in a PID namespace of the test's own, as root or as an ordinary user --------------
ROOT = Path(__file__).resolve().parents[2]
NS_INIT = ROOT / "tests" / "data" / "sandbox" / "ns_init.py"
NOBODY = 65534
MODES = ["root", "user"] if os.geteuid() == 0 else ["user"]
# Gradescope's world: root in a container that refuses namespaces and mounts (Docker's default profile),
# on a kernel with Landlock and on one without (shared/tools/container-sim makes both).
CONTAINER_SIM = ROOT.parent / "shared" / "tools" / "container-sim"
CONTAINERS = ["container", "container-no-landlock"]
if os.geteuid() == 0 and CONTAINER_SIM.is_file() and os.uname().machine == "x86_64":
    CLASS_MODES = MODES + CONTAINERS
else:
    CLASS_MODES = MODES


def own_pid_namespace() -> list[str]:
    if os.geteuid() == 0:
        return ["unshare", "--pid", "--fork", "--mount", "--mount-proc"]
    return ["unshare", "--user", f"--map-user={os.getuid()}", f"--map-group={os.getgid()}", "--pid", "--fork",
            "--mount", "--mount-proc"]


def as_mode(mode: str) -> list[str]:
    """The prefix that runs a command as `mode`: as root, the user is `nobody`, with no capability; in a
    container, root under container-sim's filter."""
    if mode == "user" and os.geteuid() == 0:
        return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    if mode in CONTAINERS:
        return ["python3", str(CONTAINER_SIM), *(["--no-landlock"] if mode.endswith("no-landlock") else []), "--"]
    return []


def confinable() -> bool:
    """Whether commands can run in a PID namespace of their own here (and as `nobody`, when root)."""
    if shutil.which("unshare") is None or (os.geteuid() == 0 and shutil.which("setpriv") is None):
        return False
    return subprocess.run([*own_pid_namespace(), "true"], capture_output=True).returncode == 0


def owned_folder(mode: str) -> Path:
    """A folder of the user's own, where its uid reaches it (in the temporary folder, not the test's)."""
    folder = Path(tempfile.mkdtemp(prefix="attngrade-test-grader-"))
    folder.chmod(0o755)
    hand_over(folder, mode)
    return folder


def hand_over(folder: Path, mode: str) -> None:
    """`folder` and everything in it become the user's (as root, for `nobody`)."""
    if as_mode(mode):
        for path in [folder, *folder.rglob("*")]:
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)


def run_confined(work: Path, mode: str, command: list[str], env: dict[str, str], namespace: list[str] | None = None,
                 **spec) -> dict:
    """Run `command` as `mode` in a PID namespace of its own (tests/data/sandbox/ns_init.py); its report:
    {"returncode", "killed", "left": the processes that outlived it}. Its output goes to work/stdout
    and work/stderr; `spec` adds to ns_init's (kill_when, kill_after, grace, timeout). `namespace`:
    the unshare command that makes the namespace, if not `own_pid_namespace()`'s."""
    spec = {"command": [*as_mode(mode), *command], "cwd": str(ROOT), "stdout": str(work / "stdout"),
            "stderr": str(work / "stderr"), "timeout": 400, "grace": 3,
            "env": {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "PYTHONPATH": str(ROOT),
                    **env},
            # A Python installed where only root may enter (pyenv under /root) is made reachable to the
            # user, in the namespace's own mounts only.
            "reach": [sys.base_prefix, sys.prefix, str(ROOT)] if as_mode(mode) else [], **spec}
    # (in a container the jobs' uids need it, as on an image whose Python is under /usr)
    (work / "spec.json").write_text(json.dumps(spec))
    done = subprocess.run([*(namespace or own_pid_namespace()), sys.executable, str(NS_INIT), str(work / "spec.json")],
                          capture_output=True, text=True, timeout=spec["timeout"] + 60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
