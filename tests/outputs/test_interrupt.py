"""`grade run` killed mid-batch: OUT holds the previous complete run (or nothing), never a mix.

A run writes into a hidden staging folder beside OUT (`.OUT.partial-XXXX`) and switches it
in when complete (`attngrade/runfolder.py`). So a SIGKILL at any moment leaves OUT exactly
as it was; the next run discards the partial folder, says so, and writes everything. The
tables are written atomically even in the staging folder; a student's report there is
written directly (nobody reads the folder before the switch, and a killed run's is discarded).

The overrides file a person has edited survives an interrupted rerun and the rerun after.
"""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from attngrade.grading import Class, Options, grade
from attngrade.outputs.run import RunRequest, grade_run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "cs224n-w21-a5"
SOLUTIONS = ROOT / "solutions"
OUTPUTS = ("results.json", "grades.csv", "index.html", "overrides.yaml", "overrides.new.yaml")
TEMP = re.compile(r"^\.(report\.html|results\.json|grades\.csv|index\.html|overrides\.yaml|overrides\.new\.yaml|"
                  r"\.overrides\.sha256|\.folders\.json)\.[A-Za-z0-9_]+$")

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not hasattr(os, "killpg"), reason="SIGKILL of a process group: POSIX")]


def make_class(dest: Path, copies: int) -> Path:
    """`copies` submissions: the example class's YAML files, each under its own student id."""
    sources = sorted(p for p in EXAMPLES.iterdir() if p.suffix == ".yaml")
    dest.mkdir(parents=True)
    for i in range(copies):
        source = sources[i % len(sources)]
        text = re.sub(r"(?m)^student:.*\n", "", source.read_text(encoding="utf-8"))
        (dest / f"s{i:03d}-{source.stem}.yaml").write_text(text, encoding="utf-8")
    return dest


def named_class(dest: Path, *students: str) -> Path:
    """The example's full-marks answers, once under each student id (added to `dest` if it exists)."""
    dest.mkdir(parents=True, exist_ok=True)
    body = (EXAMPLES / "full-marks.yaml").read_text(encoding="utf-8")
    for student in students:
        (dest / f"{student}.yaml").write_text(body.replace("student: full-marks", f"student: {student}"))
    return dest


def folders_listed(out: Path) -> dict[str, str]:
    """OUT/.folders.json as student id -> report folder."""
    listed = json.loads((out / ".folders.json").read_text(encoding="utf-8"))
    return {entry["student"]: entry["folder"] for entry in listed.values()}


def command(cls: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "attngrade", "run", str(cls), "-o", str(out), "--solutions", str(SOLUTIONS),
            "--workers", "1", *extra]


def staging(out: Path) -> list[Path]:
    return sorted(out.parent.glob(f".{out.name}.partial-*"))


def reports(out: Path) -> list[Path]:
    """Reports written so far by the run in progress (in its staging folder)."""
    return [p for folder in staging(out) for p in folder.glob("*/report.html")]


def _as_from_a_terminal() -> None:
    """Ctrl-C as a terminal's program gets it: neither ignored nor blocked. Both are inherited across
    exec, and a process that starts with SIGINT ignored keeps ignoring it (as a background job
    should), so the run under test must not inherit what a library did to this test process."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _sigint_state() -> str:
    """This process's ignored and blocked signal masks, as the kernel keeps them."""
    status = Path("/proc/self/status").read_text() if Path("/proc/self/status").exists() else ""
    return "; ".join(line for line in status.splitlines() if line.startswith(("SigIgn", "SigBlk")))


def stopped_mid_write(cmd: list[str], out: Path, after_reports: int = 3, cwd: Path | None = None,
                      stderr: int = subprocess.DEVNULL) -> subprocess.Popen:
    """Start `grade run` in a process group of its own and SIGSTOP the group once it has written
    `after_reports` reports: it is then held mid-write for as long as the test needs, however
    loaded the machine is. Fails if the run finished before it could be stopped."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True, cwd=cwd,
                            text=True, preexec_fn=_as_from_a_terminal)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and len(reports(out)) < after_reports:
        time.sleep(0.01)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGSTOP)
    if proc.poll() is not None:  # it ended before the stop reached it
        pytest.fail("grade run finished before it could be interrupted; grow the class")
    return proc


def kill_mid_write(cmd: list[str], out: Path, after_reports: int = 3, cwd: Path | None = None) -> int:
    """Start `grade run`, SIGKILL it once it has written `after_reports` reports; the count at the kill."""
    proc = stopped_mid_write(cmd, out, after_reports, cwd)
    try:
        written = len(reports(out))
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    return written


def check_nothing_torn(out: Path, staged: bool = False) -> list[Path]:
    """Every output present is whole (but the reports of a `staged` run, written directly and
    never seen if it was killed); returns the temporary files left behind."""
    leftovers: list[Path] = []
    for path in out.rglob("*"):
        if path.is_dir():
            assert path.parent == out, f"unexpected folder {path}"
            continue
        if path.name.startswith("."):
            if path.name == ".overrides.sha256":
                assert re.fullmatch(r"[0-9a-f]{64}\n", path.read_text()), "torn stamp"
                continue
            if path.name == ".folders.json":
                assert isinstance(json.loads(path.read_text(encoding="utf-8")), dict), "torn folder list"
                continue
            if path.name == ".salt":
                assert path.stat().st_mode & 0o077 == 0, "the grader's secret readable by others"
                continue
            assert TEMP.match(path.name), f"unexpected hidden file {path}"
            leftovers.append(path)
            continue
        if path.parent == out:
            assert path.name in OUTPUTS, f"unexpected file {path}"
        else:
            assert path.name == "report.html", f"unexpected file {path}"
    for report in [] if staged else out.glob("*/report.html"):
        assert report.read_text(encoding="utf-8").rstrip().endswith("</html>"), f"torn {report}"
    if (out / "index.html").exists():
        assert (out / "index.html").read_text(encoding="utf-8").rstrip().endswith("</html>")
    if (out / "results.json").exists():
        assert isinstance(json.loads((out / "results.json").read_text(encoding="utf-8")), list)
    if (out / "grades.csv").exists():
        rows = list(csv.reader((out / "grades.csv").open(encoding="utf-8", newline="")))
        assert rows[0][:2] == ["student", "homework"] and rows[0][-4:] == ["total", "pending", "max_score", "error"]
        assert all(len(row) == len(rows[0]) for row in rows), "a short row: torn grades.csv"
    for name in ("overrides.yaml", "overrides.new.yaml"):
        if (out / name).exists():
            yaml.safe_load((out / name).read_text(encoding="utf-8"))
    return leftovers


def check_complete(out: Path, students: int) -> None:
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert len(results) == students
    rows = list(csv.DictReader((out / "grades.csv").open(encoding="utf-8", newline="")))
    assert [row["student"] for row in rows] == [r["student"] for r in results]
    index = (out / "index.html").read_text(encoding="utf-8")
    for r in results:
        report = out / r["student"] / "report.html"
        assert report.read_text(encoding="utf-8").rstrip().endswith("</html>"), report
        assert f"{r['student']}/report.html" in index
    full = [row for row in rows if row["student"].endswith("-full-marks")]
    assert full and all(row["error"] == "" for row in full)
    assert any(row["total"] == "13" for row in full)


@pytest.fixture(scope="module")
def big_class(tmp_path_factory) -> Path:
    return make_class(tmp_path_factory.mktemp("interrupt") / "class-300", 300)


def test_sigkill_mid_write_writes_no_output_and_a_rerun_completes(big_class, tmp_path):
    out = tmp_path / "out"
    written = kill_mid_write(command(big_class, out), out)
    assert 0 < written < 300, "the kill landed while reports were being written"
    assert not out.exists(), "a first run killed before its end leaves no OUT at all"
    (partial,) = staging(out)
    check_nothing_torn(partial, staged=True)

    rerun = subprocess.run(command(big_class, out), capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "Traceback" not in rerun.stderr
    assert f"discarded the outputs of an interrupted run ({partial.name})" in rerun.stdout
    assert not staging(out) and not partial.exists()
    assert check_nothing_torn(out) == [], "a completed run leaves no temporary file"
    check_complete(out, 300)
    assert (out / "overrides.yaml").exists() and (out / ".overrides.sha256").exists()


def test_a_killed_rerun_leaves_the_previous_run_whole(big_class, tmp_path):
    out = tmp_path / "out"
    first = subprocess.run(command(big_class, out), capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    kill_mid_write(command(big_class, out, "--budget", "3"), out)
    after = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before, "OUT is exactly the previous run: no report of the killed run in it"


def test_ctrl_c_says_what_is_left(big_class, tmp_path):
    out = tmp_path / "out"
    proc = stopped_mid_write(command(big_class, out), out, stderr=subprocess.PIPE)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: to the whole group, held until it goes on
    os.killpg(proc.pid, signal.SIGCONT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, f"{err[-2000:]} (the test process: {_sigint_state()})"
    assert f"stopped before the outputs were complete; {out} was not written" in err
    assert not out.exists() and not staging(out), "Ctrl-C cleans up its staging folder"


def test_files_a_person_put_into_out_are_kept_across_runs(tmp_path):
    out = tmp_path / "out"
    assert subprocess.run(command(EXAMPLES, out), capture_output=True, timeout=120).returncode == 0
    (out / "decisions.yaml").write_text("students: []\n")
    (out / "notes").mkdir()
    (out / "notes" / "todo.txt").write_text("keep me")
    assert subprocess.run(command(EXAMPLES, out), capture_output=True, timeout=120).returncode == 0
    assert (out / "decisions.yaml").read_text() == "students: []\n"
    assert (out / "notes" / "todo.txt").read_text() == "keep me"
    results = json.loads((out / "results.json").read_text())
    assert all((out / r["student"] / "report.html").is_file() for r in results)


def test_an_edited_overrides_file_survives_an_interrupted_rerun(tmp_path):
    cls = make_class(tmp_path / "class-150", 150)
    out = tmp_path / "out"
    first = subprocess.run(command(cls, out), capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    overrides = out / "overrides.yaml"
    data = yaml.safe_load(overrides.read_text(encoding="utf-8"))
    entry = next(s for s in data["students"] if s["part"] == "1a")
    entry["score"] = 1
    entry["comment"] = "decided by a TA before the crash"
    edited = "# edited by hand: keep me\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    overrides.write_text(edited, encoding="utf-8")

    written = kill_mid_write(command(cls, out, "--overrides", str(overrides)), out, after_reports=3)
    assert written > 0
    check_nothing_torn(out)
    check_complete(out, 150)  # still the first run, whole
    assert overrides.read_text(encoding="utf-8") == edited

    rerun = subprocess.run(command(cls, out, "--overrides", str(overrides)), capture_output=True, text=True,
                           timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert overrides.read_text(encoding="utf-8") == edited
    assert "kept your edited" in rerun.stdout
    assert yaml.safe_load((out / "overrides.new.yaml").read_text(encoding="utf-8"))["students"]
    check_nothing_torn(out)
    check_complete(out, 150)
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open(encoding="utf-8", newline=""))}
    assert rows[entry["student"]]["1a"] == "1", "the decision in the edited file was applied"


def test_a_file_beside_a_students_report_is_kept(tmp_path):
    out = tmp_path / "out"
    assert subprocess.run(command(EXAMPLES, out), capture_output=True, timeout=120).returncode == 0
    (out / "full-marks" / "notes.txt").write_text("regrade 1a")
    assert subprocess.run(command(EXAMPLES, out), capture_output=True, timeout=120).returncode == 0
    assert (out / "full-marks" / "notes.txt").read_text() == "regrade 1a"
    assert (out / "full-marks" / "report.html").is_file()


def test_a_persons_files_named_like_outputs_are_theirs_and_old_reports_are_not_carried(tmp_path):
    # What a run wrote is known by place: a grades.csv in a folder of the person's is theirs,
    # an empty folder is theirs, and a student's old report never outlives the run it was for.
    cls = named_class(tmp_path / "class", "bob", "carol")
    out = tmp_path / "out"
    assert subprocess.run(command(cls, out), capture_output=True, timeout=120).returncode == 0
    (out / "week1").mkdir()
    (out / "week1" / "grades.csv").write_text("mine")
    (out / "week1" / "index.html").write_text("mine too")
    (out / "empty").mkdir()
    (out / "carol" / "notes.txt").write_text("regrade 1a")
    (out / "report.html").write_text("a page of my own")
    (cls / "carol.yaml").unlink()  # carol leaves the class: her folder keeps only the note
    assert subprocess.run(command(cls, out), capture_output=True, timeout=120).returncode == 0
    assert (out / "week1" / "grades.csv").read_text() == "mine"
    assert (out / "week1" / "index.html").read_text() == "mine too"
    assert (out / "empty").is_dir()
    assert (out / "report.html").read_text() == "a page of my own"
    assert sorted(p.name for p in (out / "carol").iterdir()) == ["notes.txt"]
    assert (out / "bob" / "report.html").is_file()


@pytest.mark.parametrize("linked", [False, True])
def test_a_newcomer_named_like_a_student_does_not_take_their_folder_at_the_rerun(tmp_path, linked):
    # Bob sorts before bob and both want the folder bob; bob had it, with a note beside his report.
    cls = named_class(tmp_path / "class", "bob", "carol")
    out = tmp_path / "out"
    if linked:  # written in place
        (tmp_path / "real").mkdir()
        out.symlink_to(tmp_path / "real")
    assert subprocess.run(command(cls, out), capture_output=True, timeout=120).returncode == 0
    (out / "bob" / "notes.txt").write_text("bob asked for a regrade of 1a")
    named_class(cls, "Bob")
    assert subprocess.run(command(cls, out), capture_output=True, timeout=120).returncode == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="bob/report.html"' in index and 'href="Bob-2/report.html"' in index
    assert "<h1>bob</h1>" in (out / "bob" / "report.html").read_text(encoding="utf-8")
    assert "<h1>Bob</h1>" in (out / "Bob-2" / "report.html").read_text(encoding="utf-8")
    assert sorted(p.name for p in (out / "bob").iterdir()) == ["notes.txt", "report.html"]
    assert sorted(p.name for p in (out / "Bob-2").iterdir()) == ["report.html"]
    assert folders_listed(out) == {"Bob": "Bob-2", "bob": "bob", "carol": "carol"}


def test_the_folder_of_a_student_who_left_with_notes_about_them_goes_to_nobody_else(tmp_path):
    cls = named_class(tmp_path / "class", "a b", "carol")
    out = tmp_path / "out"
    assert subprocess.run(command(cls, out), capture_output=True, timeout=120).returncode == 0
    (out / "a_b" / "notes.txt").write_text("asked for an extension: illness")
    (cls / "a b.yaml").unlink()
    named_class(cls, "a_b")  # a newcomer whose id gives the same folder
    for _ in range(2):  # and it stays so at the run after
        assert subprocess.run(command(cls, out), capture_output=True, timeout=120).returncode == 0
        assert sorted(p.name for p in (out / "a_b").iterdir()) == ["notes.txt"]
        assert "<h1>a_b</h1>" in (out / "a_b-2" / "report.html").read_text(encoding="utf-8")
        assert folders_listed(out) == {"a_b": "a_b-2", "carol": "carol", "a b": "a_b"}


def test_a_student_named_like_an_output_file_gets_a_folder_of_their_own(tmp_path):
    cls = tmp_path / "class"
    cls.mkdir()
    body = (EXAMPLES / "full-marks.yaml").read_text(encoding="utf-8")
    for n, student in enumerate(("index.html", "GRADES.CSV", "overrides.new.yaml")):
        (cls / f"s{n}.yaml").write_text(body.replace("student: full-marks", f"student: '{student}'"))
    out = tmp_path / "out"
    done = subprocess.run(command(cls, out), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (out / "index.html").is_file() and (out / "grades.csv").is_file()
    for folder in ("index.html-2", "GRADES.CSV-2", "overrides.new.yaml-2"):
        assert (out / folder / "report.html").is_file()


def test_a_run_killed_between_its_two_renames_is_put_back_before_the_rerun_reads_its_overrides(tmp_path):
    # The kill left no OUT, only .OUT.old-XXXX/run: the rerun that names OUT/overrides.yaml
    # finds it, because the previous run is put back before anything is read.
    out = tmp_path / "out"
    assert subprocess.run(command(EXAMPLES, out), capture_output=True, timeout=120).returncode == 0
    overrides = out / "overrides.yaml"
    edited = "# decided by a TA\n" + overrides.read_text(encoding="utf-8")
    overrides.write_text(edited, encoding="utf-8")
    aside = tmp_path / ".out.old-abcd1234"
    aside.mkdir()
    os.rename(out, aside / "run")
    rerun = subprocess.run(command(EXAMPLES, out, "--overrides", str(overrides)), capture_output=True, text=True,
                           timeout=120)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "put back the previous complete run" in rerun.stdout + rerun.stderr
    assert overrides.read_text(encoding="utf-8") == edited and not aside.exists()


@pytest.mark.parametrize("edited_before", [False, True])
def test_edits_saved_during_a_run_stopped_just_after_its_switch_are_kept(tmp_path, edited_before):
    # The run switched its outputs in and was killed before moving the person's files over: the
    # last run's folder still waits in .out.old-XXXX/run, its overrides.yaml edited meanwhile.
    import shutil

    out = tmp_path / "out"
    assert subprocess.run(command(EXAMPLES, out), capture_output=True, timeout=120).returncode == 0
    overrides = out / "overrides.yaml"
    if edited_before:
        overrides.write_text("# decided before the run\n" + overrides.read_text(encoding="utf-8"), encoding="utf-8")
    aside = tmp_path / ".out.old-abcd1234"
    aside.mkdir()
    shutil.copytree(out, aside / "run")  # what the stopped run left aside; `out` is the run it switched in
    during = "# saved while the run was writing\n" + overrides.read_text(encoding="utf-8")
    (aside / "run" / "overrides.yaml").write_text(during, encoding="utf-8")
    rerun = subprocess.run(command(EXAMPLES, out), capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert overrides.read_text(encoding="utf-8") == during
    assert "saved while the last run was writing" in rerun.stdout + rerun.stderr
    assert not aside.exists()


def test_an_untouched_template_left_aside_does_not_replace_the_new_one(tmp_path):
    import shutil

    out = tmp_path / "out"
    assert subprocess.run(command(EXAMPLES, out), capture_output=True, timeout=120).returncode == 0
    aside = tmp_path / ".out.old-abcd1234"
    aside.mkdir()
    shutil.copytree(out, aside / "run")
    (out / "overrides.yaml").write_text((out / "overrides.yaml").read_text() + "# the new run's own\n")
    (out / ".overrides.sha256").unlink()  # as if the new run's template were a person's: compared, never lost
    kept = (out / "overrides.yaml").read_text()
    assert subprocess.run(command(EXAMPLES, out), capture_output=True, timeout=120).returncode == 0
    assert (out / "overrides.yaml").read_text() == kept


def test_a_second_run_into_the_same_folder_is_refused_while_the_first_writes(tmp_path):
    import fcntl

    out = tmp_path / "out"
    with open(tmp_path / ".out.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        done = subprocess.run(command(EXAMPLES, out), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "another grade run is writing this folder" in done.stderr
    assert not out.exists()


def test_a_linked_output_folder_is_written_in_place(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "out").symlink_to(real)
    done = subprocess.run(command(EXAMPLES, tmp_path / "out"), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out").is_symlink() and (real / "results.json").is_file()
    assert "written in place" in done.stdout
    assert not (real / ".attngrade.lock").exists()  # held inside OUT while it ran, gone after


def test_a_linked_output_folder_keeps_no_report_of_a_student_who_left(tmp_path):
    cls = make_class(tmp_path / "class", 4)
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "out").symlink_to(real)
    assert subprocess.run(command(cls, tmp_path / "out"), capture_output=True, timeout=120).returncode == 0
    first, second, third, _ = sorted(p.stem for p in cls.iterdir())
    (real / second / "notes.txt").write_text("met on Tuesday", encoding="utf-8")
    (cls / f"{second}.yaml").unlink()
    (cls / f"{third}.yaml").unlink()
    done = subprocess.run(command(cls, tmp_path / "out"), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (real / first / "report.html").is_file()
    assert not (real / second / "report.html").exists()
    assert (real / second / "notes.txt").read_text(encoding="utf-8") == "met on Tuesday"  # a person's file stays
    assert not (real / third).exists()  # nothing else was in it
    assert "removed the reports of 2 folders" in done.stdout


def test_a_second_run_into_a_linked_output_folder_is_refused_too(tmp_path):
    import fcntl

    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "out").symlink_to(real)
    with open(real / ".attngrade.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        done = subprocess.run(command(EXAMPLES, tmp_path / "out"), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "another grade run is writing this folder" in done.stderr
    assert not (real / "results.json").exists()


def test_an_output_link_to_nothing_is_refused_before_grading(tmp_path):
    (tmp_path / "out").symlink_to(tmp_path / "gone")
    done = subprocess.run(command(EXAMPLES, tmp_path / "out"), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "a link to nothing" in done.stderr


def test_in_place_a_report_that_cannot_be_removed_is_said_and_a_killed_runs_temporary_file_is_not_left(tmp_path, monkeypatch):
    from attngrade.outputs import folder as runfolder

    for name in ("stays", "left", "locked"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "report.html").write_text("old", encoding="utf-8")
    (tmp_path / "stays" / ".report.html.k1ll3d00").write_text("<!doctype", encoding="utf-8")  # a killed run's
    earlier = runfolder._reports_in(tmp_path)
    (tmp_path / "stays" / ".report.html.new").write_text("new", encoding="utf-8")  # this run's, by a rename
    os.replace(tmp_path / "stays" / ".report.html.new", tmp_path / "stays" / "report.html")
    unlink = Path.unlink

    def refuse(path, *args, **kwargs):
        if path.parent.name == "locked":
            raise PermissionError(1, "Operation not permitted", str(path))
        return unlink(path, *args, **kwargs)

    monkeypatch.setattr(Path, "unlink", refuse)
    said = runfolder._remove_unwritten(earlier, tmp_path)
    assert (tmp_path / "stays" / "report.html").read_text(encoding="utf-8") == "new"
    assert not (tmp_path / "left").exists()
    assert (tmp_path / "locked" / "report.html").is_file()
    assert any("removed the reports of 1 folder" in line and "left" in line for line in said)
    assert any("could not remove" in line and "Operation not permitted" in line for line in said)
    assert sorted(p.name for p in (tmp_path / "stays").iterdir()) == ["report.html"]
    assert any("removed 1 temporary report file" in line for line in said)


def _children(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            continue
    return found


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads children from /proc (Linux)")
def test_a_run_killed_alone_takes_its_worker_processes_with_it(tmp_path):
    # Only the grading process is killed (the OOM killer, `kill PID`), not its process group:
    # its report processes must not live on idle, holding OUT's lock so that no run may follow.
    cls, out = make_class(tmp_path / "class", 300), tmp_path / "out"
    cmd = [*command(cls, out)[:-1], "2"]  # --workers 2
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and len(reports(out)) < 3:
            time.sleep(0.01)
        children = _children(proc.pid)
        assert proc.poll() is None and children, "grade run finished before it could be interrupted; grow the class"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(Path(f"/proc/{c}").exists() for c in children):
            time.sleep(0.05)
        alive = [c for c in children if Path(f"/proc/{c}/status").exists()
                 and "State:\tZ" not in Path(f"/proc/{c}/status").read_text()]
        assert not alive, f"worker processes outlived the run: {alive}"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    again = subprocess.run(command(cls, out), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "discarded the outputs of an interrupted run" in again.stdout + again.stderr


def test_a_run_stopped_while_report_processes_write_leaves_no_staging_folder(monkeypatch, tmp_path):
    # A large class's report processes start before the class is read (thresholds lowered here):
    # stopped while they write, the run waits for them before it removes its staging folder,
    # or they would make it again around the reports they were writing.
    from attngrade.outputs import run as batch_module
    from attngrade.reports import parallel

    monkeypatch.setattr(parallel, "FORK_EARLY_FROM", 2)
    cls, out = make_class(tmp_path / "class", 400), tmp_path / "out"

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl-C while this process writes its own files

    monkeypatch.setattr(batch_module, "write_template", stopped)
    with pytest.raises(KeyboardInterrupt):
        grade_run(RunRequest([cls], out, Options(solutions=SOLUTIONS, workers=2), show_progress=False))
    time.sleep(0.5)  # anything still writing would have made its folder by now
    assert staging(out) == [] and not out.exists()


def test_a_folder_bound_onto_itself_is_written_in_place(tmp_path):
    # `mount --bind` on one file system: os.path.ismount does not see it, and the switch's
    # rename of OUT would fail (EBUSY) after the whole class was graded.
    out = tmp_path / "my out"
    named_class(tmp_path / "class", "ann", "bob")
    assert subprocess.run(command(tmp_path / "class", out), capture_output=True).returncode == 0
    if subprocess.run(["mount", "--bind", str(out), str(out)], capture_output=True).returncode != 0:
        pytest.skip("mount --bind is not permitted here")
    try:
        again = subprocess.run(command(tmp_path / "class", out), capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr
        assert "its outputs were written in place" in again.stdout
    finally:
        subprocess.run(["umount", str(out)], check=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["class", "my out"]


def _class_checked_with_the_stage_looked_at(monkeypatch, tmp_path, copies: int) -> tuple[Path, Path, list]:
    """Run two workers over a class, looking at the staging folder while the class is checked."""
    from attngrade.grading import pipeline as batch_module

    cls, out = make_class(tmp_path / "class", copies), tmp_path / "out"
    seen: list = []
    checked = batch_module.assemble  # once the class is checked, before a report is written

    def looking(*args, **kwargs):
        stages = staging(out)
        seen.append(stages)
        deadline = time.monotonic() + 30
        while stages and len(list(stages[0].iterdir())) < copies and time.monotonic() < deadline:
            time.sleep(0.01)
        seen.append(sorted(p.name for p in stages[0].iterdir()) if stages else [])
        return checked(*args, **kwargs)

    monkeypatch.setattr(batch_module, "assemble", looking)
    grade_run(RunRequest([cls], out, Options(solutions=SOLUTIONS, workers=2), show_progress=False))
    return cls, out, seen


def test_with_two_workers_the_students_folders_are_made_while_the_class_is_checked(monkeypatch, tmp_path):
    # Making 1,000 folders costs a slow disk most of a second, and two processes make them no
    # faster: with more than one worker they are made while the class is checked.
    cls, out, seen = _class_checked_with_the_stage_looked_at(monkeypatch, tmp_path, 30)
    assert len(seen[0]) == 1, "the staging folder exists before the class is checked"
    assert seen[1] == sorted(folders_listed(out).values()), "every student's folder is made meanwhile"
    assert staging(out) == [] and sorted(p.name for p in out.iterdir() if p.is_dir()) == seen[1]
    alone = tmp_path / "alone"
    assert subprocess.run(command(cls, alone), capture_output=True).returncode == 0
    for name in ("results.json", "grades.csv"):
        assert (out / name).read_bytes() == (alone / name).read_bytes()
    for folder in seen[1]:
        assert (out / folder / "report.html").read_bytes() == (alone / folder / "report.html").read_bytes()


def test_a_large_class_has_its_folders_made_by_a_report_process_forked_before_it_was_read(monkeypatch, tmp_path):
    from attngrade.outputs import ahead
    from attngrade.reports import parallel

    monkeypatch.setattr(parallel, "FORK_EARLY_FROM", 2)
    monkeypatch.setattr(parallel, "SERIAL_BELOW", 2)
    monkeypatch.setattr(ahead, "LARGE_CLASS", 2)
    from attngrade.outputs.ahead import FolderMaker

    makers: list[FolderMaker] = []
    start = FolderMaker.start
    monkeypatch.setattr(FolderMaker, "start", lambda self: makers.append(start(self)) or makers[-1])
    cls, out, seen = _class_checked_with_the_stage_looked_at(monkeypatch, tmp_path, 30)
    assert seen[1] == sorted(folders_listed(out).values())
    assert makers[0].pool is not None, "a large class is never forked from: a report process made them"


def test_a_run_stopped_while_checking_leaves_no_staging_folder_and_no_folder_maker(monkeypatch, tmp_path):
    from attngrade.grading import pipeline as batch_module
    from attngrade.outputs.ahead import FolderMaker

    cls, out = make_class(tmp_path / "class", 300), tmp_path / "out"
    makers: list[FolderMaker] = []
    start = FolderMaker.start
    monkeypatch.setattr(FolderMaker, "start", lambda self: makers.append(self) or start(self))

    def stopped(*args, **kwargs):
        assert staging(out) and makers[0]._child._pid, "the folders are being made"
        makers.append(makers[0]._child._pid)
        raise KeyboardInterrupt

    monkeypatch.setattr(batch_module, "assemble", stopped)
    with pytest.raises(KeyboardInterrupt):
        grade_run(RunRequest([cls], out, Options(solutions=SOLUTIONS, workers=2), show_progress=False))
    time.sleep(0.3)  # a maker still running would have made a folder again by now
    assert staging(out) == [] and not out.exists()
    with pytest.raises(ProcessLookupError):
        os.kill(makers[1], 0)  # ended and reaped


def test_a_batch_the_workers_refuse_while_the_class_is_read_is_sent_after_it(monkeypatch, tmp_path):
    # A pool that cannot take work during the plan (no process to fork, for a moment) is no
    # student's error: what it refused is sent once the class is read.
    from attngrade.grading import execute

    monkeypatch.setattr(execute, "BATCH", 2)
    refused = []
    real_send = execute.Stream._send

    def once(self, batch, pool=None, **kw):
        if not refused:
            refused.append(batch)
            raise RuntimeError("the pool is not running")
        return real_send(self, batch, pool, **kw)

    monkeypatch.setattr(execute.Stream, "_send", once)
    folder = ROOT / "examples" / "cs224n-w21-a5"
    two = grade(Class([folder]), Options(solutions=SOLUTIONS, workers=2))
    monkeypatch.undo()
    one = grade(Class([folder]), Options(solutions=SOLUTIONS, workers=1))
    assert refused and [r.to_json() for r in two.results] == [r.to_json() for r in one.results]


def test_a_run_stopped_as_its_folders_start_leaves_no_staging_folder(monkeypatch, tmp_path):
    from attngrade.outputs import ahead

    cls, out = make_class(tmp_path / "class", 30), tmp_path / "out"

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ahead, "FolderMaker", stopped)
    with pytest.raises(KeyboardInterrupt):
        grade_run(RunRequest([cls], out, Options(solutions=SOLUTIONS, workers=2), show_progress=False))
    assert staging(out) == [] and not out.exists()


def test_an_out_that_can_no_longer_be_replaced_when_the_reports_are_due_is_written_in_place(monkeypatch, tmp_path):
    from attngrade.outputs import ahead as batch_module
    from attngrade.outputs import folder as runfolder

    cls, out = make_class(tmp_path / "class", 30), tmp_path / "out"
    grade_run(RunRequest([cls], out, Options(solutions=SOLUTIONS, workers=2), show_progress=False))
    started = []
    real, maker = runfolder._in_place, batch_module.FolderMaker
    # Replaceable when the class is read (its folders are made in a staging folder), then a
    # mount point: the run must still write every report, in place, and leave no staging folder.
    monkeypatch.setattr(batch_module, "FolderMaker", lambda *args: started.append(1) or maker(*args))
    monkeypatch.setattr(runfolder, "_in_place", lambda path: bool(started) or real(path))
    batch = grade_run(RunRequest([cls], out, Options(solutions=SOLUTIONS, workers=2), show_progress=False))
    assert started
    assert any("written in place" in m for m in batch.messages)
    assert staging(out) == []
    assert len(list(out.glob("*/report.html"))) == 30
