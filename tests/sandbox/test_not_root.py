"""The sandbox when the grader is not root (an instructor's laptop, a student's self-check).

The child then shares the grader's uid, so the uid-wide kill and process count of a root
grader are out of reach. Simulated with a user namespace in which the grader is uid 1000."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkers"))
from code_fixtures import CODE, code_submission  # noqa: E402

from attngrade.sandbox import ENV_SOCKET  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
AS_A_USER = ["unshare", "--user", "--map-user=1000", "--map-group=1000"]


def _can_be_a_user() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run([*AS_A_USER, "true"], capture_output=True).returncode == 0


def _attngrade_processes() -> set[int]:
    """Live processes running attngrade's code (zygotes, supervisors, sandbox children)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and b"attngrade" in (entry / "cmdline").read_bytes() and \
                    (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X"):
                found.add(int(entry.name))
        except (OSError, IndexError):
            continue
    return found


@pytest.mark.skipif(not _can_be_a_user(), reason="needs unshare and user namespaces")
def test_a_graders_own_uid_leaves_no_student_process_behind_and_caps_shared_memory(tmp_path):
    pytest.importorskip("torch")
    cls = tmp_path / "class"
    for name in ("fork_bomb", "shared_memory"):
        folder = code_submission(cls / name, student=name)
        shutil.copy(CODE / "hostile" / f"{name}.py", folder / "src" / "dataset.py")
    code_submission(cls / "right", student="right")
    before = _attngrade_processes()
    folders_before = set(Path(tempfile.gettempdir()).glob("attngrade-sandbox-*"))
    # A zygote this test process started (as root) must not serve the run: it starts its own.
    env = {**{k: v for k, v in os.environ.items() if k != ENV_SOCKET}, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run([*AS_A_USER, sys.executable, "-m", "attngrade", "run", str(cls), "-o", str(tmp_path / "out"),
                               "--solutions", str(ROOT / "solutions"), "--workers", "1"],
                              capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
        left = _attngrade_processes() - before
    finally:
        for pid in _attngrade_processes() - before:  # never leak them into the rest of the suite
            try:
                os.kill(pid, 9)
            except OSError:
                pass
    assert done.returncode in (0, 1), done.stderr
    assert not left, f"{len(left)} processes outlived the run (daemons of the fork bomb)"
    results = {r["student"]: {p["id"]: p for p in r["parts"]} for r in
               json.loads((tmp_path / "out" / "results.json").read_text())}
    assert results["right"]["2e"]["status"] == "correct"
    shm = " ".join(results["shared_memory"]["2e"]["feedback"])
    assert "Cannot allocate memory" in shm or "MemoryError" in shm, shm
    assert "separate uid" in shm  # the report says which layer a user's grader cannot have
    # Killing the bomb's daemons must not collect the sandbox child's own exit before the supervisor
    # waits for it: that failed the job ("could not run your code") and left its folder behind.
    bomb = results["fork_bomb"]["2e"]
    assert bomb["status"] == "incorrect", bomb
    assert "still running after" in " ".join(bomb["feedback"]), bomb["feedback"]
    assert set(Path(tempfile.gettempdir()).glob("attngrade-sandbox-*")) <= folders_before
