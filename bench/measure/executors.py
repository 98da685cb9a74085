"""The class with `--workers 1`, `--workers 2` and `--executor dask --workers 2`, and the two-worker ratio.

Each executor's results.json must be byte for byte the `--workers 1` one. The speed-up of two
workers over one is taken from --ratio-pairs pairs of runs, one `--workers 1` run then one
`--workers 2` run, each a fresh process into a fresh OUT: the figure is the ratio of the two
sides' median walls, with the median of the pairs' own ratios beside it (a pair's two runs are
seconds apart, so that median moves least when the machine's or the disk's speed drifts).
One pair alone is no ratio: making files where thousands were just deleted costs the disk a
varying amount, which one run pays in one process and the other shares between two.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from child import fmt_s, grade_run, log, verdict
from options import Options
from targets import target

EXECUTORS = (("workers 1", ["--workers", "1"]), ("workers 2", ["--workers", "2"]),
             ("dask", ["--executor", "dask", "--workers", "2"]))


def executor_runs(opts: Options, class_dir: Path, prefix: str = "") -> dict[str, Any]:
    """Grade `class_dir` with each of EXECUTORS into WORK/<prefix>out-<executor>; each results.json is
    compared byte for byte with the --workers 1 one."""
    rows: dict[str, Any] = {}
    reference: bytes | None = None
    for label, flags in EXECUTORS:
        name = label.replace(" ", "")
        out = opts.work / f"{prefix}out-{name}"
        stats = opts.work / f"stats-{prefix}{name}.json"  # beside OUT: the run's own stage timings
        m = grade_run(opts, class_dir, out, [*flags, "--stats", str(stats)], f"{prefix}{name}", sample=True)
        data = (out / "results.json").read_bytes() if (out / "results.json").is_file() else b""
        reference = data if reference is None else reference
        same = bool(data) and data == reference
        stages = json.loads(stats.read_text(encoding="utf-8")).get("timings", {}) if stats.is_file() else {}
        rows[label] = {"wall": m["wall"], "cpu": m["cpu"], "exit": m["exit"], "other_cpu": m["other_cpu"],
                       "tree_peak_pss_mb": m.get("tree_peak_pss_mb"), "same_results": same, "stages": stages}
        log(f"   {label}: exit {m['exit']}, wall {fmt_s(m['wall'])}, CPU {fmt_s(m['cpu'])}, results.json "
            f"{'identical to --workers 1' if same else 'DIFFERS from --workers 1'}, "
            f"other processes used {m['other_cpu']:.1f} CPU s meanwhile")
    return rows


def _pair(opts: Options, class_dir: Path) -> tuple[float, float] | None:
    """One --workers 1 run then one --workers 2 run: their walls, or None if a run was killed by a signal."""
    walls = []
    for flag in ("1", "2"):
        m = grade_run(opts, class_dir, opts.work / f"out-workers{flag}", ["--workers", flag], f"workers{flag}")
        if m["exit"] < 0:
            log(f"   --workers {flag} was killed (signal {-m['exit']})")
            return None
        written = (opts.work / f"out-workers{flag}" / "results.json").is_file()
        if m["exit"] not in (0, 1) or not written:  # 1: a submission of the class was not graded (its broken files)
            raise SystemExit(f"grade run --workers {flag} failed (exit {m['exit']}): see "
                             f"{opts.work / f'grade-run-workers{flag}.log'}")
        walls.append(m["wall"])
    return walls[0], walls[1]


def ratio_pairs(opts: Options, class_dir: Path, rows: dict[str, Any]) -> list[tuple[float, float]]:
    """The (--workers 1, --workers 2) walls of --ratio-pairs pairs, measured alike (no memory sampler,
    which costs CPU); with no pairs asked for, the executor runs' own walls. A pair whose run was
    killed from outside is taken again (as many times as there are pairs, at most)."""
    if opts.ratio_pairs <= 0:
        return [(rows["workers 1"]["wall"], rows["workers 2"]["wall"])]
    pairs: list[tuple[float, float]] = []
    retries = max(2, opts.ratio_pairs)
    while len(pairs) < opts.ratio_pairs:
        pair = _pair(opts, class_dir)
        if pair is None:
            if retries == 0:
                raise SystemExit(f"grade run was killed too often; see the logs in {opts.work}")
            retries -= 1
            continue
        pairs.append(pair)
        log(f"   pair {len(pairs)}: --workers 1 {fmt_s(pair[0])}, --workers 2 {fmt_s(pair[1])}: "
            f"{pair[0] / pair[1]:.2f}x")
    return pairs


def speedup_bounds(rows: dict[str, Any]) -> dict[str, float] | None:
    """Amdahl's bounds for two workers from the --workers 1 run's stages (`grade run --stats`).

    plan_serial: the run and write stages split in two, the plan kept in one process (the other
    core working meanwhile); plan_split: the plan split too; nothing else (start-up, imports,
    assemble, answer groups) made faster. cpu: the --workers 2 run's own CPU spread over two
    cores, but for that serial rest."""
    one = rows.get("workers 1", {})
    stages = {name: t["wall_s"] for name, t in one.get("stages", {}).items()}
    if not {"plan", "run", "write"} <= stages.keys():
        return None
    wall = one["wall"]
    split = stages["run"] + stages["write"]
    serial = max(wall - split - stages["plan"], 0.0)
    bounds = {"serial_s": serial, "plan_serial": wall / (serial + max(stages["plan"], (stages["plan"] + split) / 2)),
              "plan_split": wall / (serial + (stages["plan"] + split) / 2)}
    if "workers 2" in rows:
        bounds["cpu"] = wall / (serial + max(rows["workers 2"]["cpu"] - serial, 0.0) / 2)
    return bounds


def _log_bounds(bounds: dict[str, float], rows: dict[str, Any]) -> None:
    log(f"   at best with 2 workers, from the --workers 1 run's stages: {bounds['plan_serial']:.2f}x with the plan "
        f"in one process, {bounds['plan_split']:.2f}x with the plan split too; {bounds['serial_s']:.2f} s of "
        f"{rows['workers 1']['wall']:.2f} s is outside the plan, run and write stages")
    if "cpu" in bounds:
        log(f"   ... and from the --workers 2 run's own CPU ({rows['workers 2']['cpu']:.2f} s over every process): "
            f"{bounds['cpu']:.2f}x at best")


def run(opts: Options) -> dict[str, Any]:
    log("== executors: --workers 1, --workers 2, --executor dask (a LocalCluster of 2 workers)")
    rows = executor_runs(opts, opts.class_dir)
    pairs = ratio_pairs(opts, opts.class_dir, rows)
    speedup = statistics.median(w1 for w1, _ in pairs) / statistics.median(w2 for _, w2 in pairs)
    each = sorted(w1 / w2 for w1, w2 in pairs)
    goal = target("workers_speedup")
    log(f"   --workers 2 over --workers 1: {speedup:.2f}x, the median walls of {len(pairs)} pairs (each pair "
        f"{each[0]:.2f}x to {each[-1]:.2f}x, their median {statistics.median(each):.2f}x): "
        f"{verdict(goal.met(speedup))} ({goal.describe()})")
    bounds = speedup_bounds(rows)
    if bounds:
        _log_bounds(bounds, rows)
    return {"runs": rows, "pairs": pairs, "speedup_2_over_1": speedup, "pair_ratio_median": statistics.median(each),
            "bounds": bounds, "differing_results": sum(not r["same_results"] for r in rows.values())}
