"""`choice`: a yes/no or one-of-several answer compared with the key."""

from __future__ import annotations

from typing import Any, Mapping

from .base import Context, Outcome
from .messages import Finding


def _say(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def check(answers: Mapping[str, Any], ctx: Context) -> Outcome:
    earned, feedback = 0.0, []
    share = ctx.points / len(ctx.spec.fields)
    for name in ctx.spec.fields:
        if answers[name] == ctx.key[name]:
            earned += share
            continue
        feedback.append(Finding(f"you answered {_say(answers[name])}; the expected answer is {_say(ctx.key[name])}",
                                field=name))
        if ctx.explain.get(name):
            feedback.append(ctx.explain[name])
    return Outcome(earned, tuple(feedback))
