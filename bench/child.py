"""Running and measuring one child process: wall, CPU, memory and the rest of the machine's load.

Every figure of the benchmark is of a whole process (`grade ...` started fresh), never of a
function called in the bench's own process.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from options import ROOT, Options
from procmem import TreeSampler, cpu_busy

# Where children start: `python -c` and `python -m` put their folder first on the import path, and the
# repository's root would put its attngrade/ before the one installed in --venv.
NEUTRAL = Path(tempfile.gettempdir())


def log(msg: str = "") -> None:
    print(msg, flush=True)


def fmt_s(x: float) -> str:
    return f"{x:.2f} s" if x < 100 else f"{x:.0f} s"


def verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def _wait(proc: subprocess.Popen, deadline: float | None) -> tuple[int, Any]:
    """(exit status, rusage) of `proc` from wait4, killing it at `deadline` (perf_counter)."""
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            return status, usage
        if deadline and time.perf_counter() > deadline:
            proc.kill()
            _, status, usage = os.wait4(proc.pid, 0)
            return status, usage
        time.sleep(0.005)


def run(cmd: list[str], *, cwd: Path = NEUTRAL, stdout: Path | None = None, env: dict | None = None,
        sample: bool = False, timeout: float | None = None) -> dict[str, Any]:
    """Run `cmd`; return its wall time, CPU time, max RSS and the CPU other processes used meanwhile.

    CPU time is the RUSAGE_CHILDREN difference around the child, so it includes every
    descendant the child waited for (its workers). Max RSS comes from wait4 on the child.
    With `sample`, a TreeSampler follows the memory of the whole tree as it runs.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy0, total0 = cpu_busy()
    load = os.getloadavg()[0]
    out = open(stdout, "wb") if stdout else subprocess.DEVNULL
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
    finally:
        if stdout:
            out.close()
    sampler = TreeSampler(proc.pid) if sample else None
    if sampler:
        sampler.start()
    status, usage = _wait(proc, start + timeout if timeout else None)
    wall = time.perf_counter() - start
    if sampler:
        sampler.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy1, total1 = cpu_busy()
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    machine_busy = (busy1 - busy0) / os.sysconf("SC_CLK_TCK") if total1 > total0 else 0.0
    result = {"cmd": cmd, "exit": os.waitstatus_to_exitcode(status), "wall": wall, "cpu": user + system,
              "user": user, "sys": system, "maxrss_mb": usage.ru_maxrss / 1024, "load_before": load,
              "other_cpu": max(0.0, machine_busy - user - system)}
    if sampler:
        result.update(sampler.figures())
    return result


def quiet_wait(max_wait: float, threshold: float = 0.3) -> float:
    """Wait (up to max_wait s) until other processes keep less than `threshold` cores busy."""
    end = time.monotonic() + max_wait
    while True:
        b0, _ = cpu_busy()
        time.sleep(1.0)
        b1, _ = cpu_busy()
        busy = (b1 - b0) / os.sysconf("SC_CLK_TCK")
        if busy < threshold or time.monotonic() >= end:
            return busy


def grade_run(opts: Options, class_dir: Path, out: Path, flags: list[str], name: str,
              sample: bool = False) -> dict[str, Any]:
    """`grade run class_dir -o out --solutions ... *flags`, timed, into a fresh OUT after the quiet wait;
    its output goes to WORK/grade-run-<name>.log."""
    if out.exists():
        shutil.rmtree(out)
    if opts.quiet_wait:
        quiet_wait(opts.quiet_wait)
    return run([str(opts.grade), "run", str(class_dir), "-o", str(out), "--solutions", str(opts.solutions), *flags],
               stdout=opts.work / f"grade-run-{name}.log", sample=sample)


def speed_probe(python: Path) -> float | None:
    """CPU seconds of a fixed pure-Python loop: higher means a contended machine (shared cores)."""
    code = "import time; t = time.process_time(); sum(i * i for i in range(3_000_000)); print(time.process_time() - t)"
    try:
        return float(subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=60).stdout)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def supports_workers(grade: Path) -> bool:
    try:
        text = subprocess.run([str(grade), "run", "--help"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "--workers" in text


def git_state() -> dict[str, Any]:
    """Read-only: the commit and whether the tracked files have local changes."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                    capture_output=True, text=True, timeout=10).stdout.strip())
        return {"commit": head or None, "local_changes": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "local_changes": None}


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def compile_package(python: Path) -> None:
    """Write attngrade's bytecode, as installing a wheel does: where PYTHONDONTWRITEBYTECODE is set,
    every run would otherwise compile attngrade again, which no installation pays."""
    where = subprocess.run([str(python), "-c", "import importlib.util as u; "
                            "print(*u.find_spec('attngrade').submodule_search_locations, sep='\\n')"],
                           capture_output=True, text=True, check=True).stdout.split()
    subprocess.run([str(python), "-m", "compileall", "-q", *where], stdout=subprocess.DEVNULL)
