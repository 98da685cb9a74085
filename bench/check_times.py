"""CPU time per distinct answer, by check kind, for any version of attngrade.

    python bench/check_times.py [--source DIR] [--json FILE] -- grade run CLASS -o OUT

Runs `grade` in this process with one worker (so every check runs here) after wrapping
each entry of the check registry with a CPU timer. The memo means each call is one
distinct answer. `--source` puts another checkout first on the import path, so the same
script measures a previous release (a `git worktree` of it) side by side with this one.
Prints, per check kind: calls, median, 90th percentile and total CPU milliseconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any


class _Timed:
    """A registry entry whose `run` records its CPU time; everything else is the entry's."""

    def __init__(self, check: Any, times: list[float]) -> None:
        self._check, self._times = check, times

    def run(self, *args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return self._check.run(*args, **kwargs)
        finally:
            self._times.append(time.process_time() - start)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._check, name)


def summary(times: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    out = {}
    for name, ts in sorted(times.items()):
        if not ts:
            continue
        ms = sorted(t * 1000 for t in ts)
        out[name] = {"calls": len(ms), "median_ms": round(statistics.median(ms), 3),
                     "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 3), "total_ms": round(sum(ms), 1)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, help="a checkout of another version to measure instead")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("grade", nargs=argparse.REMAINDER, help="-- then the grade command line (without 'grade')")
    args = parser.parse_args(argv)
    grade_args = [a for a in args.grade if a != "--"]
    if args.source:
        sys.path.insert(0, str(args.source.resolve()))
    from attngrade import cli
    from attngrade.checkers import REGISTRY

    times: dict[str, list[float]] = {name: [] for name in REGISTRY}
    for name in list(REGISTRY):
        REGISTRY[name] = _Timed(REGISTRY[name], times[name])
    if "--workers" not in grade_args:
        grade_args += ["--workers", "1"]
    code = cli.main(grade_args)
    figures = summary(times)
    for name, row in figures.items():
        print(f"{name:16s} {row['calls']:6d} calls  median {row['median_ms']:8.3f} ms  "
              f"p90 {row['p90_ms']:8.3f} ms  total {row['total_ms']:9.1f} ms")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
