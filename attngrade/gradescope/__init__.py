"""Gradescope: build an autograder zip (`grade autograder`) and grade inside it (`grade gradescope`).

`build_autograder` packs the attngrade wheel, the homework's keys and any instructor gold
with `setup.sh` and `run_autograder` (jinja2 templates in `templates/`); `run_gradescope`
is what `run_autograder` calls for each submission, and always writes results.json.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .build import build_autograder as build
from .run import run_gradescope as run


def build_autograder(homework_id: str, out_path: Path, **kwargs: Any) -> Path:
    """See `attngrade.gradescope.build.build_autograder`."""
    return build(homework_id, out_path, **kwargs)


def run_gradescope(root: Path) -> int:
    """See `attngrade.gradescope.run.run_gradescope`."""
    return run(root)


__all__ = ["build_autograder", "run_gradescope"]
