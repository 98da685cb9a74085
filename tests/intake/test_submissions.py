"""Loading submissions: formats, encodings, and YAML that must be refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from attngrade.errors import SubmissionError
from attngrade.intake.submissions import discover, load_submission


def test_file_submission_defaults_and_answers(root):
    sub = load_submission(root / "examples/cs224n-w21-a5/seed-000.yaml")
    assert sub.student == "seed-000" and sub.homework == "cs224n-w21-a5"
    assert sub.answers["1e.ii"]["K"] == "I"
    assert sub.folder is None


def test_folder_submission_takes_the_folder_name(tmp_path):
    folder = tmp_path / "s042"
    folder.mkdir()
    (folder / "answers.yaml").write_text("homework: cs224n-w21-a5\nanswers:\n  1b: C(k_a+k_b)\n")
    sub = load_submission(folder)
    assert sub.student == "s042" and sub.folder == folder


def test_folder_with_two_yaml_files_is_refused(tmp_path):
    (tmp_path / "a.yaml").write_text("homework: x\n")
    (tmp_path / "b.yaml").write_text("homework: x\n")
    with pytest.raises(SubmissionError, match=r"exactly one answers file \(.*\); found 2: a.yaml, b.yaml"):
        load_submission(tmp_path)


@pytest.mark.parametrize("name, message", [
    ("alias-bomb.yaml", "YAML aliases (*name) are not allowed"),
    ("alias-without-anchor.yaml", "line 3, column 7: not valid YAML (found undefined alias)"),
    ("python-object-tag.yaml", "not valid YAML"),
    ("latin1.yaml", "is not UTF-8 text"),
])
def test_hostile_yaml_is_refused_with_a_reason(data_dir, name, message):
    with pytest.raises(SubmissionError, match=message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")) as err:
        load_submission(data_dir / "submissions" / name)
    assert name in str(err.value)  # the error names the file


def test_python_tag_runs_nothing(data_dir):
    with pytest.raises(SubmissionError):
        load_submission(data_dir / "submissions/python-object-tag.yaml")
    assert not Path("/tmp/attngrade-yaml-pwned").exists()


@pytest.mark.parametrize("name", ["crlf-bom.yaml", "utf16.yaml"])
def test_bom_crlf_and_utf16_are_read(data_dir, name):
    sub = load_submission(data_dir / "submissions" / name)
    assert sub.answers["1b"] == "C(k_a + k_b)"


def test_malformed_yaml_names_line_and_column(data_dir):
    with pytest.raises(SubmissionError, match=r"broken-yaml.yaml: line \d+, column \d+: not valid YAML"):
        load_submission(data_dir / "classes/with-malformed/broken-yaml.yaml")


def test_missing_homework_key(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("answers:\n  1b: q\n")
    with pytest.raises(SubmissionError, match="does not say which homework"):
        load_submission(path)


def test_discover_a_class_folder(root):
    found = list(discover([root / "examples/cs224n-w21-a5"]))
    files = [p for p in found if p.is_file()]
    folders = [p for p in found if p.is_dir()]
    assert len(files) >= 6 and all(p.suffix == ".yaml" for p in files)
    assert {"parachutel", "SarahLuym"} <= {p.name for p in folders}  # submission folders with their files


def test_a_huge_integer_as_student_id_or_part_id_is_shown_bounded(tmp_path):
    # YAML reads 0xfff... as an int that has no decimal form (over 4,300 digits): no crash.
    huge = "0x" + "f" * 5000
    path = tmp_path / "s.yaml"
    path.write_text(f"homework: cs224n-w21-a5\nstudent: {huge}\nanswers:\n  ? {huge}\n  : x\n  1b: C(k_a + k_b)\n")
    submission = load_submission(path)
    assert submission.student == "<an integer of 20000 bits>"
    assert set(submission.answers) == {"<an integer of 20000 bits>", "1b"}


def test_a_file_attngrade_fails_on_is_that_students_error_row(tmp_path, monkeypatch):
    # Whatever goes wrong loading one file (a bug of ours included), the rest of the class is loaded.
    from attngrade.grading.loading import Loading
    from attngrade.intake.submissions import load_or_error

    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    for path in (good, bad):
        path.write_text("homework: cs224n-w21-a5\nanswers:\n  1b: C(k_a + k_b)\n")

    def load(path, **kwargs):
        if path == bad:
            raise RuntimeError("a bug of attngrade's")
        return load_submission(path, **kwargs)

    monkeypatch.setattr("attngrade.intake.submissions.load_submission", load)
    first, second = Loading([bad, good], None, load_or_error)
    assert first.error and "attngrade failed to read this submission (RuntimeError" in first.error
    assert second.student == "good" and second.answers == {"1b": "C(k_a + k_b)"}


def test_answers_files_beside_the_one_read_are_said_not_skipped(tmp_path):
    # Meant as a class of two, read as one submission: bob.yaml names no homework, so only
    # alice.yaml looks like answers. The summary lists bob.yaml, never drops it silently.
    (tmp_path / "alice.yaml").write_text("homework: cs224n-w21-a5\nanswers:\n  1b: C(k_a + k_b)\n")
    (tmp_path / "bob.yaml").write_text("answers:\n  1b: C(k_a + k_b)\n")
    (tmp_path / "dev.predictions").write_text("Paris\n")
    passed_over: list[Path] = []
    assert list(discover([tmp_path], passed_over)) == [tmp_path]
    assert passed_over == [tmp_path / "bob.yaml"]


def test_class_folders_nested_past_a_limit_are_read_as_submissions(tmp_path):
    # Each level is a class (two answers files) holding a deeper one: without a limit, discovery
    # recursed until Python's stack ran out (a folder 1,500 levels deep stopped the whole run).
    from attngrade.intake.submissions import MAX_CLASS_DEPTH

    (tmp_path / "b.yaml").write_text("homework: cs224n-w21-a5\nanswers:\n  1b: x\n")
    level = tmp_path
    for _ in range(MAX_CLASS_DEPTH + 12):
        level = level / "x"
        level.mkdir()
        for name in ("a", "c"):
            (level / f"{name}.yaml").write_text("homework: cs224n-w21-a5\nanswers:\n  1b: x\n")
    found = list(discover([tmp_path]))
    assert found[0] == tmp_path / "b.yaml"
    assert len(found) == 1 + 2 * MAX_CLASS_DEPTH + 1 and found[-1].is_dir()  # the rest is one folder, loaded as one


@pytest.mark.parametrize("claim, student, noted", [
    ("", "zoe", False), ("null", "zoe", False), ("'  '", "zoe", False),  # no claim: the file's name
    ("12345", "12345", False), ("sam", "sam", False),  # a student number is an id
    ("[a, b]", "zoe", True), ("{name: a}", "zoe", True),  # not an id: said
    ("yes", "yes", False),  # a word as written, as in every other format (YAML 1.1 would read True)
])
def test_a_student_claim_that_is_not_an_id_gives_the_files_name(tmp_path, claim, student, noted):
    path = tmp_path / "zoe.yaml"
    path.write_text(f"homework: cs224n-w21-a5\nstudent: {claim}\nanswers:\n  1b: C(k_a + k_b)\n", encoding="utf-8")
    submission = load_submission(path)
    assert submission.student == student
    assert any("'student' is not a name or a number" in note for note in submission.notes) == noted


def test_a_base_60_number_is_kept_as_written(tmp_path):
    """YAML 1.1 reads 1:30 as 90, one bignum product a group: two megabytes of it took a minute."""
    answers = tmp_path / "s1.yaml"
    answers.write_text("homework: cs224n-w21-a5\nanswers:\n  1b: 1:30\n  1c.i: " + ":".join(["1"] + ["0"] * 100_000)
                       + "\n  1d.i: 12\n  2d: 0.5\n")
    sub = load_submission(answers)
    assert sub.answers["1b"] == "1:30" and sub.answers["1c.i"].startswith("1:0:0")
    assert sub.answers["1d.i"] == 12 and sub.answers["2d"] == 0.5


def test_a_submission_that_takes_too_long_to_read_is_that_students_error(tmp_path, monkeypatch):
    import attngrade.intake.submissions as submissions

    answers = tmp_path / "slow.yaml"
    answers.write_text("homework: cs224n-w21-a5\nanswers:\n" + "".join(f"  p{i}: [{i}, {i}]\n" for i in range(60_000)))
    monkeypatch.setattr(submissions, "READ_BUDGET", 0.02)
    with pytest.raises(SubmissionError, match=r"slow.yaml: reading this submission took over 0.02 s"):
        load_submission(answers)
    monkeypatch.undo()
    assert len(load_submission(answers).answers) == 60_000


def test_a_read_over_its_budget_is_refused_even_if_the_alarm_went_unheard(tmp_path, monkeypatch):
    # The alarm can land while the YAML parser runs in C and be dropped when its handler is put
    # back: the budget must not depend on it being heard (CI saw a 2 s read pass a 0.02 s budget).
    import signal

    import attngrade.intake.submissions as submissions

    answers = tmp_path / "slow.yaml"
    answers.write_text("homework: cs224n-w21-a5\nanswers:\n" + "".join(f"  p{i}: [{i}, {i}]\n" for i in range(20_000)))
    monkeypatch.setattr(submissions, "READ_BUDGET", 0.001)
    monkeypatch.setattr(signal, "setitimer", lambda *args: (0.0, 0.0))  # an alarm never heard
    with pytest.raises(SubmissionError, match=r"slow.yaml: reading this submission took over 0.001 s"):
        load_submission(answers)


def test_the_folder_out_is_in_further_down_is_passed_over_not_graded(tmp_path):
    # `grade run class -o class/results/run1`: results/ holds runs' outputs, no student's answers.
    from attngrade.intake.submissions import discover

    (tmp_path / "class").mkdir()
    for student in ("ann", "bob"):
        (tmp_path / "class" / f"{student}.yaml").write_text("homework: cs224n-w21-a5\nanswers:\n  1a: x\n")
    (tmp_path / "class" / "results" / "older").mkdir(parents=True)
    passed_over: list[Path] = []
    found = list(discover([tmp_path / "class"], passed_over, outputs=tmp_path / "class" / "results" / "run1"))
    assert found == [tmp_path / "class" / "ann.yaml", tmp_path / "class" / "bob.yaml"]
    assert passed_over == [tmp_path / "class" / "results"]


def test_a_read_over_its_budget_off_the_main_thread_is_refused(tmp_path, monkeypatch):
    # No alarm reaches another thread (grading from a thread is supported): the budget holds there too.
    import threading

    import attngrade.intake.submissions as submissions

    answers = tmp_path / "slow.yaml"
    answers.write_text("homework: cs224n-w21-a5\nanswers:\n" + "".join(f"  p{i}: [{i}, {i}]\n" for i in range(20_000)))
    monkeypatch.setattr(submissions, "READ_BUDGET", 0.001)
    raised: list[BaseException] = []

    def read() -> None:
        try:
            load_submission(answers)
        except SubmissionError as err:
            raised.append(err)

    thread = threading.Thread(target=read)
    thread.start()
    thread.join(60)
    assert len(raised) == 1 and "took over 0.001 s" in str(raised[0])
