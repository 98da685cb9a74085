"""Reruns into one OUT keep each submission's id and report folder (attngrade/lastrun.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from attngrade.outputs import history as lastrun

ROOT = Path(__file__).resolve().parents[2]
FULL_MARKS = ROOT / "examples" / "cs224n-w21-a5" / "full-marks.yaml"

pytestmark = pytest.mark.slow


def grade(cls: Path, out: Path, *extra: str, exit_code: int = 0) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "attngrade", "run", str(cls), "-o", str(out), "--solutions",
                           str(ROOT / "solutions"), "--workers", "1", *extra], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == exit_code, done.stderr
    return done


def submit(cls: Path, name: str, student: str | None = None) -> Path:
    """The full-marks answers as `cls/name`, claiming `student` (or nothing: the file's name)."""
    text = FULL_MARKS.read_text(encoding="utf-8").replace("student: full-marks\n",
                                                           f"student: {student}\n" if student else "")
    (cls / name).parent.mkdir(parents=True, exist_ok=True)
    (cls / name).write_text(text, encoding="utf-8")
    return cls / name


def by_source(out: Path) -> dict[str, str]:
    """Student id -> the place's last two path parts."""
    listed = json.loads((out / ".folders.json").read_text(encoding="utf-8"))
    return {entry["student"]: "/".join(Path(place).parts[-2:]) for place, entry in listed.items()}


def test_files_claiming_one_id_keep_their_ids_and_decisions_when_another_joins(tmp_path):
    cls, out = tmp_path / "class", tmp_path / "out"
    submit(cls, "x.yaml", "sam")
    submit(cls, "y.yaml", "sam")  # x is sam, y is sam-2
    grade(cls, out)
    assert by_source(out) == {"sam": "class/x.yaml", "sam-2": "class/y.yaml"}
    (out / "sam-2" / "notes.txt").write_text("about y", encoding="utf-8")
    decisions = tmp_path / "decisions.yaml"
    decisions.write_text('students:\n  - {student: sam-2, part: "1a", manual_score: 2}\n', encoding="utf-8")
    submit(cls, "a.yaml", "sam")  # sorts first and claims sam too
    done = grade(cls, out, "--overrides", str(decisions))
    assert by_source(out) == {"sam": "class/x.yaml", "sam-2": "class/y.yaml", "sam-3": "class/a.yaml"}
    assert sorted(p.name for p in (out / "sam-2").iterdir()) == ["notes.txt", "report.html"]
    results = {r["student"]: r for r in json.loads((out / "results.json").read_text(encoding="utf-8"))}
    assert results["sam-2"]["score"] == results["sam"]["score"] + 2  # the decision stayed with y
    assert "was 'sam' in the run before" in " ".join(results["sam-3"].get("notes", ())), done.stdout


def test_a_top_level_submission_joining_takes_its_own_name_and_the_nested_ones_keep_their_folders(tmp_path):
    cls, out = tmp_path / "top", tmp_path / "out"
    submit(cls, "c1/zoe.yaml")
    submit(cls, "c2/zoe.yaml")
    submit(cls, "c1/amy.yaml")
    submit(cls, "c2/ben.yaml")
    grade(cls, out)
    first = json.loads((out / ".folders.json").read_text(encoding="utf-8"))
    folder = {"/".join(Path(p).parts[-2:]): e["folder"] for p, e in first.items()}
    (out / folder["c1/zoe.yaml"] / "notes.txt").write_text("about c1's zoe", encoding="utf-8")
    (out / folder["c2/zoe.yaml"] / "notes.txt").write_text("about c2's zoe", encoding="utf-8")
    submit(cls, "zoe.yaml")
    submit(cls, "pat.yaml")
    grade(cls, out)
    listed = json.loads((out / ".folders.json").read_text(encoding="utf-8"))
    now = {"/".join(Path(p).parts[-2:]): e for p, e in listed.items()}
    assert now["top/zoe.yaml"]["student"] == "zoe"  # its own name, at the top of the class
    for place in ("c1/zoe.yaml", "c2/zoe.yaml"):  # each keeps its folder, beside its notes
        assert now[place]["folder"] == folder[place]
        report = (out / folder[place] / "report.html").read_text(encoding="utf-8")
        assert f"<h1>{now[place]['student']}</h1>" in report
    assert now["top/zoe.yaml"]["folder"] not in folder.values()


def test_a_persons_own_folder_in_out_is_given_to_no_newcomer(tmp_path):
    cls, out = tmp_path / "class", tmp_path / "out"
    submit(cls, "bob.yaml")
    submit(cls, "amy.yaml")
    grade(cls, out)
    (out / "regrades").mkdir()
    (out / "regrades" / "requests.txt").write_text("bob asked", encoding="utf-8")
    submit(cls, "regrades.yaml")
    grade(cls, out)
    assert sorted(p.name for p in (out / "regrades").iterdir()) == ["requests.txt"]
    assert "<h1>regrades</h1>" in (out / "regrades-2" / "report.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("linked", [False, True])
def test_a_persons_own_file_in_out_keeps_its_name_when_a_student_so_named_joins(tmp_path, linked):
    cls, out = tmp_path / "class", tmp_path / "out"
    submit(cls, "bob.yaml")
    submit(cls, "amy.yaml")
    if linked:  # written in place: carol's folder could not be made beside the file
        (tmp_path / "real").mkdir()
        out.symlink_to(tmp_path / "real")
    grade(cls, out)
    (out / "carol").write_text("ask carol about 2e", encoding="utf-8")
    submit(cls, "carol.yaml")
    grade(cls, out)
    assert (out / "carol").read_text(encoding="utf-8") == "ask carol about 2e"
    assert "<h1>carol</h1>" in (out / "carol-2" / "report.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("linked", [False, True])
def test_a_persons_copy_of_a_report_in_their_own_folder_is_kept(tmp_path, linked):
    cls, out = tmp_path / "class", tmp_path / "out"
    submit(cls, "bob.yaml")
    submit(cls, "amy.yaml")
    if linked:  # written in place
        (tmp_path / "real").mkdir()
        out.symlink_to(tmp_path / "real")
    grade(cls, out)
    (out / "bob-before-regrade").mkdir()
    saved = (out / "bob" / "report.html").read_text(encoding="utf-8")
    (out / "bob-before-regrade" / "report.html").write_text(saved, encoding="utf-8")
    grade(cls, out)
    assert (out / "bob-before-regrade" / "report.html").read_text(encoding="utf-8") == saved


def test_a_hand_made_entry_for_nobody_does_not_take_a_present_students_folder(tmp_path):
    cls, out = tmp_path / "class", tmp_path / "out"
    carol = submit(cls, "carol.yaml")
    submit(cls, "bob.yaml")
    grade(cls, out)
    (out / "carol" / "notes.txt").write_text("about carol", encoding="utf-8")
    listed = json.loads((out / ".folders.json").read_text(encoding="utf-8"))
    listed[str(carol.with_name("ghost.yaml"))] = {"student": "ghost", "folder": "carol"}
    (out / ".folders.json").write_text(json.dumps(listed), encoding="utf-8")
    grade(cls, out)
    assert sorted(p.name for p in (out / "carol").iterdir()) == ["notes.txt", "report.html"]


def test_a_list_the_run_cannot_use_is_said_and_the_run_goes_on(tmp_path):
    (tmp_path / ".folders.json").write_text("[" * 100_000, encoding="utf-8")  # deeper than the parser goes
    said: list[str] = []
    assert not lastrun.read(tmp_path, said).known
    assert len(said) == 1 and ".folders.json: it cannot be read (RecursionError)" in said[0]
    (tmp_path / ".folders.json").write_text(json.dumps({
        "/c/bob.yaml": {"student": "bob", "folder": "bob-" + "9" * 5000},
        "/c/amy.yaml": {"student": "amy", "folder": "../amy"},
        "/c/eve.yaml": 3,
        "/c/zed.yaml": {"student": "zed", "folder": "zed"}}), encoding="utf-8")
    said.clear()
    last = lastrun.read(tmp_path, said)
    assert last.known and last.entries == {"/c/zed.yaml": lastrun.Entry("zed", "zed")}
    assert len(said) == 1 and "3 entries" in said[0]


def test_what_a_run_lists_is_what_the_next_reads(tmp_path):
    listing = "".join(lastrun.lines(["/c/a b.yaml", "/c/\u00e9.yaml"], ["a b", "\u00e9"], ["a_b", "student"],
                                    {"/c/gone.yaml": lastrun.Entry("gone", "gone")}))
    (tmp_path / ".folders.json").write_text(listing, encoding="utf-8")
    last = lastrun.read(tmp_path)
    assert last.ids() == {"/c/a b.yaml": "a b", "/c/\u00e9.yaml": "\u00e9", "/c/gone.yaml": "gone"}
    assert last.folders() == {"a_b", "student", "gone"}


def test_a_file_named_like_an_id_it_never_had_takes_its_name_when_it_joins(tmp_path):
    cls, out = tmp_path / "class", tmp_path / "out"
    submit(cls, "x.yaml", "bob")  # x is bob
    submit(cls, "amy.yaml")
    grade(cls, out)
    submit(cls, "bob.yaml")  # Bob's own file: his name, as in a first run
    for _ in range(2):
        grade(cls, out)
        assert by_source(out) == {"bob": "class/bob.yaml", "bob-2": "class/x.yaml", "amy": "class/amy.yaml"}


def test_a_file_unreadable_for_one_run_keeps_its_id_and_folder(tmp_path):
    cls, out = tmp_path / "class", tmp_path / "out"
    x = submit(cls, "x.yaml", "sam")
    submit(cls, "y.yaml", "sam")
    submit(cls, "amy.yaml")  # with x unreadable, still a class of two
    grade(cls, out)
    (out / "sam" / "notes.txt").write_text("about x", encoding="utf-8")
    good = x.read_text(encoding="utf-8")
    x.write_text("answers: [", encoding="utf-8")
    grade(cls, out, exit_code=1)  # 1: a submission could not be graded
    assert by_source(out)["sam"] == "class/x.yaml"  # its error row is still sam
    x.write_text(good, encoding="utf-8")
    grade(cls, out)
    assert by_source(out) == {"sam": "class/x.yaml", "sam-2": "class/y.yaml", "amy": "class/amy.yaml"}
    assert sorted(p.name for p in (out / "sam").iterdir()) == ["notes.txt", "report.html"]


def test_a_class_reached_through_a_link_is_the_same_class(tmp_path):
    real, out = tmp_path / "real" / "class", tmp_path / "out"
    submit(real, "x.yaml", "sam")
    submit(real, "y.yaml", "sam")
    grade(real, out)
    (tmp_path / "via").symlink_to(tmp_path / "real")
    submit(real, "a.yaml", "sam")
    grade(tmp_path / "via" / "class", out)
    assert by_source(out) == {"sam": "class/x.yaml", "sam-2": "class/y.yaml", "sam-3": "class/a.yaml"}


def test_a_moved_class_is_said_and_no_folder_goes_to_whoever_came_second(tmp_path):
    cls, out = tmp_path / "class", tmp_path / "out"
    submit(cls, "x.yaml", "sam")
    submit(cls, "y.yaml", "sam")
    grade(cls, out)
    (out / "sam-2" / "notes.txt").write_text("about y", encoding="utf-8")
    cls.rename(tmp_path / "moved")
    submit(tmp_path / "moved", "a.yaml", "sam")
    done = grade(tmp_path / "moved", out)
    assert "was the class moved?" in done.stdout
    assert sorted(p.name for p in (out / "sam-2").iterdir()) == ["notes.txt"]  # y's notes beside nobody's report


def test_a_student_who_claims_another_id_for_a_run_gets_their_folder_back_with_their_id(tmp_path):
    cls, out = tmp_path / "class", tmp_path / "out"
    x = submit(cls, "x.yaml", "sam")
    submit(cls, "amy.yaml")
    grade(cls, out)
    (out / "sam" / "notes.txt").write_text("about sam", encoding="utf-8")
    x.write_text(x.read_text(encoding="utf-8").replace("student: sam", "student: tom"), encoding="utf-8")
    submit(cls, "b.yaml", "sam")  # a newcomer claiming sam meanwhile does not get sam's notes
    grade(cls, out)
    assert sorted(p.name for p in (out / "sam").iterdir()) == ["notes.txt"]
    (cls / "b.yaml").unlink()
    x.write_text(x.read_text(encoding="utf-8").replace("student: tom", "student: sam"), encoding="utf-8")
    grade(cls, out)
    assert sorted(p.name for p in (out / "sam").iterdir()) == ["notes.txt", "report.html"]
    assert by_source(out)["sam"] == "class/x.yaml"


def test_a_class_left_with_one_submission_is_still_a_class(tmp_path):
    # Alone in its folder, bob.yaml would make the folder one student's submission folder,
    # named 'class'; the run before graded that folder as a class.
    cls, out = tmp_path / "class", tmp_path / "out"
    submit(cls, "bob.yaml")
    amy = submit(cls, "amy.yaml")
    grade(cls, out)
    (out / "bob" / "notes.txt").write_text("about bob", encoding="utf-8")
    amy.unlink()
    grade(cls, out)
    assert by_source(out) == {"bob": "class/bob.yaml"}
    assert sorted(p.name for p in (out / "bob").iterdir()) == ["notes.txt", "report.html"]


def test_the_id_of_a_submission_that_left_goes_to_no_newcomer(tmp_path):
    cls, out = tmp_path / "class", tmp_path / "out"
    submit(cls, "x.yaml", "sam")
    submit(cls, "y.yaml", "sam")  # x is sam, y is sam-2
    grade(cls, out)
    decisions = tmp_path / "decisions.yaml"
    decisions.write_text('students:\n  - {student: sam-2, part: "1a", manual_score: 2}\n', encoding="utf-8")
    (cls / "y.yaml").unlink()
    submit(cls, "a.yaml", "sam")  # another sam: not the one who was sam-2, nor given that one's decision
    refused = grade(cls, out, "--overrides", str(decisions), exit_code=2)
    assert "no student 'sam-2'" in refused.stderr
    grade(cls, out)
    assert by_source(out) == {"sam": "class/x.yaml", "sam-2": "class/y.yaml", "sam-3": "class/a.yaml"}
    submit(cls, "b.yaml", "sam")  # runs later: sam-2 is still that one's, who left
    grade(cls, out)
    assert by_source(out)["sam-4"] == "class/b.yaml"
    submit(cls, "y.yaml", "sam")  # and who comes back as sam-2
    grade(cls, out)
    assert by_source(out)["sam-2"] == "class/y.yaml"


def test_a_class_copied_elsewhere_keeps_the_ids_a_first_run_gives(tmp_path):
    # New places are not students who left: sam-2 is not held back from the copy's second sam.
    out = tmp_path / "out"
    for name in ("c1", "c2"):
        submit(tmp_path / name, "sam.yaml")
        submit(tmp_path / name, "x.yaml", "sam")
        grade(tmp_path / name, out)
        assert by_source(out) == {"sam": f"{name}/sam.yaml", "sam-2": f"{name}/x.yaml"}
