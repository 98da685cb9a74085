"""The peak memory of the timed class run's process tree, as the memory target judges it.

The figure is the larger of two peaks sampled from /proc while `grade run` ran: the tree's
summed PSS (pages shared by forked workers split between them) and the largest VmHWM of any
one process. wait4's max RSS is recorded too but not judged: a child's starts at the size of
the process that forked it.
"""

from __future__ import annotations

from typing import Any

from child import log, verdict
from options import Options
from targets import target


def run(opts: Options, best: dict[str, Any]) -> dict[str, Any]:
    largest, pss = best.get("largest_process_mb", 0.0), best.get("tree_peak_pss_mb", 0.0)
    peak = max(largest, pss)
    limit = target("memory_100k")
    log(f"== peak memory of the timed run ({opts.n} submissions): tree PSS {pss:.0f} MB, largest process "
        f"{largest:.0f} MB (VmHWM), tree RSS {best.get('tree_peak_rss_mb', 0.0):.0f} MB, wait4 max RSS "
        f"{best['maxrss_mb']:.0f} MB: {verdict(limit.met(peak))} against {limit.describe()}"
        + ("" if opts.n >= 100_000 and opts.distinct_files else " (the target is set on 100,000 submissions with "
           "--distinct-files)"))
    return {"peak_mb": peak, "largest_process_mb": largest, "tree_peak_pss_mb": pss,
            "tree_peak_rss_mb": best.get("tree_peak_rss_mb"), "maxrss_mb": best["maxrss_mb"]}
