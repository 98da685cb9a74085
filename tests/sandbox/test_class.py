"""A class with code folders through `grade run` (worker processes, the shared zygote): hostile
students get their verdicts and everyone else is graded."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkers"))
from code_fixtures import CODE, code_submission  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_a_class_with_hostile_students_is_graded(tmp_path):
    pytest.importorskip("torch")
    cls = tmp_path / "class"
    code_submission(cls / "right", student="right")
    code_submission(cls / "nested", layout="a5/src", student="nested")
    code_submission(cls / "drawn", bug="span-from-drawn-length", student="drawn")
    for case in ("infinite_loop", "fork_bomb"):
        folder = code_submission(cls / case, student=case)
        (folder / "src" / "dataset.py").write_text((CODE / "hostile" / f"{case}.py").read_text())
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "attngrade", "run", str(cls), "-o", str(tmp_path / "out"),
                           "--workers", "2", "--solutions", str(ROOT / "solutions")],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    results = {r["student"]: {p["id"]: p for p in r["parts"]} for r in
               json.loads((tmp_path / "out" / "results.json").read_text())}
    assert results["right"]["2e"]["score"] == 10 and results["nested"]["2e"]["score"] == 10
    assert results["right"]["2g.i"]["score"] == 4 and results["nested"]["2g.i"]["score"] == 4
    assert 0 < results["drawn"]["2e"]["score"] < 10
    for case in ("infinite_loop", "fork_bomb"):
        assert results[case]["2e"]["score"] == 0
        assert any("still running after" in line for line in results[case]["2e"]["feedback"])
        assert results[case]["2g.i"]["score"] == 4  # the rest of the submission is graded
    assert elapsed < 120
