"""`manual`: free text, never scored by a machine; pending until a person scores it."""

from __future__ import annotations

from typing import Any, Mapping

from ..records import WAITING
from .base import Context, Outcome


def check(answers: Mapping[str, Any], ctx: Context) -> Outcome:  # noqa: ARG001
    evidence = {"rubric": ctx.rubric} if ctx.rubric else {}
    return Outcome(0.0, (WAITING,), evidence, is_pending=True)
