#!/usr/bin/env python3
"""Memory and CPU of a process tree, read from Linux's /proc.

    python3 bench/procmem.py [--interval S] COMMAND...

As a command: runs COMMAND, samples its whole process tree every --interval seconds
(default 0.1) and prints the exit status, the wall time, the tree's peak PSS and RSS (and
when the PSS peak came) and the largest high-water mark (VmHWM) of any one process in it.
Run it twice into one OUT to measure a rerun (the second run reads what the first left).

As a module: `TreeSampler` is the sampler `bench/run.py` runs beside every timed child,
and `cpu_busy` the machine's busy time, from which the load of other processes is told.

PSS splits a page shared by several processes (a forked worker's pages shared with its
parent) between them, so the tree's PSS is what the tree costs the machine. VmHWM counts
from a process's exec: unlike wait4's max RSS, it does not start at the size of the parent
that forked it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

PROC = Path("/proc")


def cpu_busy() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine so far, from /proc/stat."""
    try:
        fields = (PROC / "stat").read_text().split("\n", 1)[0].split()[1:]
        values = [float(v) for v in fields]
        idle = values[3] + (values[4] if len(values) > 4 else 0.0)
        return sum(values) - idle, sum(values)
    except (OSError, ValueError, IndexError):
        return 0.0, 0.0


def _children_files(pid: int) -> list[int] | None:
    """The children of `pid` from /proc/PID/task/*/children; None where the kernel has no such file."""
    found: list[int] = []
    try:
        tasks = os.listdir(PROC / str(pid) / "task")
    except OSError:
        return []  # gone
    for task in tasks:
        try:
            found += [int(c) for c in (PROC / str(pid) / "task" / task / "children").read_text().split()]
        except FileNotFoundError:
            if not (PROC / str(pid) / "task" / task).exists():
                continue  # the thread ended
            return None  # no children file in this kernel
        except (OSError, ValueError):
            continue
    return found


def _parents() -> dict[int, list[int]]:
    """Every process's children, from the parent field of each /proc/PID/stat."""
    parents: dict[int, list[int]] = {}
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        parents.setdefault(ppid, []).append(int(entry.name))
    return parents


_HAS_CHILDREN_FILES: bool | None = None


def tree(pid: int) -> list[int]:
    """`pid` and all its descendants (processes that end meanwhile are simply left out)."""
    global _HAS_CHILDREN_FILES
    if _HAS_CHILDREN_FILES is not False:
        found, todo = [pid], [pid]
        while todo:
            children = _children_files(todo.pop())
            if children is None:
                _HAS_CHILDREN_FILES = False
                break
            found += children
            todo += children
        else:
            _HAS_CHILDREN_FILES = True
            return found
    parents = _parents()
    found, todo = [pid], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def _status_kb(pid: int, key: str) -> int:
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def memory_kb(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in kB; PSS falls back to RSS where smaps_rollup is missing."""
    rss = pss = 0
    try:
        for line in (PROC / str(pid) / "smaps_rollup").read_text().splitlines():
            if line.startswith("Rss:"):
                rss = int(line.split()[1])
            elif line.startswith("Pss:"):
                pss = int(line.split()[1])
        return rss, pss
    except (OSError, ValueError, IndexError):
        rss = _status_kb(pid, "VmRSS:")
        return rss, rss


def high_water_kb(pid: int) -> int:
    """The largest RSS one process has had since its exec (VmHWM), in kB; 0 if it is gone."""
    return _status_kb(pid, "VmHWM:")


class TreeSampler(threading.Thread):
    """Samples the memory of a process and its descendants every `interval` seconds, until stopped."""

    def __init__(self, pid: int, interval: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.started = time.monotonic()
        self.peak_rss_kb = self.peak_pss_kb = self.peak_process_kb = self.max_procs = 0
        self.peak_pss_at = 0.0
        self._halt = threading.Event()

    def sample(self) -> None:
        pids = tree(self.pid)
        rss = pss = 0
        for pid in pids:
            r, p = memory_kb(pid)
            rss, pss = rss + r, pss + p
            self.peak_process_kb = max(self.peak_process_kb, high_water_kb(pid))
        if pss > self.peak_pss_kb:
            self.peak_pss_kb, self.peak_pss_at = pss, time.monotonic() - self.started
        self.peak_rss_kb = max(self.peak_rss_kb, rss)
        self.max_procs = max(self.max_procs, len(pids))

    def run(self) -> None:
        while not self._halt.is_set():
            self.sample()
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)

    def figures(self) -> dict[str, float]:
        """The peaks in MB, as bench-results.json records them."""
        return {"tree_peak_rss_mb": self.peak_rss_kb / 1024, "tree_peak_pss_mb": self.peak_pss_kb / 1024,
                "tree_max_procs": self.max_procs, "largest_process_mb": self.peak_process_kb / 1024,
                "tree_peak_pss_at_s": self.peak_pss_at}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between samples (default 0.1)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run")
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("give a command to run")
    start = time.monotonic()
    proc = subprocess.Popen(args.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sampler = TreeSampler(proc.pid, args.interval)
    sampler.start()
    code = proc.wait()
    sampler.stop()
    f = sampler.figures()
    print(f"exit {code}, wall {time.monotonic() - start:.1f} s, tree PSS peak {f['tree_peak_pss_mb']:.0f} MB "
          f"at {f['tree_peak_pss_at_s']:.1f} s, tree RSS peak {f['tree_peak_rss_mb']:.0f} MB, "
          f"largest VmHWM {f['largest_process_mb']:.0f} MB, up to {f['tree_max_procs']} processes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
