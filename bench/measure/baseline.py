"""The class graded by another checkout (--baseline DIR), and the part verdicts that differ.

The other checkout runs through its own `attngrade.cli.main`, its code first on the path, with
this venv's packages and its own solutions/. Every (student, part) whose status or score
differs is counted, by part and by change of status, so that each kind of difference can be
matched with the change that made it on purpose.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from child import fmt_s, log
from child import run as run_child
from options import Options

LAUNCH = "import sys; sys.path.insert(0, sys.argv.pop(1)); from attngrade.cli import main; sys.exit(main())"


def part_outcomes(results: Path) -> dict[tuple[str, str], tuple[str, float]]:
    """(student, "homework part") -> (status, score) of a results.json; a submission not graded
    is one (student, "") -> ("error", 0) entry."""
    outcomes: dict[tuple[str, str], tuple[str, float]] = {}
    for row in json.loads(results.read_text(encoding="utf-8")):
        if row.get("error"):
            outcomes[(row["student"], "")] = ("error", 0.0)
        for part in row.get("parts", []):
            outcomes[(row["student"], f"{row['homework']} {part['id']}")] = (part["status"],
                                                                             round(float(part["score"]), 6))
    return outcomes


def differences(old: dict, new: dict) -> Counter[str]:
    """Kinds of difference ("PART: status -> status", or "same status, other score") and their counts."""
    kinds: Counter[str] = Counter()
    for key in old.keys() | new.keys():
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if before and after and before[0] == after[0]:
            change = "same status, other score"
        else:
            change = f"{before[0] if before else 'absent'} -> {after[0] if after else 'absent'}"
        kinds[f"{key[1] or '(submission)'}: {change}"] += 1
    return kinds


def run(opts: Options) -> dict[str, Any]:
    log(f"== verdicts against {opts.baseline}")
    assert opts.baseline is not None
    out = opts.work / "out-baseline"
    if out.exists():
        shutil.rmtree(out)
    m = run_child([str(opts.python), "-c", LAUNCH, str(opts.baseline), "run", str(opts.class_dir), "-o", str(out),
                   "--solutions", str(opts.baseline / "solutions"), *opts.grade_flags],
                  stdout=opts.work / "grade-run-baseline.log")
    if not (out / "results.json").is_file():
        log(f"   the baseline wrote no results.json (exit {m['exit']}); see {opts.work / 'grade-run-baseline.log'}")
        return {"error": f"exit {m['exit']}"}
    new = part_outcomes(opts.work / "out" / "results.json")
    kinds = differences(part_outcomes(out / "results.json"), new)
    total = sum(kinds.values())
    log(f"   baseline wall {fmt_s(m['wall'])}; {total} of {len(new)} part verdicts differ "
        "(each should be a change made on purpose)")
    for kind, count in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])):
        log(f"     {count:6d}  {kind}")
    return {"baseline": str(opts.baseline), "wall": m["wall"], "parts": len(new), "differences": total,
            "by_kind": dict(kinds)}
