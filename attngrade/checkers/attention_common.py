"""What the two attention checks (`attention_query`, `attention_qkv`) share.

Both decide from exact limits as a free large constant grows, and fall back on samples at
growing scales only where the exact analysis cannot follow an answer: the constants that
grow, when samples count as converging, and the no-verdict of an answer that oscillates.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import sympy

from ..mathlang.display import reading
from .base import Outcome

TOLERANCE = 1e-2  # relative error of the output at the largest scale


def converges(errors: Sequence[float]) -> bool:
    """Samples at growing scales end within the tolerance, and no worse than they began."""
    return all(np.isfinite(errors)) and errors[-1] <= TOLERANCE and errors[-1] <= errors[0] + 1e-12


def free_scalars(exprs: Sequence[Any], table: Any) -> set[Any]:
    """The scalars an answer uses that the part does not declare: the large constants that grow."""
    declared = {s.sympy for s in table.specs.values()}
    out = set()
    for e in exprs:
        out |= {s for s in e.free_symbols if isinstance(s, sympy.Symbol) and s not in declared and not s.is_integer}
    return out


def undecided(swinging: Any, notes: list[str]) -> Outcome:
    """No verdict: the limit is beyond the exact analysis, and samples of an oscillation are no evidence."""
    return Outcome(0.0, (*notes, f"your answer has {reading(swinging)}, which keeps oscillating as the scale "
                                 "grows: attngrade cannot work out the limit of the attention weights, and weights "
                                 "sampled at a few scales would only show where the oscillation happened to be; "
                                 "course staff will grade this part"), {"method": "undecided"}, is_pending=True)
