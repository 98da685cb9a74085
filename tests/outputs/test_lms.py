"""Rosters joined into grades.csv, and exports in the columns Canvas and Gradescope import."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from attngrade.cli import main

ROOT = Path(__file__).resolve().parents[2]
CLASS = ROOT / "examples" / "nyu-dl-transformer"
ROSTER = Path(__file__).parents[1] / "data" / "rosters" / "nyu.csv"


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("lms") / "out"
    assert main(["run", str(CLASS), "-o", str(out), "--workers", "1", "--roster", str(ROSTER),
                 "--solutions", str(ROOT / "solutions")]) == 0
    return out


def rows(path: Path) -> list[dict]:
    return list(csv.DictReader(path.open(encoding="utf-8", newline="")))


def test_the_roster_joins_names_emails_and_sids_into_grades_csv(out):
    grades = {row["student"]: row for row in rows(out / "grades.csv")}
    assert list(grades["seed-004"])[:5] == ["student", "name", "email", "sid", "homework"]
    assert (grades["transposed-scores"]["name"], grades["transposed-scores"]["sid"]) == ("Turing, Alan", "1002")


def test_grade_run_says_who_is_missing_from_either_side(tmp_path, capsys):
    assert main(["run", str(CLASS), "-o", str(tmp_path / "out"), "--workers", "1", "--roster", str(ROSTER),
                 "--solutions", str(ROOT / "solutions")]) == 0
    assert "on the roster without a submission (1): absent-student" in capsys.readouterr().out


def test_canvas_export(out, capsys):
    assert main(["export", str(out), "--format", "canvas", "--roster", str(ROSTER)]) == 0
    target = out / "export-nyu-dl-transformer-canvas.csv"  # named by its homework, even the only one
    lines = list(csv.reader(target.open(encoding="utf-8", newline="")))
    assert lines[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "nyu-dl-transformer"]
    assert lines[1][0] == "Points Possible" and float(lines[1][5]) > 0
    graded = {row["student"]: row for row in rows(out / "grades.csv")}
    ada = next(line for line in lines if line[3] == "seed-004")
    assert ada[0] == "Ada Lovelace" and ada[2] == "1001" and ada[5] == graded["seed-004"]["total"]
    said = capsys.readouterr().out
    assert f"wrote {target} (canvas: " in said and not (out / "export-canvas.csv").exists()
    assert "points still to be graded by course staff" in said  # the NYU class has written answers pending


def test_gradescope_export(out, tmp_path):
    target = tmp_path / "gs.csv"
    assert main(["export", str(out), "--format", "gradescope", "--roster", str(ROSTER), "-o", str(target)]) == 0
    exported = {row["Email"]: row for row in rows(target)}
    assert list(next(iter(exported.values()))) == ["Name", "SID", "Email", "Total Score"]
    assert exported["alan@example.edu"]["SID"] == "1002"


@pytest.mark.parametrize("text, says", [
    ("Name,Email\nAda,ada@example.edu\n", ":1: no student id column; name one of: id, student"),
    ("id,name\nseed-004,Ada\nseed-004,Bob\n", ":3: student id 'seed-004' is listed twice"),
    ("id,name\n,Ada\n", ":2: no student id in this row"),
])
def test_a_broken_roster_names_the_line(tmp_path, text, says, capsys):
    roster = tmp_path / "roster.csv"
    roster.write_text(text)
    assert main(["run", str(CLASS), "-o", str(tmp_path / "out"), "--roster", str(roster)]) == 2
    assert f"--roster {roster}{says}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_an_id_that_looks_like_a_formula_is_defused_in_the_export(tmp_path):
    from attngrade.outputs.lms import export

    text, _ = export([{"student": '=HYPERLINK("http://x","a")', "homework": "hw", "score": 1, "max_score": 2}],
                     {}, "canvas")
    assert "'=HYPERLINK" in text and ',=HYPERLINK' not in text


def test_roster_lines_count_quoted_lines_and_skip_empty_rows(tmp_path, capsys):
    roster = tmp_path / "roster.csv"
    roster.write_text('id,name\n,\nseed-004,"Ada\nLovelace"\nseed-004,Bob\n,,\n')
    assert main(["run", str(CLASS), "-o", str(tmp_path / "out"), "--roster", str(roster)]) == 2
    assert f"--roster {roster}:5: student id 'seed-004' is listed twice" in capsys.readouterr().err


def test_a_gradescope_export_without_roster_warns(out, capsys):
    assert main(["export", str(out), "--format", "gradescope", "-o", str(out / "gs.csv")]) == 0
    assert "no --roster: the export has no SID or email" in capsys.readouterr().out


def test_a_gradescope_export_with_a_roster_of_names_only_warns(out, tmp_path, capsys):
    names = tmp_path / "names.csv"
    names.write_text("id,name\nseed-004,Ada Lovelace\n")
    assert main(["export", str(out), "--format", "gradescope", "--roster", str(names), "-o", str(tmp_path / "gs.csv")]) == 0
    assert "the roster has no sid or email column" in capsys.readouterr().out


def test_a_run_of_several_homeworks_is_exported_one_homework_at_a_time(tmp_path, capsys):
    """--assignment alone put a 40-point homework's scores under a 61-point column."""
    import shutil

    cls = Path(shutil.copytree(Path(__file__).parents[1] / "data" / "classes" / "two-homeworks", tmp_path / "cls"))
    (cls / "c.yaml").write_text("homework: cs224n-w21-a6\nanswers: {}\n")  # no such homework: an error row
    out = tmp_path / "out"
    assert main(["run", str(cls), "-o", str(out), "--solutions", str(ROOT / "solutions"), "--workers", "1"]) == 1
    capsys.readouterr()
    for flags in ([], ["--assignment", "HW5"]):
        assert main(["export", str(out), "--format", "canvas", *flags]) == 2
        assert "name the one to export with --homework ID" in capsys.readouterr().err
    assert main(["export", str(out), "--format", "canvas", "--homework", "mimuw"]) == 2
    assert "--homework mimuw: this run graded cs224n-w21-a5, mimuw-2022-p4" in capsys.readouterr().err
    target = tmp_path / "mimuw.csv"
    assert main(["export", str(out), "--format", "canvas", "--homework", "mimuw-2022-p4", "-o", str(target)]) == 0
    assert f"wrote {target} (canvas: 2 students, mimuw-2022-p4)" in capsys.readouterr().out
    lines = list(csv.reader(target.open(encoding="utf-8", newline="")))
    assert lines[0][5] == "mimuw-2022-p4" and [(line[3], line[5]) for line in lines[2:]][0][0] == "b"
    assert ("c", "") in [(line[3], line[5]) for line in lines[2:]]  # the error row: in every export, blank
    assert float(lines[1][5]) == 40
    # Without -o, each homework's export is a file of its own, named by it: neither overwrites the other.
    for homework in ("mimuw-2022-p4", "cs224n-w21-a5"):
        assert main(["export", str(out), "--format", "canvas", "--homework", homework]) == 0
        assert f"wrote {out / f'export-{homework}-canvas.csv'} (canvas: 2 students, {homework})" \
            in capsys.readouterr().out
    heads = {h: list(csv.reader((out / f"export-{h}-canvas.csv").open(encoding="utf-8", newline="")))[0][5]
             for h in ("mimuw-2022-p4", "cs224n-w21-a5")}
    assert heads == {"mimuw-2022-p4": "mimuw-2022-p4", "cs224n-w21-a5": "cs224n-w21-a5"}


def test_a_homework_whose_every_submission_failed_is_exported_blank(tmp_path, capsys):
    cls = tmp_path / "cls"
    cls.mkdir()
    for name in ("ada", "bob"):
        (cls / f"{name}.yaml").write_text("homework: cs224n-w21-a5\nanswers: [1, 2]\n")
    out = tmp_path / "out"
    assert main(["run", str(cls), "-o", str(out), "--solutions", str(ROOT / "solutions"), "--workers", "1"]) == 1
    capsys.readouterr()
    assert main(["export", str(out), "--format", "canvas"]) == 2
    assert "no submission of this run could be graded" in capsys.readouterr().err
    assert main(["export", str(out), "--format", "canvas", "--homework", "cs224n-w21-a5"]) == 0
    lines = list(csv.reader((out / "export-cs224n-w21-a5-canvas.csv").open(encoding="utf-8", newline="")))
    assert [(line[3], line[5]) for line in lines[2:]] == [("ada", ""), ("bob", "")]
