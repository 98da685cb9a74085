"""The sandbox when the grader is not root but runs in a user namespace in which it is uid 1000 (an
instructor's container, a student's self-check): the job shares the grader's uid, so a uid of its
own is out of reach, yet the fork bomb's daemons and the shared memory are held all the same.

The run happens in a PID namespace of the test's own (tests/data/sandbox/ns_init.py is its first
process), so that what outlived it is every process left there, and only those: processes that
other runs on the machine start meanwhile are never counted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_cases import HOSTILE, ROOT, hand_over, owned_folder, run_confined  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkers"))
from code_fixtures import code_submission  # noqa: E402

AS_A_USER = ["unshare", "--user", "--map-user=1000", "--map-group=1000", "--pid", "--fork", "--mount", "--mount-proc"]


def _can_be_a_user() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run([*AS_A_USER, "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _can_be_a_user(), reason="needs unshare, user and PID namespaces")
def test_a_graders_own_uid_leaves_no_student_process_behind_and_caps_shared_memory(tmp_path):
    pytest.importorskip("torch")
    cls = tmp_path / "class"
    for name in ("fork_bomb", "shared_memory"):
        folder = code_submission(cls / name, student=name)
        shutil.copy(HOSTILE / f"{name}.py", folder / "src" / "dataset.py")
    code_submission(cls / "right", student="right")
    (tmp_path / "tmp").mkdir()
    report = run_confined(tmp_path, "root", [sys.executable, "-m", "attngrade", "run", str(cls), "-o",
                                             str(tmp_path / "out"), "--solutions", str(ROOT / "solutions"),
                                             "--workers", "1"],
                          {"TMPDIR": str(tmp_path / "tmp")}, namespace=AS_A_USER)
    assert report["returncode"] in (0, 1), (tmp_path / "stderr").read_text()[-3000:]
    assert report["left"] == [], f"processes outlived the run (daemons of the fork bomb): {report['left']}"
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
    assert list((tmp_path / "tmp").iterdir()) == []  # no folder of the sandbox outlived the run


NO_USER_NAMESPACES = [sys.executable, str(ROOT / "tests" / "data" / "sandbox" / "no_user_namespaces.py"), "unshare",
                      "--pid", "--fork", "--mount", "--mount-proc"]


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root (to map every uid)")
def test_a_grader_that_is_not_root_and_gets_no_user_namespace_runs_no_student_code(tmp_path):
    """On a host that forbids unprivileged user namespaces, the child would be the grader's own uid
    behind Landlock alone: its code is not run, and its parts wait for course staff with the reason."""
    pytest.importorskip("torch")
    home = owned_folder("user")  # the grader's own: class, output, temporary folder
    try:
        folder = code_submission(home / "class" / "writer", student="writer")
        target = home / "tmp" / "written-by-student-code"
        (folder / "src" / "dataset.py").write_text((HOSTILE / "write_outside.py").read_text()
                                                   .replace("__TARGET__", str(target)))
        (home / "tmp").mkdir()
        hand_over(home, "user")
        report = run_confined(tmp_path, "user", [sys.executable, "-m", "attngrade", "run", str(home / "class"), "-o",
                                                 str(home / "out"), "--solutions", str(ROOT / "solutions"),
                                                 "--workers", "1"],
                              {"TMPDIR": str(home / "tmp"), "HOME": str(home)}, namespace=NO_USER_NAMESPACES)
        assert report["returncode"] in (0, 1), (tmp_path / "stderr").read_text()[-3000:]
        assert not target.exists()  # the student's code never ran
        part = {p["id"]: p for p in json.loads((home / "out" / "results.json").read_text())[0]["parts"]}["2e"]
        assert part["pending_points"] > 0, part
        assert any("runs student code only in namespaces of its own" in line for line in part["feedback"]), part
    finally:
        shutil.rmtree(home, ignore_errors=True)
