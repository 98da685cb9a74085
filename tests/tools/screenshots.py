#!/usr/bin/env python3
"""Regenerate the report screenshots in docs/screenshots/ with the system Chromium.

    .venv/bin/python tests/tools/screenshots.py           # docs/screenshots/*.png
    .venv/bin/python tests/tools/screenshots.py OUT_DIR   # somewhere else

Grades the CS224N example class (with the notation and hostile-answer class of the tests)
into a temporary folder, then shoots seed-000's report and the class page, full width.
tests/reports/test_screenshots.py drives the same browser through the same helpers.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "screenshots"
CLASSES = ("examples/cs224n-w21-a5", "tests/data/classes/same-matrix-notations", "examples/eecs182-fa22-hw8")
VIEWPORT = {"width": 1100, "height": 900}
SHOTS = {  # file name -> (page under the output folder, at most this many pixels tall)
    "student-report.png": ("seed-000/report.html", 4200),
    "class-page.png": ("index.html", 2600),
}


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def grade_classes(out: Path) -> None:
    """`grade run` on the screenshot classes, quietly, into `out`."""
    from attngrade.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["run", *(str(ROOT / c) for c in CLASSES), "-o", str(out),
                     "--solutions", str(ROOT / "solutions"), "--workers", "0"])
    if code != 0:
        raise RuntimeError(f"grade run exited with {code}")


@contextlib.contextmanager
def browser() -> Iterator[Any]:
    """Headless system Chromium through Playwright (no downloaded browser)."""
    from playwright.sync_api import sync_playwright

    executable = chromium()
    if executable is None:
        raise RuntimeError("no Chromium on this machine (apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


def open_page(b: Any, path: Path, **options: Any) -> tuple[Any, list[str]]:
    """The page loaded, and a list that collects its console errors and warnings and page errors."""
    page = b.new_page(viewport=VIEWPORT, **options)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, problems


def shoot(page: Any, png: Path, tallest: int) -> None:
    """A full-width screenshot of the page from its top, at most `tallest` pixels."""
    height = min(tallest, page.evaluate("document.documentElement.scrollHeight"))
    png.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(png), full_page=True,
                    clip={"x": 0, "y": 0, "width": VIEWPORT["width"], "height": height})


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else DOCS
    with tempfile.TemporaryDirectory() as tmp, browser() as b:
        out = Path(tmp)
        grade_classes(out)
        for name, (page_path, tallest) in SHOTS.items():
            page, problems = open_page(b, out / page_path)
            if problems:
                raise RuntimeError(f"{page_path}: {problems}")
            shoot(page, target / name, tallest)
            print(target / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
