"""Profiles of the runs whose target was missed (--profile auto), of all of them (always), or none.

For the class: the stage timings of one `grade run` (bench/profile_run.py --phases, no profiler)
and a cProfile of one `grade run --workers 1`; for Otter's 20 YAML files the same; for the cold
start, a cProfile of `grade check`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from child import log
from options import HERE, Options


def phases(opts: Options, label: str, cli_args: list[str]) -> dict[str, Any] | None:
    proc = subprocess.run([str(opts.python), str(HERE / "profile_run.py"), "--phases", "--", *cli_args], cwd=opts.work,
                          capture_output=True, text=True)
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        log(f"   stages of {label} failed (exit {proc.returncode}): {(proc.stderr or proc.stdout).strip()[-800:]}")
        return None
    log(f"   stages, {label} (no profiler): {data['wall_s']:.2f} s wall, {data['cpu_s']:.2f} s CPU")
    log(f"     {data['outside_stages_s']:6.2f} s  outside the stages (start-up, imports)")
    for ph in data["phases"]:
        log(f"     {ph['wall_s']:6.2f} s  {ph['phase']} ({ph['cpu_s']:.2f} s CPU in the grading process)")
    return data


def profile(opts: Options, label: str, cli_args: list[str]) -> dict[str, Any] | None:
    prof = opts.work / f"profile-{label}.prof"
    proc = subprocess.run([str(opts.python), str(HERE / "profile_run.py"), str(prof), "--", *cli_args], cwd=opts.work,
                          capture_output=True, text=True)
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        log(f"   profile of {label} failed (exit {proc.returncode}): {(proc.stderr or proc.stdout).strip()[-800:]}")
        return None
    log(f"   cProfile, {label} (grade {cli_args[0]}, one process): {data['profiled_total_s']:.2f} s profiled, {prof}")
    for st in sorted(data["stages"], key=lambda st: -st["share"]):
        if st["share"] >= 0.02:
            log(f"     {st['share']:5.1%}  {st['cumulative_s']:6.2f} s  {st['stage']} ({st['calls']} calls)")
    log("     most own time: " + "; ".join(f"{f['function'].rsplit('/', 1)[-1]} {f['own_s']:.2f} s"
                                          for f in data["top_own_time"][:6]))
    return data


def _grade_args(opts: Options, class_dir: Path, out: str, flags: list[str] | tuple[str, ...]) -> list[str]:
    return ["run", str(class_dir), "-o", str(opts.work / out), "--solutions", str(opts.solutions), *flags]


def run(opts: Options, missed: dict[str, bool], otter_ran: bool) -> dict[str, Any]:
    """`missed`: which of "class", "otter" and "cold" missed their target."""
    log("== profiles")
    always = opts.profile == "always"
    one = ["--workers", "1"] if opts.grade_flags else []
    found: dict[str, Any] = {}
    if always or missed.get("class"):
        found["class_phases"] = phases(opts, "class", _grade_args(opts, opts.class_dir, "profile-out",
                                                                  opts.grade_flags))
        found["class"] = profile(opts, "class", _grade_args(opts, opts.class_dir, "profile-out", one))
    if otter_ran and (always or missed.get("otter")):
        yaml_dir = opts.work / "otter" / "yaml"
        found["otter20_phases"] = phases(opts, "otter20", _grade_args(opts, yaml_dir, "profile-out20", one))
        found["otter20"] = profile(opts, "otter20", _grade_args(opts, yaml_dir, "profile-out20", one))
    if always or missed.get("cold"):
        found["check"] = profile(opts, "check", ["check", str(opts.check_file)])
    return found
