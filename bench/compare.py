#!/usr/bin/env python3
"""`grade run` wall times across checkouts, measured so that they can be compared.

    git worktree add /tmp/wt-old REV
    python3 bench/compare.py /tmp/wt-old . --class /tmp/attngrade-bench/class --workers 1,2 --rounds 7

Two things make a plain before/after misleading on a shared machine, and both are taken
out here:
- A checkout whose bytecode was never written (PYTHONDONTWRITEBYTECODE set, as in some
  shells) compiles attngrade again on every run, which no installation pays. Each checkout
  is compiled first.
- The machine's speed wanders within minutes. The runs are taken in turn, one of each
  checkout a round, in an order that turns round each round, and medians are compared.

Each run is `grade run CLASS -o OUT --solutions CHECKOUT/solutions --workers W` in a fresh
process, started as `grade` starts (`attngrade.cli.entry`), with the checkout's own code first
on the path and this venv's packages. OUT is on a RAM disk where there is one
(/dev/shm), so that the disk's cost of making files where many were just deleted does not
vary from run to run. Exit 0 or 1 (some submissions could not be graded) counts; anything
else stops the comparison.

Printed: each checkout's median wall (and the two-worker ratio, when `--workers 1` is among
the values), then each checkout against the first, round by round: the median of the rounds'
differences and a 90% bootstrap interval of it. A change is told apart from the noise only
when that interval leaves out 0; a small difference takes many rounds to tell apart.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAUNCH = ("import sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'grade'; "
          "from attngrade import cli; sys.exit(getattr(cli, 'entry', cli.main)())")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkouts", nargs="+", type=Path, help="checkouts of attngrade (a worktree each)")
    parser.add_argument("--class", dest="cls", type=Path, required=True, help="the class to grade")
    parser.add_argument("--workers", default="2", help="comma-separated --workers values (default 2)")
    parser.add_argument("--rounds", type=int, default=7, help="runs of each checkout and workers value (default 7)")
    parser.add_argument("--venv", type=Path, default=ROOT / ".venv", help="the venv whose packages the runs use")
    parser.add_argument("--out", type=Path, default=None, help="where OUT goes (default: /dev/shm, else a temp dir)")
    args = parser.parse_args(argv)

    python = args.venv / "bin" / "python"
    checkouts = [c.resolve() for c in args.checkouts]
    workers = [int(w) for w in args.workers.split(",")]
    for checkout in checkouts:
        if not (checkout / "attngrade" / "__init__.py").is_file():
            parser.error(f"{checkout}: not a checkout of attngrade (no attngrade/__init__.py)")
        compiled = subprocess.run([str(python), "-m", "compileall", "-q", str(checkout / "attngrade")],
                                  capture_output=True, text=True)
        if compiled.returncode != 0:
            print(f"{checkout}: compileall failed:\n{compiled.stdout}{compiled.stderr}", file=sys.stderr)
            return 2
    base = args.out or (Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir()))
    out = base / f"attngrade-compare-{os.getpid()}"
    walls: dict[tuple[int, Path], list[float]] = {(w, c): [] for w in workers for c in checkouts}
    try:
        for i in range(args.rounds):
            order = checkouts[i % len(checkouts):] + checkouts[:i % len(checkouts)]
            for w in workers:
                for checkout in order:
                    walls[w, checkout].append(_run(python, checkout, args.cls, out, w))
    except RuntimeError as err:
        print(err, file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(out, ignore_errors=True)
    _report(walls, workers, checkouts)
    return 0


def _run(python: Path, checkout: Path, cls: Path, out: Path, workers: int) -> float:
    shutil.rmtree(out, ignore_errors=True)
    command = [str(python), "-c", LAUNCH, str(checkout), "run", str(cls), "-o", str(out),
               "--solutions", str(checkout / "solutions"), "--workers", str(workers)]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=tempfile.gettempdir(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{checkout}, --workers {workers}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return wall


def _report(walls: dict[tuple[int, Path], list[float]], workers: list[int], checkouts: list[Path]) -> None:
    width = max(len(str(c)) for c in checkouts)
    for w in workers:
        print(f"--workers {w}: median (min, max) of {len(walls[w, checkouts[0]])} runs")
        for checkout in checkouts:
            runs = walls[w, checkout]
            print(f"  {str(checkout):<{width}}  {statistics.median(runs):6.3f} s ({min(runs):.3f}, {max(runs):.3f})")
    if 1 in workers and len(workers) > 1:
        for w in (w for w in workers if w != 1):
            print(f"--workers {w} over --workers 1 (ratio of medians; in brackets, the median of each round's own ratio)")
            for checkout in checkouts:
                ratio = statistics.median(walls[1, checkout]) / statistics.median(walls[w, checkout])
                own = statistics.median(a / b for a, b in zip(walls[1, checkout], walls[w, checkout]))
                print(f"  {str(checkout):<{width}}  {ratio:.2f}x ({own:.2f}x)")
    first = checkouts[0]
    for w in workers if len(checkouts) > 1 else ():
        print(f"--workers {w}, each checkout against {first}, round by round: the median difference and "
              f"its {CONFIDENCE:.0%} interval")
        for checkout in checkouts[1:]:
            middle, low, high = paired(walls[w, first], walls[w, checkout])
            told = "within the noise" if low <= 0 <= high else ("slower" if low > 0 else "faster")
            print(f"  {str(checkout):<{width}}  {middle:+.3f} s ({low:+.3f}, {high:+.3f}): {told}")


CONFIDENCE = 0.9


def paired(before: list[float], after: list[float], draws: int = 4000) -> tuple[float, float, float]:
    """The median of the rounds' differences `after - before`, and a bootstrap interval of it.

    Runs of one round are taken minutes apart at most, so the machine's drift from round to round
    falls out of a round's difference; what is left is each run's own spread, which the interval
    measures (resampled with a fixed seed: the same walls give the same interval)."""
    differences = [b - a for a, b in zip(before, after)]
    draw = random.Random(0)
    medians = sorted(statistics.median(draw.choices(differences, k=len(differences))) for _ in range(draws))
    tail = (1 - CONFIDENCE) / 2
    return statistics.median(differences), medians[int(tail * draws)], medians[int((1 - tail) * draws) - 1]


if __name__ == "__main__":
    sys.exit(main())
