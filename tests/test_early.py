"""A class read by a child forked before the library is imported (attngrade/early.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import attngrade.early as early_module
from attngrade.early import EarlyLoad
from attngrade.forked import Share
from attngrade.grading import load_all

plan_module = sys.modules["attngrade.grading.plan"]  # the module (the package's `plan` is its function)

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the class is read early by a forked child")

ROOT = Path(__file__).resolve().parents[1]
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
    items = load_all(paths, passed_over=passed_over, mixed=mixed, outputs=out, workers=workers, early=early)
    return [(type(item).__name__, vars(item)) for item in items], passed_over, mixed, items.names


def _loads_here(monkeypatch) -> list[Path]:
    """The submissions this process loads itself from now on."""
    here: list[Path] = []
    real = plan_module.Loading._load
    monkeypatch.setattr(plan_module.Loading, "_load", lambda self, path: here.append(path) or real(self, path))
    return here


def test_a_class_read_by_the_child_is_the_class_the_run_would_have_read(monkeypatch, cls, tmp_path):
    out = tmp_path / "out"
    alone = _load([cls], out, workers=1)
    monkeypatch.setattr(Share, "hurry", lambda self: None)  # the child reads the whole class before it is asked
    child = EarlyLoad.start([cls], out, 2, NOTHING_NAMED)
    here = _loads_here(monkeypatch)
    assert _load([cls], out, child) == alone
    assert here == [], "every submission came from the child"
    assert any(kind == "Result" and "tab" in (item["error"] or "") for kind, item in alone[0]), "error rows too"


def test_a_child_asked_at_once_leaves_the_rest_to_the_run(monkeypatch, cls, tmp_path):
    out = tmp_path / "out"
    alone = _load([cls], out, workers=1)
    here = _loads_here(monkeypatch)
    assert _load([cls], out, EarlyLoad.start([cls], out, 2, NOTHING_NAMED)) == alone
    assert len(here) <= len(alone[0])


def test_a_child_that_looked_elsewhere_is_not_taken(monkeypatch, cls, tmp_path):
    out = tmp_path / "out"
    monkeypatch.setattr(Share, "hurry", lambda self: None)
    late = tmp_path / "late.yaml"  # a path the child was not given
    shutil.copy(cls / "full-marks.yaml", late)
    alone = _load([cls, late], out, workers=1)
    child = EarlyLoad.start([cls], out, 2, NOTHING_NAMED)
    here = _loads_here(monkeypatch)
    assert _load([cls, late], out, child) == alone
    assert late in here and len(here) == len(alone[0]), "the run found and read the class itself"


def test_a_child_is_not_taken_once_the_run_before_says_otherwise(monkeypatch, cls, tmp_path):
    # What the run before into OUT graded as classes is read again once OUT is claimed (an interrupted
    # run is put right there first): a child that read another list looked with other eyes.
    out = tmp_path / "out"
    monkeypatch.setattr(Share, "hurry", lambda self: None)
    child = EarlyLoad.start([cls], out, 2, NOTHING_NAMED)
    assert child.found([cls], {str(tmp_path / "elsewhere")}, out) is None


def test_a_large_class_is_found_but_not_read_early(monkeypatch, cls, tmp_path):
    monkeypatch.setattr(early_module, "LARGE_CLASS", 2)  # inherited by the child, forked after this
    monkeypatch.setattr(Share, "hurry", lambda self: None)
    found = EarlyLoad.start([cls], tmp_path / "out", 2, NOTHING_NAMED).found([cls], set(), tmp_path / "out")
    assert found is not None and len(found.every) > 2 and found.loaded == []


def test_one_worker_forks_no_child(cls, tmp_path):
    assert EarlyLoad.start([cls], tmp_path / "out", 1, NOTHING_NAMED) is None


def test_a_child_never_asked_is_ended(cls, tmp_path):
    child = EarlyLoad.start([cls], tmp_path / "out", 2, NOTHING_NAMED)
    pid = child._child._pid
    child.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # ended and reaped
    assert child.found([cls], set(), tmp_path / "out") is None


def _fresh(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          timeout=120).stdout.strip()


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
    code = ("import sys; import attngrade.early, attngrade.submissions, attngrade.runfolder, attngrade.lastrun; "
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
