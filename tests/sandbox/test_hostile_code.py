"""Hostile student code, graded in this process: each case gets a verdict on its code within its budget
(never a part left pending because its own process said attngrade failed), the rest of the
submission keeps its marks, nothing outside the child's folder changes or is reached, no secret
reaches any output, and nothing of the job (process, IPC object, folder) outlives it.

The same corpus runs as a whole class, as root and as a user, in test_hostile_code_in_a_class.py."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_cases import (  # noqa: E402
    CASES,
    HOSTILE,
    INTERNAL,
    RAW,
    IPC_KEY,
    POINTS,
    SECRET,
    Outside,
    hostile_submission,
    ipc_keys,
    other_part,
    part_of,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkers"))
from code_fixtures import code_submission, failing, grade_code, part  # noqa: E402

from attngrade import sandbox  # noqa: E402
from attngrade.checkers import REGISTRY  # noqa: E402
from attngrade.sandbox import ENV_SOCKET  # noqa: E402

TIMEOUT = 4.0  # the code checks' wall timeout in these tests (10 s in the bank): a hostile job ends by it
BANK_TIMEOUT = 10.0
# Cases that need the bank's timeout to show their verdict: memory filled at this machine's pace
# reaches the job's limit in a few seconds, and a shorter timeout would stop it first.
UNHURRIED = {"memory_across_processes"}
SLACK = 8.0  # starting the zygote on a loaded machine, and the second (2g.i) job
MAX_OUTPUT = 5 * 1024**2
QUOTE, FEEDBACK = 4 * 1024, 48 * 1024  # a few KB a line, tens of KB a part


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def job_uids(result) -> set[int]:
    """The sandbox uids the result's jobs ran as (root only), from the layers their sandboxes reported."""
    uids = set()
    for verdict in result.parts:
        uid = (verdict.evidence.get("sandbox") or {}).get("uid")
        if uid is not None:
            uids.add(uid)
    return uids


def processes_of(uids: set[int]) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
                uid = int(status.split("Uid:")[1].split()[0])
            except (OSError, IndexError, ValueError):
                continue
            if uid in uids and "State:\tZ" not in status:
                found.append(int(entry.name))
    return found


def test_every_hostile_case_has_an_expectation(torch):
    assert sorted(CASES) == sorted(p.stem for p in HOSTILE.glob("*.py"))


@pytest.fixture(scope="module")
def a5_quick(a5):
    """A5 with its code checks' timeout at TIMEOUT: the same checks, a shorter wait for the endless ones."""
    from dataclasses import replace

    from attngrade.problems import prepare_check

    def quick(part):
        specs = tuple(prepare_check(part, replace(spec, params={**spec.params, "timeout": TIMEOUT}), part.id)
                      if REGISTRY[spec.check].runs_code else spec for spec in part.checks)
        return replace(part, checks=specs)

    problems = tuple(replace(problem, parts=tuple(quick(p) for p in problem.parts)) for problem in a5.problems)
    return replace(a5, problems=problems)


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_code_gets_a_verdict_on_its_code_and_nothing_outlives_it(tmp_path, a5, a5_quick, a5_keys, torch,
                                                                        case):
    outside = Outside()
    sandbox.prestart()  # so that the zygote's socket can be handed to the code that tries to use it
    fill = {**outside.fill(), "ZYGOTE": os.environ.get(ENV_SOCKET, "")}
    folder = hostile_submission(tmp_path / "student", case, fill)
    ipc_before = ipc_keys()
    try:
        started = time.monotonic()
        result = grade_code(folder, a5 if case in UNHURRIED else a5_quick, a5_keys)
        elapsed = time.monotonic() - started
        reached, untouched = outside.reached(), outside.untouched()
    finally:
        outside.close()

    verdict, expect = part(result, part_of(case)), CASES[case]
    assert elapsed < 2 * (BANK_TIMEOUT if case in UNHURRIED else TIMEOUT) + SLACK
    assert verdict.status in ("incorrect", "partial"), verdict
    if expect.score is None:
        assert 0 <= verdict.score < POINTS[part_of(case)], verdict.feedback
    else:
        assert verdict.score == expect.score, verdict.feedback
    assert verdict.pending_points == 0, verdict
    assert not any(str(line).startswith(INTERNAL) for line in verdict.feedback), verdict.feedback
    assert not any(c in str(line) for line in verdict.feedback for c in RAW), verdict.feedback
    assert any(word in line for line in verdict.feedback for word in expect.words), verdict.feedback
    if expect.fails:
        assert expect.fails in failing(verdict), verdict.feedback
    # the rest of the submission was graded; the grader's own code is untouched
    assert part(result, other_part(case)).score == POINTS[other_part(case)]
    from attngrade.checkers import span_corruption

    assert REGISTRY["span_corruption"].run is span_corruption.check
    # nothing outside the child's folder changed or was reached; no secret reached any output
    assert untouched
    assert not (folder / "escaped.txt").exists() and not (folder / "src" / "big.bin").exists()
    assert not Path("/tmp/attngrade-escaped.txt").exists()
    report = json.dumps(result.to_json(), default=str)
    assert SECRET not in report and len(report) < MAX_OUTPUT
    # what the student's code sent back is quoted a few KB at most, a part's feedback tens of KB
    quoted = [line for line in verdict.feedback if not line.startswith("your code ran in a sandbox")]
    assert max(map(len, quoted)) <= QUOTE and sum(map(len, quoted)) <= FEEDBACK
    assert not reached, "a socket outside the child's folder took a connection"
    # nothing of the jobs outlived them: no process, no IPC object, no folder
    assert IPC_KEY not in ipc_keys() - ipc_before
    if os.geteuid() == 0:
        uids = job_uids(result)
        assert uids and processes_of(uids) == []
    zygote_folder = Path(os.environ[ENV_SOCKET]).parent.parent
    assert not list(zygote_folder.glob("attngrade-job-*"))


def test_the_isolation_layers_come_from_before_the_students_code_ran(tmp_path, a5, a5_keys, torch):
    folder = code_submission(tmp_path / "s1")
    (folder / "src" / "dataset.py").write_text((HOSTILE / "forged_layers.py").read_text())
    layers = part(grade_code(folder, a5, a5_keys), "2e").evidence["sandbox"]["layers"]
    assert "network namespace" in " | ".join(layers["active"])
    assert not any("FORGED" in layer for layer in layers["active"])


KNOWN_MISSING = {"seccomp", "Landlock", "user namespace", "separate uid", "tmpfs working folder", "network namespace",
                 "mount namespace", "IPC namespace", "PID namespace", "IPC limits", "minimal root", "/proc of its own",
                 "cgroup v2"}


def test_the_report_states_every_isolation_layer(tmp_path, a5, a5_keys, torch):
    verdict = part(grade_code(code_submission(tmp_path / "s1"), a5, a5_keys), "2e")
    layers = verdict.evidence["sandbox"]["layers"]
    active = " | ".join(layers["active"])
    for layer in ("network namespace", "CPU", "private memory", "files up to", "open files", "no core dumps",
                  "memory of all its processes together"):
        assert layer in active
    for layer in ("mount namespace", "IPC namespace", "PID namespace", "minimal root", "/proc of its own"):
        assert layer in active or layer in layers["missing"], layer
    if os.geteuid() == 0:
        assert "separate uid" in active and "processes" in active
    assert set(layers["missing"]) <= KNOWN_MISSING
    # what the student reads names each of them, and each one missing with why
    line = next(line for line in verdict.feedback if line.startswith("your code ran in a sandbox"))
    assert all(layer in line for layer in layers["active"])
    assert all(f"{name} ({why}" in line for name, why in layers["missing"].items())
