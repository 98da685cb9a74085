"""The staff grading app (`grade review`) at class scale: bench/review_bench.py with --n students.

Its own class (a results.json of one written part, answers drawn from a few dozen phrasings),
not the synthetic class: grouping one part's answers (CPU of `grade groups`, fixed costs left
out), the part page over HTTP, and grading a group of 200 members over HTTP.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from child import log
from options import HERE, Options


def run(opts: Options) -> dict[str, Any]:
    log(f"== grade review: {opts.n} students' written answers to one part (bench/review_bench.py)")
    figures = opts.work / "review.json"
    figures.unlink(missing_ok=True)
    proc = subprocess.run([str(opts.python), str(HERE / "review_bench.py"), "--n", str(opts.n), "--json",
                           str(figures)], cwd=opts.work, capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        log(f"   {line}")
    if not figures.is_file():
        log(f"   review_bench.py failed (exit {proc.returncode}): {proc.stderr[-1500:]}")
        return {"error": proc.stderr[-1500:]}
    return json.loads(figures.read_text(encoding="utf-8"))
