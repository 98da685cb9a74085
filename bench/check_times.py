"""CPU time per distinct answer, by check kind, for any version of attngrade.

    python bench/check_times.py [--source DIR] [--json FILE] -- run CLASS -o OUT
    python bench/check_times.py --baseline DIR --rounds 4 -- run CLASS -o OUT

Runs `attngrade.cli.main(["run", ...])` in this process with one worker, so that every check
runs here, each timed with a CPU timer as it runs; the memo makes each call one distinct
answer. Prints, per check kind: calls, median, 90th percentile and total CPU milliseconds.
`--source` puts another checkout first on the import path, so the same script measures a
previous release (a `git worktree` of it) side by side with this one. Run it with
attngrade's venv.

The check kinds are those the bundled homeworks' problem files name (`grade new-homework`,
see bench/bank.py). To time them, the loaded package is searched for the table that maps
those names to the objects that run them (a dict whose values have a callable `run`), found
by what it holds rather than by the module it lives in, and its entries are wrapped.

`--baseline DIR --rounds N` measures this checkout and the one in DIR alternately, N times
each (one fresh process per measurement, so neither warms the other's caches), and prints
per kind the median over the rounds of each side's median, and their ratio. Alternating
keeps a busy moment of the machine from landing on one side only.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bank


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


def find_checks(kinds: list[str]) -> dict[str, Any]:
    """The loaded table of checks: among the dicts of attngrade's modules whose values all have a
    callable `run`, the one with the most of `kinds` as keys."""
    wanted = set(kinds)
    best: dict[str, Any] = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("attngrade") or module is None:
            continue
        for value in list(vars(module).values()):
            if not isinstance(value, dict) or len(wanted & value.keys()) <= len(wanted & best.keys()):
                continue
            if all(callable(getattr(v, "run", None)) for v in value.values()):
                best = value
    if not best:
        raise SystemExit(f"no table of checks naming any of {', '.join(kinds)} among attngrade's loaded modules")
    return best


def summary(times: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    out = {}
    for name, ts in sorted(times.items()):
        if not ts:
            continue
        ms = sorted(t * 1000 for t in ts)
        out[name] = {"calls": len(ms), "median_ms": round(statistics.median(ms), 4),
                     "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 4), "total_ms": round(sum(ms), 1)}
    return out


def compare(baseline: Path, rounds: int, grade_args: list[str]) -> int:
    """Alternate this checkout and `baseline`; print the median of medians per kind."""
    import subprocess
    import tempfile

    runs: dict[str, list[dict]] = {"this": [], "baseline": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(rounds):
            for side in ("baseline", "this"):
                figures = Path(tmp) / f"{side}-{i}.json"
                source = ["--source", str(baseline)] if side == "baseline" else []
                subprocess.run([sys.executable, __file__, *source, "--json", str(figures), "--", *grade_args],
                               check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                runs[side].append(json.loads(figures.read_text()))
    print(f"{'check':16s} {'this (ms)':>10s} {'baseline (ms)':>14s} {'ratio':>7s}   median over {rounds} rounds")
    for name in sorted(runs["this"][0]):
        this = statistics.median(r[name]["median_ms"] for r in runs["this"] if name in r)
        base = [r[name]["median_ms"] for r in runs["baseline"] if name in r]
        if not base:
            print(f"{name:16s} {this:10.4f} {'-':>14s}")
            continue
        base_median = statistics.median(base)
        print(f"{name:16s} {this:10.4f} {base_median:14.4f} {this / base_median:7.2f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, help="a checkout of another version to measure instead")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--baseline", type=Path, help="a checkout to compare this one with, alternately")
    parser.add_argument("--rounds", type=int, default=4, help="measurements of each side with --baseline")
    parser.add_argument("grade", nargs=argparse.REMAINDER, help="-- then the grade command line (without 'grade')")
    args = parser.parse_args(argv)
    grade_args = [a for a in args.grade if a != "--"]
    if args.baseline:
        return compare(args.baseline, args.rounds, grade_args)
    homeworks = bank.bundled(sys.executable)  # this checkout's bank, also when --source measures another
    if args.source:
        sys.path.insert(0, str(args.source.resolve()))
    from attngrade import cli

    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        cli.main(["problems", next(iter(homeworks))])  # loading a homework loads every check
    registry = find_checks(bank.check_kinds(homeworks))
    times: dict[str, list[float]] = {name: [] for name in registry}
    for name in list(registry):
        registry[name] = _Timed(registry[name], times[name])
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
