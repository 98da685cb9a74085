"""Hostile student code: each case gets a clear verdict within its budget, nothing outside the
child's folder changes, no secret reaches any output, and the grader carries on."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkers"))
from code_fixtures import CODE, code_submission, grade_code, part  # noqa: E402

from attngrade.checkers import REGISTRY  # noqa: E402
from attngrade.sandbox.isolate import SANDBOX_UID_BASE  # noqa: E402

HOSTILE = CODE / "hostile"
TIMEOUT = 4.0  # the code checks' wall timeout in these tests (10 s in the bank): a hostile job ends by it
SLACK = 8.0  # starting the zygote on a loaded machine, and the second (2g.i) job
# case -> words the 2e feedback must contain (one of them)
VERDICTS = {
    "infinite_loop": ["still running after"],
    "huge_allocation": ["MemoryError"],
    "shared_memory": ["Cannot allocate memory", "MemoryError"],
    "fork_bomb": ["still running after"],
    "big_file": ["File too large", "wrote a file larger than allowed"],
    "write_outside": ["SystemExit"],
    "loopback_socket": ["could not be imported"],
    "read_secrets": ["FAILED"],
    "fake_result": ["exit code 0", "no item could be drawn"],
    "malformed_result": ["not what attngrade's driver sends"],
    "forged_layers": ["exit code 0", "no item could be drawn"],
    "nested_result": ["exit code 0"],
    "kill_parent": ["could not be imported"],
    "deep_recursion": ["SIGSEGV", "RecursionError", "MemoryError", "still running after"],
    "patch_attngrade": ["could not be imported"],
}
SECRET = "attngrade-secret-7f3c1e"


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def sandbox_processes() -> list[int]:
    """Processes running as a sandbox uid (none may outlive a job)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                uid = int((entry / "status").read_text().split("Uid:")[1].split()[0])
            except (OSError, IndexError, ValueError):
                continue
            if uid >= SANDBOX_UID_BASE:
                found.append(int(entry.name))
    return found


def test_every_hostile_case_has_a_verdict(torch):
    assert sorted(VERDICTS) == sorted(p.stem for p in HOSTILE.glob("*.py"))


@pytest.fixture(scope="module")
def a5_quick(a5):
    """A5 with its code checks' timeout at TIMEOUT: the same checks, a shorter wait for the endless ones."""
    from dataclasses import replace

    from attngrade.checkers import REGISTRY
    from attngrade.problems import prepare_check

    def quick(part):
        specs = tuple(prepare_check(part, replace(spec, params={**spec.params, "timeout": TIMEOUT}), part.id)
                      if REGISTRY[spec.check].runs_code else spec for spec in part.checks)
        return replace(part, checks=specs)

    problems = tuple(replace(problem, parts=tuple(quick(p) for p in problem.parts)) for problem in a5.problems)
    return replace(a5, problems=problems)


@pytest.mark.parametrize("case", sorted(VERDICTS))
def test_hostile_code_gets_a_clear_verdict_and_changes_nothing_outside(tmp_path, a5_quick, a5_keys, torch, case):
    a5 = a5_quick
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "target.txt"
    keep = outside / "target.txt.keep"
    keep.write_text("keep me")
    secret = outside / "keys.yaml"
    secret.write_text(f"token: {SECRET}\n")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    code = (HOSTILE / f"{case}.py").read_text()
    code = code.replace("__TARGET__", str(target)).replace("__PORT__", str(port)).replace("__SECRET__", str(secret))
    folder = code_submission(tmp_path / "student")
    (folder / "src" / "dataset.py").write_text(code)
    before = sorted(p.name for p in Path("/tmp").iterdir())

    started = time.monotonic()
    result = grade_code(folder, a5, a5_keys)
    elapsed = time.monotonic() - started

    verdict = part(result, "2e")
    assert elapsed < 2 * TIMEOUT + SLACK
    assert verdict.status in ("incorrect", "partial"), verdict
    # read_secrets hands back well-formed tensors of garbage: that one property holds
    assert verdict.score == (1.0 if case == "read_secrets" else 0.0), verdict.feedback
    assert any(word in line for line in verdict.feedback for word in VERDICTS[case]), verdict.feedback
    # nothing outside the child's folder changed; no secret reached any output
    assert not target.exists() and keep.read_text() == "keep me"
    assert not (folder / "escaped.txt").exists() and not (folder / "src" / "big.bin").exists()
    assert not Path("/tmp/attngrade-escaped.txt").exists()
    assert not [n for n in sorted(p.name for p in Path("/tmp").iterdir()) if n not in before
                and n.startswith("attngrade-sandbox-")]
    assert SECRET not in json.dumps(result.to_json(), default=str)
    with pytest.raises(socket.timeout):
        listener.accept()
    listener.close()
    if os.geteuid() == 0:
        assert sandbox_processes() == []
    # the grader's own code is untouched, and the rest of the submission was graded
    from attngrade.checkers import span_corruption

    assert REGISTRY["span_corruption"].run is span_corruption.check
    assert part(result, "2g.i").score == 4


def test_the_isolation_layers_come_from_before_the_students_code_ran(tmp_path, a5, a5_keys, torch):
    folder = code_submission(tmp_path / "s1")
    (folder / "src" / "dataset.py").write_text((HOSTILE / "forged_layers.py").read_text())
    layers = part(grade_code(folder, a5, a5_keys), "2e").evidence["sandbox"]["layers"]
    assert "network namespace" in " | ".join(layers["active"])
    assert not any("FORGED" in layer for layer in layers["active"])


def test_the_report_records_the_isolation_layers(tmp_path, a5, a5_keys, torch):
    verdict = part(grade_code(code_submission(tmp_path / "s1"), a5, a5_keys), "2e")
    layers = verdict.evidence["sandbox"]["layers"]
    active = " | ".join(layers["active"])
    for layer in ("network namespace", "CPU", "private memory", "files up to", "open files", "no core dumps"):
        assert layer in active
    if os.geteuid() == 0:
        assert "separate uid" in active and "processes" in active
    assert set(layers["missing"]) <= {"seccomp", "Landlock", "user namespace", "process count", "separate uid",
                                      "tmpfs working folder", "network namespace", "mount namespace"}
