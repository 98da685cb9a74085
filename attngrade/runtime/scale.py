"""The size from which a class is large: one number for every policy that changes with it.

From `LARGE_CLASS` submissions on:

- submissions are loaded one at a time as the plan reads them (`grading.plan.Loading`), and
  the plan keeps only their readings, shared between equal answers;
- the plan is not split across processes (`grading.shards`): the shares' plans would be
  held whole while they are joined;
- the report processes and the run stage's workers start before the class is read
  (`reports.parallel`, the fork server of `grading.execute`), while this process is small:
  forked later, each would end up with a private copy of much of the plan;
- what the plan read is not frozen (`batch.grade_paths`): its garbage would wait for the
  end of the run.
"""

import os

LARGE_CLASS = 5_000

# Below this, a class is loaded by one process: a second one loading half of it would not pay for its start.
SHARE_LOAD_FROM = 200


def default_workers(workers: int | None = None) -> int:
    """The processes a run uses: `workers` if told (`--workers N`), else one per core this process may run on."""
    if workers is not None:
        return workers
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
