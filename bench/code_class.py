"""Benchmark: a class of A5 code submissions (2e and 2g.i run in the sandbox), graded on 2 cores.

    python3 bench/code_class.py                 # 100 submissions, 2 workers
    python3 bench/code_class.py --n 20 --repeat 1

Each submission is the reference solution's code or one of its bug classes (tests/data/code/bugs.yaml), in the
src/, a5/src/ or flat layout, with a comment naming the student so that every file is
distinct (no task is shared: each submission costs two sandbox children). The class is
graded with `grade run --workers 2` in a subprocess; the CPU time is that of the subprocess
and everything it waited for (workers, the zygote, its supervisors and children). A class of
10 is graded too: the difference between the two is the cost per submission without the
fixed costs (interpreter start-up, importing torch in the zygote).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "checkers"))
sys.path.insert(0, str(ROOT / "bench"))

from code_fixtures import BUGS, code_submission
from targets import target

LAYOUTS = ("src", "a5/src", ".")


def make_class(folder: Path, n: int) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    kinds = [None, None, None, *BUGS]  # mostly right, as in a real class
    for i in range(n):
        student = f"s{i:03d}"
        sub = code_submission(folder / student, kinds[i % len(kinds)], LAYOUTS[i % len(LAYOUTS)], student)
        for path in sub.rglob("*.py"):
            path.write_text(f"# {student}\n" + path.read_text())


def grade(folder: Path, out: Path, workers: int, python: str) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run([python, "-m", "attngrade", "run", str(folder), "-o", str(out), "--workers", str(workers),
                           "--solutions", str(ROOT / "solutions")], capture_output=True, text=True, cwd=folder.parent)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"grade run failed:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--small", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="grade each class R times; the fastest counts")
    parser.add_argument("--work", type=Path, default=Path("/tmp/attngrade-bench-code"))
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--write-class", type=Path, default=None, metavar="DIR",
                        help="only write a class of --n submissions to DIR (bench/run.py grades it itself)")
    args = parser.parse_args()
    if args.write_class is not None:
        make_class(args.write_class, args.n)
        return
    figures = {}
    for n in (args.small, args.n):
        make_class(args.work / f"class-{n}", n)
        runs = [grade(args.work / f"class-{n}", args.work / f"out-{n}", args.workers, args.python)
                for _ in range(args.repeat)]
        figures[n] = min(runs, key=lambda r: r["wall"])
        results = json.loads((args.work / f"out-{n}" / "results.json").read_text())
        graded = sum(1 for r in results for p in r["parts"] if p["id"] == "2e" and p["status"] != "missing")
        print(f"{n} submissions ({graded} with 2e graded): wall {figures[n]['wall']:.2f} s, "
              f"CPU {figures[n]['cpu']:.2f} s; per submission wall {figures[n]['wall'] / n:.3f} s, "
              f"CPU {figures[n]['cpu'] / n:.3f} s")
    small, big = figures[args.small], figures[args.n]
    extra = args.n - args.small
    marginal = {"wall": (big["wall"] - small["wall"]) / extra, "cpu": (big["cpu"] - small["cpu"]) / extra}
    goal = target("code_cpu")
    print(f"per additional submission (2e + 2g.i): wall {marginal['wall']:.3f} s, CPU {marginal['cpu']:.3f} s "
          f"(target: {goal.describe()} CPU: {'met' if goal.met(marginal['cpu']) else 'missed'})")
    report = {"cores": os.cpu_count(), "workers": args.workers, "classes": figures, "marginal": marginal}
    (args.work / "code-bench.json").write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
