"""Browser fixtures for the report tests: the system Chromium through Playwright, one graded class.

The helpers live in tests/tools/screenshots.py, which also regenerates docs/screenshots/.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import screenshots  # noqa: E402




@pytest.fixture(scope="session")
def out(tmp_path_factory):
    """The CS224N example class, the notation/hostile class and the EECS182 HW8 class, graded."""
    folder = tmp_path_factory.mktemp("reports")
    screenshots.grade_classes(folder)
    return folder


@pytest.fixture
def open_page(browser):
    pages = []

    def opener(path: Path, **options):
        page, problems = screenshots.open_page(browser, path, **options)
        pages.append(page)
        return page, problems

    yield opener
    for page in pages:
        page.close()
