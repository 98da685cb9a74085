#!/usr/bin/env python3
"""Profile one `grade ...` command in-process and summarize where time goes.

    /tmp/venv/bin/python bench/profile_run.py OUT.prof -- run CLASS -o OUT --solutions solutions --workers 1
    /tmp/venv/bin/python bench/profile_run.py --phases -- run CLASS -o OUT --solutions solutions

With --phases there is no profiler: `grade run --stats` reports the wall and CPU time
of its own stages (plan, run, assemble, write), which are printed. Worker processes are
not seen, but the time the parent waits for them is (the run stage).

Prints one JSON object: the profiled total, the cumulative time of a few stages that
matter for attngrade's speed (they overlap: imports happen inside other stages), and
the functions with the most own time. Use --workers 1: cProfile sees one process only.
Times under cProfile are inflated (roughly 1.5-2x for Python-heavy code); compare
shares, not seconds, with unprofiled runs.
"""

from __future__ import annotations

import cProfile
import io
import json
import pstats
import sys
import time

# (label, file suffix, function name): cumulative time of these functions
STAGES = [
    ("imports (all modules)", "<frozen importlib._bootstrap>", "_find_and_load"),
    ("loading submissions (YAML)", "attngrade/submissions.py", "load_submission"),
    ("loading the bank (homework YAML)", "attngrade/problems/__init__.py", "load_homework"),
    ("reading answers (parse to sympy)", "attngrade/reading.py", "read_field"),
    ("Value.canonical (sympy srepr)", "attngrade/mathlang/nodes.py", "canonical"),
    ("running distinct checks", "attngrade/grading/tasks.py", "run_task"),
    ("write_outputs (reports, json, csv)", "attngrade/batch.py", "write_outputs"),
    ("render_student (one report each)", "attngrade/reports/__init__.py", "render_student"),
    ("plots: heatmaps (matplotlib)", "attngrade/reports/plots.py", "heatmap"),
    ("plots: histogram (matplotlib)", "attngrade/reports/plots.py", "histogram"),
    ("MathML of readings", "attngrade/reports/mathml.py", "to_mathml"),
    ("write_atomic (files)", "attngrade/output.py", "write_atomic"),
    ("answer groups", "attngrade/groups.py", "answer_groups"),
]


def phases(cli_args: list[str]) -> int:
    import tempfile
    from pathlib import Path

    start_wall, start_cpu = time.perf_counter(), time.process_time()
    from attngrade.cli import import_library, read_early
    from attngrade.cli import main as cli_main

    with tempfile.TemporaryDirectory() as tmp:
        stats = Path(tmp) / "stats.json"
        argv = [*cli_args, "--stats", str(stats)]
        early = read_early(argv)  # as `grade` does: the class read by a child while the library is imported
        import_library(argv)
        import_wall = time.perf_counter() - start_wall
        saved, sys.stdout = sys.stdout, io.StringIO()
        try:
            code = cli_main(argv, early=early)
        finally:
            sys.stdout = saved
            if early is not None:
                early.stop()
        timings = json.loads(stats.read_text(encoding="utf-8"))["timings"] if stats.is_file() else {}
    total_wall, total_cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu
    print(json.dumps({"exit": code, "wall_s": round(total_wall, 3), "cpu_s": round(total_cpu, 3),
                      "imports_before_main_s": round(import_wall, 3),
                      "phases": [{"phase": k, "wall_s": v["wall_s"], "cpu_s": v["cpu_s"], "calls": 1}
                                 for k, v in timings.items()]}, indent=1))
    return 0


def main(argv: list[str]) -> int:
    if argv[:2] == ["--phases", "--"]:
        return phases(argv[2:])
    if "--" not in argv or argv.index("--") != 1:
        print(__doc__, file=sys.stderr)
        return 2
    prof_path, cli_args = argv[0], argv[2:]
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    try:
        from attngrade.cli import main as cli_main

        saved, sys.stdout = sys.stdout, io.StringIO()  # keep the CLI's own output out of our JSON
        try:
            code = cli_main(cli_args)
        finally:
            sys.stdout = saved
    finally:
        profile.disable()
    wall = time.perf_counter() - start
    profile.dump_stats(prof_path)
    stats = pstats.Stats(prof_path)
    total = max(getattr(stats, "total_tt", 0.0), 1e-9)
    table = stats.stats  # (file, line, name) -> (cc, nc, tt, ct, callers)
    stages = []
    for label, suffix, name in STAGES:
        ct = sum(v[3] for (f, _, n), v in table.items() if n == name and f.endswith(suffix))
        calls = sum(v[1] for (f, _, n), v in table.items() if n == name and f.endswith(suffix))
        if calls:
            stages.append({"stage": label, "cumulative_s": round(ct, 3), "share": round(ct / total, 3),
                           "calls": calls})
    own = sorted(table.items(), key=lambda kv: -kv[1][2])[:15]
    print(json.dumps({
        "exit": code, "profiled_total_s": round(total, 3), "wall_under_profile_s": round(wall, 3),
        "stages": stages,
        "top_own_time": [{"function": f"{f.replace(sys.prefix, '<venv>')}:{line}({n})", "own_s": round(v[2], 3),
                          "calls": v[1]} for (f, line, n), v in own],
        "profile": prof_path,
    }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
