"""Otter-Grader side by side: CS224N A5 1e.ii as an Otter assignment (bench/otter/), 20 students.

Each student of bench/otter/students.py is written once as a notebook and once as an
equivalent YAML answer. Otter is installed on first use into --otter-venv; `otter generate`
builds the autograder zip and `otter run` (non-containerized: no Docker) grades each notebook,
one after the other. attngrade grades the 20 YAML files with one `grade run --workers 1`,
start-up included. The figure is the ratio of the two per-submission walls.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from child import fmt_s, log, verdict
from child import run as run_child
from options import HERE, Options
from targets import target


def _install(opts: Options, bin_dir: Path) -> str | None:
    """Create the Otter venv; None, or why it failed."""
    install_log = opts.work / "otter-install.log"
    log(f"   installing otter-grader into {opts.otter_venv} (log: {install_log})")
    steps = [[opts.otter_python, "-m", "venv", str(opts.otter_venv)],
             [str(bin_dir / "python"), "-m", "pip", "install", "--upgrade", "pip"],
             [str(bin_dir / "python"), "-m", "pip", "install", "otter-grader", "ipykernel"]]
    with open(install_log, "w") as fh:
        for step in steps:
            fh.write(f"$ {' '.join(step)}\n")
            fh.flush()
            try:
                proc = subprocess.run(step, stdout=fh, stderr=subprocess.STDOUT)
            except OSError as err:
                return f"`{' '.join(step)}` could not start: {err}"
            if proc.returncode != 0:
                return f"`{' '.join(step)}` failed (exit {proc.returncode}):\n" \
                       + install_log.read_text(errors="replace")[-1500:]
    return None


def otter_env(opts: Options) -> tuple[Path | None, str]:
    """The Otter venv's bin folder (created on first use, its kernel registered in it only), and a message."""
    bin_dir = opts.otter_venv / "bin"
    if not (bin_dir / "otter").exists():
        failed = _install(opts, bin_dir)
        if failed:
            return None, failed
    kernel = opts.otter_venv / "share" / "jupyter" / "kernels" / "python3" / "kernel.json"
    try:
        registered = json.loads(kernel.read_text()).get("argv", [""])[0] == str(bin_dir / "python")
    except (OSError, ValueError):
        registered = False
    if not registered:
        proc = subprocess.run([str(bin_dir / "python"), "-m", "ipykernel", "install", "--sys-prefix",
                               "--name", "python3", "--display-name", "Python 3 (otter bench)"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return None, f"registering the kernel failed: {proc.stderr.strip()[-1500:]}"
    version = subprocess.run([str(bin_dir / "python"), "-c", "import otter; print(otter.__version__)"],
                             capture_output=True, text=True).stdout.strip()
    return bin_dir, f"otter-grader {version or '?'} in {opts.otter_venv}"


def _autograder(work: Path, bin_dir: Path, env: dict) -> Path | str:
    """`otter generate` in WORK/otter/assignment: the zip, or why it failed."""
    (work / "assignment").mkdir(parents=True)
    shutil.copyfile(HERE / "otter" / "attention_check.py", work / "assignment" / "attention_check.py")
    shutil.copytree(HERE / "otter" / "tests", work / "assignment" / "tests")
    zip_path = work / "autograder.zip"
    gen = subprocess.run([str(bin_dir / "otter"), "generate", "-t", "tests", "-o", str(zip_path), "--no-config",
                          "--no-requirements", "--no-environment", "attention_check.py"],
                         cwd=work / "assignment", capture_output=True, text=True, env=env)
    if gen.returncode != 0 or not zip_path.is_file():
        return f"otter generate failed: {(gen.stderr or gen.stdout).strip()[-1500:]}"
    return zip_path


def _otter_runs(work: Path, bin_dir: Path, env: dict, zip_path: Path, notebooks: list[Path]) -> dict[str, Any]:
    """`otter run` on each notebook, one after the other: wall, CPU, each run's wall and each 1e.ii score."""
    scores: dict[str, Any] = {}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    walls = []
    for nb in notebooks:
        out = work / "otter-out" / nb.stem
        out.mkdir(parents=True, exist_ok=True)
        m = run_child([str(bin_dir / "otter"), "run", "-a", str(zip_path), "-o", str(out), "--no-logo", str(nb)],
                      cwd=work, stdout=work / f"otter-{nb.stem}.log", env=env, timeout=600)
        walls.append(m["wall"])
        try:
            res = json.loads((out / "results.json").read_text())
            scores[nb.stem] = next((t.get("score") for t in res.get("tests", []) if t.get("name") == "q1e_ii"), None)
        except (OSError, ValueError) as err:
            scores[nb.stem] = f"no results ({err}); see {work / f'otter-{nb.stem}.log'}"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"wall": time.perf_counter() - start, "walls": walls, "scores": scores,
            "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)}


def _scores(students: Any, otter: dict[str, Any], results: dict[str, Any]) -> dict[str, Any]:
    """Both graders' 1e.ii score per student, printed side by side."""
    table = {}
    log(f"   {'student':7} {'otter':>6} {'attngrade':>16}  construction")
    for stu, label, *_ in students.STUDENTS:
        part = next((p for p in results.get(stu, {}).get("parts", []) if p["id"] == "1e.ii"), None)
        o = otter["scores"].get(stu)
        table[stu] = {"otter": o, "attngrade": {"score": part["score"], "status": part["status"]} if part else None}
        got = f"{part['score']:g}/4 {part['status']}" if part else "?"
        log(f"   {stu:7} {f'{o:g}/4' if isinstance(o, (int, float)) else str(o):>6} {got:>16}  {label}")
    return table


def run(opts: Options, per_sub_at_scale: float | None) -> dict[str, Any]:
    sys.path.insert(0, str(HERE / "otter"))
    import students

    log("== Otter-Grader side by side: CS224N A5 1e.ii, 20 students")
    bin_dir, msg = otter_env(opts)
    if bin_dir is None:
        log(f"   Otter could not be set up: {msg}")
        return {"error": msg}
    log(f"   {msg}")
    work = opts.work / "otter"
    shutil.rmtree(work, ignore_errors=True)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("PYTHONPATH", None)
    zip_path = _autograder(work, bin_dir, env)
    if isinstance(zip_path, str):
        log(f"   {zip_path}")
        return {"error": zip_path}
    notebooks = students.write_notebooks(work / "notebooks")
    students.write_yamls(work / "yaml")
    otter = _otter_runs(work, bin_dir, env, zip_path, notebooks)
    attn_flag = ["--workers", "1"] if opts.grade_flags else []
    m = run_child([str(opts.grade), "run", str(work / "yaml"), "-o", str(work / "attngrade-out"), "--solutions",
                   str(opts.solutions), *attn_flag], stdout=work / "grade-run.log")
    results = {r["student"]: r for r in json.loads((work / "attngrade-out" / "results.json").read_text("utf-8"))}
    table = _scores(students, otter, results)
    n = len(notebooks)
    otter_per, attn_per = otter["wall"] / n, m["wall"] / n
    ratio, goal = otter_per / attn_per, target("otter_ratio")
    log(f"   otter run: {fmt_s(otter['wall'])} wall, {fmt_s(otter['cpu'])} CPU for {n} notebooks: {otter_per:.2f} s "
        f"a submission (median single run {statistics.median(otter['walls']):.2f} s)")
    log(f"   grade run: {fmt_s(m['wall'])} wall, {fmt_s(m['cpu'])} CPU for {n} YAML files in one process, start-up "
        f"included: {attn_per:.3f} s a submission")
    log(f"   otter / attngrade per submission: {ratio:.0f}x: {verdict(goal.met(ratio))} ({goal.describe()})")
    at_scale = otter_per / per_sub_at_scale if per_sub_at_scale else None
    if at_scale:
        log(f"   at class scale ({per_sub_at_scale * 1000:.1f} ms a submission in the class run): {at_scale:.0f}x")
    return {"otter": msg, "students": n, "otter_wall": otter["wall"], "otter_cpu": otter["cpu"],
            "otter_runs": otter["walls"], "otter_per_sub": otter_per, "attngrade": m, "attngrade_per_sub": attn_per,
            "ratio": ratio, "ratio_at_class_scale": at_scale, "scores": table}
