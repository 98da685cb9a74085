"""The autograder in Gradescope's world: root in a container that refuses namespaces and mounts, on a
kernel with Landlock and on one without (`container-sim`). setup.sh's self-check says what the container
can grade; run_autograder grades a code submission's parts, or leaves their points to course staff with
the host's reason: never a 0 that is the host's doing."""

from __future__ import annotations

import html
import os
import subprocess
import sys
import zipfile

import pytest

from gradescope_helpers import EXAMPLES, REPO, parts_by_number

CONTAINER_SIM = REPO.parent / "shared" / "tools" / "container-sim"
HOST = "this machine could not grade the reference solution's code"
CODE = EXAMPLES.parent / "cs224n-w21-a5-code" / "ada"

pytestmark = pytest.mark.skipif(
    not (CONTAINER_SIM.is_file() and os.uname().machine == "x86_64" and os.geteuid() == 0),
    reason="needs shared/tools/container-sim (root, x86_64)")


def _env(**more: str) -> dict[str, str]:
    """This process's environment without its sandbox's socket: a grader under container-sim must start a
    zygote of its own there, not be served by the one this test process started outside it."""
    return {**{k: v for k, v in os.environ.items() if k != "ATTNGRADE_SANDBOX_SOCKET"}, **more}


def _sim(landlock: bool) -> list[str]:
    return ["python3", str(CONTAINER_SIM), *([] if landlock else ["--no-landlock"]), "--"]


def _python_readable_by_all() -> bool:
    """Whether a uid of its own can read this Python (not one under /root, which only root may enter)."""
    return all(os.stat(above).st_mode & 0o001 for above in __import__("pathlib").Path(sys.base_prefix).parents)


@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "no-landlock"])
def test_setup_self_check_says_what_the_container_can_grade(autograder_zip, tmp_path, landlock):
    pytest.importorskip("torch")
    with zipfile.ZipFile(autograder_zip) as archive:
        archive.extractall(tmp_path / "source")
    subprocess.run(["chmod", "-R", "go-rwx", str(tmp_path / "source")], check=True)  # as setup.sh does
    done = subprocess.run([*_sim(landlock), sys.executable, "-m", "attngrade", "gradescope", "--root", str(tmp_path),
                           "--prove"], capture_output=True, text=True, timeout=600, env=_env())
    assert "Traceback" not in done.stderr, done.stderr
    if landlock or _python_readable_by_all():
        assert done.returncode == 0, done.stdout + done.stderr
        assert "this container grades cs224n-w21-a5's code parts" in done.stdout
    else:
        assert done.returncode == 1, done.stdout + done.stderr
        assert "2e: the reference solution's code did not earn full marks" in done.stdout
        assert "cannot read the Python installation" in done.stdout


@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "no-landlock"])
def test_run_autograder_in_a_container_grades_code_or_leaves_it_to_staff(autograder_zip, gradescope, landlock):
    pytest.importorskip("torch")
    root = gradescope.root(autograder_zip, {p.name: p for p in CODE.iterdir()})
    done = subprocess.run([*_sim(landlock), "bash", str(root / "run_autograder")], cwd=root, capture_output=True,
                          text=True, timeout=600,
                          env=_env(ATTNGRADE_ROOT=str(root), ATTNGRADE_PYTHON=sys.executable))
    assert done.returncode == 0, done.stdout + done.stderr
    parts = parts_by_number(gradescope.results(root))
    text = html.unescape(str(parts["2e"].get("output", "")))
    if landlock or _python_readable_by_all():
        assert HOST not in text and "broke attngrade" not in text, text
    else:
        assert HOST in text and "broke attngrade" not in text, text
