"""The synthetic class graded by `grade run`: the realistic class, the worst case, or 100,000 submissions.

bench/generate.py writes the class in a process of its own: a bench process that had built
a large class in memory would pass its size on to every `grade` it starts (Linux keeps the
largest RSS a process had before exec in wait4's figure). The class is then graded --repeat
times, each a fresh `grade run CLASS -o OUT --solutions S --workers N --stats FILE` after the
quiet wait; the fastest run counts. The figures: wall, CPU of the child and everything it
waited for, the memory of its process tree (sampled from /proc), the statuses in
results.json, the memo statistics `grade run --stats` wrote, and the distinct answers per part.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import time
from collections import Counter
from typing import Any

import generate
from child import fmt_s, log, quiet_wait
from child import run as run_child
from options import HERE, Options


def generate_class(opts: Options) -> dict[str, Any]:
    """Write the class to WORK/class; return its manifest (per-submission homework and pool labels)."""
    kind = ", worst case (every checked answer distinct)" if opts.worst_case else ""
    kind += ", every dev prediction file distinct" if opts.distinct_files else ""
    log(f"== the class: N={opts.n}, seed={opts.seed}{kind}")
    started = time.perf_counter()
    subprocess.run([str(opts.python), str(HERE / "generate.py"), "--n", str(opts.n), "--seed", str(opts.seed),
                    "--out", str(opts.class_dir), "--folder-share", str(opts.folder_share),
                    *(["--distinct"] if opts.worst_case else []),
                    *(["--distinct-files"] if opts.distinct_files else [])],
                   check=True, stdout=subprocess.DEVNULL)
    manifest = json.loads((opts.class_dir.parent / "manifest.json").read_text(encoding="utf-8"))
    manifest["generate_seconds"] = time.perf_counter() - started
    subs = manifest["submissions"]
    by_hw = Counter(s["homework"] or "(broken YAML)" for s in subs)
    labels = Counter(lab for s in subs for lab in s["labels"].values())
    log(f"   generated in {manifest['generate_seconds']:.2f} s: {len(subs)} submissions "
        f"({sum(s['folder'] for s in subs)} folders with real prediction files, "
        f"{sum(bool(s.get('broken')) for s in subs)} broken YAML)")
    log("   per homework: " + ", ".join(f"{h} {c}" for h, c in sorted(by_hw.items())))
    log("   parts by pool label: " + ", ".join(f"{k} {v}" for k, v in sorted(labels.items())))
    manifest["by_homework"], manifest["label_counts"] = dict(by_hw), dict(labels)
    return manifest


def timed_runs(opts: Options) -> list[dict[str, Any]]:
    """--repeat timed `grade run`s of the class into WORK/out, each with the tree's memory sampled."""
    runs: list[dict[str, Any]] = []
    out = opts.work / "out"
    killed = 0
    while len(runs) < opts.repeat:
        r = len(runs)
        if out.exists():
            shutil.rmtree(out)
        if opts.quiet_wait:
            log(f"   other load before run {r + 1}: {quiet_wait(opts.quiet_wait):.2f} cores busy")
        cmd = [str(opts.grade), "run", str(opts.class_dir), "-o", str(out), "--solutions", str(opts.solutions),
               *opts.grade_flags, "--stats", str(out / "stats.json")]
        m = run_child(cmd, stdout=opts.work / "grade-run.log", sample=True)
        if m["exit"] < 0 and killed < opts.repeat:  # killed by a signal from outside: taken again
            killed += 1
            log(f"   run {r + 1} was killed (signal {-m['exit']}); taken again")
            continue
        runs.append(m)
        log(f"   run {r + 1}: exit {m['exit']}, wall {fmt_s(m['wall'])}, CPU {fmt_s(m['cpu'])} "
            f"(user {m['user']:.2f} + sys {m['sys']:.2f}), max RSS {m['maxrss_mb']:.0f} MB, largest process "
            f"{m['largest_process_mb']:.0f} MB (VmHWM), tree peak RSS {m['tree_peak_rss_mb']:.0f} MB / "
            f"PSS {m['tree_peak_pss_mb']:.0f} MB ({m['tree_max_procs']} processes), load avg before "
            f"{m['load_before']:.2f}, other processes used {m['other_cpu']:.1f} CPU s meanwhile")
        # exit 1: some submission could not be graded (the broken YAML files), results.json written all the same
        if m["exit"] not in (0, 1) or not (out / "results.json").is_file():
            tail = (opts.work / "grade-run.log").read_text(errors="replace")[-2000:]
            raise SystemExit(f"grade run failed (exit {m['exit']}); see {opts.work / 'grade-run.log'}:\n{tail}")
    return runs


def results_summary(opts: Options) -> dict[str, Any]:
    """Rows, submissions not graded and part statuses of WORK/out/results.json."""
    results = json.loads((opts.work / "out" / "results.json").read_text(encoding="utf-8"))
    errors = sum(1 for r in results if r.get("error"))
    statuses = Counter(p["status"] for r in results for p in r.get("parts", []))
    log(f"   results.json: {len(results)} rows, {errors} not graded (the broken YAML files); part statuses: "
        + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
    if len(results) != opts.n:
        log(f"   WARNING: expected {opts.n} rows in results.json, found {len(results)}")
    return {"results_rows": len(results), "not_graded": errors, "statuses": dict(statuses)}


def memo(opts: Options) -> dict[str, Any] | None:
    """The plan and run stages' own counts, as `grade run --stats` wrote them."""
    stats_file = opts.work / "out" / "stats.json"
    if not stats_file.is_file():
        log("   memo statistics unavailable: grade run wrote no stats.json")
        return None
    t = json.loads(stats_file.read_text(encoding="utf-8"))
    if t.get("read_hit_rate") is not None:
        log("   memo (grade run --stats):")
        log(f"     reads  {t['reads']:6d} lookups, {t['read_hits']:6d} hits: hit rate {t['read_hit_rate']:.1%}")
        log(f"     checks {t['checks']:6d} lookups, {t['check_hits']:6d} hits: hit rate {t['check_hit_rate']:.1%}")
    if t.get("machine_check_hit_rate") is not None:
        log(f"       machine checks {t['machine_checks']:6d} lookups, {t['machine_distinct']:5d} distinct: "
            f"hit rate {t['machine_check_hit_rate']:.1%}")
    if t.get("manual_check_hit_rate") is not None:
        log(f"       manual (text)  {t['manual_checks']:6d} lookups, {t['manual_distinct']:5d} distinct: "
            f"hit rate {t['manual_check_hit_rate']:.1%}")
    return t


def _spread(values: list[int]) -> dict[str, Any]:
    values = sorted(values)
    return {"parts": len(values), "min": values[0], "median": statistics.median(values), "max": values[-1]}


def distinct(manifest: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Distinct answers per part, from the manifest: per row, and their spread over the parts."""
    counts = generate.distinct_answers(manifest)
    rows = [{"homework": hw, "part": part, **d} for (hw, part), d in sorted(counts.items())]
    log("   distinct answers per part (in brackets: without free-text fields, where that differs):")
    for hw in sorted({r["homework"] for r in rows}):
        cells = [f"{r['part']} {r['distinct']}" + (f" [{r['distinct_math']}]" if r["distinct_math"] and
                                                      r["distinct_math"] != r["distinct"] else "")
                 for r in rows if r["homework"] == hw]
        log(f"     {hw}: " + ", ".join(cells))
    summary = {}
    machine = [r["distinct_math"] for r in rows if r["distinct_math"]]
    text = [r["distinct"] for r in rows if not r["distinct_math"]]
    if machine:
        summary["machine_checked"] = s = _spread(machine)
        log(f"   machine-checked parts: {s['parts']}, distinct answers min {s['min']}, median {s['median']:g}, "
            f"max {s['max']} (free-text fields left out)")
    if text:
        summary["free_text"] = s = _spread(text)
        log(f"   free-text parts: {s['parts']}, distinct answers min {s['min']}, median {s['median']:g}, "
            f"max {s['max']} (reworded per student)")
    return rows, summary


def run(opts: Options) -> dict[str, Any]:
    manifest = generate_class(opts)
    runs = timed_runs(opts)
    best = min(runs, key=lambda m: m["wall"])
    rows, summary = distinct(manifest)
    return {"n": opts.n, "seed": opts.seed, "worst_case": opts.worst_case, "distinct_files": opts.distinct_files,
            "generate_seconds": manifest["generate_seconds"], "by_homework": manifest["by_homework"],
            "labels": manifest["label_counts"], "runs": runs, "best": best, "subs_per_s": opts.n / best["wall"],
            **results_summary(opts), "memo": memo(opts), "distinct": rows, "distinct_summary": summary}
