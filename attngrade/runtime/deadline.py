"""A wall-clock budget for work that may not finish (sympy's simplify, mostly)."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator


class BudgetExceeded(Exception):
    """The work did not finish within its time budget."""


REPEAT = 0.1  # seconds between alarms once the budget is spent, until the block ends


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise BudgetExceeded in the block after `seconds` of wall time.

    Uses an interval timer, which only a process's main thread receives; elsewhere the
    block runs unbounded (and raises once it ends past its budget), which is why batch
    grading runs checks in worker processes (each its own main thread) under a hard timeout
    as well. Limits nest: an inner limit never extends an outer one, and the outer one is
    restored on exit.

    The alarm can go unheard: it lands while C code runs (the YAML parser, sympy's core) and
    its handler is put back before Python looks at it again, or it is raised inside a callback
    whose exceptions Python ignores (the garbage collector's; CI caught one in hypothesis's), or
    caught by a library's `except Exception` (sympy has many). So the alarm repeats every REPEAT
    seconds past the budget until the block ends, and a block that ends past its budget raises
    all the same, so that a verdict never depends on whether one alarm was heard.
    """
    started = time.monotonic()
    if seconds <= 0:
        yield
        return
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield  # unbounded here; over its budget all the same once it ends
        if time.monotonic() - started >= seconds:
            raise BudgetExceeded(f"gave up after {seconds:g} s")
        return
    outer_remaining, outer_repeat = signal.getitimer(signal.ITIMER_REAL)
    own = min(seconds, outer_remaining) if outer_remaining > 0 else seconds

    def expire(signum, frame):  # noqa: ARG001
        if _setting_up_or_down(frame):
            return  # the next alarm, or the check at the end, says it
        raise BudgetExceeded(f"gave up after {own:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, own, REPEAT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_remaining > 0:
            left = outer_remaining - (time.monotonic() - started)
            # An outer budget that ran out while we held the timer fires at once.
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-3), outer_repeat)
    if time.monotonic() - started >= own:  # (only after a block that ended without raising)
        raise BudgetExceeded(f"gave up after {own:g} s")


def _setting_up_or_down(frame: Any) -> bool:
    """An alarm that lands while a limit is set up or taken down (this module's code, or contextlib's
    around it) is not raised there: it would cut the taking down short and leave its handler and
    timer in place for whatever runs next."""
    return frame is not None and frame.f_code.co_filename in _OWN_FILES


_OWN_FILES = frozenset({__file__, contextlib.__file__})
