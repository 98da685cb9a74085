"""The wheel in the autograder: what students may install for `grade check`.

It holds no keys, no reference solutions and no test gold, and `grade check` run from it
(in a fresh virtual environment, set up by the autograder's own setup.sh) shows how
key-checked answers were read, never whether they match.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from attngrade.cli import main
from gradescope_helpers import GOLD_MARK, HOMEWORK, REFERENCE, REPO, parts_by_number


def _wheel_members(autograder_zip: Path, tmp_path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(autograder_zip) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".whl")]
        archive.extract(name, tmp_path)
    with zipfile.ZipFile(tmp_path / name) as wheel:
        return {info.filename: wheel.read(info) for info in wheel.infolist() if not info.is_dir()}


def test_wheel_holds_no_key_solution_or_gold(autograder_zip, test_gold, tmp_path):
    members = _wheel_members(autograder_zip, tmp_path)
    secret = {hashlib.sha256(p.read_bytes()).hexdigest(): p for p in (REPO / "solutions").rglob("*")
              if p.is_file() and p.read_bytes().strip()}
    secret[hashlib.sha256(test_gold.read_bytes()).hexdigest()] = test_gold
    assert len(secret) > 10  # every homework's keys and reference files
    for name, data in members.items():
        top = name.split("/")[0]
        assert top == "attngrade" or top.endswith(".dist-info"), name
        assert "solutions" not in name.split("/") and not name.endswith("keys.yaml"), name
        assert "reference" not in name, name
        assert hashlib.sha256(data).hexdigest() not in secret, (name, secret.get(hashlib.sha256(data).hexdigest()))
        assert GOLD_MARK.encode() not in data, name
    # What `grade check`, `grade autograder` and `grade gradescope` need is there.
    for needed in ("attngrade/problems/homeworks/cs224n-w21-a5.yaml", "attngrade/data/cs224n-w21-a5/birth_dev.tsv",
                   "attngrade/gradescope/templates/setup.sh", "attngrade/gradescope/templates/run_autograder",
                   "attngrade/gradescope/run.py"):
        assert needed in members, needed


def test_grade_check_among_the_autograders_files_shows_no_key_and_no_gold(autograder_zip, tmp_path, capsys,
                                                                         monkeypatch):
    """Even run where keys.yaml and the gold sit (./solutions, ./gold), `grade check` uses neither."""
    with zipfile.ZipFile(autograder_zip) as archive:
        archive.extractall(tmp_path / "source")
    monkeypatch.chdir(tmp_path / "source")
    assert (Path("solutions") / HOMEWORK / "keys.yaml").is_file()
    assert main(["check", str(REFERENCE)]) == 0
    printed = capsys.readouterr().out
    assert main(["check", str(REFERENCE), "--json"]) == 0
    printed += capsys.readouterr().out
    assert "vanilla.pretrain.test.predictions: read, 437 lines as expected; it is scored against the test set, " \
           "which only course staff have" in printed
    assert "437/437" not in printed and "correct on the test set" not in printed and GOLD_MARK not in printed
    assert "c2 read as: u_a" in printed and "expected answer" not in printed
    result = json.loads(printed[printed.index("{"):])
    assert {p["id"]: p["status"] for p in result["parts"]}["1e.i"] == "unchecked"


def _run_setup_sh(autograder_zip: Path, tmp_path: Path) -> tuple[Path, dict[str, str], str]:
    """The autograder's setup.sh, run for real (no apt: this Python is given); returns the venv it made."""
    source = tmp_path / "source"
    with zipfile.ZipFile(autograder_zip) as archive:
        archive.extractall(source)
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    for name in ("apt-get", "apt-cache", "add-apt-repository", "sudo"):
        (stubs / name).write_text(f'#!/bin/sh\necho "{name} $*" >> "{tmp_path / "apt.log"}"\nexit 97\n')
        (stubs / name).chmod(0o755)
    venv = tmp_path / "venv"
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{stubs}:{env['PATH']}", ATTNGRADE_VENV=str(venv), ATTNGRADE_SETUP_PYTHON=sys.executable)
    done = subprocess.run(["bash", str(source / "setup.sh")], cwd=source, env=env, capture_output=True, text=True,
                          timeout=400)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (tmp_path / "apt.log").exists()
    assert "attngrade setup: attngrade 0.1.0 is installed in" in done.stdout
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import attngrade; print(attngrade.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr
    return venv, env, (source / "setup.sh").read_text(encoding="utf-8")


@pytest.mark.slow
def test_setup_sh_installs_the_wheel_into_a_fresh_venv_and_it_grades(tmp_path, gradescope):
    """A homework without code parts (MIMUW's), so the fresh venv gets attngrade alone: no PyTorch."""
    homework = "mimuw-2022-p4"
    reference = REPO / "solutions" / homework / "reference"
    autograder = tmp_path / "mimuw.zip"
    assert main(["autograder", homework, "-o", str(autograder), "--solutions", str(REPO / "solutions")]) == 0
    venv, env, setup_sh = _run_setup_sh(autograder, tmp_path)
    assert "torch" not in setup_sh.replace("PyTorch", "")
    assert not list((venv / "lib").glob("python*/site-packages/torch"))

    # `grade check` from the installed wheel alone, run from an empty folder: readings, never the key.
    empty = tmp_path / "empty"
    empty.mkdir()
    answers = shutil.copy(REPO / "examples" / homework / "seed-000.yaml", tmp_path / "seed-000.yaml")
    check = subprocess.run([str(venv / "bin" / "grade"), "check", str(answers)], cwd=empty, env=env,
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "c2 read as: u_a" in check.stdout and "possible read as: no" in check.stdout
    assert "expected answer" not in check.stdout
    assert "[ ~] 1e.ii    partial    1/2" in check.stdout  # property checks do run
    assert "with your Q and K, q1 = u_d" in check.stdout

    # The autograder grades with that install, as on Gradescope.
    root = gradescope.root(autograder, {"p4": reference})
    data = gradescope.run(root, python=venv / "bin" / "python")
    machine = {n: t for n, t in parts_by_number(data).items() if "Course staff" not in t.get("output", "")}
    assert machine and all(t["status"] == "passed" for t in machine.values())

    # `grade autograder` from that install alone: no checkout anywhere, the wheel packed from the
    # installed files; the zip it builds grades the same.
    rebuilt = tmp_path / "from-install.zip"
    build = subprocess.run([str(venv / "bin" / "grade"), "autograder", homework, "-o", str(rebuilt),
                            "--solutions", str(REPO / "solutions")], cwd=empty, env=env, capture_output=True,
                           text=True, timeout=240)
    assert build.returncode == 0, build.stdout + build.stderr
    with zipfile.ZipFile(rebuilt) as archive:
        (wheel_name,) = [n for n in archive.namelist() if n.endswith(".whl")]
        archive.extract(wheel_name, tmp_path / "rebuilt")
    with zipfile.ZipFile(tmp_path / "rebuilt" / wheel_name) as wheel:
        names = wheel.namelist()
        assert "attngrade/gradescope/templates/run_autograder" in names and not any("solutions" in n for n in names)
    again = gradescope.root(rebuilt, {"p4": reference})
    assert gradescope.run(again, python=venv / "bin" / "python")["score"] == data["score"]


@pytest.mark.install
def test_setup_sh_installs_the_cpu_torch_for_a_homework_with_code(autograder_zip, tmp_path, gradescope):
    """A5 runs student code: its setup.sh installs the CPU PyTorch too (about two minutes: `pytest -m install`)."""
    venv, env, setup_sh = _run_setup_sh(autograder_zip, tmp_path)
    assert "--index-url" in setup_sh
    root = gradescope.root(autograder_zip, {"a5": REFERENCE})
    data = gradescope.run(root, python=venv / "bin" / "python")
    assert data["score"] == 46  # the 2e code is graded too: setup.sh installed the CPU torch
    assert all(t["status"] == "passed" for t in parts_by_number(data).values())
