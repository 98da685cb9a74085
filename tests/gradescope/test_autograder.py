"""`grade autograder` and `grade gradescope`: the zip, setup.sh, run_autograder and results.json.

Each scenario unpacks the built zip into a temporary root laid out like Gradescope's
/autograder, runs its run_autograder there (pointed at this Python by ATTNGRADE_PYTHON),
and validates results.json against the JSON Schema written from Gradescope's specification.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from attngrade.grading import assignment, grade_submission
from attngrade.problems.keys import load_keys
from attngrade.problems import load_homework
from attngrade.intake.submissions import load_submission
from gradescope_helpers import (DATA, EXAMPLES, GOLD_MARK, HOMEWORK, REFERENCE, REPO, TEST_LINES,
                                parts_by_number, visible_text)

A5_MACHINE_PARTS = ["1b", "1c.i", "1d.i", "1e.i", "1e.ii", "2d", "2e", "2f", "2g.i"]
A5_PROPERTY_PARTS = {"1b", "1c.i", "1d.i", "1e.ii", "2e"}  # no key, no instructor gold: shown at once
A5_TEXT_PARTS = {"1a", "1c.ii", "1d.ii", "2g.ii", "3a", "3b", "3c"}


def _unzip(path: Path) -> dict[str, zipfile.ZipInfo]:
    with zipfile.ZipFile(path) as archive:
        return {info.filename: info for info in archive.infolist()}


def _grade_in_process(path: Path, gold: dict[str, Path]):
    """The same submission graded by the library directly, with keys (and gold) and without."""
    hw = load_homework(HOMEWORK)
    submission = load_submission(path)
    graded = grade_submission(assignment(hw, load_keys(REPO / "solutions", hw), gold=gold), submission)
    checked = grade_submission(assignment(hw, None, self_check=True), submission)
    return hw, graded, checked


# -- the zip --------------------------------------------------------------------------------
def test_zip_holds_scripts_manifest_wheel_keys_and_gold_at_its_root(autograder_zip, test_gold):
    entries = _unzip(autograder_zip)
    names = set(entries)
    assert {"setup.sh", "run_autograder", "attngrade-autograder.json",
            f"solutions/{HOMEWORK}/keys.yaml", f"gold/test/{test_gold.name}"} <= names
    (wheel,) = [n for n in names if n.endswith(".whl")]
    assert re.fullmatch(r"wheels/attngrade-[^/]+-py3-none-any\.whl", wheel)
    # The reference solution (its code proves the container before any student's code runs), root's alone;
    # nothing else: no examples, no other homework's keys.
    reference = {f"solutions/{HOMEWORK}/reference/{p.relative_to(REFERENCE).as_posix()}"
                 for p in REFERENCE.rglob("*") if p.is_file()}
    assert reference <= names and all((entries[n].external_attr >> 16) & 0o077 == 0 for n in reference)
    assert len(names - reference) == 6, sorted(names - reference)
    for script in ("setup.sh", "run_autograder"):
        assert (entries[script].external_attr >> 16) & 0o111, f"{script} is not executable"
    with zipfile.ZipFile(autograder_zip) as archive:
        assert archive.read(f"solutions/{HOMEWORK}/keys.yaml") == \
            (REPO / "solutions" / HOMEWORK / "keys.yaml").read_bytes()
        assert archive.read(f"gold/test/{test_gold.name}") == test_gold.read_bytes()
        manifest = json.loads(archive.read("attngrade-autograder.json"))
        assert manifest["homework"] == HOMEWORK and manifest["wheel"] == wheel
        assert manifest["gold"] == {"test": f"gold/test/{test_gold.name}"}
        assert manifest["visibility"] == {"property": "visible", "key": "after_published"}
        setup = archive.read("setup.sh").decode()
        assert "{{" not in setup and "{%" not in setup  # rendered, not raw templates
        assert wheel in setup


def test_setup_sh_and_run_autograder_parse_and_run_what_gradescope_needs(autograder_zip, tmp_path):
    with zipfile.ZipFile(autograder_zip) as archive:
        archive.extractall(tmp_path)
    for script in ("setup.sh", "run_autograder"):
        done = subprocess.run(["bash", "-n", str(tmp_path / script)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / script).read_text().startswith("#!/usr/bin/env bash\n")
    setup = (tmp_path / "setup.sh").read_text()
    assert "set -euo pipefail" in setup
    assert "apt-get install -y --no-install-recommends" in setup
    assert "python3 python3-venv python3-pip" in setup  # when the image has no Python 3.10+
    assert "sys.version_info >= (3, 10)" in setup
    assert '-m venv "$VENV"' in setup
    assert '"$VENV/bin/python" -m pip install --quiet "$WHEEL"' in setup
    assert 'VENV="${ATTNGRADE_VENV:-/opt/attngrade-venv}"' in setup
    (wheel,) = [p for p in (tmp_path / "wheels").iterdir()]
    assert f'WHEEL="$SOURCE/"wheels/{wheel.name}' in setup
    assert "sudo" not in setup  # Gradescope runs setup.sh as root
    run = (tmp_path / "run_autograder").read_text()
    assert 'ROOT="${ATTNGRADE_ROOT:-/autograder}"' in run
    assert 'PYTHON="${ATTNGRADE_PYTHON:-/opt/attngrade-venv/bin/python}"' in run
    assert '"$PYTHON" -m attngrade gradescope --root "$ROOT"' in run


def test_setup_sh_installs_python_with_apt_when_the_image_has_none(autograder_zip, tmp_path):
    """With no Python 3.10+ on PATH, setup.sh asks apt for python3, venv and pip (apt is a stub)."""
    with zipfile.ZipFile(autograder_zip) as archive:
        archive.extractall(tmp_path / "source")
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    log = tmp_path / "apt.log"
    for name in ("apt-get", "apt-cache", "add-apt-repository"):
        (stubs / name).write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\n'
                                  f'[ "$1" = show ] && exit 100\nexit 0\n')
    for name in ("python3", "python3.10", "python3.11", "python3.12", "python3.13"):
        (stubs / name).write_text("#!/bin/sh\nexit 1\n")  # "too old": fails the version check
    for path in stubs.iterdir():
        path.chmod(0o755)
    env = {**os.environ, "PATH": f"{stubs}:/usr/bin:/bin", "ATTNGRADE_VENV": str(tmp_path / "venv")}
    env.pop("ATTNGRADE_SETUP_PYTHON", None)
    done = subprocess.run(["bash", str(tmp_path / "source" / "setup.sh")], cwd=tmp_path / "source", env=env,
                          capture_output=True, text=True, timeout=60)
    calls = log.read_text().splitlines()
    assert done.returncode != 0  # the stubs installed nothing, so there is still no Python
    assert calls[0] == "apt-get update -y"
    assert calls[1] == "apt-get install -y --no-install-recommends ca-certificates python3 python3-venv python3-pip"
    assert "apt-get install -y --no-install-recommends python3.11 python3.11-venv" in calls  # deadsnakes
    assert not (tmp_path / "venv").exists()


# -- grading in a Gradescope root ------------------------------------------------------------
def test_full_marks_reference_folder_nested_in_the_submission(gradescope, autograder_zip, test_gold):
    """The reference folder, one level down, next to an unrelated YAML file: every machine point."""
    root = gradescope.root(autograder_zip, {"my-a5/reference": REFERENCE, "notes.yml": "todo: nothing\n"})
    data = gradescope.run(root)
    hw, graded, checked = _grade_in_process(REFERENCE, {"test": test_gold})
    tests = parts_by_number(data)
    assert list(tests) == A5_MACHINE_PARTS
    assert not A5_TEXT_PARTS & set(tests)  # text parts are Gradescope's manual grading
    for pid, test in tests.items():
        part = hw.part(pid)
        machine = sum(c.points for c in part.checks if c.check != "manual")
        assert test["max_score"] == pytest.approx(machine), pid  # the test gold decides the test-set share
        assert test["score"] == pytest.approx(machine) and test["status"] == "passed", (pid, test["output"])
        assert test["visibility"] == ("visible" if pid in A5_PROPERTY_PARTS else "after_published"), pid
        assert test["output_format"] == "html" and test["name"].startswith(pid)
    assert data["score"] == pytest.approx(46) == pytest.approx(graded.score)  # 36 + 10 for the 2e code
    assert data["output_format"] == "html" and data["stdout_visibility"] == "hidden"
    assert data["extra_data"]["student"] == "alice@example.edu"  # from submission_metadata.json
    assert "my-a5/reference/answers.yaml" in data["output"]
    # The synthesizer does as well as the vanilla model: a flag, for staff only.
    (flags,) = [t for t in data["tests"] if "number" not in t]
    assert flags["visibility"] == "hidden" and flags["status"] == "failed" and "score" not in flags
    flag_texts = [f for v in graded.parts for f in v.flags]
    assert flag_texts and all(html.escape(f) in flags["output"] for f in flag_texts)
    shown = visible_text(data)
    assert not any(f in shown for f in flag_texts)
    # The test gold graded the test predictions, but students see that only once grades are published.
    assert f"{TEST_LINES}/{TEST_LINES} = 100.0% correct on the test set" in tests["2f"]["output"]
    assert f"{TEST_LINES}/{TEST_LINES}" not in shown
    assert "scored against the test set, which only course staff have" in shown  # what grade check says
    assert GOLD_MARK not in json.dumps(data)


@pytest.mark.parametrize("example", ["seed-000.yaml", "partial.yaml"])
def test_partial_submission(gradescope, autograder_zip, test_gold, example):
    root = gradescope.root(autograder_zip, {"answers.yaml": EXAMPLES / example})
    data = gradescope.run(root)
    hw, graded, checked = _grade_in_process(EXAMPLES / example, {"test": test_gold})
    tests = parts_by_number(data)
    assert list(tests) == A5_MACHINE_PARTS
    verdicts = {v.part: v for v in graded.parts}
    for pid, test in tests.items():
        assert test["score"] == pytest.approx(verdicts[pid].score), pid
        if verdicts[pid].status == "missing":
            assert test["status"] == "failed" and test["score"] == 0 and "no answer was given" in test["output"]
    assert 0 < data["score"] < 36
    assert data["score"] == pytest.approx(graded.score)
    assert any(t["status"] == "failed" for t in tests.values())
    assert data["extra_data"]["student"] == "alice@example.edu"
    # Before grades are published a student sees, of key-checked parts, what `grade check` shows
    # and nothing that only the key could say.
    shown = visible_text(data)
    selfcheck = {line for v in checked.parts for line in v.feedback}
    for v in graded.parts:
        if v.part in A5_PROPERTY_PARTS:
            continue
        for line in v.feedback:
            if line not in selfcheck:
                assert line.strip() not in shown, (v.part, line)
    for v in checked.parts:
        if v.part in tests and v.part not in A5_PROPERTY_PARTS:
            for name, text in v.shown.items():
                assert f"{name} read as: {text}" in shown
    if example == "partial.yaml":
        assert "c2 read as: u_b" in shown
        assert "expected answer" not in shown and "expected answer" in tests["1e.i"]["output"]


def test_empty_submission_gets_a_result_that_says_what_to_upload(gradescope, autograder_zip):
    root = gradescope.root(autograder_zip, {})
    data = gradescope.run(root)
    assert data["score"] == 0
    visible = [t for t in data["tests"] if t["visibility"] == "visible"]
    hidden = [t for t in data["tests"] if t["visibility"] == "hidden"]
    assert len(visible) == 1 and len(hidden) == 1
    assert visible[0]["status"] == "failed"
    assert "no answers file" in visible[0]["output"] and "homework: &lt;id&gt;" in visible[0]["output"]
    assert "is empty" in hidden[0]["output"]  # what staff see: the listing of the submission


def test_corrupt_yaml_says_where_and_hides_the_traceback(gradescope, autograder_zip):
    root = gradescope.root(autograder_zip, {"answers.yaml": DATA / "corrupt.yaml",
                                            "vanilla.pretrain.dev.predictions": "London\n"})
    data = gradescope.run(root)
    assert data["score"] == 0
    (visible,) = [t for t in data["tests"] if t["visibility"] == "visible"]
    (hidden,) = [t for t in data["tests"] if t["visibility"] == "hidden"]
    message = html.unescape(visible["output"])
    assert "answers.yaml: line 7, column 6: not valid YAML" in message
    assert "fix the file and submit it again" in message
    assert str(root) not in message  # paths as the student uploaded them
    details = html.unescape(hidden["output"])
    assert "Traceback" in details and "SubmissionError" in details
    assert "vanilla.pretrain.dev.predictions (7 bytes)" in details


def test_test_gold_earns_the_test_set_points_instead_of_leaving_them_to_staff(
        gradescope, autograder_zip, autograder_zip_without_gold):
    with_gold = parts_by_number(gradescope.run(gradescope.root(autograder_zip, {"a5": REFERENCE})))
    without = gradescope.run(gradescope.root(autograder_zip_without_gold, {"a5": REFERENCE}))
    without_gold = parts_by_number(without)
    # 2g.i: 4 points for the synthesizer code, 2 for the dev file, 2 for the test file. Without
    # the gold the test file's 2 wait for staff: not earned, and the maximum stays the same for everyone.
    assert with_gold["2g.i"]["max_score"] == 8 and with_gold["2g.i"]["score"] == 8
    assert without_gold["2g.i"]["max_score"] == 8 and without_gold["2g.i"]["score"] == 6
    assert "Course staff grade the rest of this part: 2 points" in without_gold["2g.i"]["output"]
    assert "correct on the test set" in with_gold["2f"]["output"]
    assert "which only course staff have" in without_gold["2f"]["output"]
    assert without["score"] == 41  # the test files earn nothing until the gold decides them
    # Without instructor gold nothing in 2d-2g.i is secret, so those parts are shown at once.
    assert {t: without_gold[t]["visibility"] for t in ("2d", "2f", "2g.i")} == dict.fromkeys(("2d", "2f", "2g.i"),
                                                                                              "visible")
    assert without_gold["1e.i"]["visibility"] == "after_published"  # the key still is


def test_python_that_does_not_start_still_gives_gradescope_a_result(gradescope, autograder_zip, tmp_path):
    root = gradescope.root(autograder_zip, {"a5": REFERENCE})
    data = gradescope.run(root, python=tmp_path / "no-such-python")
    assert data["score"] == 0
    (visible,) = [t for t in data["tests"] if t["visibility"] == "visible"]
    (hidden,) = [t for t in data["tests"] if t["visibility"] == "hidden"]
    assert "could not start" in visible["output"] and "no-such-python" not in visible["output"]
    assert "exit status 127" in hidden["output"]


def test_results_json_is_replaced_not_left_over(gradescope, autograder_zip):
    root = gradescope.root(autograder_zip, {"answers.yaml": EXAMPLES / "partial.yaml"})
    (root / "results" / "results.json").write_text('{"score": 99}')
    data = gradescope.run(root)
    assert data["score"] != 99
    assert not [p for p in (root / "results").iterdir() if p.name != "results.json"]  # no temporary files


def test_run_autograder_uses_the_python_it_is_given(gradescope, autograder_zip, tmp_path):
    """ATTNGRADE_PYTHON is honoured (a wrapper that records its use, then runs this Python)."""
    marker = tmp_path / "used"
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\ntouch "{marker}"\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    root = gradescope.root(autograder_zip, {"answers.yaml": EXAMPLES / "partial.yaml"})
    gradescope.run(root, python=wrapper)
    assert marker.exists()
