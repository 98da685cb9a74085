#!/usr/bin/env python3
"""Memo statistics of one class, graded in-process through `attngrade.batch.grade_paths`.

    /tmp/venv/bin/python bench/memo_stats.py CLASS_DIR [--solutions DIR]

Prints one JSON object. `grade run` does not write its memo statistics anywhere, so
bench/run.py calls this (in a process of its own) after the timed run.

Since the three-pass batch (collect the distinct checks, run them, replay every
student from the memo), `Grader.stats` needs care:

* the replay pass counts every read again, so reads are taken from a snapshot of the
  stats at the end of the collect pass (when `Grader.prime` receives the outcomes);
* an answer already queued in the collect pass is not counted as a check hit, so
  `check_hits` stays 0; the check hit rate is therefore 1 - distinct/lookups, with
  distinct = the number of outcomes in the memo after the run.

Both the corrected figures and the stats as exposed are printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import asdict, is_dataclass
from pathlib import Path


def _stats_dict(stats) -> dict:
    if is_dataclass(stats):
        return asdict(stats)
    return {k: getattr(stats, k) for k in ("reads", "read_hits", "checks", "check_hits") if hasattr(stats, k)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--solutions", type=Path, default=Path("solutions"))
    args = parser.parse_args(argv)

    from attngrade import batch as batch_mod
    from attngrade.grading import Grader

    snapshots: dict[str, dict] = {}
    original_prime = getattr(Grader, "prime", None)
    if original_prime is not None:
        def prime(self, outcomes):  # end of the collect pass: the reads so far are counted once
            snapshots[self.homework.id] = _stats_dict(self.stats)
            return original_prime(self, outcomes)

        Grader.prime = prime
    # Check lookups per kind of check, counted in the collect pass only (as Grader.stats does).
    lookups_by_kind: Counter = Counter()
    original_run = getattr(Grader, "_run", None)
    if original_run is not None:
        def _run(self, part, index, answers):
            if not getattr(self, "replaying", False):
                lookups_by_kind[(self.homework.id, part.checks[index].check)] += 1
            return original_run(self, part, index, answers)

        Grader._run = _run
    kwargs = {}
    try:
        import inspect

        if "workers" in inspect.signature(batch_mod.grade_paths).parameters:
            kwargs["workers"] = 1
    except (TypeError, ValueError):
        pass
    start = time.process_time()
    batch = batch_mod.grade_paths([args.path], args.solutions, **kwargs)
    cpu = time.process_time() - start

    homeworks = {}
    totals = Counter()
    for hid, grader in sorted(batch.graders.items()):
        exposed = _stats_dict(grader.stats)
        first = snapshots.get(hid, exposed)
        outcomes = getattr(grader, "_outcomes", None)
        reads = getattr(grader, "_reads", None)
        distinct_checks = len(outcomes) if outcomes is not None else None
        distinct_reads = len(reads) if reads is not None else None
        lookups = exposed.get("checks", 0)
        if distinct_checks is not None and lookups:
            check_hits = lookups - distinct_checks
        else:
            check_hits = exposed.get("check_hits", 0)
        by_part = Counter(key[0] for key in outcomes) if outcomes else Counter()
        parts = {p.id: p for p in grader.homework.parts}
        distinct_by_kind = Counter(parts[key[0]].checks[key[1]].check for key in outcomes
                                   if key[0] in parts) if outcomes else Counter()
        for (h, kind), n in lookups_by_kind.items():
            if h == hid:
                group = "manual" if kind == "manual" else "machine"
                totals[f"{group}_checks"] += n
                totals[f"{group}_distinct"] += 0
        for kind, n in distinct_by_kind.items():
            totals[f"{'manual' if kind == 'manual' else 'machine'}_distinct"] += n
        homeworks[hid] = {
            "reads": first.get("reads", 0), "read_hits": first.get("read_hits", 0), "distinct_reads": distinct_reads,
            "checks": lookups, "check_hits": check_hits, "distinct_checks": distinct_checks,
            "distinct_checks_by_part": dict(sorted(by_part.items())),
            "stats_as_exposed": exposed,
        }
        for k in ("reads", "read_hits", "checks", "check_hits"):
            totals[k] += homeworks[hid][k]
    out = {
        "method": "in-process attngrade.batch.grade_paths (workers=1); reads from a stats snapshot at the end of "
                  "the collect pass; check hits = lookups - distinct outcomes in the memo",
        "submissions": len(batch.results),
        "cpu_seconds": round(cpu, 3),
        "homeworks": homeworks,
        "totals": dict(totals),
        "read_hit_rate": totals["read_hits"] / totals["reads"] if totals["reads"] else None,
        "check_hit_rate": totals["check_hits"] / totals["checks"] if totals["checks"] else None,
        # machine checks (everything but `manual`) vs manual ones (free text, reworded per student)
        "machine_check_hit_rate": (1 - totals["machine_distinct"] / totals["machine_checks"])
        if totals.get("machine_checks") else None,
        "manual_check_hit_rate": (1 - totals["manual_distinct"] / totals["manual_checks"])
        if totals.get("manual_checks") else None,
        "statuses": dict(Counter(v.status for r in batch.results for v in r.parts)),
    }
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
