"""The Gradescope autograder of an instructor's own homework (started with `grade new-homework`, given
an id of its own): its setup.sh self-check passes and it grades every format, not only YAML.

Before, setup.sh looked the renamed id up in the installed bank (exit 2, "unknown homework"), and
run_autograder read every notebook, Markdown and LaTeX submission against the bank too, so each got 0.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from gradescope_helpers import (
    NYU,
    NYU_ANSWERS,
    NYU_MACHINE_POINTS,
    RENAMED,
    fill_template,
    parts_by_number,
    renamed_homework,
    run_setup_sh,
)

from attngrade.cli import main
from attngrade.gradescope import run_gradescope
from attngrade.gradescope.build import build_wheel, find_source_tree

FORMATS = ("yaml", "ipynb", "md", "tex")
SUFFIX = {"yaml": ".yaml", "ipynb": ".ipynb", "md": ".md", "tex": ".tex"}


@pytest.fixture(scope="module")
def own_autograder(tmp_path_factory) -> tuple[Path, Path]:
    """A renamed `new-homework` folder, its four filled templates' folder and its autograder zip."""
    base = tmp_path_factory.mktemp("own-homework")
    folder = base / "my-hw"
    assert main(["new-homework", NYU, "-o", str(folder), "--solutions", str(base / "no-solutions")]) == 0
    renamed_homework(folder)
    assert main(["validate", str(folder)]) == 0
    for fmt in FORMATS:
        assert main(["assign", str(folder), "--format", fmt, "-o", str(base / "handout")]) == 0
        fill_template(base / "handout" / f"{RENAMED}{SUFFIX[fmt]}", NYU_ANSWERS)
    zipped = base / "autograder.zip"
    assert main(["autograder", str(folder), "-o", str(zipped)]) == 0
    return base / "handout", zipped


def _machine_tests(data: dict) -> dict[str, dict]:
    """The parts' tests (text-only parts have none: Gradescope's manual grading scores them)."""
    return parts_by_number(data)


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_gradescope_autograder_fails_for_the_instructors_own_homework_no_more(own_autograder, gradescope, fmt):
    """Each format earns every machine point of the renamed homework (in process, from the zip)."""
    handout, zipped = own_autograder
    answers = handout / f"{RENAMED}{SUFFIX[fmt]}"
    root = gradescope.root(zipped, {f"work/{answers.name}": answers})
    assert run_gradescope(root) == 0
    data = gradescope.results(root)
    assert data["score"] == NYU_MACHINE_POINTS, data.get("output")
    machine = _machine_tests(data)
    assert set(machine) == {"1.1a", "1.1b", "1.1c", "1.1d"}
    assert all(t["status"] == "passed" for t in machine.values()), machine


def test_the_gradescope_autograder_of_an_own_homework_says_when_a_file_answers_another(own_autograder, gradescope,
                                                                                      tmp_path):
    """A notebook made for the bundled homework the course started from is not this assignment's."""
    from attngrade.intake.formats.write import WRITERS
    from attngrade.problems import load_homework

    _, zipped = own_autograder
    root = gradescope.root(zipped, {"hw.ipynb": WRITERS["ipynb"][0](load_homework(NYU), NYU_ANSWERS)})
    assert run_gradescope(root) == 1
    shown = gradescope.results(root)["tests"][0]["output"]
    assert f"the file answers homework &#x27;{NYU}&#x27;, but this assignment is {RENAMED}" in shown


def test_the_gradescope_autograder_setup_sh_self_check_passes_for_the_instructors_own_homework(own_autograder,
                                                                                                 tmp_path):
    """setup.sh run through, with pip stubbed (the install itself is the slow test's): its self-check loads
    the homework from the zip's folder, with the Python that has this checkout's attngrade."""
    _, zipped = own_autograder
    source = tmp_path / "source"
    with zipfile.ZipFile(zipped) as archive:
        archive.extractall(source)
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    real = sys.executable
    venv_python = stubs / "venv-python"  # the venv's python: pip does nothing, the rest is this Python
    venv_python.write_text(f'#!/bin/sh\n[ "$1" = -m ] && [ "$2" = pip ] && exit 0\nexec "{real}" "$@"\n')
    setup_python = stubs / "python"  # makes a "venv" holding only that python
    setup_python.write_text(f'#!/bin/sh\nif [ "$1" = -m ] && [ "$2" = venv ]; then mkdir -p "$3/bin" && '
                            f'cp "{venv_python}" "$3/bin/python"; exit 0; fi\nexec "{real}" "$@"\n')
    for stub in (venv_python, setup_python):
        stub.chmod(0o755)
    env = {**os.environ, "ATTNGRADE_VENV": str(tmp_path / "venv"), "ATTNGRADE_SETUP_PYTHON": str(setup_python)}
    done = subprocess.run(["bash", str(source / "setup.sh")], cwd=source, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is installed in" in done.stdout
    assert '-m attngrade problems "$SOURCE/"homework' in (source / "setup.sh").read_text()


@pytest.mark.slow
def test_the_gradescope_autograder_grades_an_own_renamed_homework_in_every_format_from_a_wheel_install(
        tmp_path, gradescope):
    """The whole way, as an instructor goes it: attngrade installed from its wheel, `grade new-homework`
    (no solutions/ at hand), the homework renamed and its keys written, templates in all four formats
    filled in, `grade autograder` from that install; then the zip's setup.sh installs it into a fresh
    venv (its self-check passes) and run_autograder grades one submission per format."""
    wheel = build_wheel(find_source_tree(), tmp_path / "build")
    instructor = tmp_path / "instructor-venv"
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    subprocess.run([sys.executable, "-m", "venv", str(instructor)], check=True, timeout=120)
    install = subprocess.run([str(instructor / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
                             env=env, capture_output=True, text=True, timeout=400)
    assert install.returncode == 0, install.stdout + install.stderr
    work = tmp_path / "course"  # no checkout, no solutions/: what a wheel install has
    work.mkdir()

    def grade(*argv: str) -> str:
        done = subprocess.run([str(instructor / "bin" / "grade"), *argv], cwd=work, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    grade("new-homework", NYU, "-o", "my-hw")
    assert "keys: {}" not in (work / "my-hw" / "keys.yaml").read_text(encoding="utf-8")
    renamed_homework(work / "my-hw")
    grade("validate", "my-hw")
    for fmt in FORMATS:
        grade("assign", "my-hw", "--format", fmt, "-o", "handout")
        fill_template(work / "handout" / f"{RENAMED}{SUFFIX[fmt]}", NYU_ANSWERS)
    said = grade("autograder", "my-hw", "-o", "autograder.zip")
    assert f"of 23 points, {NYU_MACHINE_POINTS} are graded by the autograder" in said

    venv, _, setup_said = run_setup_sh(work / "autograder.zip", tmp_path)
    assert "attngrade setup: attngrade 0.1.0 is installed in" in setup_said
    for fmt in FORMATS:
        answers = work / "handout" / f"{RENAMED}{SUFFIX[fmt]}"
        root = gradescope.root(work / "autograder.zip", {answers.name: answers})
        data = gradescope.run(root, python=venv / "bin" / "python")
        assert data["score"] == NYU_MACHINE_POINTS, (fmt, data.get("output"))
        assert all(t["status"] == "passed" for t in _machine_tests(data).values()), fmt
