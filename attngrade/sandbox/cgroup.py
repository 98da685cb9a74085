"""A cgroup v2 of the job's own, where the grader may make one: the kernel then holds the memory and the
processes of all the job's processes together (memory.max, memory.swap.max, pids.max), and
cgroup.kill ends every one of them at once.

The grader makes nothing above its own cgroup and enables no controller itself: a job's cgroup is
made inside the grader's own cgroup when that one already hands the memory and pids controllers to
its children (cgroup.subtree_control) and this process may write there. Anywhere else (cgroup v1,
controllers not delegated, no write access) there is none, the report says why, and the
supervisor adds the job's memory up itself (`watch.job_memory`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

CONTROLLERS = {"memory", "pids"}
SLACK = 256 * 1024**2  # bytes past the job's memory limit: its tmpfs files and what the kernel charges it


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def parent() -> tuple[Path | None, str]:
    """The cgroup v2 folder that job cgroups go in, or None and why there is none."""
    mount = next((line.split(" - ")[0].split()[4] for line in _read(Path("/proc/self/mountinfo")).splitlines()
                  if " - cgroup2 " in line), None)
    if mount is None:
        return None, "no cgroup v2 file system is mounted"
    own = next((line[3:] for line in _read(Path("/proc/self/cgroup")).splitlines() if line.startswith("0::")), None)
    if own is None:
        return None, "the grader is in no cgroup v2"
    folder = Path(mount) / own.strip().lstrip("/")
    handed = set(_read(folder / "cgroup.subtree_control").split())
    if not CONTROLLERS <= handed:
        available = " ".join(sorted(set(_read(folder / "cgroup.controllers").split()))) or "none"
        return None, (f"the grader's cgroup hands no {' and '.join(sorted(CONTROLLERS - handed))} controller to its "
                      f"children (its controllers: {available})")
    if not os.access(folder, os.W_OK):
        return None, "the grader may not make cgroups in its own"
    return folder, ""


class JobGroup:
    """One job's cgroup: made with its limits, joined by the job's first process, killed and removed at the end."""

    def __init__(self, under: Path, name: str, memory: int, processes: int):
        self.path = under / name
        self.path.mkdir()
        try:
            (self.path / "memory.max").write_text(str(memory + SLACK))
            if (self.path / "memory.swap.max").exists():
                (self.path / "memory.swap.max").write_text("0")
            (self.path / "memory.oom.group").write_text("1")  # one process over it ends them all
            (self.path / "pids.max").write_text(str(processes + 1))  # and the job's first process
        except OSError:
            self.remove()
            raise

    def join(self) -> None:
        """Move this process (the job's first, before it forks) into the job's cgroup."""
        (self.path / "cgroup.procs").write_text("0")

    def out_of_memory(self) -> bool:
        events = dict(line.split() for line in _read(self.path / "memory.events").splitlines() if " " in line)
        return int(events.get("oom_kill", 0)) > 0

    def kill(self) -> None:
        try:
            (self.path / "cgroup.kill").write_text("1")
        except OSError:
            pass

    def remove(self) -> None:
        """Remove the cgroup once no process is left in it (bounded: the kernel's teardown is quick)."""
        deadline = time.monotonic() + 2.0
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.005)
