"""Shared fixtures: the repo's own files, never stand-ins."""

from __future__ import annotations

from pathlib import Path

import pytest

from attngrade.problems.keys import load_keys
from attngrade.problems import load_homework

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


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
