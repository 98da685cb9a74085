"""`grade check` cold: one submission checked by a fresh process, against the floor of `import sympy, numpy`.

--cold-runs runs of `grade check FILE` alternate with as many runs of `python -c "import sympy,
numpy"` (the floor: the interpreter and the two libraries no check can do without), so that a
busy moment of the machine weighs on both; the figures are the two medians and their ratio.
attngrade's bytecode is written first, as installing a wheel does. Then `python -X importtime`
breaks down the imports of `import attngrade.cli` and of the `grade check` path, each heavy
third-party package attributed to the attngrade module that first imports it.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
from typing import Any

from child import compile_package, fmt_s, log, speed_probe, verdict
from child import run as run_child
from options import Options
from targets import target

IMPORT_LINE = re.compile(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)")


def parse_importtime(text: str) -> list[dict[str, Any]]:
    rows = []
    for line in text.splitlines():
        m = IMPORT_LINE.match(line)
        if m:
            rows.append({"self_us": int(m.group(1)), "cumulative_us": int(m.group(2)),
                         "depth": (len(m.group(3)) - 1) // 2, "module": m.group(4)})
    return rows


def _parents(rows: list[dict[str, Any]]) -> list[int | None]:
    """Each row's parent: -X importtime prints a module after its children, so the next row one level up."""
    parent: list[int | None] = [None] * len(rows)
    waiting: dict[int, list[int]] = {}  # depth -> rows waiting for their parent
    for i, r in enumerate(rows):
        for child in waiting.pop(r["depth"] + 1, []):
            parent[child] = i
        waiting.setdefault(r["depth"], []).append(i)
    return parent


def attribute(rows: list[dict[str, Any]], k: int = 10) -> list[dict[str, Any]]:
    """The heaviest third-party packages, each with the attngrade module that first imported it."""
    stdlib = set(getattr(sys, "stdlib_module_names", ())) | {"site", "encodings"}
    parent = _parents(rows)
    found = []
    for i, r in enumerate(rows):
        top = r["module"].split(".")[0]
        if top in stdlib or top.startswith("_") or top == "attngrade" or "." in r["module"] \
                or r["cumulative_us"] < 1000:
            continue
        via, j = None, parent[i]
        while j is not None:
            if rows[j]["module"].startswith("attngrade"):
                via = rows[j]["module"]
                break
            j = parent[j]
        found.append({"package": r["module"], "cumulative_ms": r["cumulative_us"] / 1000, "via": via})
    found.sort(key=lambda f: -f["cumulative_ms"])
    return found[:k]


def import_breakdown(opts: Options, label: str, code: str) -> dict[str, Any]:
    proc = subprocess.run([str(opts.python), "-X", "importtime", "-c", code], cwd=opts.work, capture_output=True,
                          text=True)
    rows = parse_importtime(proc.stderr)
    total = sum(r["cumulative_us"] for r in rows if r["depth"] == 0) / 1000
    third = attribute(rows)
    ours = sorted((r for r in rows if r["module"].startswith("attngrade")), key=lambda r: -r["cumulative_us"])[:8]
    log(f"   -X importtime, {label}: {total:.0f} ms of imports")
    log("     attngrade modules (cumulative ms): "
        + ", ".join(f"{r['module']} {r['cumulative_us'] / 1000:.0f}" for r in ours))
    log("     third-party packages (cumulative ms, first imported by): "
        + ", ".join(f"{h['package']} {h['cumulative_ms']:.0f} ({h['via'] or 'top level'})" for h in third))
    return {"total_import_ms": total, "third_party": third,
            "attngrade_modules": [{"module": r["module"], "cumulative_ms": r["cumulative_us"] / 1000} for r in ours]}


def run(opts: Options) -> dict[str, Any]:
    log(f"== cold start: `grade check {opts.check_file}` x {opts.cold_runs}, alternating with the floor")
    probe = speed_probe(opts.python)
    if probe is not None:
        log(f"   speed probe: {probe:.3f} s CPU for a fixed loop (higher: a contended machine)")
    compile_package(opts.python)
    walls, floors = [], []
    for _ in range(opts.cold_runs):
        m = run_child([str(opts.grade), "check", str(opts.check_file)])
        if m["exit"] != 0:
            log(f"   grade check exited {m['exit']}")
        walls.append(m["wall"])
        floors.append(run_child([str(opts.python), "-c", "import sympy, numpy"])["wall"])
    med, floor = statistics.median(walls), statistics.median(floors)
    ratio, wall_goal, ratio_goal = med / floor, target("cold_wall"), target("cold_ratio")
    log(f"   grade check: median {fmt_s(med)} (min {min(walls):.2f}, max {max(walls):.2f}): "
        f"{verdict(wall_goal.met(med))} ({wall_goal.describe()})")
    log(f"   floor `import sympy, numpy`: median {fmt_s(floor)}; ratio {ratio:.2f}: "
        f"{verdict(ratio_goal.met(ratio))} ({ratio_goal.describe()})")
    out: dict[str, Any] = {"runs": walls, "median": med, "speed_probe": probe, "floor_runs": floors,
                           "floor_median": floor, "ratio": ratio}
    out["import attngrade.cli"] = import_breakdown(opts, "import attngrade.cli", "import attngrade.cli")
    out["grade check path"] = import_breakdown(opts, "the grade check path", "import sys; from attngrade.cli import "
                                               f"main; sys.exit(main(['check', {str(opts.check_file)!r}]))")
    return out
