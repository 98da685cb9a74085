#!/usr/bin/env python3
"""Where one `grade ...` command spends its time: cProfile, or the stages' own timings.

    .venv/bin/python bench/profile_run.py OUT.prof -- run CLASS -o OUT --solutions solutions --workers 1
    .venv/bin/python bench/profile_run.py --phases -- run CLASS -o OUT --solutions solutions

The command runs as `python -m cProfile -o OUT.prof -m attngrade ...` in a process of its own
(this script's interpreter: run it with attngrade's venv). cProfile sees that one process
only, so give --workers 1. Printed as one JSON object: the profiled total, the cumulative time
of functions that matter for attngrade's speed (found by name; they overlap, as imports happen
inside other stages) and the functions with the most own time. Profiled code runs slower than
unprofiled code, Python-heavy code most: compare shares, not seconds.

With --phases there is no profiler: `grade run --stats` writes the wall and CPU time of its
own stages (plan, run, assemble, write); the time outside them is start-up and imports.
"""

from __future__ import annotations

import json
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# (label, function name): the cumulative time of every function of that name in attngrade
STAGES = [
    ("imports (all modules)", "_find_and_load"),
    ("loading submissions", "load_submission"),
    ("loading the bank (homework YAML)", "load_homework"),
    ("reading answers (parse to sympy)", "read_field"),
    ("canonical forms", "canonical"),
    ("running distinct checks", "run_task"),
    ("writing outputs (reports, json, csv)", "write_outputs"),
    ("one report per student", "render_student"),
    ("plots: heatmaps", "heatmap"),
    ("plots: histogram", "histogram"),
    ("MathML of readings", "to_mathml"),
    ("writing files", "write_atomic"),
    ("answer groups", "answer_groups"),
]


def phases(cli_args: list[str]) -> int:
    """Run `python -m attngrade CLI_ARGS --stats FILE`; print its wall, CPU and stage timings."""
    with tempfile.TemporaryDirectory() as tmp:
        stats = Path(tmp) / "stats.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "attngrade", *cli_args, "--stats", str(stats)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        timings = json.loads(stats.read_text(encoding="utf-8")).get("timings", {}) if stats.is_file() else {}
    if not timings:
        print(f"no stage timings (exit {done.returncode}): {done.stderr[-1500:]}", file=sys.stderr)
        return 1
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(json.dumps({"exit": done.returncode, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
                      "outside_stages_s": round(wall - sum(v["wall_s"] for v in timings.values()), 3),
                      "phases": [{"phase": k, "wall_s": v["wall_s"], "cpu_s": v["cpu_s"]} for k, v in timings.items()]},
                     indent=1))
    return 0


def summarize(prof_path: str, wall: float, code: int) -> dict:
    stats = pstats.Stats(prof_path)
    total = max(getattr(stats, "total_tt", 0.0), 1e-9)
    table = stats.stats  # (file, line, name) -> (cc, nc, tt, ct, callers)
    stages = []
    for label, name in STAGES:
        hits = [v for (f, _, n), v in table.items() if n == name and ("attngrade" in f or name == "_find_and_load")]
        if hits:
            ct = sum(v[3] for v in hits)
            stages.append({"stage": label, "cumulative_s": round(ct, 3), "share": round(ct / total, 3),
                           "calls": sum(v[1] for v in hits)})
    own = sorted(table.items(), key=lambda kv: -kv[1][2])[:15]
    return {"exit": code, "profiled_total_s": round(total, 3), "wall_under_profile_s": round(wall, 3),
            "stages": stages,
            "top_own_time": [{"function": f"{f.replace(sys.prefix, '<venv>')}:{line}({n})", "own_s": round(v[2], 3),
                              "calls": v[1]} for (f, line, n), v in own],
            "profile": prof_path}


def main(argv: list[str]) -> int:
    if argv[:2] == ["--phases", "--"]:
        return phases(argv[2:])
    if "--" not in argv or argv.index("--") != 1:
        print(__doc__, file=sys.stderr)
        return 2
    prof_path, cli_args = argv[0], argv[2:]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "cProfile", "-o", prof_path, "-m", "attngrade", *cli_args],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if not Path(prof_path).is_file():
        print(f"no profile written (exit {done.returncode}): {done.stderr[-1500:]}", file=sys.stderr)
        return 1
    print(json.dumps(summarize(prof_path, wall, done.returncode), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
