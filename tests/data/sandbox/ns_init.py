"""The first process of a PID namespace of the test's own (`unshare --pid --fork --mount-proc`): it runs
a command in it, and reports which of the namespace's processes outlived that command.

    python ns_init.py SPEC.json

SPEC: {"command": [...], "env": {...}, "cwd": ..., "stdout": path, "stderr": path, "timeout": s,
"kill_when": a glob or null, "kill_after": s, "grace": s, "reach": [path, ...]}. `reach` (as
root, in the namespace's own mounts): paths an ordinary user must reach to run the command, such
as a Python installed under /root, whose folders above them only root may enter: each such folder
is covered, in this mount namespace only, by one anyone may enter that holds just the path's
branch. With `kill_when`, the command is
killed (SIGKILL) `kill_after` seconds after a path matching the glob appears: a grader killed
while a job runs. Then, for up to `grace` seconds, processes are left to end; what still runs
(zombies are reaped here: this process adopts every orphan of the namespace) is printed as JSON
{"returncode": ..., "killed": ..., "left": [[pid, command line], ...]}. When this process ends,
the kernel ends every other process of the namespace: a failing test leaks nothing."""

import glob
import json
import os
import signal
import subprocess
import sys
import time


def running() -> list[list]:
    """Processes of the namespace other than this one that are not zombies (those are reaped)."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                state = stat.read().rsplit(b")", 1)[1].split()[0]
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read().replace(b"\0", b" ").decode("utf-8", "replace")[:300]
        except OSError:
            continue
        if state not in (b"Z", b"X"):
            found.append([int(entry), command])
    return found


def reach(path: str) -> None:
    """Let every uid reach `path`: the first folder above it that others may not enter is covered by a
    tmpfs they may, holding only the branch that leads to `path` (bound from the original)."""
    parts = os.path.abspath(path).strip("/").split("/")
    for depth in range(1, len(parts)):
        above = "/" + "/".join(parts[:depth])
        if os.stat(above).st_mode & 0o001:
            continue
        branch = os.path.join(above, parts[depth])
        stage = f"/tmp/.ns-init-stage-{os.getpid()}-{depth}"
        os.mkdir(stage)
        subprocess.run(["mount", "--rbind", branch, stage], check=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", above], check=True)
        os.mkdir(branch)
        subprocess.run(["mount", "--move", stage, branch], check=True)
        os.rmdir(stage)
        return


def main(spec: dict) -> dict:
    for path in spec.get("reach") or []:
        reach(path)
    with open(spec["stdout"], "wb") as out, open(spec["stderr"], "wb") as err:
        proc = subprocess.Popen(spec["command"], env=spec["env"], cwd=spec.get("cwd"), stdout=out, stderr=err)
    killed = False
    deadline = time.monotonic() + spec.get("timeout", 600)
    if spec.get("kill_when"):
        while not glob.glob(spec["kill_when"]) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(spec.get("kill_after", 0))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed = True
    try:
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    left = running()
    until = time.monotonic() + spec.get("grace", 10)
    while left and time.monotonic() < until:
        time.sleep(0.1)
        left = running()
    return {"returncode": code, "killed": killed, "left": left}


if __name__ == "__main__":
    with open(sys.argv[1]) as handle:
        print(json.dumps(main(json.load(handle))))
