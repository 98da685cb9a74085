"""The names of the files a grade run writes in OUT and beside it.

Written by `outputs`; read by `intake`, so that discovering a class passes over a run's
outputs inside it. Names only: this module imports nothing of attngrade.
"""

from __future__ import annotations

import re

# Each submission's id and report folder, for the next run into the same OUT (`outputs.history`).
FOLDERS_FILE = ".folders.json"

# The grader's secret for hidden samples, kept in OUT (readable by its owner alone) for the next run.
SALT_FILE = ".salt"

# The files a run writes at the top of OUT, beside the students' folders.
OUTPUT_FILES = frozenset({"results.json", "grades.csv", "index.html", "overrides.yaml", "overrides.new.yaml",
                          ".overrides.sha256", FOLDERS_FILE, SALT_FILE})


def beside(out_name: str) -> re.Pattern[str]:
    """What a run keeps beside OUT while it works: its lock, a staged OUT, the OUT it replaced."""
    return re.compile(rf"\.{re.escape(out_name)}\.(?:lock|partial-[A-Za-z0-9_]+|old-[A-Za-z0-9_]+)")
