"""A wall-clock budget for work that may not finish (sympy's simplify, mostly)."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator


class BudgetExceeded(Exception):
    """The work did not finish within its time budget."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise BudgetExceeded in the block after `seconds` of wall time.

    Uses an interval timer, which only the main thread can receive; elsewhere the
    block runs unbounded, so callers must also bound the input they hand in.
    """
    if seconds <= 0 or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum, frame):  # noqa: ARG001
        raise BudgetExceeded(f"gave up after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
