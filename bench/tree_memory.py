#!/usr/bin/env python3
"""Run a command and report the peak PSS of its whole process tree (sampled every 0.3 s).

    python3 bench/tree_memory.py .venv/bin/grade run CLASS -o OUT --solutions solutions --workers 2

Prints when the peak came, the wall time, the tree's peak PSS and the largest VmHWM of any
process in it. Run it twice into one OUT to measure a rerun (the second run reads what the
first left there). Linux only (/proc).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time


def _tree(pid: int) -> list[int]:
    found = [pid]
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                for child in handle.read().split():
                    found += _tree(int(child))
    except OSError:
        pass  # gone while we looked
    return found


def _kb(pid: int, file: str, key: str) -> int:
    try:
        with open(f"/proc/{pid}/{file}") as handle:
            for line in handle:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main(command: list[str]) -> int:
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start, peak, peak_at, hwm = time.monotonic(), 0, 0.0, 0
    while proc.poll() is None:
        pids = _tree(proc.pid)
        pss = sum(_kb(pid, "smaps_rollup", "Pss:") for pid in pids)
        if pss > peak:
            peak, peak_at = pss, time.monotonic() - start
        hwm = max([hwm, *(_kb(pid, "status", "VmHWM:") for pid in pids)])
        time.sleep(0.3)
    print(f"exit {proc.returncode}, wall {time.monotonic() - start:.0f} s, tree PSS peak {peak / 1024:.0f} MB "
          f"at {peak_at:.0f} s, largest VmHWM {hwm / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    raise SystemExit(main(sys.argv[1:]))
