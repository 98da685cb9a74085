"""Shared fixtures: the repo's own files, never stand-ins."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from attngrade.problems.keys import load_keys
from attngrade.problems import load_homework

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))

import screenshots  # noqa: E402 - a helper of the tests, found through the path above

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(autouse=True)
def signals_left_as_found():
    """A test that leaves a signal blocked or handled its own way (a check meant for a forked worker
    run in the test process) breaks later tests' time limits: it fails here, named, and is undone."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    handlers = {s: signal.getsignal(s) for s in (signal.SIGALRM, signal.SIGINT)}
    yield
    after = signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    changed = {s.name: h for s, h in handlers.items() if signal.getsignal(s) is not h}
    armed = signal.setitimer(signal.ITIMER_REAL, 0)
    for number, handler in handlers.items():
        signal.signal(number, handler)
    assert after == mask and not changed and armed == (0.0, 0.0), \
        f"the test left signals blocked ({set(after) - set(mask)}), handled its own way ({sorted(changed)}) " \
        f"or an alarm armed ({armed})"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def a5():
    return load_homework("cs224n-w21-a5")


@pytest.fixture(scope="session")
def a5_keys(a5):
    return load_keys(ROOT / "solutions", a5)


@pytest.fixture(scope="session")
def browser():
    """One headless system Chromium for the whole run: Playwright's sync API allows one at a time
    in a process, and the report and review tests both drive it."""
    if screenshots.chromium() is None:
        if os.environ.get("CI"):
            raise RuntimeError("CI must have Chromium: .ci/run installs the Debian package 'chromium'")
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api")
    with screenshots.browser() as b:
        yield b
