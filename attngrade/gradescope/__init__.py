"""Gradescope: build an autograder zip (`grade autograder`) and grade inside it (`grade gradescope`).

`build_autograder` packs the attngrade wheel, the homework's keys and any instructor gold
with `setup.sh` and `run_autograder` (jinja2 templates in `templates/`); `run_gradescope`
is what `run_autograder` calls for each submission, and always writes results.json.
"""

from __future__ import annotations

from .build import build_autograder
from .run import run_gradescope

__all__ = ["build_autograder", "run_gradescope"]
