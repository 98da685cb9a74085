"""The registry of checks: every way a part can be graded, in one place.

A part names its checks in its problem file; this dict is the only lookup, so a
reader finds every check here and a problem file cannot reach anything else.
"""

from __future__ import annotations

from . import accuracy, attention, bigo, choice, dimensions, equivalent, manual, rotation
from .base import Check, Context, Outcome

REGISTRY: dict[str, Check] = {
    c.name: c
    for c in (
        Check("equivalent", equivalent.check, needs_key=True,
              doc="the formula equals the key (expansion, random instances, simplify)"),
        Check("bigO", bigo.check, needs_key=True,
              doc="an order of growth O(...) compared with the key's by limits along growth paths"),
        Check("choice", choice.check, needs_key=True, doc="yes/no or one of several options, against the key"),
        Check("manual", manual.check, doc="free text, scored by a person"),
        Check("attention_query", attention.check_query,
              doc="a query (or one per head) whose attention weights tend to a target"),
        Check("attention_qkv", attention.check_qkv,
              doc="V, K, Q whose self-attention outputs tend to targets as β grows"),
        Check("accuracy_file", accuracy.check,
              doc="a prediction file's accuracy recomputed against gold, with the reported numbers"),
        Check("shift_block", rotation.check,
              doc="a 2×2 block that advances (sin ωt, cos ωt) by one step, for every t"),
        Check("dimensions", dimensions.check, needs_key=True, doc="a shape such as t × n, against the key"),
    )
}

__all__ = ["REGISTRY", "Check", "Context", "Outcome"]
