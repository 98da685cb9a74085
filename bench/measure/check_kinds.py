"""CPU milliseconds per distinct answer, by check kind, on the class (bench/check_times.py).

`grade run` with one worker in one process, each check timed as it runs; the memo makes each
call one distinct answer. The figures per kind: calls, median and 90th percentile.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

from child import log, verdict
from options import HERE, Options
from targets import target


def run(opts: Options) -> dict[str, Any]:
    log("== check kinds: CPU per distinct answer (one worker, so every check runs in one process)")
    figures, out = opts.work / "check-times.json", opts.work / "out-check-times"
    if out.exists():
        shutil.rmtree(out)
    figures.unlink(missing_ok=True)
    proc = subprocess.run([str(opts.python), str(HERE / "check_times.py"), "--json", str(figures), "--", "run",
                           str(opts.class_dir), "-o", str(out), "--solutions", str(opts.solutions)],
                          cwd=opts.work, capture_output=True, text=True)
    if not figures.is_file():
        log(f"   check_times.py failed (exit {proc.returncode}): {proc.stderr[-1500:]}")
        return {"error": proc.stderr[-1500:]}
    kinds = json.loads(figures.read_text(encoding="utf-8"))
    for name, row in kinds.items():
        log(f"   {name:16s} {row['calls']:6d} distinct answers, median {row['median_ms']:8.3f} ms, "
            f"p90 {row['p90_ms']:8.3f} ms")
    qkv = kinds.get("attention_qkv", {}).get("median_ms")
    slowest = max(kinds, key=lambda k: kinds[k]["median_ms"]) if kinds else None
    if qkv is not None:
        goal = target("qkv_ms")
        log(f"   1e.ii (attention_qkv) median {qkv:.2f} ms: {verdict(goal.met(qkv))} ({goal.describe()})")
    if slowest is not None:
        goal, ms = target("kind_ms"), kinds[slowest]["median_ms"]
        log(f"   slowest kind at the median: {slowest} {ms:.2f} ms: {verdict(goal.met(ms))} ({goal.describe()})")
    return {"kinds": kinds, "qkv_median_ms": qkv, "slowest": slowest,
            "slowest_median_ms": kinds[slowest]["median_ms"] if slowest else None}
