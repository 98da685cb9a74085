"""The code-check class: --code-n A5 submissions of code (bench/code_class.py --write-class), graded with
each executor.

Every submission's files are distinct (a comment names the student), so each costs two sandbox
runs (2e and 2g.i) and no task is shared. Each executor's results.json is compared with the
`--workers 1` one. The CPU of a submission is that of one more submission: the `--workers 1`
CPU of the class (the grading process and everything it waited for: the zygote, supervisors
and sandbox children) less that of a class a fifth its size, over the difference in
submissions, so that the fixed costs (interpreter start-ups, importing torch once) fall out.
Needs torch in the venv.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from child import fmt_s, grade_run, log, verdict
from options import HERE, Options
from targets import target

from measure.executors import executor_runs


def write_class(opts: Options, n: int, folder: Path) -> str | None:
    """The class of `n` code submissions in `folder`; None, or why it could not be written."""
    made = subprocess.run([str(opts.python), str(HERE / "code_class.py"), "--n", str(n), "--write-class",
                           str(folder)], cwd=opts.work, capture_output=True, text=True, check=False)
    return made.stderr[-1500:] if made.returncode != 0 else None


def marginal_cpu(opts: Options, rows: dict[str, Any]) -> dict[str, Any] | None:
    """CPU of one more submission: the class less a class a fifth its size, both with --workers 1."""
    small = max(1, opts.code_n // 5)
    if small >= opts.code_n:
        return None
    folder = opts.work / "code-class-small"
    failed = write_class(opts, small, folder)
    if failed:
        log(f"   could not write the small class: {failed}")
        return None
    m = grade_run(opts, folder, opts.work / "code-out-small", ["--workers", "1"], "code-small")
    cpu = (rows["workers 1"]["cpu"] - m["cpu"]) / (opts.code_n - small)
    log(f"   --workers 1 on {small} submissions: CPU {fmt_s(m['cpu'])}; one more submission: {cpu:.3f} s CPU")
    return {"small_n": small, "small_cpu": m["cpu"], "cpu": cpu}


def run(opts: Options) -> dict[str, Any]:
    log(f"== code-check class: {opts.code_n} submissions (2e and 2g.i run in the sandbox), "
        "--workers 1, --workers 2, --executor dask")
    if subprocess.run([str(opts.python), "-c", "import torch"], capture_output=True, check=False).returncode != 0:
        log("   torch is not installed in the venv (pip install -e '.[torch]'): the code checks would not run; skipped")
        return {"skipped": "torch not installed"}
    class_dir = opts.work / "code-class"
    failed = write_class(opts, opts.code_n, class_dir)
    if failed:
        log(f"   could not write the class: {failed}")
        return {"error": failed}
    rows = executor_runs(opts, class_dir, prefix="code-")
    for label, row in rows.items():
        row["per_submission_wall"] = row["wall"] / opts.code_n
        row["per_submission_cpu"] = row["cpu"] / opts.code_n
        log(f"   {label}: {row['per_submission_wall']:.2f} s wall, {row['per_submission_cpu']:.2f} s CPU a "
            "submission, fixed costs included")
    log(f"   --workers 2 over --workers 1 on code checks: {rows['workers 1']['wall'] / rows['workers 2']['wall']:.2f}x")
    more = marginal_cpu(opts, rows)
    cpu = more["cpu"] if more else rows["workers 1"]["per_submission_cpu"]
    goal = target("code_cpu")
    log(f"   CPU a submission ({'one more' if more else 'fixed costs included'}): {cpu:.3f} s: "
        f"{verdict(goal.met(cpu))} ({goal.describe()})")
    return {"n": opts.code_n, "runs": rows, "speedup_2_over_1": rows["workers 1"]["wall"] / rows["workers 2"]["wall"],
            "marginal": more, "cpu_per_submission": cpu, "cpu_is_marginal": more is not None,
            "differing_results": sum(not r["same_results"] for r in rows.values())}
