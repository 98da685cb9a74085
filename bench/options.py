"""bench/run.py's flags, parsed into one `Options` that every measurement takes."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
README = HERE / "README.md"


@dataclass(frozen=True)
class Options:
    n: int = 1000
    seed: int = 7
    worst_case: bool = False
    distinct_files: bool = False
    folder_share: float = 0.5
    repeat: int = 1
    ratio_pairs: int = 5
    workers: int | None = None
    cold_runs: int = 5
    quiet_wait: float = 0.0
    code_n: int = 20
    skip_otter: bool = False
    skip_cold: bool = False
    skip_executors: bool = False
    skip_code: bool = False
    skip_check_times: bool = False
    skip_review: bool = False
    baseline: Path | None = None
    venv: Path = ROOT / ".venv"
    solutions: Path = ROOT / "solutions"
    check_file: Path = ROOT / "examples" / "cs224n-w21-a5" / "full-marks.yaml"
    work: Path = Path("/tmp/attngrade-bench")
    otter_venv: Path = HERE / ".otter-venv"
    otter_python: str = "python3"
    profile: str = "auto"
    write_table: Path | None = None
    grade_flags: tuple[str, ...] = ()  # `--workers N` when `grade run` takes it; set by run.py

    @property
    def grade(self) -> Path:
        return self.venv / "bin" / "grade"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def class_dir(self) -> Path:
        return self.work / "class"

    @property
    def realistic_1000(self) -> bool:
        """The class the realistic targets are set on: 1,000 submissions, answers drawn from the pools."""
        return self.n == 1000 and not self.worst_case and not self.distinct_files

    def cores(self) -> int:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="attngrade's benchmark: grade a synthetic class and measure it.")
    _class_flags(p)
    _step_flags(p)
    _place_flags(p)
    return p


def _class_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("the synthetic class")
    g.add_argument("--n", type=int, default=1000, help="submissions in the synthetic class (default 1000)")
    g.add_argument("--seed", type=int, default=7, help="seed of the synthetic class (default 7)")
    g.add_argument("--worst-case", action="store_true",
                   help="every student writes every checked answer differently (generate.py --distinct)")
    g.add_argument("--distinct-files", action="store_true",
                   help="every student's dev prediction files distinct (as when each trains a model)")
    g.add_argument("--folder-share", type=float, default=0.5,
                   help="share of A5/MIMUW submissions that are folders with prediction files (default 0.5)")
    g.add_argument("--repeat", type=int, default=1, help="grade the class this many times; the fastest counts")
    g.add_argument("--workers", type=int, default=None,
                   help="--workers for the timed `grade run` when it has the option (default: the number of cores)")
    g.add_argument("--quiet-wait", type=float, default=0.0, metavar="S",
                   help="before each timed class run, wait up to S seconds for other load to settle")


def _step_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("measurements (each after the class run)")
    g.add_argument("--skip-executors", action="store_true",
                   help="leave out --workers 1 / --workers 2 / --executor dask and the ratio pairs")
    g.add_argument("--ratio-pairs", type=int, default=5, metavar="N",
                   help="pairs of --workers 1 / --workers 2 runs for the two-worker speed-up, the ratio of their "
                        "median walls (default 5; 0: the executor runs' own walls)")
    g.add_argument("--skip-check-times", action="store_true",
                   help="leave out the CPU time per distinct answer by check kind (bench/check_times.py)")
    g.add_argument("--skip-code", action="store_true", help="leave out the code-check class (needs torch in the venv)")
    g.add_argument("--code-n", type=int, default=20, help="submissions in the code-check class (default 20)")
    g.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                   help="another checkout (git worktree add DIR REV) to grade the same class with; the part "
                        "verdicts that differ are counted and listed")
    g.add_argument("--skip-review", action="store_true",
                   help="leave out the staff grading app at class scale (bench/review_bench.py, --n students)")
    g.add_argument("--skip-cold", action="store_true", help="leave out the cold `grade check`")
    g.add_argument("--cold-runs", type=int, default=5, help="runs of `grade check` and of the floor (default 5)")
    g.add_argument("--skip-otter", action="store_true", help="leave out the Otter-Grader comparison")
    g.add_argument("--profile", choices=("auto", "always", "never"), default="auto",
                   help="cProfile the runs whose target was missed (auto), all of them, or none")
    g.add_argument("--write-table", nargs="?", type=Path, const=README, default=None, metavar="README",
                   help="write the figures of this run into the table of README (default bench/README.md); "
                        "rows this run did not measure keep what they had")


def _place_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("places")
    g.add_argument("--venv", type=Path, default=ROOT / ".venv",
                   help="attngrade's virtualenv (default: the repository's .venv)")
    g.add_argument("--solutions", type=Path, default=ROOT / "solutions")
    g.add_argument("--check-file", type=Path, default=ROOT / "examples" / "cs224n-w21-a5" / "full-marks.yaml")
    g.add_argument("--work", type=Path, default=Path("/tmp/attngrade-bench"),
                   help="scratch folder for the class and outputs (default /tmp/attngrade-bench)")
    g.add_argument("--otter-venv", type=Path, default=HERE / ".otter-venv",
                   help="virtualenv for Otter, created on first use (default bench/.otter-venv)")
    g.add_argument("--otter-python", default="python3", help="interpreter that creates the Otter venv")


def parse(argv: list[str] | None = None) -> Options:
    p = parser()
    args = p.parse_args(argv)
    if min(args.n, args.repeat, args.cold_runs, args.code_n) < 1:
        p.error("--n, --repeat, --cold-runs and --code-n must be at least 1")
    if args.ratio_pairs < 0:
        p.error("--ratio-pairs must be 0 or more")
    values = vars(args)
    for key in ("work", "solutions", "check_file", "venv", "otter_venv", "baseline", "write_table"):
        if values[key] is not None:
            values[key] = values[key].resolve()
    opts = Options(**values)
    if not opts.grade.exists():
        p.error(f"no `grade` in {opts.venv}/bin; install attngrade there (pip install -e .)")
    if opts.write_table is not None and not opts.write_table.is_file():
        p.error(f"--write-table: no file {opts.write_table}")
    return opts
