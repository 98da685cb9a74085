#!/usr/bin/env python3
"""attngrade's benchmark: grade a synthetic class with `grade run` and measure it against the targets.

    python3 bench/run.py                        # 1,000 submissions, seed 7, every measurement
    python3 bench/run.py --n 200 --skip-otter   # quicker
    python3 bench/run.py --help                 # every flag

Each measurement is a module of bench/measure/ (see bench/README.md). Every figure is printed
as it is taken and all of them go to WORK/bench-results.json; `--write-table` also writes the
figures into bench/README.md. attngrade runs from --venv (default: the repository's .venv);
this script runs with any Python 3.10+.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import figures
import options
from child import cpu_model, git_state, log, speed_probe, supports_workers
from measure import baseline, check_kinds, code, cold, executors, memory, otter, profiles, realistic, review


def environment(opts: options.Options) -> dict[str, Any]:
    env = {"python": platform.python_version(), "platform": platform.platform(), "cpu": cpu_model(),
           "cores": opts.cores(), "grade_run_flags": list(opts.grade_flags), **git_state(),
           "started": time.strftime("%Y-%m-%d %H:%M:%S"), "load_avg": os.getloadavg(),
           "speed_probe": speed_probe(opts.python)}
    log(f"attngrade benchmark: {env['cpu']}, {env['cores']} cores, {env['platform']}, Python {env['python']}, "
        f"commit {env['commit']}{' + local changes' if env['local_changes'] else ''}, grade run "
        f"{' '.join(opts.grade_flags) or '(no --workers option)'}, load avg {env['load_avg'][0]:.2f}, "
        f"speed probe {env['speed_probe'] or float('nan'):.3f} s CPU (a fixed loop; higher: contended)")
    return env


def _step(report: dict[str, Any], key: str, measure: Callable[[], dict[str, Any]]) -> None:
    """report[key] = measure(), or why it failed: one measurement failing leaves the others' figures."""
    try:
        report[key] = measure()
    except (Exception, SystemExit) as err:
        log(f"   {key} failed: {type(err).__name__}: {err}\n{traceback.format_exc(limit=3)}")
        report[key] = {"error": f"{type(err).__name__}: {err}"}


def measure_all(opts: options.Options) -> dict[str, Any]:
    """Every measurement the flags ask for, in order; the class run first, as the others use its class."""
    report: dict[str, Any] = {"env": environment(opts)}
    report["class"] = realistic.run(opts)
    report["memory"] = memory.run(opts, report["class"]["best"])
    per_sub = report["class"]["best"]["wall"] / opts.n
    steps: list[tuple[bool, str, Callable[[], dict[str, Any]]]] = [
        (not opts.skip_executors, "executors", lambda: executors.run(opts)),
        (not opts.skip_code, "code", lambda: code.run(opts)),
        (not opts.skip_check_times, "check_times", lambda: check_kinds.run(opts)),
        (opts.baseline is not None, "baseline", lambda: baseline.run(opts)),
        (not opts.skip_review, "review", lambda: review.run(opts)),
        (not opts.skip_cold, "cold", lambda: cold.run(opts)),
        (not opts.skip_otter, "otter", lambda: otter.run(opts, per_sub)),
    ]
    for wanted, key, measure in steps:
        if wanted:
            _step(report, key, measure)
    return report


def main(argv: list[str] | None = None) -> int:
    opts = options.parse(argv)
    opts.work.mkdir(parents=True, exist_ok=True)
    flags = ("--workers", str(opts.workers or opts.cores())) if supports_workers(opts.grade) else ()
    opts = dataclasses.replace(opts, grade_flags=flags)
    report = measure_all(opts)
    found = figures.figures(opts, report)
    figures.log_targets(found)
    report["targets"] = {name: {"value": f.value, "text": f.text} for name, f in found.items()}
    missed = figures.missed(found)
    if opts.profile == "always" or (opts.profile == "auto" and any(missed.values())):
        report["profiles"] = profiles.run(opts, missed, otter_ran="ratio" in report.get("otter", {}))
    out = opts.work / "bench-results.json"
    out.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
    log(f"wrote {out}")
    if opts.write_table is not None:
        env = report["env"]
        machine = f"{env['cpu']}, {env['cores']} cores, Python {env['python']}"
        commit = f"{env['commit']}{' + local changes' if env['local_changes'] else ''}"
        figures.write_table(opts.write_table, found, machine, commit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
