"""The figures of one bench/run.py report, judged against bench/targets.py, and the README's table of them.

Each target gets a figure only when the run measured it on the class the target is set on
(the realistic targets on 1,000 submissions drawn from the pools, the worst case on
--worst-case, the 100,000 targets on --n 100000 --distinct-files). `--write-table` rewrites
the table between the two marker comments of bench/README.md: the rows this run measured get
its figures, the others keep theirs if the table was taken on the same machine, else read
"not measured".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from child import log
from options import Options
from targets import TARGETS, Target, target

BEGIN = "<!-- figures:begin (bench/run.py --write-table rewrites this table) -->"
END = "<!-- figures:end -->"
HEADER = ["| target | limit | measured | verdict | commit |", "|---|---|---|---|---|"]


@dataclass(frozen=True)
class Figure:
    value: float
    text: str  # the measured cell: the figure in bold and how it was taken


def _class_figures(opts: Options, report: dict[str, Any]) -> dict[str, Figure]:
    cls = report["class"]
    walls = sorted(r["wall"] for r in cls["runs"])
    how = f"best of {len(walls)}" + (f" ({', '.join(f'{w:.2f}' for w in walls[1:])})" if len(walls) > 1 else "")
    flags = " ".join(opts.grade_flags) or "default workers"
    wall = Figure(walls[0], f"**{walls[0]:.2f} s**, {how}, `{flags}`")
    if opts.realistic_1000:
        return {"realistic_1000": wall}
    if opts.n == 1000 and opts.worst_case:
        return {"worst_1000": wall}
    if opts.n == 100_000 and opts.distinct_files and not opts.worst_case:
        mem = report["memory"]
        return {"wall_100k": wall, "memory_100k": Figure(mem["peak_mb"], (
            f"**{mem['peak_mb']:,.0f} MB**: tree PSS {mem['tree_peak_pss_mb']:,.0f} MB, largest process "
            f"{mem['largest_process_mb']:,.0f} MB"))}
    return {}


def _executor_figures(opts: Options, report: dict[str, Any]) -> dict[str, Figure]:
    ex = report.get("executors", {})
    if "pairs" not in ex:
        return {}
    each = sorted(w1 / w2 for w1, w2 in ex["pairs"])
    found = {"executors_identical": Figure(ex["differing_results"], f"**{ex['differing_results']}** of "
                                           f"{len(ex['runs']) - 1}")}
    if opts.realistic_1000:
        found["workers_speedup"] = Figure(ex["speedup_2_over_1"], (
            f"**{ex['speedup_2_over_1']:.2f}×**: median walls of {len(ex['pairs'])} pairs (pairs {each[0]:.2f}× to "
            f"{each[-1]:.2f}×, their median {ex['pair_ratio_median']:.2f}×)"))
    return found


def _other_figures(opts: Options, report: dict[str, Any]) -> dict[str, Figure]:
    found: dict[str, Figure] = {}
    ct = report.get("check_times", {})
    if opts.realistic_1000 and ct.get("kinds"):
        if ct.get("qkv_median_ms") is not None:
            calls = ct["kinds"]["attention_qkv"]["calls"]
            found["qkv_ms"] = Figure(ct["qkv_median_ms"],
                                     f"**{ct['qkv_median_ms']:.2f} ms** ({calls} distinct answers)")
        found["kind_ms"] = Figure(ct["slowest_median_ms"], f"**{ct['slowest_median_ms']:.2f} ms**, the slowest: "
                                  f"`{ct['slowest']}`")
    cold = report.get("cold", {})
    if "ratio" in cold:
        runs = len(cold["runs"])
        found["cold_ratio"] = Figure(cold["ratio"], f"**{cold['ratio']:.2f}×**: {cold['median']:.2f} s against "
                                     f"{cold['floor_median']:.2f} s, medians of {runs} runs each")
        found["cold_wall"] = Figure(cold["median"], f"**{cold['median']:.2f} s**, median of {runs} runs")
    code = report.get("code", {})
    if "cpu_per_submission" in code:
        how = (f"one more submission: {code['n']} against {code['marginal']['small_n']} submissions"
               if code.get("cpu_is_marginal") else f"{code['n']} submissions, fixed costs included")
        found["code_cpu"] = Figure(code["cpu_per_submission"], f"**{code['cpu_per_submission']:.3f} s**: "
                                   f"`--workers 1`, {how}")
    otter = report.get("otter", {})
    if "ratio" in otter:
        found["otter_ratio"] = Figure(otter["ratio"], f"**{otter['ratio']:.0f}×**: {otter['otter_per_sub']:.2f} s "
                                      f"against {otter['attngrade_per_sub']:.3f} s a submission")
    rv = report.get("review", {})
    if opts.n == 1000 and "page_ms" in rv:
        found["review_grouping"] = Figure(rv["grouping"]["cpu_s"], f"**{rv['grouping']['cpu_s']:.2f} s** "
                                          f"({rv['grouping']['groups']} groups; fixed costs left out)")
        found["review_page"] = Figure(rv["page_ms"], f"**{rv['page_ms']:.0f} ms**, median of 5")
    if "grade_ms" in rv:
        found["review_grade"] = Figure(rv["grade_ms"], f"**{rv['grade_ms']:.0f} ms**, median of 5 "
                                       f"({rv['group_answers']} distinct answers)")
    base = report.get("baseline", {})
    if base.get("differences") is not None:
        found["verdicts"] = Figure(base["differences"], f"**{base['differences']:,}** of {base['parts']:,} "
                                   f"(against {Path(base['baseline']).name})")
    return found


def figures(opts: Options, report: dict[str, Any]) -> dict[str, Figure]:
    """The figure of every target this report measured, on the class the target is set on."""
    return {**_class_figures(opts, report), **_executor_figures(opts, report), **_other_figures(opts, report)}


def judge(t: Target, figure: Figure) -> str:
    if t.met(figure.value):
        return "met"
    return "to review" if t.name == "verdicts" else "missed"


def log_targets(found: dict[str, Figure]) -> None:
    log("== targets")
    for t in TARGETS:
        if t.name in found:
            figure = found[t.name]
            log(f"   {t.what} {t.describe()}: {judge(t, figure).upper()} ({figure.text.replace('**', '')})")
    if not found:
        log("   no target is set on this class (see bench/README.md)")


def _row(t: Target, figure: Figure | None, commit: str) -> str:
    if figure is None:
        return f"| {t.what} | {t.describe()} | not measured | | |"
    return f"| {t.what} | {t.describe()} | {figure.text} | {judge(t, figure)} | {commit} |"


def _old_rows(block: list[str]) -> dict[str, str]:
    """The rows of an existing table that hold a figure, by target name."""
    by_what = {t.what: t.name for t in TARGETS}
    rows = {}
    for line in block:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] in by_what and "not measured" not in line:
            rows[by_what[cells[0]]] = line
    return rows


def write_table(readme: Path, found: dict[str, Figure], machine: str, commit: str) -> None:
    """Rewrite the table between BEGIN and END in `readme`."""
    text = readme.read_text(encoding="utf-8")
    match = re.search(re.escape(BEGIN) + r"\n(.*?)" + re.escape(END), text, flags=re.S)
    if match is None:
        raise SystemExit(f"{readme}: no table markers ({BEGIN} ... {END})")
    block = match.group(1).splitlines()
    same_machine = f"Machine: {machine}." in block
    old = _old_rows(block) if same_machine else {}
    lines = [f"Machine: {machine}.", "", *HEADER]
    for t in TARGETS:
        lines.append(_row(t, found[t.name], commit) if t.name in found else old.get(t.name) or _row(t, None, commit))
    new = text[:match.start()] + BEGIN + "\n" + "\n".join(lines) + "\n" + END + text[match.end():]
    readme.write_text(new, encoding="utf-8")
    log(f"wrote {len(found)} figures into the table of {readme}"
        + ("" if same_machine else " (another machine before: the other rows were cleared)"))


def missed(found: dict[str, Figure]) -> dict[str, bool]:
    """Which of the class run, the Otter comparison and the cold start missed its target (--profile auto)."""
    def miss(name: str) -> bool:
        return name in found and not target(name).met(found[name].value)

    return {"class": any(miss(name) for name in ("realistic_1000", "worst_1000", "wall_100k")),
            "otter": miss("otter_ratio"), "cold": miss("cold_ratio")}
