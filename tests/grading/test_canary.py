"""The reference canary: a host that cannot grade the reference's code grades no student's code.

Three hosts: this machine as it is (the reference earns full marks, students are graded as
always), a copy of the solutions whose reference code is broken (every student's code points wait
for staff with the reason, said once in the run), and, where the machine allows it, a container
on a kernel without Landlock (`container-sim --no-landlock`): the bundled A5 code examples keep
their marks or wait for staff with the host's reason, never 0.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "cs224n-w21-a5-code"
CONTAINER_SIM = ROOT.parent / "shared" / "tools" / "container-sim"
CODE_PARTS = {"2e": 10.0, "2g.i": 4.0}  # the code checks' points of each part
HOST = "this machine could not grade the reference solution's code"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")


def grade(out: Path, *prefix: str, solutions: Path = ROOT / "solutions") -> tuple[dict, str]:
    # (never served by a zygote this test process started, outside the host the prefix makes)
    env = {k: v for k, v in os.environ.items() if k != "ATTNGRADE_SANDBOX_SOCKET"}
    done = subprocess.run([*prefix, sys.executable, "-m", "attngrade", "run", str(EXAMPLES), "-o", str(out),
                           "--solutions", str(solutions)], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return {r["student"]: {p["id"]: p for p in r["parts"]} for r in results}, done.stdout + done.stderr


@pytest.fixture(scope="module")
def here(tmp_path_factory):
    pytest.importorskip("torch")
    return grade(tmp_path_factory.mktemp("here") / "out")


def test_a_host_that_grades_the_reference_grades_every_student(here):
    results, said = here
    assert HOST not in said
    for parts in results.values():
        for part in CODE_PARTS:
            assert HOST not in " ".join(parts[part]["feedback"])
    assert results["ada"]["2e"]["score"] == CODE_PARTS["2e"]


def test_a_reference_that_fails_here_leaves_every_students_code_to_staff(here, tmp_path):
    solutions = tmp_path / "solutions"
    shutil.copytree(ROOT / "solutions", solutions)
    # A host whose sandbox cannot import what the reference imports: the reference's dataset.py fails
    # as the host would make it fail.
    broken = solutions / "cs224n-w21-a5" / "reference" / "dataset.py"
    broken.write_text("import module_this_host_lacks\n" + broken.read_text())
    results, said = grade(tmp_path / "out", solutions=solutions)
    assert said.count("2e: the reference solution's code did not earn full marks") == 1, said
    assert "module_this_host_lacks" in said
    for student, parts in results.items():
        verdict = parts["2e"]
        assert verdict["pending_points"] == CODE_PARTS["2e"], (student, verdict)
        assert HOST in verdict["feedback"][0]
        # the other code part's reference still earns full marks: it is graded as always
        assert parts["2g.i"]["score"] == here[0][student]["2g.i"]["score"]


def _container_sim() -> bool:
    return CONTAINER_SIM.is_file() and os.uname().machine == "x86_64" and os.geteuid() == 0


@pytest.mark.skipif(not _container_sim(), reason="needs shared/tools/container-sim (root, x86_64)")
@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "no-landlock"])
def test_in_a_container_code_keeps_its_marks_or_waits_for_staff_never_zero(here, tmp_path, landlock):
    solutions = tmp_path / "solutions"
    shutil.copytree(ROOT / "solutions", solutions)
    for path in [solutions, *solutions.rglob("*")]:  # as the autograder makes them: the grader's alone
        path.chmod(path.stat().st_mode & 0o700)
    flags = [] if landlock else ["--no-landlock"]
    results, said = grade(tmp_path / "out", "python3", str(CONTAINER_SIM), *flags, "--", solutions=solutions)
    for student, parts in results.items():
        for part, points in CODE_PARTS.items():
            verdict, before = parts[part], here[0][student][part]
            if verdict["pending_points"] >= points:
                assert HOST in verdict["feedback"][0], (student, part, verdict["feedback"])
            else:
                assert verdict["score"] == before["score"], (student, part, verdict["feedback"])


@pytest.mark.skipif(not _container_sim(), reason="needs shared/tools/container-sim (root, x86_64)")
def test_world_readable_keys_are_no_jobs_to_read_in_a_container_without_landlock(here, tmp_path):
    solutions = tmp_path / "solutions"
    shutil.copytree(ROOT / "solutions", solutions)
    for path in [solutions, *solutions.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o055 if path.is_dir() else path.stat().st_mode | 0o044)
    results, said = grade(tmp_path / "out", "python3", str(CONTAINER_SIM), "--no-landlock", "--",
                          solutions=solutions)
    for parts in results.values():
        for part, points in CODE_PARTS.items():
            assert parts[part]["pending_points"] >= points, parts[part]
            assert HOST in parts[part]["feedback"][0]


def test_a_required_checkpoint_the_reference_holds_none_of_is_not_the_hosts_failure(tmp_path):
    """A course's copy of A5 that requires 2d's checkpoint: the reference solution hands in none (it has no
    reason to), so its outcome there says nothing of the host: every student's checkpoint was once left
    to staff as the host's failure."""
    pytest.importorskip("torch")
    import yaml

    from attngrade.cli import main
    from attngrade.grading import Options, canary, resolver
    from attngrade.problems import HomeworkFolder

    folder = tmp_path / "hw"
    assert main(["new-homework", "cs224n-w21-a5", "-o", str(folder), "--solutions", str(ROOT / "solutions")]) == 0
    (problem,) = [p for p in (folder / "problems").glob("*.yaml") if "checkpoint" in p.read_text()]
    data = yaml.safe_load(problem.read_text())
    part = next(p for p in data["parts"] if p["id"] == "2d")
    check = next(c for c in part["checks"] if c["check"] == "checkpoint")
    check["points"], check["params"]["require"] = 1, "checkpoint"
    part["points"] += 1
    problem.write_text(yaml.safe_dump(data, sort_keys=False))
    bank = HomeworkFolder(folder)
    given = resolver(Options(bank=bank, solutions=folder))(bank.homework_ids()[0])
    proof = canary.prove_homework(given, bank=bank)
    assert ("cs224n-w21-a5", "2d", part["checks"].index(check)) not in proof.unproven, proof.unproven
    assert not [n for n in proof.notes if "2d" in n], proof.notes


def test_where_only_a_checkpoint_check_runs_a_job_that_runs_nothing_proves_the_host(monkeypatch, tmp_path):
    """A homework whose one code check is a checkpoint (the reference hands in none): the host is proven
    by an empty job, so a host that cannot run one holds every student's checkpoint for staff."""
    pytest.importorskip("torch")
    from attngrade import sandbox
    from attngrade.grading import assignment, canary
    from attngrade.problems import Bank

    bank = Bank(ROOT / "tests" / "data" / "banks" / "a5-checkpoint")
    reference = tmp_path / "reference"  # a reference solution that holds no checkpoint
    reference.mkdir()
    (reference / "answers.yaml").write_text("homework: a5-checkpoint\nanswers: {}\n")
    (reference / "vanilla.pretrain.dev.predictions").write_text("London\n" * 500)
    given = dataclasses.replace(assignment(bank.load_homework("a5-checkpoint"), None, self_check=True),
                                self_check=False, reference=reference)
    keys = [canary.TaskKey(given.id, part.id, index, ()) for part in given.homework.parts
            for index, spec in enumerate(part.checks) if spec.check == "checkpoint" and part.id.startswith("2f")]
    assert not canary.prove(keys, {given.id: given}, 2.0, bank).unproven
    broken = sandbox.Run("crashed", error="no namespaces here")
    monkeypatch.setattr(sandbox, "run", lambda *args, **kwargs: broken)
    unproven = canary.prove(keys, {given.id: given}, 2.0, bank).unproven
    assert set(unproven) == {(k.homework, k.part, k.index) for k in keys}
    assert all("a sandbox job that runs nothing ended with crashed" in why for why in unproven.values())
