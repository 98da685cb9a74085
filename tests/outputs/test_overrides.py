"""The manual-grading loop: overrides.yaml is written, kept when edited, and applied."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml

from attngrade.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run(out: Path, *extra: str, cls: str = "examples/cs224n-w21-a5") -> int:
    return main(["run", str(ROOT / cls), "-o", str(out), "--solutions", str(ROOT / "solutions"),
                 "--workers", "0", *extra])


def grades(out: Path) -> dict[str, dict[str, str]]:
    return {row["student"]: row for row in csv.DictReader((out / "grades.csv").open())}


def test_template_lists_groups_and_pending_parts(tmp_path):
    assert run(tmp_path) == 0
    data = yaml.safe_load((tmp_path / "overrides.yaml").read_text())
    one_b = [g for g in data["groups"] if g["part"] == "1b"]
    biggest = max(one_b, key=lambda g: g["count"])
    assert biggest["count"] == 4  # C(k_a + k_b), C (k_a+k_b), c(k_a + k_b), c_1 (k_a^T + k_b^T): one value
    assert any(s["student"] == "seed-000" and s["part"] == "1a" for s in data["students"])


def test_scoring_a_group_scores_every_member(tmp_path):
    assert run(tmp_path) == 0
    data = yaml.safe_load((tmp_path / "overrides.yaml").read_text())
    unscaled = next(g for g in data["groups"] if g["part"] == "1b" and g["answer"] == "q: k_a + k_b")
    unscaled["score"] = 3
    unscaled["comment"] = "direction right; accepted the missing constant"
    edited = tmp_path / "decisions.yaml"
    edited.write_text(yaml.safe_dump(data))
    before = grades(tmp_path)
    assert run(tmp_path, "--overrides", str(edited)) == 0
    after = grades(tmp_path)
    assert before["partial"]["1b"] == "2" and after["partial"]["1b"] == "3"
    assert float(after["partial"]["total"]) == float(before["partial"]["total"]) + 1
    assert after["full-marks"]["1b"] == "4"  # other groups untouched


def test_student_entry_scores_a_pending_part(tmp_path):
    assert run(tmp_path) == 0
    path = tmp_path / "overrides.yaml"
    data = yaml.safe_load(path.read_text())
    entry = next(s for s in data["students"] if s["student"] == "seed-000" and s["part"] == "1a")
    entry["score"] = 2
    path.write_text(yaml.safe_dump(data))
    assert run(tmp_path, "--overrides", str(path)) == 0
    assert grades(tmp_path)["seed-000"]["1a"] == "2"


def test_edited_overrides_are_never_overwritten(tmp_path, capsys):
    assert run(tmp_path) == 0
    path = tmp_path / "overrides.yaml"
    path.write_text(path.read_text() + "# my notes: check seed-001 by hand\n")
    edited = path.read_text()
    assert run(tmp_path) == 0
    assert path.read_text() == edited
    assert (tmp_path / "overrides.new.yaml").is_file()
    assert "kept your edited" in capsys.readouterr().out


def test_decisions_in_the_regenerated_list_are_refused_before_they_are_lost(tmp_path, capsys):
    # overrides.new.yaml is written afresh by every run: decisions made there would count once.
    assert run(tmp_path) == 0
    (tmp_path / "overrides.yaml").write_text((tmp_path / "overrides.yaml").read_text() + "# edited\n")
    assert run(tmp_path) == 0
    regenerated = tmp_path / "overrides.new.yaml"
    edited = regenerated.read_text() + "# my decisions\n"
    regenerated.write_text(edited)
    assert run(tmp_path, "--overrides", str(regenerated)) == 2
    assert "every run writes this file afresh" in capsys.readouterr().err
    assert regenerated.read_text() == edited


def test_unedited_template_is_refreshed(tmp_path):
    assert run(tmp_path) == 0
    first = (tmp_path / "overrides.yaml").read_text()
    assert run(tmp_path) == 0
    assert (tmp_path / "overrides.yaml").read_text() == first
    assert not (tmp_path / "overrides.new.yaml").exists()


@pytest.mark.parametrize("entry, message", [
    ("students:\n- student: nobody\n  part: 1a\n  score: 1\n", "line 2: no student 'nobody' in this batch"),
    ("students:\n- student: 0123\n  part: 1a\n  score: 1\n", "line 2: no student '0123' in this batch"),  # not 83
    ("students:\n- student: no\n  part: 1a\n  score: 1\n", "line 2: no student 'no' in this batch"),  # not False
    ("students:\n- student: Seed-000\n  part: 1a\n  score: 1\n", "no student 'Seed-000' in this batch (did you mean "
                                                                    "'seed-000'?)"),
    ("students:\n- student: seed-000\n  part: 9z\n  score: 1\n", "line 2: student 'seed-000' has no part '9z'"),
    ("groups:\n- homework: cs224n-w21-a5\n  group: 1b#00000000\n  score: 1\n", "line 2: no answer group '1b#00000000'"),
    ("students:\n- student: seed-000\n  part: 1a\n  score: 7\n", "line 2: score 7 is outside 0..2"),
    # a typo in a key silently dropped the decision
    ("students:\n- student: seed-000\n  part: 1a\n  manual-score: 2\n",
     "line 2: unknown key 'manual-score' (did you mean 'manual_score'?)"),
    ("students:\n- student: seed-000\n  part: 1a\n  score: 1\n- student: seed-000\n  part: 1a\n  score: 2\n",
     "line 5: a second decision for seed-000 1a (the first is on line 2); keep one"),
    ("students:\n- student: full-marks\n  part: 1e.i\n  score: 2\n  manual_score: 1\n",
     "line 2: give `score` (the whole part's) or `manual_score` (added to the machine's), not both"),
])
def test_bad_overrides_name_their_line(tmp_path, capsys, entry, message):
    bad = tmp_path / "bad.yaml"
    bad.write_text(entry)
    assert run(tmp_path / "out", "--overrides", str(bad)) == 2
    assert message in capsys.readouterr().err


def test_manual_score_adds_to_the_machine_points(tmp_path):
    assert run(tmp_path) == 0
    path = tmp_path / "overrides.yaml"
    data = yaml.safe_load(path.read_text())
    entry = next(s for s in data["students"] if s["student"] == "full-marks" and s["part"] == "1e.i")
    assert entry["machine_score"] == 2 and entry["manual_points"] == 1
    entry["manual_score"] = 1
    path.write_text(yaml.safe_dump(data))
    assert run(tmp_path, "--overrides", str(path)) == 0
    assert grades(tmp_path)["full-marks"]["1e.i"] == "3"  # 2 from the machine + 1 for the explanation


def test_manual_score_is_bounded_by_the_written_part(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("students:\n- student: full-marks\n  part: 1e.i\n  manual_score: 2\n")
    assert run(tmp_path / "out", "--overrides", str(bad)) == 2
    assert "line 2: manual_score 2 is outside 0..1" in capsys.readouterr().err


def test_two_files_claiming_one_id_get_two_ids(tmp_path):
    cls = tmp_path / "cls"
    cls.mkdir()
    (cls / "a.yaml").write_text("homework: cs224n-w21-a5\nstudent: s002\nanswers:\n  1b: C(k_a+k_b)\n")
    (cls / "b.yaml").write_text("homework: cs224n-w21-a5\nstudent: s002\nanswers:\n  1b: k_a\n")
    out = tmp_path / "out"
    assert main(["run", str(cls), "-o", str(out), "--solutions", str(ROOT / "solutions"), "--workers", "0"]) == 0
    rows = grades(out)
    assert rows["s002"]["1b"] == "4" and rows["s002-2"]["1b"] == "0"


def test_mixed_homeworks_get_their_own_columns_and_cells_are_defused(tmp_path):
    cls = tmp_path / "cls"
    cls.mkdir()
    (cls / "a.yaml").write_text("homework: cs224n-w21-a5\nanswers:\n  1b: C(k_a+k_b)\n")
    (cls / "b.yaml").write_text("homework: mimuw-2022-p4\nanswers:\n  1b: C(k_a+k_b)\n")
    (cls / "c.yaml").write_text('homework: "=HYPERLINK(1)"\nanswers: {}\n')
    out = tmp_path / "out"
    assert main(["run", str(cls), "-o", str(out), "--solutions", str(ROOT / "solutions"), "--workers", "0"]) == 1
    rows = grades(out)
    assert rows["a"]["cs224n-w21-a5:1b"] == "4" and rows["a"]["mimuw-2022-p4:1b"] == ""
    assert rows["b"]["mimuw-2022-p4:1b"] == "2" and "1b" not in rows["b"]
    assert rows["c"]["homework"].startswith("'=")


@pytest.mark.parametrize("value", ["a\x7fb", "x\ufffey", "n\x85l", "x\u2028 y", "p\u2029q", "emoji 😀",
                                   'say "hi" \\ ok', "yes", "1.1", "q: x",
                                   1e-05, 1e20, 0.333333, 3, None, True])
def test_template_values_load_back_as_written(value):
    from attngrade.outputs.overrides import _scalar

    assert yaml.safe_load(f"k: {_scalar(value)}")["k"] == value


def test_a_group_decision_names_its_part_and_yields_to_a_students_own_entry_said(tmp_path, capsys):
    assert run(tmp_path) == 0
    data = yaml.safe_load((tmp_path / "overrides.yaml").read_text())
    group = next(g for g in data["groups"] if g["part"] == "1b" and g["answer"] == "q: k_a + k_b")
    wrong_part = tmp_path / "wrong-part.yaml"
    wrong_part.write_text(yaml.safe_dump({"groups": [{**group, "part": "1c.i", "score": 3}]}))
    assert run(tmp_path, "--overrides", str(wrong_part)) == 2
    assert f"is an answer group of part '1b', not '1c.i'" in capsys.readouterr().err
    both = tmp_path / "both.yaml"
    both.write_text(yaml.safe_dump({"groups": [{**group, "score": 3}],
                                    "students": [{"student": "partial", "part": "1b", "score": 1}]}))
    assert run(tmp_path, "--overrides", str(both)) == 0
    assert "partial 1b: this student's entry is used, not the group's decision" in capsys.readouterr().out
    assert grades(tmp_path)["partial"]["1b"] == "1"


def test_a_group_on_the_class_page_shows_its_decision_not_one_members_own(tmp_path):
    assert run(tmp_path) == 0
    data = yaml.safe_load((tmp_path / "overrides.yaml").read_text())
    biggest = max((g for g in data["groups"] if g["part"] == "1b"), key=lambda g: g["count"])
    decided = tmp_path / "decided.yaml"
    first = "full-marks"  # the first member: its own entry gives 4
    decided.write_text(yaml.safe_dump({"groups": [{**biggest, "score": 3}],
                                       "students": [{"student": first, "part": "1b", "score": 4}]}))
    assert run(tmp_path, "--overrides", str(decided)) == 0
    index = (tmp_path / "index.html").read_text()
    row = index[index.index(f'data-group="{biggest["group"]}"'):]
    assert "3/4" in row[:row.index("</tr>")]


def test_the_class_page_shows_a_group_as_decided(tmp_path):
    assert run(tmp_path) == 0
    data = yaml.safe_load((tmp_path / "overrides.yaml").read_text())
    group = next(g for g in data["groups"] if g["part"] == "1b" and g["answer"] == "q: k_a + k_b")
    assert group["graded"] == "partial 2/4"
    decided = tmp_path / "decided.yaml"
    decided.write_text(yaml.safe_dump({"groups": [{**group, "score": 3}]}))
    assert run(tmp_path, "--overrides", str(decided)) == 0
    index = (tmp_path / "index.html").read_text()
    row = index[index.index(f'data-group="{group["group"]}"'):]
    assert "3/4" in row[:row.index("</tr>")]
    fresh = yaml.safe_load((tmp_path / "overrides.new.yaml").read_text()
                           if (tmp_path / "overrides.new.yaml").exists() else (tmp_path / "overrides.yaml").read_text())
    assert next(g for g in fresh["groups"] if g["group"] == group["group"])["graded"] == "partial 3/4"


def test_the_template_lists_machine_points_left_to_staff_with_the_score_to_give(tmp_path):
    """2f's test-set share waits for staff without the test gold: listed, with `score` (it has no written answer)."""
    assert run(tmp_path) == 0
    data = yaml.safe_load((tmp_path / "overrides.yaml").read_text())
    entry = next(s for s in data["students"] if s["student"] == "Alireza1044" and s["part"] == "2f")
    assert entry["max_score"] == 10 and "score" in entry and "manual_score" not in entry
    entry["score"] = 9
    (tmp_path / "overrides.yaml").write_text(yaml.safe_dump(data))
    assert run(tmp_path, "--overrides", str(tmp_path / "overrides.yaml")) == 0
    assert grades(tmp_path)["Alireza1044"]["2f"] == "9"
    fresh = yaml.safe_load((tmp_path / "overrides.new.yaml").read_text())
    assert not any(s["student"] == "Alireza1044" and s["part"] == "2f" for s in fresh["students"])  # decided


def test_every_overrides_error_is_told_in_one_run(tmp_path, capsys):
    """Three mistakes, three lines, one run: not a rerun per typo."""
    mistakes = ROOT / "tests" / "data" / "overrides" / "three-mistakes.yaml"
    assert run(tmp_path / "out", "--overrides", str(mistakes), cls="tests/data/classes/wording") == 2
    err = capsys.readouterr().err
    assert "3 entries to fix" in err
    for told in ("line 3: no student 'anna' in this batch (did you mean 'ana'?)", "line 6: score 9 is outside 0..4",
                 "line 9: unknown key 'manual-score' (did you mean 'manual_score'?)"):
        assert told in err, told
    assert not (tmp_path / "out").exists()  # nothing was written
