"""The grading pipeline end to end: plan → run → assemble, on real example submissions."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from attngrade import grading
from attngrade.grading import resolver
from attngrade.cli import main
from attngrade.errors import ConfigError
from attngrade.grading import InProcess, assignment, grade_answer, grade_submission
from attngrade.intake.submissions import load_submission
from attngrade.problems import load_homework
from attngrade.grading import Class, Options, grade
from attngrade.outputs.run import RunRequest, grade_run

BANKS = Path(__file__).resolve().parents[1] / "data" / "banks"


@pytest.fixture()
def graded(a5, a5_keys):
    return assignment(a5, a5_keys)


def by_part(result):
    return {v.part: v for v in result.parts}


def test_full_marks_example(graded, root):
    result = grade_submission(graded, load_submission(root / "examples/cs224n-w21-a5/full-marks.yaml"))
    parts = by_part(result)
    for pid in ("1b", "1c.i", "1d.i", "1e.ii"):
        assert parts[pid].status == "correct", parts[pid].feedback
    assert parts["1e.i"].status == "pending" and parts["1e.i"].score == 2  # c2 and possible; 'why' waits
    assert parts["1a"].status == "pending"
    assert result.score == 13 and result.max_score == 61


def test_seeds_get_what_a_ta_would_give(graded, root):
    s0 = by_part(grade_submission(graded, load_submission(root / "examples/cs224n-w21-a5/seed-000.yaml")))
    s1 = by_part(grade_submission(graded, load_submission(root / "examples/cs224n-w21-a5/seed-001.yaml")))
    assert s0["1e.ii"].score < 4 and "c1 ≈ u_b, not u_b - u_c" in s0["1e.ii"].feedback[0]
    assert s1["1e.ii"].score < 4 and any("c2 ≈" in line for line in s1["1e.ii"].feedback)
    assert s0["1b"].status == "correct" and "read your row vector as the column vector q" in s0["1b"].feedback
    assert s0["1c.i"].status == "correct" and any("mu_a" in line for line in s0["1c.i"].feedback)


def test_invalid_is_not_incorrect(graded, root):
    parts = by_part(grade_submission(graded, load_submission(root / "examples/cs224n-w21-a5/unreadable.yaml")))
    assert parts["1b"].status == "invalid"
    assert parts["1e.ii"].status == "invalid"
    # Graded for a class, an answer the reader cannot read waits for staff, the reader's message first.
    assert parts["1e.ii"].feedback[0].startswith("could not read this answer") and parts["1e.ii"].pending_points > 0
    assert "(d×1)(d×1) cannot be multiplied; did you mean u_c u_d^T? (column 5)" in parts["1e.ii"].feedback[1]
    # 1e.i's c2 was read and is right; its unreadable `possible` is neither wrong nor lost: that
    # field's point waits for staff and the part is partly pending, the reader's message said.
    unread = parts["1e.i"]
    assert unread.status == "partly pending" and (unread.score, unread.pending_points) == (1, 1)
    assert unread.feedback[0].startswith("partly pending") and unread.feedback[1] == \
        "1e.i, field possible: expected yes or no, got 'maybe'"
    # A self-check says the part is invalid, so that the student fixes it before handing in.
    checked = by_part(grade_submission(assignment(graded.homework, None, self_check=True),
                                       load_submission(root / "examples/cs224n-w21-a5/unreadable.yaml")))
    assert checked["1e.i"].status == "invalid" and "expected yes or no, got 'maybe'" in checked["1e.i"].feedback[0]


def test_missing_parts_and_unknown_ids_are_reported(graded, root):
    result = grade_submission(graded, load_submission(root / "examples/cs224n-w21-a5/missing-parts.yaml"))
    parts = by_part(result)
    assert parts["1a"].status == "missing"
    assert "Q: no answer" in parts["1e.ii"].feedback
    assert parts["1e.ii"].score == 2  # V was read and is right: its credit stands
    assert any("unknown part '1f'" in note for note in result.notes)


def test_multi_field_part_given_as_text_and_unknown_field(graded, data_dir):
    parts = by_part(grade_submission(graded, load_submission(data_dir / "submissions/multi-field-as-string.yaml")))
    assert parts["1e.ii"].status == "invalid"
    assert "this part has the fields V, K, Q; write them as a mapping" in parts["1e.ii"].feedback[1]
    assert parts["1d.i"].status == "correct"
    assert "unknown field 'q3'" in parts["1d.i"].feedback[0]


# -- the plan: distinct tasks, reads counted -------------------------------------------------
def test_a_repeated_submission_adds_no_task(graded, root):
    sub = load_submission(root / "examples/cs224n-w21-a5/full-marks.yaml")
    once = grading.plan([sub], lambda _: graded)
    twice = grading.plan([sub, sub], lambda _: graded)
    assert len(twice.tasks) == len(once.tasks) > 0
    assert twice.stats.checks == 2 * once.stats.checks
    assert twice.stats.check_hits == once.stats.check_hits + once.stats.checks


def test_the_same_answer_in_other_spacing_is_one_task(graded):
    both = grading.plan([_answer(graded, "1b", "C(k_a+k_b)"), _answer(graded, "1b", r"C \left( k_a + k_b \right)")],
                        lambda _: graded)
    assert len(both.tasks) == 1 and both.stats.check_hits == 1


def test_each_submission_is_read_once_per_batch(root):
    folder = root / "examples/cs224n-w21-a5"
    batch = grade(Class([folder]), Options(solutions=root / "solutions", workers=1))
    assert batch.stats.submissions == len(batch.results) == 16
    # every non-blank answer field is read exactly once (the memo counts repeats as hits)
    fields = sum(len(v.answers) for r in batch.results for v in r.parts
                 if v.status != "missing" and "" not in v.answers)
    files = sum(1 for r in batch.results for v in r.parts for name in v.answers
                if name and v.readings.get(name).__class__.__name__ == "FileReading")
    assert batch.stats.reads == fields - files
    assert batch.stats.tasks == sum(row[1] for row in batch.stats.by_check.values())


def test_a_check_of_code_nobody_handed_in_is_one_task_per_part(root):
    """The checkpoint check says the same of every missing checkpoint, whatever the dev file: one task
    per part serves the class, not one per distinct prediction file."""
    batch = grade(Class([root / "examples/cs224n-w21-a5"]), Options(solutions=root / "solutions", workers=1))
    with_checkpoint = [p for p in load_homework("cs224n-w21-a5").parts if any(c.check == "checkpoint" for c in p.checks)]
    checked, distinct = batch.stats.by_check["checkpoint"]
    assert checked > len(with_checkpoint) >= 3 and distinct == len(with_checkpoint)
    assert batch.stats.by_check["accuracy_file"][1] > distinct  # the dev files do differ


def test_outcomes_known_from_an_earlier_run_are_not_run_again(graded, root):
    sub = load_submission(root / "examples/cs224n-w21-a5/partial.yaml")
    planned = grading.plan([sub], lambda _: graded)

    class Counting(InProcess):
        calls: list = []

        def run(self, tasks, assignments):
            Counting.calls.append(len(tasks))
            return super().run(tasks, assignments)

    first = grading.run(planned.tasks, planned.assignments, Counting())
    again = grading.run(planned.tasks, planned.assignments, Counting(), known=first)
    assert Counting.calls == [len(planned.tasks)] and again == first


def test_the_ledger_is_what_every_output_reads(graded, root):
    result = grade_submission(graded, load_submission(root / "examples/cs224n-w21-a5/full-marks.yaml"))
    parts = by_part(result)
    assert parts["1e.i"].points.decided == 2 and parts["1e.i"].points.text > 0  # 'why' is for staff
    assert parts["1b"].points.decided == 4 and parts["1b"].points.staff == 0
    assert parts["1a"].points.decided == 0 and parts["1a"].points.text == parts["1a"].max_score


def test_a_check_that_crashes_is_attngrades_error_not_manual(graded, monkeypatch):
    from attngrade.checkers import REGISTRY
    from attngrade.checkers.base import Check

    def explode(answers, ctx):
        raise ZeroDivisionError("inside the checker")

    monkeypatch.setitem(REGISTRY, "attention_query", Check("attention_query", explode))
    verdict = grade_answer(graded, "1b", "C(k_a+k_b)")
    assert verdict.status == "error" and verdict.score == 0
    assert verdict.points.staff == 4  # undecided, not the student's zero
    assert "not a mistake in your answer" in verdict.feedback[0]


def test_instructor_run_without_keys_is_a_config_error(a5):
    with pytest.raises(ConfigError, match="no keys"):
        assignment(a5, None)


def test_self_check_never_compares_with_keys(a5, root):
    result = grade_submission(assignment(a5, None, self_check=True),
                              load_submission(root / "examples/cs224n-w21-a5/partial.yaml"))
    part = by_part(result)["1e.i"]
    assert part.status == "unchecked"
    assert part.shown["c2"] == "u_b"
    assert not any("expected" in line for line in part.feedback)


def _answer(given, part, text):
    from attngrade.records import Submission

    return Submission("s", given.id, {part: text}, Path("s.yaml"))


# -- a bank validated when it loads -------------------------------------------------------------
BROKEN = {
    "misspelled-param": ("library/tiny-attention.yaml:24, part q1, check attention_query: unknown parameter "
                         "'positons' (did you mean 'positions'?)"),
    "unknown-check": "library/tiny-attention.yaml:36, part q2: unknown check 'big_O' (did you mean 'bigO'?)",
    "missing-key": "solutions/tiny-hw/keys.yaml: no key for part q2, field cost",
}


@pytest.mark.parametrize("bank", sorted(BROKEN))
def test_grade_validate_names_file_part_and_parameter(bank, capsys):
    folder = BANKS / bank
    assert main(["validate", str(folder), "--solutions", str(folder / "solutions")]) == 2
    assert BROKEN[bank] in capsys.readouterr().err


@pytest.mark.parametrize("bank", sorted(BROKEN))
def test_grade_run_refuses_a_broken_bank_before_any_student(bank, tmp_path, capsys):
    folder = BANKS / bank
    out = tmp_path / "out"
    code = main(["run", str(BANKS / "tiny" / "class"), "-o", str(out), "--bank", str(folder),
                 "--solutions", str(folder / "solutions"), "--workers", "1"])
    assert code == 2
    assert BROKEN[bank] in capsys.readouterr().err
    assert not out.exists()  # no student row, no report


def test_a_sound_bank_from_a_folder_grades_and_validates(tmp_path, capsys):
    folder = BANKS / "tiny"
    assert main(["validate", str(folder), "--solutions", str(folder / "solutions")]) == 0
    stats = tmp_path / "stats.json"
    assert main(["run", str(folder / "class"), "-o", str(tmp_path / "out"), "--bank", str(folder),
                 "--solutions", str(folder / "solutions"), "--workers", "1", "--stats", str(stats)]) == 0
    grades = (tmp_path / "out" / "grades.csv").read_text().splitlines()
    assert grades[1:] == ["right,tiny-hw,2,1,3,0,3,", "wrong,tiny-hw,0,0,0,0,3,"]
    numbers = json.loads(stats.read_text())
    assert numbers["submissions"] == 2 and numbers["tasks"] == 4 and set(numbers["timings"]) >= {"plan", "run"}


def test_the_bundled_bank_validates(root, capsys):
    assert main(["validate", "--solutions", str(root / "solutions")]) == 0
    assert capsys.readouterr().out.count(": ok (") == 5


# -- the import graph: mathlang ← checkers ← grading ← outputs --------------------------------------
def test_grading_imports_no_output_module():
    code = ("import sys, attngrade.grading; "
            "print('\\n'.join(m for m in sys.modules if m.startswith('attngrade')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    outputs = ("attngrade.reports", "attngrade.gradescope", "attngrade.outputs.run", "attngrade.output",
               "attngrade.overrides", "attngrade.groups", "attngrade.cli", "attngrade.terminal")
    assert not [m for m in loaded if m.startswith(outputs)]


LAYERS = ["mathlang", "checkers", "grading", "outputs"]
OUTPUTS = {"reports", "gradescope", "batch", "output", "overrides", "groups", "cli", "terminal", "selfcheck"}


def _layer(module: str) -> str | None:
    top = module.split(".")[1] if module.count(".") >= 1 else ""
    if top in ("mathlang", "checkers", "grading"):
        return top
    return "outputs" if top in OUTPUTS else None


def test_no_module_imports_a_layer_above_its_own(root):
    import ast

    upward = []
    for path in (root / "attngrade").rglob("*.py"):
        module = "attngrade." + ".".join(path.relative_to(root / "attngrade").with_suffix("").parts)
        mine = _layer(module)
        if mine is None:
            continue
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif isinstance(node, ast.ImportFrom) and node.module:
                target = node.module
            else:
                continue
            theirs = _layer(target) if target.startswith("attngrade.") else None
            if theirs and LAYERS.index(theirs) > LAYERS.index(mine):
                upward.append(f"{module} imports {target}")
    assert upward == []


# -- progress over the whole run ---------------------------------------------------------------------
class Recorder:
    def __init__(self):
        self.stages, self.done = [], {}

    def stage(self, name, total):
        self.stages.append((name, total))
        self.done[name] = 0

    def advance(self, count=1):
        self.done[self.stages[-1][0]] += count

    def close(self):
        pass


def test_progress_covers_reading_checking_and_writing(root, tmp_path, monkeypatch):
    from attngrade.outputs import run as batch_module

    recorder = Recorder()
    monkeypatch.setattr(batch_module, "for_terminal", lambda show: recorder)
    result = grade_run(RunRequest([root / "examples/cs224n-w21-a5"], tmp_path / "out", Options(solutions=root / "solutions", workers=1)))
    names = [name for name, _ in recorder.stages]
    assert [n.split()[0] for n in names] == ["reading", "checking", "writing"]
    for name, total in recorder.stages:
        assert recorder.done[name] == total > 0, name  # each bar runs to its end
    assert recorder.stages[1][1] == result.stats.tasks


def test_no_progress_is_drawn_when_not_on_a_terminal(root, tmp_path, capsys):
    from attngrade.runtime.progress import Quiet, for_terminal

    assert type(for_terminal(True)) is Quiet  # pytest's stderr is not a terminal
    assert main(["run", str(root / "examples/eecs182-fa22-hw8"), "-o", str(tmp_path / "o"), "--workers", "1"]) == 0
    assert capsys.readouterr().err == ""


def test_the_bars_show_count_and_rate_on_a_terminal():
    import io
    import time

    from rich.console import Console

    from attngrade.runtime.progress import Bars

    screen = io.StringIO()
    bars = Bars(Console(file=screen, force_terminal=True, width=120))
    bars.stage("checking 40 distinct answers", 40)
    for _ in range(40):
        bars.advance()
        time.sleep(0.005)
    bars._progress.refresh()
    drawn = screen.getvalue()
    bars.close()
    assert "checking 40 distinct answers" in drawn and "40/40" in drawn
    assert re.search(r"\d[\d,]*/s", drawn), drawn  # items a second


def _student_folder(root: Path, tmp_path: Path, name: str, answers: str = "{}") -> Path:
    """A copy of a real student's folder of prediction files, under another student id."""
    import shutil

    folder = tmp_path / name
    shutil.copytree(root / "examples/cs224n-w21-a5/parachutel", folder)
    (folder / "answers.yaml").write_text(f"homework: cs224n-w21-a5\nstudent: {name}\nanswers: {answers}\n",
                                         encoding="utf-8")
    return folder


def test_equal_file_parts_are_one_reading_and_a_file_is_held_once(graded, root, tmp_path):
    twins = [load_submission(_student_folder(root, tmp_path, name)) for name in ("twin-a", "twin-b")]
    other = load_submission(_student_folder(root, tmp_path, "other", "{2f: {accuracy: 26.6%}}"))
    planned = grading.plan([*twins, other], lambda _: graded)
    a, b, c = ({p.part.id: p for p in entry.parts} for entry in planned.entries)
    assert a["2f"].readings["dev"].name == "vanilla.pretrain.dev.predictions"
    assert a["2f"] is b["2f"] and a["2d"] is b["2d"]  # the same files and answers: one reading
    assert c["2f"] is not a["2f"] and c["2f"].shown["accuracy"] != a["2f"].shown.get("accuracy")
    assert c["2f"].readings["dev"] is a["2f"].readings["dev"]  # another answer, the same file: its text once
    results = grading.assemble(planned, grading.run(planned.tasks, planned.assignments, InProcess()))
    alone = grade_submission(graded, twins[1])
    assert [r.to_json() for r in results][1] == {**alone.to_json(), "student": "twin-b"}


def test_a_changed_file_is_another_reading(graded, root, tmp_path):
    first = _student_folder(root, tmp_path, "first")
    second = _student_folder(root, tmp_path, "second")
    dev = second / "vanilla.pretrain.dev.predictions"
    lines = dev.read_text(encoding="utf-8").splitlines(keepends=True)
    dev.write_text("".join(lines[1:] + lines[:1]), encoding="utf-8")  # the same lines, out of order
    planned = grading.plan([load_submission(first), load_submission(second)], lambda _: graded)
    a, b = ({p.part.id: p for p in entry.parts} for entry in planned.entries)
    assert a["2f"] is not b["2f"] and a["2f"].readings["dev"].sha256 != b["2f"].readings["dev"].sha256
    assert a["2d"] is b["2d"]


def test_a_large_class_is_loaded_one_submission_at_a_time(root, tmp_path):
    folder = root / "examples/cs224n-w21-a5"
    stats = grading.Stats()
    loading = grading.load_all([folder], stats, lazy_from=16)
    assert len(loading) == 16 and stats.submissions == 0  # counted, nothing loaded yet
    first = next(iter(loading))
    assert stats.submissions == 1 and first.path == loading.paths[0]  # the first one found, in order
    with pytest.raises(RuntimeError, match="read once"):
        next(iter(loading))
    assert isinstance(grading.load_all([folder], lazy_from=17), list)  # below the threshold: loaded whole
    whole = grade(Class([folder]), Options(solutions=root / "solutions", workers=1))  # 16: loaded whole
    loaded = [r.to_json() for r in whole.results]
    planned = grading.plan(grading.load_all([folder], lazy_from=1), resolver(Options(solutions=root / "solutions")))
    assert all(not entry.submission.answers for entry in planned.entries if hasattr(entry, "submission"))
    assert [r.to_json() for r in grading.assemble(planned, grading.run(planned.tasks, planned.assignments,
                                                                         InProcess()))] == loaded



def test_error_rows_claiming_one_id_get_two_ids_too(root, tmp_path):
    # x.yaml and the folder x/ are both unreadable: two rows, not two "x" rows in results.json.
    good = (root / "examples" / "cs224n-w21-a5" / "full-marks.yaml").read_text(encoding="utf-8")
    (tmp_path / "full-marks.yaml").write_text(good, encoding="utf-8")
    (tmp_path / "x.yaml").write_text("answers: [", encoding="utf-8")
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "answers.yaml").write_text("answers: [", encoding="utf-8")
    batch = grade(Class([tmp_path]), Options(solutions=root / "solutions"))
    rows = {r.student: r for r in batch.results}
    assert set(rows) == {"full-marks", "x", "x-2"}
    assert rows["x"].error and rows["x-2"].error and not rows["full-marks"].error
    assert any("also says it is 'x'" in note for note in rows["x-2"].notes)


@pytest.mark.parametrize("lazy", [False, True])
def test_a_file_claiming_another_submissions_name_does_not_take_it(root, tmp_path, lazy):
    # aaa-mallory.yaml comes first in order and says it is zoe; zoe.yaml is Zoe's.
    from attngrade.grading import Stats, load_all
    from attngrade.grading.shards import plan_split

    good = (root / "examples" / "cs224n-w21-a5" / "full-marks.yaml").read_text(encoding="utf-8")
    (tmp_path / "aaa-mallory.yaml").write_text(good.replace("student: full-marks", "student: zoe"), encoding="utf-8")
    (tmp_path / "zoe.yaml").write_text(good.replace("student: full-marks\n", ""), encoding="utf-8")
    (tmp_path / "zoe-2.yaml").write_text(good.replace("student: full-marks\n", ""), encoding="utf-8")
    items = load_all([tmp_path], Stats(), lazy_from=1 if lazy else None)
    planned = plan_split(items, resolver(Options(solutions=root / "solutions")), Stats(), workers=1)
    listed = {entry.submission.path.name: entry for entry in planned.entries}
    assert listed["zoe.yaml"].submission.student == "zoe"
    assert listed["zoe-2.yaml"].submission.student == "zoe-2"
    mallory = listed["aaa-mallory.yaml"]
    assert mallory.submission.student == "zoe-3"  # not zoe, nor the zoe-2 another file is named
    assert any("another submission in this batch is named 'zoe'" in note for note in mallory.notes)


@pytest.mark.parametrize("lazy", [False, True])
def test_a_folder_nested_in_a_students_submission_does_not_take_a_classmates_name(root, tmp_path, lazy):
    # mallory/ holds her answers and a folder zoe/ with answers of its own; Zoe's own zoe/ comes
    # after it in order. A folder is one submission: mallory/zoe is Mallory's file, passed over and
    # said in her row, never a row of its own that could take Zoe's name or become zoe-2.
    from attngrade.grading import Stats, load_all
    from attngrade.grading.loading import Discovery
    from attngrade.grading.shards import plan_split

    good = (root / "examples" / "cs224n-w21-a5" / "full-marks.yaml").read_text(encoding="utf-8")
    anonymous = good.replace("student: full-marks\n", "")
    for folder in ("mallory", "mallory/zoe", "zoe"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "answers.yaml").write_text(anonymous, encoding="utf-8")
    passed_over: list[Path] = []
    items = load_all([tmp_path], Stats(), discovery=Discovery(passed_over=passed_over),
                     lazy_from=1 if lazy else None)
    planned = plan_split(items, resolver(Options(solutions=root / "solutions")), Stats(), workers=1)
    listed = {entry.submission.folder.relative_to(tmp_path).as_posix(): entry for entry in planned.entries
              if entry.submission.folder is not None}
    assert sorted(listed) == ["mallory", "zoe"]
    assert listed["zoe"].submission.student == "zoe" and listed["mallory"].submission.student == "mallory"
    assert passed_over == [tmp_path / "mallory" / "zoe" / "answers.yaml"]
    assert any(note.startswith("zoe/answers.yaml: answers inside this folder, not graded")
               for note in listed["mallory"].submission.notes)
    assert not any("answers inside this folder" in note for note in listed["zoe"].submission.notes)


@pytest.mark.parametrize("lazy", [False, True])
def test_how_deep_a_folder_is_counts_inside_its_class_not_on_the_disk(root, tmp_path, lazy, monkeypatch):
    # Two classes named on the command line, one by an absolute path: C/zoe is at the top of its
    # class, D/section/zoe one class deeper (a section: a folder of students' folders), whatever the
    # paths' lengths. D/mallory/zoe, inside Mallory's folder, is no submission at any depth.
    from attngrade.grading import Stats, load_all
    from attngrade.grading.loading import Discovery
    from attngrade.grading.shards import plan_split

    anonymous = (root / "examples" / "cs224n-w21-a5" / "full-marks.yaml").read_text(encoding="utf-8") \
        .replace("student: full-marks\n", "")
    for folder in ("C/zoe", "C/ann", "D/section/zoe", "D/section/eve", "D/mallory", "D/mallory/zoe", "D/bob"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "answers.yaml").write_text(anonymous, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    passed_over: list[Path] = []
    items = load_all([tmp_path / "C", Path("D")], Stats(), discovery=Discovery(passed_over=passed_over),
                     lazy_from=1 if lazy else None)
    planned = plan_split(items, resolver(Options(solutions=root / "solutions")), Stats(), workers=1)
    ids = {entry.submission.folder.resolve().relative_to(tmp_path).as_posix(): entry.submission.student
           for entry in planned.entries if entry.submission.folder is not None}
    assert ids == {"C/zoe": "zoe", "C/ann": "ann", "D/section/zoe": "zoe-2", "D/section/eve": "eve",
                   "D/mallory": "mallory", "D/bob": "bob"}
    assert passed_over == [Path("D/mallory/zoe/answers.yaml")]


def test_a_name_whose_submission_claims_another_id_is_free_for_its_namesake(root, tmp_path):
    # zoe.yaml says it is zoe-smith; the folder zoe/ claims nothing: it is zoe.
    good = (root / "examples" / "cs224n-w21-a5" / "full-marks.yaml").read_text(encoding="utf-8")
    (tmp_path / "zoe.yaml").write_text(good.replace("student: full-marks", "student: zoe-smith"), encoding="utf-8")
    for folder in ("zoe", "ann"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "answers.yaml").write_text(good.replace("student: full-marks\n", ""), encoding="utf-8")
    batch = grade(Class([tmp_path]), Options(solutions=root / "solutions"))
    assert sorted(r.student for r in batch.results) == ["ann", "zoe", "zoe-smith"]


def test_a_stray_file_named_like_a_submission_does_not_take_its_id(root, tmp_path):
    # zoe.txt sorts before zoe.yaml; it is an error row (not an answers format), zoe.yaml is Zoe.
    good = (root / "examples" / "cs224n-w21-a5" / "full-marks.yaml").read_text(encoding="utf-8")
    (tmp_path / "zoe.txt").write_text("my answers are in the yaml", encoding="utf-8")
    for name in ("zoe", "ann"):
        (tmp_path / f"{name}.yaml").write_text(good.replace("student: full-marks\n", ""), encoding="utf-8")
    batch = grade(Class([tmp_path]), Options(solutions=root / "solutions"))
    rows = {r.student: r for r in batch.results}
    assert not rows["zoe"].error and rows["zoe"].source.endswith("zoe.yaml")
    assert rows["zoe-2"].error and rows["zoe-2"].source.endswith("zoe.txt")
