"""A class read by a child forked before the library is imported (attngrade/early.py)."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import attngrade.runtime.forked as forked
from attngrade.intake.early import EarlyLoad
from attngrade.grading import load_all
from attngrade.grading.loading import Discovery
from attngrade.outputs.history import class_folders
from attngrade.intake.submissions import discover

from attngrade.grading import loading as plan_module

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the class is read early by a forked child")

ROOT = Path(__file__).resolve().parents[2]
NOTHING_NAMED = lambda: (None, None)  # noqa: E731 - no --homework, no --bank


@pytest.fixture
def cls(tmp_path) -> Path:
    """The example class, a file that cannot be read (an error row) and one passed over (hidden)."""
    shutil.copytree(ROOT / "examples" / "cs224n-w21-a5", tmp_path / "class")
    (tmp_path / "class" / "zz-broken.yaml").write_text("homework: cs224n-w21-a5\nanswers:\n\t1a: x\n")
    (tmp_path / "class" / ".hidden.yaml").write_text("homework: cs224n-w21-a5\n")
    return tmp_path / "class"


def _load(paths: list[Path], out: Path, early: EarlyLoad | None = None, workers: int = 2) -> tuple:
    passed_over: list[Path] = []
    mixed: list[Path] = []
    discovery = Discovery(outputs=out, passed_over=passed_over, mixed=mixed, early=early)
    items = load_all(paths, discovery=discovery, workers=workers)
    return [(type(item).__name__, vars(item)) for item in items], passed_over, mixed, items.names


def _never_asked(monkeypatch) -> None:
    """Children forked from now on read the whole class before they see that they were asked."""
    monkeypatch.setattr(forked, "_readable", lambda fd: False)


def _loads_here(monkeypatch) -> list[Path]:
    """The submissions this process loads itself from now on."""
    here: list[Path] = []
    real = plan_module.Loading._load
    monkeypatch.setattr(plan_module.Loading, "_load", lambda self, path: here.append(path) or real(self, path))
    return here


def test_a_class_read_by_the_child_is_the_class_the_run_would_have_read(monkeypatch, cls, tmp_path):
    out = tmp_path / "out"
    alone = _load([cls], out, workers=1)
    _never_asked(monkeypatch)
    child = EarlyLoad.start([cls], out, 2, NOTHING_NAMED, class_folders)
    here = _loads_here(monkeypatch)
    assert _load([cls], out, child) == alone
    assert here == [], "every submission came from the child"
    assert any(kind == "Result" and "tab" in (item["error"] or "") for kind, item in alone[0]), "error rows too"


def test_a_child_asked_midway_leaves_the_rest_to_the_run_and_its_workers(monkeypatch, cls, tmp_path):
    out = tmp_path / "out"
    alone = _load([cls], out, workers=1)
    every = list(discover([cls], outputs=out))
    monkeypatch.setattr(plan_module, "SHARE_LOAD_FROM", 2)  # the rest is shared too
    calls = itertools.count()
    monkeypatch.setattr(forked, "_readable", lambda fd: next(calls) >= 4)  # asked after its third submission
    child = EarlyLoad.start([cls], out, 2, NOTHING_NAMED, class_folders)
    here = _loads_here(monkeypatch)
    assert _load([cls], out, child) == alone
    half = -(-(len(every) - 3) // 2)
    assert here == every[3:3 + half], "the child read three; this process the first half of the rest"


def test_a_child_asked_at_once_leaves_the_class_to_the_run(monkeypatch, cls, tmp_path):
    out = tmp_path / "out"
    alone = _load([cls], out, workers=1)
    monkeypatch.setattr(forked, "_readable", lambda fd: True)
    assert _load([cls], out, EarlyLoad.start([cls], out, 2, NOTHING_NAMED, class_folders)) == alone


def test_no_worker_at_all_still_loads_the_class(monkeypatch, cls, tmp_path):
    monkeypatch.setattr(plan_module, "SHARE_LOAD_FROM", 2)
    assert _load([cls], tmp_path / "out", workers=0) == _load([cls], tmp_path / "out", workers=1)


def test_out_inside_the_class_is_looked_for_again_once_claimed(monkeypatch, cls, tmp_path):
    # Claiming OUT makes its folder (`-o class/results/run1` on a first run): the child never saw it.
    out = cls / "results" / "run1"
    looked = tmp_path / "looked"

    def source():  # called in the child once it has found the class
        looked.touch()
        return None, None

    _never_asked(monkeypatch)
    child = EarlyLoad.start([cls], out, 2, source, class_folders)
    for _ in range(600):
        if looked.exists():
            break
        time.sleep(0.05)
    (cls / "results").mkdir()  # what runfolder.claimed does, after the child looked
    alone = _load([cls], out, workers=1)
    here = _loads_here(monkeypatch)
    assert _load([cls], out, child) == alone
    assert cls / "results" in alone[1], "passed over, as the run's own discovery says"
    assert here == [], "what the child read, the run found too, and took"


def _fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stderr == ""
    return done.stdout.strip()


def test_the_child_is_forked_before_the_library_is_imported(cls, tmp_path):
    # The point of it: the child reads while this process imports sympy, so it must come first.
    argv = ["run", str(cls), "-o", str(tmp_path / "out"), "--workers", "2"]
    code = ("import sys; from attngrade.cli import read_early; "
            f"child = read_early({argv!r}); "
            "print(type(child).__name__, 'sympy' in sys.modules, 'numpy' in sys.modules); child.stop()")
    assert _fresh(code) == "EarlyLoad False False"


@pytest.mark.parametrize("extra", [["--workers", "1"], ["--executor", "dask"], ["--help"], ["--budget", "x"]])
def test_no_child_where_the_run_would_not_use_it(cls, tmp_path, extra):
    argv = ["run", str(cls), "-o", str(tmp_path / "out"), *extra]
    code = f"from attngrade.cli import read_early; print(read_early({argv!r}))"
    assert _fresh(code) == "None"  # and nothing printed: what cannot be parsed, main() says once


def test_reading_submissions_needs_no_sympy():
    code = ("import sys; import attngrade.intake.early, attngrade.intake.submissions, attngrade.outputs.folder, attngrade.outputs.history, attngrade.commands.early; "
            "print('sympy' in sys.modules, 'numpy' in sys.modules)")
    assert _fresh(code) == "False False"


def test_a_run_with_two_workers_writes_what_one_worker_writes(cls, tmp_path):
    def run(workers: str) -> bytes:
        out = tmp_path / f"out{workers}"
        proc = subprocess.run([sys.executable, "-m", "attngrade", "run", str(cls), "-o", str(out), "--solutions",
                               str(ROOT / "solutions"), "--workers", workers], capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 1, proc.stderr  # the broken file is not graded
        assert proc.stderr.count("zz-broken") == 1
        return (out / "results.json").read_bytes()

    assert run("2") == run("1")
