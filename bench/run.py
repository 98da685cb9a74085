#!/usr/bin/env python3
"""attngrade benchmark: one command for the whole of issue 7.

    python3 bench/run.py                      # N=1000, seed 7, with Otter
    python3 bench/run.py --n 200 --skip-otter # quicker

1. Generates a synthetic class (bench/generate.py), grades it with `grade run` in a
   subprocess, and reports submissions/s, wall and CPU time (children included),
   peak memory, distinct answers per part and the memo hit rate (`grade run --stats`).
2. Cold start: the median wall time of `grade check` on one submission, and the
   `-X importtime` breakdown of the imports on that path.
3. Otter-Grader side by side (unless --skip-otter): the CS224N A5 1e.ii check as an
   Otter assignment (bench/otter/), 20 student notebooks graded by `otter run`
   (Otter's non-containerized mode, no Docker) against the same 20 answers as YAML
   graded by `grade run`.

Figures are printed and written as JSON to WORK/bench-results.json. Timings are of
this machine as it is: the load average and the CPU time other processes used during
each timed step are recorded next to the figures, because wall times mean little on
a busy machine (CPU times are steadier).

Runs with any Python 3.10+; attngrade itself runs from --venv (default: the repo's .venv).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402  (bench/generate.py)

# Issue 15's targets (2 cores): a realistic class of 1,000 in 5 s, the worst case (every answer
# distinct) in 20 s, a distinct 1e.ii answer (attention_qkv) in 5 ms and no check kind above 20 ms.
TARGETS = {"wall_1000": 5.0, "worst_1000": 20.0, "rss_mb": 1024.0, "cold_start": 1.0, "cold_ratio": 1.3,
           "otter_ratio": 50.0, "workers_speedup": 1.6, "qkv_ms": 5.0, "kind_ms": 20.0, "wall_100k": 600.0}


# -- measuring one child process ---------------------------------------------------------------
def _cpu_busy() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine so far, from /proc/stat."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
        values = [float(v) for v in fields]
        idle = values[3] + (values[4] if len(values) > 4 else 0.0)
        return sum(values) - idle, sum(values)
    except (OSError, ValueError, IndexError):
        return 0.0, 0.0


def _children(pid: int) -> list[int]:
    """All descendants of `pid` (Linux /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        parents.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _memory_kb(pid: int) -> tuple[int, int]:
    """(RSS, PSS) in kB of one process; PSS splits pages shared with forked workers."""
    rss = pss = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Rss:"):
                rss = int(line.split()[1])
            elif line.startswith("Pss:"):
                pss = int(line.split()[1])
    except (OSError, ValueError, IndexError):
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    rss = pss = int(line.split()[1])
        except (OSError, ValueError, IndexError):
            pass
    return rss, pss


def _high_water_kb(pid: int) -> int:
    """The largest RSS one process has had since its exec (VmHWM), in kB; 0 if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


class TreeSampler(threading.Thread):
    """Samples the memory of a process and its descendants every `interval` seconds.

    `peak_process` is the largest high-water mark of any one process of the tree. Unlike
    wait4's max RSS it starts at exec: a child of a bench that holds the manifest of
    100,000 submissions would otherwise report the bench's size (Linux keeps the high-water
    mark a forked child had before exec)."""

    def __init__(self, pid: int, interval: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_rss_sum = self.peak_pss_sum = self.peak_process = 0
        self.max_procs = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            pids = [self.pid, *_children(self.pid)]
            rss = pss = 0
            for p in pids:
                r, s = _memory_kb(p)
                rss, pss = rss + r, pss + s
                self.peak_process = max(self.peak_process, _high_water_kb(p))
            self.peak_rss_sum = max(self.peak_rss_sum, rss)
            self.peak_pss_sum = max(self.peak_pss_sum, pss)
            self.max_procs = max(self.max_procs, len(pids))
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=2)


def measure(cmd: list[str], *, cwd: Path = ROOT, stdout: Path | None = None, env: dict | None = None,
            sample: bool = False, timeout: float | None = None) -> dict[str, Any]:
    """Run `cmd`; return wall, CPU (children included), max RSS and the machine's other load.

    CPU time is the RUSAGE_CHILDREN delta around the child (its workers included, as
    they are waited for); max RSS comes from wait4() on the child: the largest of the
    child and its waited-for descendants.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy0, total0 = _cpu_busy()
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
    deadline = start + timeout if timeout else None
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if deadline and time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.005)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if sampler:
        sampler.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy1, total1 = _cpu_busy()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    machine_busy = (busy1 - busy0) / ticks if total1 > total0 else 0.0
    result = {
        "cmd": cmd, "exit": proc.returncode, "wall": wall, "cpu": cpu,
        "user": after.ru_utime - before.ru_utime, "sys": after.ru_stime - before.ru_stime,
        "maxrss_mb": usage.ru_maxrss / 1024,  # Linux: kB
        "load_before": load,
        # CPU seconds the rest of the machine used meanwhile (everything but this child)
        "other_cpu": max(0.0, machine_busy - cpu),
    }
    if sampler:
        result.update({"tree_peak_rss_mb": sampler.peak_rss_sum / 1024, "tree_peak_pss_mb": sampler.peak_pss_sum / 1024,
                       "tree_max_procs": sampler.max_procs, "largest_process_mb": sampler.peak_process / 1024})
    return result


# -- helpers -----------------------------------------------------------------------------------
def log(msg: str = "") -> None:
    print(msg, flush=True)


def supports_workers(grade: Path) -> bool:
    try:
        text = subprocess.run([str(grade), "run", "--help"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "--workers" in text


def git_state() -> dict[str, Any]:
    """Read-only: the commit and whether the tree has local changes."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                    capture_output=True, text=True, timeout=10).stdout.strip())
        return {"commit": head or None, "local_changes": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "local_changes": None}


def fmt_s(x: float) -> str:
    return f"{x:.2f} s" if x < 100 else f"{x:.0f} s"


def verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def quiet_wait(max_wait: float, threshold: float = 0.3) -> float:
    """Wait (up to max_wait s) until the machine's other load is below `threshold` cores."""
    end = time.monotonic() + max_wait
    while True:
        b0, t0 = _cpu_busy()
        time.sleep(1.0)
        b1, t1 = _cpu_busy()
        ticks = os.sysconf("SC_CLK_TCK")
        busy = (b1 - b0) / ticks
        if busy < threshold or time.monotonic() >= end:
            return busy


# -- 1. the class --------------------------------------------------------------------------------
def bench_class(args: argparse.Namespace, grade: Path, python: Path, workers_flag: list[str]) -> dict[str, Any]:
    work = args.work
    class_dir = work / "class"
    kind = ", worst case (every answer distinct)" if args.worst_case else ""
    log(f"== 1. synthetic class: N={args.n}, seed={args.seed}{kind}")
    t = time.perf_counter()
    # In a process of its own: a bench process that built 100,000 submissions in memory would
    # pass its size on to every `grade` it starts (Linux keeps the largest RSS a process had
    # before exec in its max RSS: 1.46 GB instead of 0.73 GB). Disguising answers (--distinct)
    # reads the bank, hence attngrade's own Python.
    subprocess.run([str(python), str(HERE / "generate.py"), "--n", str(args.n), "--seed", str(args.seed),
                    "--out", str(class_dir), "--folder-share", str(args.folder_share),
                    *(["--distinct"] if args.worst_case else []),
                    *(["--distinct-files"] if args.distinct_files else [])],
                   check=True, stdout=subprocess.DEVNULL)
    manifest = json.loads((class_dir.parent / "manifest.json").read_text(encoding="utf-8"))
    gen_time = time.perf_counter() - t
    subs = manifest["submissions"]
    by_hw: dict[str, int] = {}
    for s in subs:
        by_hw[s["homework"] or "(broken YAML)"] = by_hw.get(s["homework"] or "(broken YAML)", 0) + 1
    labels: dict[str, int] = {}
    for s in subs:
        for lab in s["labels"].values():
            labels[lab] = labels.get(lab, 0) + 1
    log(f"   generated in {gen_time:.2f} s: {len(subs)} submissions "
        f"({sum(s['folder'] for s in subs)} folders with real prediction files, "
        f"{sum(bool(s.get('broken')) for s in subs)} broken YAML)")
    log("   per homework: " + ", ".join(f"{h} {c}" for h, c in sorted(by_hw.items())))
    log("   parts by pool label: " + ", ".join(f"{k} {v}" for k, v in sorted(labels.items())))

    distinct = generate.distinct_answers(manifest)
    runs = []
    for r in range(args.repeat):
        out = work / "out"
        if out.exists():
            shutil.rmtree(out)
        if args.quiet_wait:
            other = quiet_wait(args.quiet_wait)
            log(f"   other load before run {r + 1}: {other:.2f} cores busy")
        cmd = [str(grade), "run", str(class_dir), "-o", str(out), "--solutions", str(args.solutions), *workers_flag,
               "--stats", str(out / "stats.json")]
        m = measure(cmd, stdout=work / "grade-run.log", sample=True)
        runs.append(m)
        log(f"   run {r + 1}: exit {m['exit']}, wall {fmt_s(m['wall'])}, CPU {fmt_s(m['cpu'])} "
            f"(user {m['user']:.2f} + sys {m['sys']:.2f}), max RSS {m['maxrss_mb']:.0f} MB, largest process "
            f"{m.get('largest_process_mb', 0):.0f} MB (VmHWM), "
            f"tree peak RSS {m.get('tree_peak_rss_mb', 0):.0f} MB / PSS {m.get('tree_peak_pss_mb', 0):.0f} MB "
            f"({m.get('tree_max_procs', 1)} processes), load avg before {m['load_before']:.2f}, "
            f"other processes used {m['other_cpu']:.1f} CPU s meanwhile")
        if m["exit"] not in (0, 1):
            tail = (work / "grade-run.log").read_text(errors="replace")[-2000:]
            raise SystemExit(f"grade run failed (exit {m['exit']}); see {work / 'grade-run.log'}:\n{tail}")
    best = min(runs, key=lambda m: m["wall"])
    results = json.loads((work / "out" / "results.json").read_text(encoding="utf-8"))
    errors = sum(1 for r in results if r.get("error"))
    statuses: dict[str, int] = {}
    for r in results:
        for p in r.get("parts", []):
            statuses[p["status"]] = statuses.get(p["status"], 0) + 1
    log(f"   results.json: {len(results)} rows, {errors} not graded (the broken YAML files); part statuses: "
        + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
    if len(results) != args.n:
        log(f"   WARNING: expected {args.n} rows in results.json, found {len(results)}")

    # memo statistics, in-process, in a process of its own (after the timed runs)
    memo: dict[str, Any] | None = None
    stats_file = work / "out" / "stats.json"
    if stats_file.is_file():  # the plan and run stages' own statistics, as grade run returns them
        memo = {"method": f"read from {stats_file} (written by grade run --stats)",
                **json.loads(stats_file.read_text(encoding="utf-8"))}
    else:
        log("   memo statistics unavailable: grade run wrote no stats.json")
    if memo and memo.get("read_hit_rate") is not None:
        t = memo
        log(f"   memo ({memo['method']}):")
        log(f"     reads  {t['reads']:6d} lookups, {t['read_hits']:6d} hits: hit rate {memo['read_hit_rate']:.1%}")
        log(f"     checks {t['checks']:6d} lookups, {t['check_hits']:6d} hits: hit rate {memo['check_hit_rate']:.1%}")
        if memo.get("machine_check_hit_rate") is not None:
            log(f"       machine checks {t['machine_checks']:6d} lookups, {t['machine_distinct']:5d} distinct: "
                f"hit rate {memo['machine_check_hit_rate']:.1%}")
        if memo.get("manual_check_hit_rate") is not None:
            log(f"       manual (text)  {t['manual_checks']:6d} lookups, {t['manual_distinct']:5d} distinct: "
                f"hit rate {memo['manual_check_hit_rate']:.1%}")

    rows = []
    for (hw, part), d in sorted(distinct.items()):
        rows.append({"homework": hw, "part": part, **d})
    machine = [r for r in rows if r["distinct_math"]]
    text = [r for r in rows if not r["distinct_math"]]
    log("   distinct answers per part (raw answers; in brackets: without free-text fields):")
    for hw in sorted({r["homework"] for r in rows}):
        cells = [f"{r['part']} {r['distinct']}" + (f" [{r['distinct_math']}]" if r["distinct_math"] and
                                                      r["distinct_math"] != r["distinct"] else "")
                 for r in rows if r["homework"] == hw]
        log(f"     {hw}: " + ", ".join(cells))
    summary = {}
    if machine:
        vals = sorted(r["distinct_math"] for r in machine)
        summary["machine_checked"] = {"parts": len(vals), "min": vals[0], "median": statistics.median(vals),
                                      "max": vals[-1]}
        log(f"   machine-checked parts: {len(vals)}, distinct answers min {vals[0]}, median "
            f"{statistics.median(vals):g}, max {vals[-1]} (free-text fields left out)")
    if text:
        vals = sorted(r["distinct"] for r in text)
        summary["free_text"] = {"parts": len(vals), "min": vals[0], "median": statistics.median(vals), "max": vals[-1]}
        log(f"   free-text parts: {len(vals)}, distinct answers min {vals[0]}, median {statistics.median(vals):g}, "
            f"max {vals[-1]} (reworded per student, as in a real class)")
    return {"n": args.n, "seed": args.seed, "generate_seconds": gen_time, "by_homework": by_hw, "labels": labels,
            "runs": runs, "best": best, "subs_per_s": args.n / best["wall"], "results_rows": len(results),
            "not_graded": errors, "statuses": statuses, "memo": memo, "distinct": rows,
            "distinct_summary": summary}


EXECUTORS = (("workers 1", ["--workers", "1"]), ("workers 2", ["--workers", "2"]),
             ("dask", ["--executor", "dask", "--workers", "2"]))


def executor_runs(args: argparse.Namespace, grade: Path, class_dir: Path, prefix: str = "") -> dict[str, Any]:
    """Grade `class_dir` with each of EXECUTORS; each results.json is compared byte for byte with
    the --workers 1 one's. Outputs go to WORK/<prefix>out-<executor>."""
    rows: dict[str, Any] = {}
    reference: bytes | None = None
    for label, flags in EXECUTORS:
        name = label.replace(" ", "")
        out = args.work / f"{prefix}out-{name}"
        stats = args.work / f"stats-{prefix}{name}.json"  # beside OUT: its own stages' wall and CPU
        m = graded(args, grade, class_dir, out, [*flags, "--stats", str(stats)], f"{prefix}{name}", sample=True)
        data = (out / "results.json").read_bytes() if (out / "results.json").is_file() else b""
        reference = data if reference is None else reference
        same = bool(data) and data == reference
        stages = json.loads(stats.read_text(encoding="utf-8")).get("timings", {}) if stats.is_file() else {}
        rows[label] = {"wall": m["wall"], "cpu": m["cpu"], "exit": m["exit"], "other_cpu": m["other_cpu"],
                       "tree_peak_pss_mb": m.get("tree_peak_pss_mb"), "same_results": same, "stages": stages}
        log(f"   {label}: exit {m['exit']}, wall {fmt_s(m['wall'])}, CPU {fmt_s(m['cpu'])}, results.json "
            f"{'identical to --workers 1' if same else 'DIFFERS from --workers 1'}, "
            f"other processes used {m['other_cpu']:.1f} CPU s meanwhile")
    return rows


def graded(args: argparse.Namespace, grade: Path, class_dir: Path, out: Path, flags: list[str], name: str,
           sample: bool = False) -> dict[str, Any]:
    """`grade run class_dir -o out --solutions ... *flags` measured, into a fresh OUT after a quiet
    wait; its output to WORK/grade-run-<name>.log."""
    if out.exists():
        shutil.rmtree(out)
    if args.quiet_wait:
        quiet_wait(args.quiet_wait)
    return measure([str(grade), "run", str(class_dir), "-o", str(out), "--solutions", str(args.solutions), *flags],
                   stdout=args.work / f"grade-run-{name}.log", sample=sample)


def bench_executors(args: argparse.Namespace, grade: Path) -> dict[str, Any]:
    """The class with --workers 1, --workers 2 and --executor dask (a LocalCluster of 2 workers).

    Each run's results.json must be byte for byte the --workers 1 run's; the figure that
    counts is the speed-up of 2 workers over 1."""
    log("== 1b. executors: --workers 1, --workers 2, --executor dask (LocalCluster, 2 workers)")
    rows = executor_runs(args, grade, args.work / "class")
    pairs = ratio_pairs(args, grade, args.work / "class", rows)
    speedup = statistics.median(w1 for w1, _ in pairs) / statistics.median(w2 for _, w2 in pairs)
    each = sorted(w1 / w2 for w1, w2 in pairs)
    # Also the median of the pairs' own ratios: the two runs of a pair are seconds apart, so it is
    # the figure least moved by the machine's (or the disk's) speed drifting over the pairs.
    log(f"   --workers 2 over --workers 1: {speedup:.2f}x, the median walls of {len(pairs)} alternating pairs "
        f"(each pair {each[0]:.2f}x to {each[-1]:.2f}x, their median {statistics.median(each):.2f}x) "
        f"({verdict(speedup >= TARGETS['workers_speedup'])}, target >= {TARGETS['workers_speedup']:g}x)")
    bounds = speedup_bounds(rows["workers 1"])
    if bounds and "workers 2" in rows:
        # The two-worker run's own CPU (every process) spread perfectly over 2 cores, but for what
        # runs before any second process can exist (start-up, imports): no run of that code does better.
        bounds["cpu"] = rows["workers 1"]["wall"] / (
            bounds["serial_s"] + max(rows["workers 2"]["cpu"] - bounds["serial_s"], 0.0) / 2)
    if bounds:
        log(f"   what 2 workers could give at best, from the --workers 1 run's own stages (Amdahl, no overhead): "
            f"{bounds['plan_serial']:.2f}x with the plan in one process (as now; the checks and the students' "
            f"folders run beside it), {bounds['plan_split']:.2f}x were the plan split perfectly too; "
            f"{bounds['serial_s']:.2f} s of {rows['workers 1']['wall']:.2f} s is outside the plan, run and write "
            "stages (start-up and imports, assemble, the answer groups)")
        if "cpu" in bounds:
            log(f"   ... and from the --workers 2 run's own CPU ({rows['workers 2']['cpu']:.2f} s over every process, "
                f"{bounds['serial_s']:.2f} s of it taken as serial): {bounds['cpu']:.2f}x at best")
    return {"runs": rows, "pairs": pairs, "speedup_2_over_1": speedup, "pair_ratio_median": statistics.median(each),
            "bounds": bounds}


def ratio_pairs(args: argparse.Namespace, grade: Path, class_dir: Path,
                rows: dict[str, Any]) -> list[tuple[float, float]]:
    """The (--workers 1, --workers 2) walls of `--ratio-pairs` pairs of runs, one after the other,
    measured alike (the executor runs above sample memory as they go, which costs CPU; without
    pairs, their walls are taken).

    One pair is not a ratio on this kind of disk: making a file where thousands were just deleted
    (each run replaces the OUT of the one before) costs ext4 without a journal from 0.02 to 0.4 ms,
    varying from minute to minute, and one run pays it all in one process while the other shares it."""
    if args.ratio_pairs <= 0:
        return [(rows["workers 1"]["wall"], rows["workers 2"]["wall"])]
    pairs: list[tuple[float, float]] = []
    for _ in range(args.ratio_pairs):
        walls = []
        for flag in ("1", "2"):
            m = graded(args, grade, class_dir, args.work / f"out-workers{flag}", ["--workers", flag], f"workers{flag}")
            if m["exit"] not in (0, 1):  # 1: a submission of the class was not graded (its broken files)
                raise SystemExit(f"grade run --workers {flag} failed (exit {m['exit']}): see "
                                 f"{args.work / f'grade-run-workers{flag}.log'}")
            walls.append(m["wall"])
        pairs.append((walls[0], walls[1]))
        log(f"   pair {len(pairs)}: --workers 1 {fmt_s(walls[0])}, --workers 2 {fmt_s(walls[1])}: "
            f"{walls[0] / walls[1]:.2f}x")
    return pairs


def speedup_bounds(row: dict[str, Any]) -> dict[str, float] | None:
    """Amdahl's bound for 2 workers from a one-worker run's stages (`grade run --stats`): the run
    and write stages split in two, the plan kept in one process (the other core doing their work
    meanwhile: the run stage begins while the plan reads, and the folders are made then) or split
    too, nothing else (start-up, imports, assemble, answer groups) made faster."""
    stages = {name: t["wall_s"] for name, t in row.get("stages", {}).items()}
    if not {"plan", "run", "write"} <= stages.keys():
        return None
    wall = row["wall"]
    split = stages["run"] + stages["write"]
    serial = max(wall - split - stages["plan"], 0.0)
    return {"serial_s": serial, "plan_serial": wall / (serial + max(stages["plan"], (stages["plan"] + split) / 2)),
            "plan_split": wall / (serial + (stages["plan"] + split) / 2)}


def bench_code(args: argparse.Namespace, grade: Path, python: Path) -> dict[str, Any]:
    """The code-check class (bench/code_class.py) with each executor.

    Every submission hands in distinct files, so each costs two sandbox runs (2e and 2g.i)."""
    log(f"== 1e. code-check class: {args.code_n} submissions (2e and 2g.i run in the sandbox), "
        "--workers 1, --workers 2, --executor dask (LocalCluster, 2 workers)")
    if subprocess.run([str(python), "-c", "import torch"], capture_output=True).returncode != 0:
        log("   torch is not installed in the venv (pip install -e '.[torch]'): the code checks would not run; skipped")
        return {"skipped": "torch not installed"}
    class_dir = args.work / "code-class"
    made = subprocess.run([str(python), str(HERE / "code_class.py"), "--n", str(args.code_n),
                           "--write-class", str(class_dir)], cwd=ROOT, capture_output=True, text=True)
    if made.returncode != 0:
        log(f"   could not write the class: {made.stderr[-1500:]}")
        return {"error": made.stderr[-1500:]}
    rows = executor_runs(args, grade, class_dir, prefix="code-")
    for label, row in rows.items():
        row["per_submission_wall"] = row["wall"] / args.code_n
        log(f"   {label}: {row['per_submission_wall']:.2f} s a submission")
    speedup = rows["workers 1"]["wall"] / rows["workers 2"]["wall"]
    log(f"   --workers 2 over --workers 1 on code checks: {speedup:.2f}x")
    return {"n": args.code_n, "runs": rows, "speedup_2_over_1": speedup}


def bench_check_times(args: argparse.Namespace, python: Path) -> dict[str, Any]:
    """CPU milliseconds per distinct answer, by check kind, on the benchmark's class (bench/check_times.py)."""
    log("== 1c. check kinds: CPU per distinct answer (one worker, so every check runs in one process)")
    figures, out = args.work / "check-times.json", args.work / "out-check-times"
    if out.exists():
        shutil.rmtree(out)
    proc = subprocess.run([str(python), str(HERE / "check_times.py"), "--json", str(figures), "--", "run",
                           str(args.work / "class"), "-o", str(out), "--solutions", str(args.solutions)],
                          cwd=ROOT, capture_output=True, text=True)
    if not figures.is_file():
        log(f"   check_times.py failed (exit {proc.returncode}): {proc.stderr[-1500:]}")
        return {"error": proc.stderr[-1500:]}
    kinds = json.loads(figures.read_text(encoding="utf-8"))
    for name, row in kinds.items():
        log(f"   {name:16s} {row['calls']:6d} distinct answers, median {row['median_ms']:8.3f} ms, "
            f"p90 {row['p90_ms']:8.3f} ms")
    qkv = kinds.get("attention_qkv", {}).get("median_ms")
    slowest = max(kinds.items(), key=lambda kv: kv[1]["median_ms"]) if kinds else None
    if qkv is not None:
        log(f"   1e.ii (attention_qkv) median {qkv:.2f} ms: {verdict(qkv <= TARGETS['qkv_ms'])} "
            f"(target <= {TARGETS['qkv_ms']:g} ms)")
    if slowest is not None:
        log(f"   slowest kind at the median: {slowest[0]} {slowest[1]['median_ms']:.2f} ms: "
            f"{verdict(slowest[1]['median_ms'] <= TARGETS['kind_ms'])} (target <= {TARGETS['kind_ms']:g} ms)")
    return {"kinds": kinds, "qkv_median_ms": qkv, "slowest": slowest[0] if slowest else None}


def part_outcomes(results: Path) -> dict[tuple[str, str], tuple[str, float]]:
    """(student, "homework part") -> (status, score) of a results.json; a submission not graded
    is one (student, "") -> ("error", 0) entry."""
    outcomes: dict[tuple[str, str], tuple[str, float]] = {}
    for row in json.loads(results.read_text(encoding="utf-8")):
        if row.get("error"):
            outcomes[(row["student"], "")] = ("error", 0.0)
        for part in row.get("parts", []):
            outcomes[(row["student"], f"{row['homework']} {part['id']}")] = (part["status"],
                                                                             round(float(part["score"]), 6))
    return outcomes


def bench_baseline(args: argparse.Namespace, python: Path, workers_flag: list[str]) -> dict[str, Any]:
    """The class graded by another checkout (--baseline DIR), and the parts whose verdict differs.

    The other checkout runs with this venv's packages, its own code first on the path and its
    own solutions/. Differences are counted by part and by the change of status, so each kind
    can be matched with the change that made it on purpose."""
    log(f"== 1d. verdicts against {args.baseline}")
    out = args.work / "out-baseline"
    if out.exists():
        shutil.rmtree(out)
    launcher = "import sys; sys.path.insert(0, sys.argv.pop(1)); from attngrade.cli import main; sys.exit(main())"
    m = measure([str(python), "-c", launcher, str(args.baseline), "run", str(args.work / "class"), "-o", str(out),
                 "--solutions", str(args.baseline / "solutions"), *workers_flag],
                stdout=args.work / "grade-run-baseline.log")
    if not (out / "results.json").is_file():
        log(f"   the baseline wrote no results.json (exit {m['exit']}); see {args.work / 'grade-run-baseline.log'}")
        return {"error": f"exit {m['exit']}"}
    old, new = part_outcomes(out / "results.json"), part_outcomes(args.work / "out" / "results.json")
    kinds: Counter[str] = Counter()
    for key in old.keys() | new.keys():
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        change = (f"{before[0] if before else 'absent'} -> {after[0] if after else 'absent'}"
                  if not before or not after or before[0] != after[0] else "same status, other score")
        kinds[f"{key[1] or '(submission)'}: {change}"] += 1
    differences = sum(kinds.values())
    log(f"   baseline wall {fmt_s(m['wall'])}; {differences} of {len(new)} part verdicts differ "
        f"(target 0, except the changes made on purpose)")
    for kind, count in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])):
        log(f"     {count:6d}  {kind}")
    return {"baseline": str(args.baseline), "wall": m["wall"], "parts": len(new), "differences": differences,
            "by_kind": dict(kinds)}


def speed_probe(python: Path) -> float | None:
    """CPU seconds of a fixed pure-Python loop: higher means a contended machine (shared cores)."""
    code = "import time; t = time.process_time(); sum(i * i for i in range(3_000_000)); print(time.process_time() - t)"
    try:
        return float(subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=60).stdout)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


# -- 2. cold start -------------------------------------------------------------------------------
IMPORT_LINE = re.compile(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)")


def parse_importtime(text: str) -> list[dict[str, Any]]:
    rows = []
    for line in text.splitlines():
        m = IMPORT_LINE.match(line)
        if m:
            depth = (len(m.group(3)) - 1) // 2
            rows.append({"self_us": int(m.group(1)), "cumulative_us": int(m.group(2)), "depth": depth,
                         "module": m.group(4)})
    return rows


def attribute(rows: list[dict[str, Any]], k: int = 10) -> list[dict[str, Any]]:
    """Heaviest non-stdlib packages, each with the attngrade module that first imported it.

    -X importtime prints a module after its children, so a row's parent is the next row
    one level up.
    """
    stdlib = set(getattr(sys, "stdlib_module_names", ())) | {"site", "encodings"}
    parent: list[int | None] = [None] * len(rows)
    waiting: dict[int, list[int]] = {}  # depth -> rows waiting for their parent
    for i, r in enumerate(rows):
        for child in waiting.pop(r["depth"] + 1, []):
            parent[child] = i
        waiting.setdefault(r["depth"], []).append(i)
    found = []
    for i, r in enumerate(rows):
        top = r["module"].split(".")[0]
        if top in stdlib or top.startswith("_") or top == "attngrade" or "." in r["module"] \
                or r["cumulative_us"] < 1000:
            continue
        via, j = None, parent[i]
        while j is not None:
            if rows[j]["module"].startswith("attngrade"):
                via = rows[j]["module"]
                break
            j = parent[j]
        found.append({"package": r["module"], "cumulative_ms": r["cumulative_us"] / 1000, "via": via})
    found.sort(key=lambda f: -f["cumulative_ms"])
    return found[:k]


def top_imports(rows: list[dict[str, Any]], k: int = 12) -> list[dict[str, Any]]:
    """The heaviest imports on the path: depth-0 entries, and the heaviest packages anywhere."""
    top = sorted((r for r in rows if r["depth"] == 0), key=lambda r: -r["cumulative_us"])[:k]
    packages: dict[str, int] = {}
    for r in rows:
        if "." not in r["module"]:  # a top-level package, wherever it was first imported from
            packages[r["module"]] = max(packages.get(r["module"], 0), r["cumulative_us"])
    heavy = sorted(packages.items(), key=lambda kv: -kv[1])[:k]
    return [{"module": r["module"], "cumulative_ms": r["cumulative_us"] / 1000} for r in top] + \
        [{"package": name, "cumulative_ms": us / 1000} for name, us in heavy]


def bench_cold(args: argparse.Namespace, grade: Path, python: Path) -> dict[str, Any]:
    log(f"== 2. cold start: `grade check {args.check_file}` x {args.cold_runs}")
    probe = speed_probe(python)
    if probe is not None:
        log(f"   speed probe before: {probe:.3f} s CPU for a fixed loop (compare with the probe at the top)")
    # attngrade's bytecode as an installed wheel has it (pip compiles .pyc at install). Without
    # it, a machine with PYTHONDONTWRITEBYTECODE set (this one) compiles attngrade's modules on
    # every run, ~50 ms that no installation pays; sympy and numpy are compiled already.
    subprocess.run([str(python), "-c", "import attngrade, compileall, os; "
                    "compileall.compile_dir(os.path.dirname(attngrade.__file__), quiet=1)"], check=True)
    # Side by side with the floor (a bare `import sympy, numpy`), alternating, so that a busy
    # moment of this shared machine weighs on both.
    walls, floors = [], []
    for _ in range(args.cold_runs):
        m = measure([str(grade), "check", str(args.check_file)])
        if m["exit"] != 0:
            log(f"   grade check exited {m['exit']}")
        walls.append(m["wall"])
        floors.append(measure([str(python), "-c", "import sympy, numpy"])["wall"])
    med, floor = statistics.median(walls), statistics.median(floors)
    log(f"   median {fmt_s(med)} (min {min(walls):.2f}, max {max(walls):.2f}): "
        f"{verdict(med <= TARGETS['cold_start'])} (target <= {TARGETS['cold_start']} s)")
    log(f"   floor `python -c 'import sympy, numpy'`: median {fmt_s(floor)}; ratio {med / floor:.2f} "
        f"({verdict(med / floor <= TARGETS['cold_ratio'])}, target <= {TARGETS['cold_ratio']:g}x)")
    out: dict[str, Any] = {"runs": walls, "median": med, "speed_probe": probe, "floor_runs": floors,
                           "floor_median": floor, "ratio": med / floor}
    for label, code in (("import attngrade.cli", "import attngrade.cli"),
                        ("grade check path", "import sys; from attngrade.cli import main; "
                                             f"sys.exit(main(['check', {str(args.check_file)!r}]))")):
        proc = subprocess.run([str(python), "-X", "importtime", "-c", code], cwd=ROOT, capture_output=True, text=True)
        rows = parse_importtime(proc.stderr)
        total = sum(r["cumulative_us"] for r in rows if r["depth"] == 0) / 1000
        heavy = top_imports(rows)
        third = attribute(rows)
        ours = sorted((r for r in rows if r["module"].startswith("attngrade")), key=lambda r: -r["cumulative_us"])[:8]
        out[label] = {"total_import_ms": total, "top": heavy, "third_party": third,
                      "attngrade_modules": [{"module": r["module"], "cumulative_ms": r["cumulative_us"] / 1000}
                                            for r in ours]}
        log(f"   -X importtime, {label}: {total:.0f} ms of imports")
        log("     attngrade modules (cumulative ms): " + ", ".join(f"{r['module']} {r['cumulative_us'] / 1000:.0f}"
                                                                   for r in ours))
        log("     third-party packages (cumulative ms, first imported by): "
            + ", ".join(f"{h['package']} {h['cumulative_ms']:.0f} ({h['via'] or 'top level'})" for h in third))
    return out


# -- 3. Otter ------------------------------------------------------------------------------------
def otter_env(args: argparse.Namespace) -> tuple[Path | None, str]:
    """The Otter venv (created on first use). Returns (bin dir, message)."""
    venv = args.otter_venv
    bin_dir = venv / "bin"
    install_log = args.work / "otter-install.log"
    if not (bin_dir / "otter").exists():
        log(f"   installing otter-grader into {venv} (log: {install_log})")
        steps = [
            [args.otter_python, "-m", "venv", str(venv)],
            [str(bin_dir / "python"), "-m", "pip", "install", "--upgrade", "pip"],
            [str(bin_dir / "python"), "-m", "pip", "install", "otter-grader", "ipykernel"],
        ]
        with open(install_log, "w") as fh:
            for step in steps:
                fh.write(f"$ {' '.join(step)}\n")
                fh.flush()
                try:
                    proc = subprocess.run(step, stdout=fh, stderr=subprocess.STDOUT)
                except OSError as err:
                    return None, f"`{' '.join(step)}` could not start: {err}"
                if proc.returncode != 0:
                    tail = install_log.read_text(errors="replace")[-1500:]
                    return None, f"`{' '.join(step)}` failed (exit {proc.returncode}):\n{tail}"
    kernel = venv / "share" / "jupyter" / "kernels" / "python3" / "kernel.json"
    try:
        spec = json.loads(kernel.read_text())
        registered = spec.get("argv", [""])[0] == str(bin_dir / "python")
    except (OSError, ValueError):
        registered = False
    if not registered:  # the kernel of this venv, registered in this venv only
        proc = subprocess.run([str(bin_dir / "python"), "-m", "ipykernel", "install", "--sys-prefix",
                               "--name", "python3", "--display-name", "Python 3 (otter bench)"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return None, f"registering the kernel failed: {proc.stderr.strip()[-1500:]}"
    version = subprocess.run([str(bin_dir / "python"), "-c", "import otter; print(otter.__version__)"],
                             capture_output=True, text=True).stdout.strip()
    return bin_dir, f"otter-grader {version or '?'} in {venv}"


def bench_otter(args: argparse.Namespace, grade: Path, workers_flag: list[str], attn_per_sub_1000: float | None
                ) -> dict[str, Any]:
    sys.path.insert(0, str(HERE / "otter"))
    import students  # noqa: PLC0415  (bench/otter/students.py)

    log("== 3. Otter-Grader side by side: CS224N A5 1e.ii, 20 students")
    bin_dir, msg = otter_env(args)
    if bin_dir is None:
        log(f"   Otter could not be set up: {msg}")
        return {"error": msg}
    log(f"   {msg}")
    work = args.work / "otter"
    if work.exists():
        shutil.rmtree(work)
    (work / "assignment").mkdir(parents=True)
    # otter generate wants its support files in the working directory
    for name in ("attention_check.py",):
        shutil.copyfile(HERE / "otter" / name, work / "assignment" / name)
    shutil.copytree(HERE / "otter" / "tests", work / "assignment" / "tests")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("PYTHONPATH", None)
    zip_path = work / "autograder.zip"
    gen = subprocess.run([str(bin_dir / "otter"), "generate", "-t", "tests", "-o", str(zip_path), "--no-config",
                          "--no-requirements", "--no-environment", "attention_check.py"],
                         cwd=work / "assignment", capture_output=True, text=True, env=env)
    if gen.returncode != 0 or not zip_path.is_file():
        err = (gen.stderr or gen.stdout).strip()[-1500:]
        log(f"   otter generate failed: {err}")
        return {"error": f"otter generate failed: {err}"}
    notebooks = students.write_notebooks(work / "notebooks")
    yamls = students.write_yamls(work / "yaml")
    labels = {s[0]: s[1] for s in students.STUDENTS}

    # Otter: one `otter run` per notebook, one after the other (its non-containerized mode).
    otter_scores: dict[str, Any] = {}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    per = []
    for nb in notebooks:
        out = work / "otter-out" / nb.stem
        out.mkdir(parents=True, exist_ok=True)
        m = measure([str(bin_dir / "otter"), "run", "-a", str(zip_path), "-o", str(out), "--no-logo", str(nb)],
                    cwd=work, stdout=work / f"otter-{nb.stem}.log", env=env, timeout=600)
        per.append(m["wall"])
        try:
            res = json.loads((out / "results.json").read_text())
            otter_scores[nb.stem] = next((t.get("score") for t in res.get("tests", []) if t.get("name") == "q1e_ii"),
                                         None)
        except (OSError, ValueError) as err:
            otter_scores[nb.stem] = f"no results ({err}); see {work / f'otter-{nb.stem}.log'}"
    otter_wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    otter_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    # attngrade: one `grade run` over the 20 YAML files (start-up included), one worker process.
    attn_flag = ["--workers", "1"] if workers_flag else []
    out = work / "attngrade-out"
    m = measure([str(grade), "run", str(work / "yaml"), "-o", str(out), "--solutions", str(args.solutions),
                 *attn_flag], stdout=work / "grade-run.log")
    results = {r["student"]: r for r in json.loads((out / "results.json").read_text(encoding="utf-8"))}

    n = len(notebooks)
    otter_per, attn_per = otter_wall / n, m["wall"] / n
    ratio = otter_per / attn_per
    log(f"   {'student':7} {'otter':>6} {'attngrade':>16}  construction")
    for stu, _, _, _ in students.STUDENTS:
        part = next((p for p in results.get(stu, {}).get("parts", []) if p["id"] == "1e.ii"), None)
        got = f"{part['score']:g}/4 {part['status']}" if part else "?"
        o = otter_scores.get(stu)
        o_txt = f"{o:g}/4" if isinstance(o, (int, float)) else str(o)
        log(f"   {stu:7} {o_txt:>6} {got:>16}  {labels[stu]}")
    log(f"   otter run:  {fmt_s(otter_wall)} wall, {fmt_s(otter_cpu)} CPU for {n} notebooks: "
        f"{otter_per:.2f} s per submission (median single run {statistics.median(per):.2f} s)")
    log(f"   grade run:  {fmt_s(m['wall'])} wall, {fmt_s(m['cpu'])} CPU for {n} YAML files in one process "
        f"({' '.join(attn_flag) or 'default workers'}, start-up included): {attn_per:.3f} s per submission")
    log(f"   ratio (per submission, otter / attngrade): {ratio:.0f}x: "
        f"{verdict(ratio >= TARGETS['otter_ratio'])} (target >= {TARGETS['otter_ratio']:g}x)")
    marginal = None
    if attn_per_sub_1000:
        marginal = otter_per / attn_per_sub_1000
        log(f"   at class scale (the {args.n}-submission run above: {attn_per_sub_1000 * 1000:.1f} ms per submission) "
            f"the ratio is {marginal:.0f}x")
    return {"otter": msg, "students": n, "otter_wall": otter_wall, "otter_cpu": otter_cpu, "otter_runs": per,
            "otter_per_sub": otter_per, "attngrade": m, "attngrade_per_sub": attn_per, "ratio": ratio,
            "ratio_at_class_scale": marginal,
            "scores": {stu: {"otter": otter_scores.get(stu),
                             "attngrade": next(({"score": p["score"], "status": p["status"]}
                                                for p in results.get(stu, {}).get("parts", []) if p["id"] == "1e.ii"),
                                               None)} for stu, *_ in students.STUDENTS}}


# -- profiles ------------------------------------------------------------------------------------
def phases(args: argparse.Namespace, python: Path, label: str, cli_args: list[str]) -> dict[str, Any] | None:
    """Wall/CPU of the stages of one `grade run`, without a profiler (bench/profile_run.py --phases)."""
    proc = subprocess.run([str(python), str(HERE / "profile_run.py"), "--phases", "--", *cli_args], cwd=ROOT,
                          capture_output=True, text=True)
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        log(f"   phases of {label} failed: {(proc.stderr or proc.stdout).strip()[-800:]}")
        return None
    log(f"   phases, {label} (no profiler; {' '.join(cli_args[-2:]) if '--workers' in cli_args else 'default'}): "
        f"{data['wall_s']:.2f} s wall, {data['cpu_s']:.2f} s CPU in the main process")
    log(f"     {data['imports_before_main_s']:6.2f} s  imports before main()")
    for ph in data["phases"]:
        log(f"     {ph['wall_s']:6.2f} s  {ph['phase']} ({ph['calls']} calls, {ph['cpu_s']:.2f} s CPU here)")
    return data


def profile(args: argparse.Namespace, python: Path, label: str, cli_args: list[str]) -> dict[str, Any] | None:
    """cProfile one `grade` command in one process (bench/profile_run.py) and print where time goes."""
    prof = args.work / f"profile-{label}.prof"
    proc = subprocess.run([str(python), str(HERE / "profile_run.py"), str(prof), "--", *cli_args], cwd=ROOT,
                          capture_output=True, text=True)
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        log(f"   profile of {label} failed: {(proc.stderr or proc.stdout).strip()[-800:]}")
        return None
    log(f"   cProfile, {label} (grade {cli_args[0]}, one process): {data['profiled_total_s']:.2f} s profiled "
        f"(stages overlap; imports happen inside other stages), {prof}")
    for st in sorted(data["stages"], key=lambda st: -st["share"]):
        if st["share"] >= 0.02:
            log(f"     {st['share']:5.1%}  {st['cumulative_s']:6.2f} s  {st['stage']} ({st['calls']} calls)")
    log("     most own time: " + "; ".join(f"{f['function'].rsplit('/', 1)[-1]} {f['own_s']:.2f} s"
                                          for f in data["top_own_time"][:6]))
    return data


# -- main ----------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="submissions in the synthetic class (default 1000)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the synthetic class (default 7)")
    parser.add_argument("--skip-otter", action="store_true", help="leave out the Otter comparison")
    parser.add_argument("--skip-cold", action="store_true", help="leave out the cold-start measurement")
    parser.add_argument("--skip-executors", action="store_true",
                        help="leave out the --workers 1 / --workers 2 / --executor dask comparison")
    parser.add_argument("--skip-code", action="store_true",
                        help="leave out the code-check class (needs torch in the venv)")
    parser.add_argument("--code-n", type=int, default=20,
                        help="submissions in the code-check class (default 20)")
    parser.add_argument("--skip-check-times", action="store_true",
                        help="leave out the CPU time per distinct answer by check kind (bench/check_times.py)")
    parser.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                        help="another checkout (e.g. `git worktree add /tmp/wt-old REV`) to grade the same class "
                             "with; the part verdicts that differ are counted and listed")
    parser.add_argument("--repeat", type=int, default=1, help="grade the class this many times; the fastest counts")
    parser.add_argument("--ratio-pairs", type=int, default=5, metavar="N",
                        help="pairs of --workers 1 / --workers 2 runs for the two-worker speed-up, which is the ratio "
                             "of their median walls (default 5; 0: the executor runs' own walls)")
    parser.add_argument("--workers", type=int, default=None,
                        help="--workers for `grade run` when it has the option (default: the number of cores)")
    parser.add_argument("--cold-runs", type=int, default=5, help="runs of `grade check` for the median (default 5)")
    parser.add_argument("--quiet-wait", type=float, default=0.0,
                        help="before each class run, wait up to this many seconds for other load to settle")
    parser.add_argument("--worst-case", action="store_true",
                        help="a class where every student writes every checked answer differently (generate.py --distinct)")
    parser.add_argument("--distinct-files", action="store_true",
                        help="every student's dev prediction files distinct (as when each trains a model)")
    parser.add_argument("--folder-share", type=float, default=0.5,
                        help="share of A5/MIMUW submissions that are folders with prediction files (default 0.5)")
    parser.add_argument("--venv", type=Path, default=HERE.parent / ".venv",
                        help="attngrade's virtualenv (default: the repo's .venv, as the README makes it)")
    parser.add_argument("--solutions", type=Path, default=ROOT / "solutions")
    parser.add_argument("--check-file", type=Path, default=ROOT / "examples" / "cs224n-w21-a5" / "full-marks.yaml")
    parser.add_argument("--work", type=Path, default=Path("/tmp/attngrade-bench"),
                        help="scratch folder for the class and outputs (default /tmp/attngrade-bench)")
    parser.add_argument("--otter-venv", type=Path, default=HERE / ".otter-venv",
                        help="virtualenv for Otter, created on first use (default bench/.otter-venv)")
    parser.add_argument("--otter-python", default="python3", help="interpreter that creates the Otter venv")
    parser.add_argument("--profile", choices=("auto", "always", "never"), default="auto",
                        help="cProfile the grade runs whose target was missed (auto), all of them, or none")
    args = parser.parse_args(argv)
    if args.n < 1 or args.repeat < 1 or args.cold_runs < 1 or args.code_n < 1:
        parser.error("--n, --repeat, --cold-runs and --code-n must be at least 1")
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    args.solutions = args.solutions.resolve()
    args.check_file = args.check_file.resolve()
    grade, python = args.venv / "bin" / "grade", args.venv / "bin" / "python"
    if not grade.exists():
        parser.error(f"no `grade` in {args.venv}/bin; install attngrade there (pip install -e .)")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    workers_flag = ["--workers", str(args.workers or cores)] if supports_workers(grade) else []
    env_info = {"python": platform.python_version(), "platform": platform.platform(), "cores": cores,
                "grade_run_flags": workers_flag, **git_state(), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
                "load_avg": os.getloadavg(), "speed_probe": speed_probe(python)}
    log(f"attngrade benchmark: {env_info['platform']}, {cores} cores, Python {env_info['python']}, "
        f"commit {env_info['commit']}{' + local changes' if env_info['local_changes'] else ''}, "
        f"grade run {' '.join(workers_flag) or '(no --workers option)'}, load avg {env_info['load_avg'][0]:.2f}, "
        f"speed probe {env_info['speed_probe'] or float('nan'):.3f} s CPU (a fixed loop; higher = contended)")

    report: dict[str, Any] = {"env": env_info}
    cls = bench_class(args, grade, python, workers_flag)
    report["class"] = cls
    if not args.skip_executors:
        report["executors"] = bench_executors(args, grade)
    if not args.skip_code:
        report["code"] = bench_code(args, grade, python)
    if not args.skip_check_times:
        report["check_times"] = bench_check_times(args, python)
    if args.baseline is not None:
        report["baseline"] = bench_baseline(args, python, workers_flag)
    if not args.skip_cold:
        report["cold"] = bench_cold(args, grade, python)
    if not args.skip_otter:
        try:
            report["otter"] = bench_otter(args, grade, workers_flag, cls["best"]["wall"] / args.n)
        except Exception as err:  # noqa: BLE001 - report why, keep the other figures
            import traceback

            msg = f"{type(err).__name__}: {err}"
            log(f"   the Otter comparison failed: {msg}\n{traceback.format_exc()}")
            report["otter"] = {"error": msg}

    # summary against the targets
    log("== targets")
    best = cls["best"]
    log(f"   {args.n} submissions: wall {fmt_s(best['wall'])} ({cls['subs_per_s']:.0f} submissions/s), "
        f"CPU {fmt_s(best['cpu'])}, max RSS {best['maxrss_mb']:.0f} MB"
        + (" (the 1000-submission targets need --n 1000: cost grows slower than N)" if args.n != 1000 else ""))
    wall_target = TARGETS["worst_1000" if args.worst_case else "wall_1000"] * args.n / 1000
    # Peak memory: the largest process since its exec and the whole tree's PSS, both sampled.
    # wait4's max RSS would count the bench's own size once it holds a large class's manifest.
    peak = max(best.get("largest_process_mb", best["maxrss_mb"]), best.get("tree_peak_pss_mb", 0))
    if args.n == 1000:
        log(f"   1000 submissions{' (worst case)' if args.worst_case else ''} <= {wall_target:g} s wall: "
            f"{verdict(best['wall'] <= wall_target)}; peak memory <= 1 GB: {verdict(peak <= TARGETS['rss_mb'])}")
    elif args.n >= 100_000:
        log(f"   {args.n} submissions <= {TARGETS['wall_100k']:g} s wall: {verdict(best['wall'] <= TARGETS['wall_100k'])}; "
            f"peak memory <= 1 GB: {verdict(peak <= TARGETS['rss_mb'])} (largest process "
            f"{best.get('largest_process_mb', 0):.0f} MB, tree PSS {best.get('tree_peak_pss_mb', 0):.0f} MB)")
    if "executors" in report:
        speedup = report["executors"]["speedup_2_over_1"]
        same = all(r["same_results"] for r in report["executors"]["runs"].values())
        log(f"   --workers 2 >= {TARGETS['workers_speedup']:g}x over --workers 1: "
            f"{verdict(speedup >= TARGETS['workers_speedup'])} ({speedup:.2f}x); every executor the same "
            f"results.json: {verdict(same)}")
    if "runs" in report.get("code", {}):
        code = report["code"]
        same = all(r["same_results"] for r in code["runs"].values())
        log(f"   code-check class of {code['n']}: --workers 2 {code['speedup_2_over_1']:.2f}x over --workers 1, "
            f"dask {fmt_s(code['runs']['dask']['wall'])}; every executor the same results.json: {verdict(same)}")
    if report.get("check_times", {}).get("kinds"):
        ct = report["check_times"]
        slowest = ct["kinds"][ct["slowest"]]["median_ms"]
        log(f"   1e.ii <= {TARGETS['qkv_ms']:g} ms and every kind <= {TARGETS['kind_ms']:g} ms at the median: "
            f"{verdict((ct['qkv_median_ms'] or 0) <= TARGETS['qkv_ms'] and slowest <= TARGETS['kind_ms'])} "
            f"(attention_qkv {ct['qkv_median_ms'] or float('nan'):.2f} ms, slowest {ct['slowest']} {slowest:.2f} ms)")
    if "cold" in report:
        log(f"   grade check cold <= {TARGETS['cold_ratio']:g}x the import floor: "
            f"{verdict(report['cold']['ratio'] <= TARGETS['cold_ratio'])} ({report['cold']['median']:.2f} s, "
            f"{report['cold']['ratio']:.2f}x)")
    if report.get("baseline", {}).get("differences") is not None:
        log(f"   verdicts against {args.baseline}: {report['baseline']['differences']} parts differ "
            "(each kind listed above, to match with the changes made on purpose)")
    if "otter" in report and "ratio" in report["otter"]:
        log(f"   >= 50x faster per submission than otter run: {verdict(report['otter']['ratio'] >= 50)} "
            f"({report['otter']['ratio']:.0f}x)")
    otter_missed = "otter" in report and report["otter"].get("ratio", 1e9) < TARGETS["otter_ratio"]
    class_missed = args.n >= 1000 and best["wall"] > wall_target
    cold_missed = "cold" in report and report["cold"]["ratio"] > TARGETS["cold_ratio"]
    if args.profile != "never" and (args.profile == "always" or otter_missed or class_missed or cold_missed):
        log("== profiles")
        report["profiles"] = {}
        if args.profile == "always" or class_missed:
            report["profiles"]["class_phases"] = phases(args, python, "class", [
                "run", str(args.work / "class"), "-o", str(args.work / "profile-out"), "--solutions",
                str(args.solutions), *workers_flag])
            report["profiles"]["class"] = profile(args, python, "class", [
                "run", str(args.work / "class"), "-o", str(args.work / "profile-out"), "--solutions",
                str(args.solutions), *(["--workers", "1"] if workers_flag else [])])
        if "otter" in report and "ratio" in report["otter"] and (args.profile == "always" or otter_missed):
            report["profiles"]["otter20_phases"] = phases(args, python, "otter20", [
                "run", str(args.work / "otter" / "yaml"), "-o", str(args.work / "profile-out20"), "--solutions",
                str(args.solutions), *(["--workers", "1"] if workers_flag else [])])
            report["profiles"]["otter20"] = profile(args, python, "otter20", [
                "run", str(args.work / "otter" / "yaml"), "-o", str(args.work / "profile-out20"), "--solutions",
                str(args.solutions), *(["--workers", "1"] if workers_flag else [])])
        if args.profile == "always" or cold_missed:
            report["profiles"]["check"] = profile(args, python, "check", ["check", str(args.check_file)])
    out = args.work / "bench-results.json"
    out.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
