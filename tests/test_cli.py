"""`grade` as a user runs it: a real process, real files, exit codes and outputs."""

from __future__ import annotations

import csv
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attngrade.cli import entry, main
from attngrade.runtime.tuning import BLAS_THREADS


def grade(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attngrade", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def test_help_lists_the_commands():
    out = grade("--help")
    assert out.returncode == 0
    for command in ("check", "run", "problems"):
        assert command in out.stdout


def test_run_example_class_writes_every_output(root, tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(root / "examples/cs224n-w21-a5"), "-o", str(out),
                 "--solutions", str(root / "solutions")]) == 0
    results = json.loads((out / "results.json").read_text())
    students = {r["student"] for r in results}
    assert {"seed-000", "seed-001", "full-marks", "partial", "unreadable", "missing-parts"} <= students
    for r in results:
        assert set(r) >= {"student", "homework", "score", "max_score", "parts"}
        assert (out / r["student"] / "report.html").is_file()
        for p in r["parts"]:
            assert p["status"] in {"correct", "partial", "incorrect", "invalid", "missing", "pending", "partly pending"}
    rows = list(csv.DictReader((out / "grades.csv").open()))
    assert len(rows) == len(results)
    full = next(row for row in rows if row["student"] == "full-marks")
    assert full["1e.ii"] == "4" and full["total"] == "13"


def test_malformed_yaml_gets_an_error_row_and_report_others_are_graded(root, data_dir, tmp_path):
    out = tmp_path / "out"
    code = main(["run", str(data_dir / "classes/with-malformed"), "-o", str(out),
                 "--solutions", str(root / "solutions")])
    assert code == 1
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert "not valid YAML" in rows["broken-yaml"]["error"]
    assert rows["full-marks"]["total"] == "13" and rows["seed-000"]["error"] == ""
    report = (out / "broken-yaml" / "report.html").read_text()
    assert "could not be graded" in report and "not valid YAML" in report
    # The student knows their file by its name, not by where the course keeps it; the staff's row does.
    assert "<pre>broken-yaml.yaml: line" in report and str(data_dir) not in report
    assert rows["broken-yaml"]["error"].startswith(str(data_dir / "classes/with-malformed" / "broken-yaml.yaml"))


def test_run_without_keys_is_a_usage_error(root, tmp_path):
    out = grade("run", str(root / "examples/cs224n-w21-a5"), "-o", str(tmp_path / "o"),
                "--solutions", str(tmp_path / "nowhere"))
    assert out.returncode == 2
    assert "no keys" in out.stderr


def test_check_works_without_solutions_and_leaks_no_key(root, tmp_path):
    # Run from an empty folder: there is no ./solutions to read.
    out = grade("check", str(root / "examples/cs224n-w21-a5/partial.yaml"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "c2 read as: u_b" in out.stdout
    assert "compared with the key when your submission is graded" in out.stdout
    assert "expected answer" not in out.stdout and "u_a" not in out.stdout.split("1e.i")[1].split("1e.ii")[0]


def test_check_json_follows_the_contract(root, tmp_path):
    out = grade("check", str(root / "examples/cs224n-w21-a5/full-marks.yaml"), "--json", cwd=tmp_path)
    data = json.loads(out.stdout)
    assert data["student"] == "full-marks" and data["homework"] == "cs224n-w21-a5"
    part = next(p for p in data["parts"] if p["id"] == "1e.ii")
    assert part == {**part, "score": 4.0, "max_score": 4.0, "status": "correct"}


def test_check_of_a_broken_file_exits_1(data_dir):
    out = grade("check", str(data_dir / "classes/with-malformed/broken-yaml.yaml"))
    assert out.returncode == 1
    assert "broken-yaml.yaml: line" in out.stderr


def test_hostile_math_fields(tmp_path):
    flag = tmp_path / "pwned"
    sub = tmp_path / "hostile.yaml"
    big = "u_a + " * 17_000 + "u_a"
    sub.write_text(
        "homework: cs224n-w21-a5\nanswers:\n"
        f"  1b: \"__import__('os').system('touch {flag}')\"\n"
        "  1c.i: '9^9^9^9^9'\n"
        f"  1e.i:\n    c2: '{big}'\n"
    )
    start = time.perf_counter()
    out = grade("check", str(sub), "--json")
    elapsed = time.perf_counter() - start
    parts = {p["id"]: p for p in json.loads(out.stdout)["parts"]}
    assert parts["1b"]["status"] == "invalid" and not flag.exists()
    assert parts["1c.i"]["status"] == "invalid" and "exponent" in parts["1c.i"]["feedback"][0]
    assert parts["1e.i"]["status"] == "invalid" and "characters long" in parts["1e.i"]["feedback"][0]
    assert elapsed < 30  # a whole process, imports included; the parts themselves are bounded far below


def test_problems_lists_parts():
    out = grade("problems", "cs224n-w21-a5")
    assert out.returncode == 0
    assert "1e.ii" in out.stdout and "attention_qkv" in out.stdout


def test_the_program_is_main_with_a_frozen_exit(monkeypatch, capsys):
    # `grade` and `python -m attngrade` go through entry(): main's exit code, and every object
    # frozen so the interpreter's last collections skip them (the check is what the user waits for).
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="grade")
    assert script.value == "attngrade.cli:entry"
    monkeypatch.setattr(sys, "argv", ["grade", "problems", "no-such-homework"])
    for name in BLAS_THREADS:  # entry() sets them in this process: undone after the test
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    gc.unfreeze()
    try:
        assert entry() == main(["problems", "no-such-homework"]) != 0
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert "no-such-homework" in capsys.readouterr().err


@pytest.mark.parametrize("argv, imported", [(["check", "x.yaml"], "attngrade.commands.check"),
                                             (["run", "class", "-o", "out"], "attngrade.commands.run"),
                                             (["--version"], None), (["check", "--help"], None)])
def test_the_program_imports_its_command_without_the_collector(argv, imported):
    # In a fresh interpreter: what the command runs is imported, frozen, and the collector is on again.
    code = ("import gc, sys; from attngrade.cli import import_library; "
            f"import_library({argv!r}); "
            "print(gc.isenabled(), gc.get_freeze_count() > 0, 'sympy' in sys.modules, "
            "sorted(m for m in sys.modules if m in ('attngrade.commands.check', 'attngrade.commands.run')))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    enabled, frozen, sympy, modules = shown.strip().split(maxsplit=3)
    assert enabled == "True"
    assert frozen == str(imported is not None) and sympy == str(imported is not None)
    assert modules == (f"['{imported}']" if imported else "[]")


def test_grading_a5_never_imports_torch(root):
    code = (
        "import sys; from attngrade.grading import self_check as check; "
        f"check(__import__('pathlib').Path({str(root / 'examples/cs224n-w21-a5/full-marks.yaml')!r})); "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.parametrize("student", ["<script>alert(1)</script>", "../../etc/passwd"])
def test_student_ids_are_escaped_and_cannot_escape_out(root, tmp_path, student):
    sub = tmp_path / "in" / "s.yaml"
    sub.parent.mkdir()
    sub.write_text(f"homework: cs224n-w21-a5\nstudent: {json.dumps(student)}\nanswers:\n  1a: \"<img src=x onerror=alert(1)>\"\n")
    out = tmp_path / "out"
    assert main(["run", str(sub.parent), "-o", str(out), "--solutions", str(root / "solutions")]) == 0
    reports = list(out.glob("*/report.html"))
    assert len(reports) == 1 and reports[0].parent.parent == out
    html = reports[0].read_text()
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def _openblas() -> bool:
    import numpy

    try:
        blas = numpy.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except Exception:  # noqa: BLE001 - an older numpy, or another build: not what the test can see
        return False
    return "openblas" in blas.lower()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or (os.cpu_count() or 1) < 2 or not _openblas(),
                    reason="counts OpenBLAS's threads in /proc, which it starts with more than one core")
def test_numpy_gets_one_blas_thread_unless_the_user_chose():
    # Tiny arrays, work split over processes: more BLAS threads would only spin after each call.
    code = ("import os, sys; sys.argv = ['grade', 'check', '--help']; from attngrade.cli import entry\n"
            "try:\n    entry()\nexcept SystemExit:\n    pass\n"
            "import numpy; numpy.ones((64, 64)) @ numpy.ones((64, 64))\n"
            "print(os.environ.get('OPENBLAS_NUM_THREADS', '-'), len(os.listdir('/proc/self/task')))")
    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREADS}

    def shown(**chosen: str) -> list[str]:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120,
                              env={**env, **chosen}).stdout.splitlines()[-1].split()

    default, chosen, other = shown(), shown(OPENBLAS_NUM_THREADS="2"), shown(OMP_NUM_THREADS="2")
    assert default[0] == "1" and chosen[0] == "2"
    assert int(default[1]) < int(chosen[1]), "no BLAS thread beside the interpreter's own"
    assert other[0] == "-" and int(other[1]) == int(chosen[1]), "a choice made by another name is the user's too"


def test_the_youngest_generation_is_collected_less_often_while_grading():
    # ~350 young collections a run of 1,000 students found ~13,000 cycles among millions of objects.
    code = ("import gc, sys; import attngrade.cli as cli\n"
            "cli.main = lambda early=None: print(gc.get_threshold()[0]) or 0\n"
            "sys.argv = ['grade', 'check', '--help']; cli.entry()\n")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           timeout=120).stdout.split()
    from attngrade.runtime.tuning import YOUNG_COLLECTION

    assert shown == [str(YOUNG_COLLECTION)] and YOUNG_COLLECTION > 700  # (700: Python's default)
