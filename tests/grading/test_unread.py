"""Nothing in a submission folder is ignored without a word: the files no part reads are named once, in
the submission's notes (results.json, the report), and the files parts read are not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from attngrade.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXTRAS = ROOT / "tests" / "data" / "unread"  # what a student hands in beside the answers: a plot, a notebook, a checkpoint


def _amy(tmp_path: Path) -> Path:
    """The code example's ada, handed in with a plot, a scratch notebook and an old checkpoint, in a class
    folder of her own."""
    folder = tmp_path / "class" / "amy"
    shutil.copytree(ROOT / "examples" / "cs224n-w21-a5-code" / "ada", folder)
    shutil.copytree(EXTRAS, folder, dirs_exist_ok=True)
    return folder


def test_a_checkpoint_a_plot_and_an_extra_notebook_are_named_as_not_read(tmp_path, capsys):
    main(["run", str(_amy(tmp_path).parent), "-o", str(tmp_path / "out"), "--workers", "1"])
    capsys.readouterr()
    (result,) = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    (note,) = [n for n in result.get("notes", []) if n.startswith("not read")]
    for name in ("plots/loss.png", "scratch.ipynb", "old-run.params"):
        assert name in note
    for read in ("answers.yaml", "dataset.py", "attention.py", "model.py"):
        assert read not in note
    report = next((tmp_path / "out").rglob("report.html")).read_text(encoding="utf-8")
    assert "not read" in report and "plots/loss.png" in report


def test_files_a_homework_expects_and_ignores_are_not_named(tmp_path):
    from dataclasses import replace

    from attngrade.grading.unread import not_read
    from attngrade.intake.submissions import load_submission
    from attngrade.problems import load_homework

    submission = load_submission(_amy(tmp_path))
    homework = replace(load_homework("cs224n-w21-a5"), ignore=("*.png", "scratch.ipynb"))
    (note,) = not_read(homework, submission)
    assert "old-run.params" in note and "loss.png" not in note and "scratch.ipynb" not in note


def test_a_homework_declares_what_it_ignores_as_a_list_of_patterns(tmp_path):
    import shutil

    import pytest

    from attngrade.errors import ConfigError
    from attngrade.problems import HomeworkFolder

    folder = tmp_path / "hw"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "homeworks" / "shift-block", folder)
    text = (folder / "homework.yaml").read_text(encoding="utf-8")
    (folder / "homework.yaml").write_text(text + "ignore: ['*.png', 'wandb/*']\n", encoding="utf-8")
    assert HomeworkFolder(folder).load_homework("shift-block-quiz").ignore == ("*.png", "wandb/*")
    (folder / "homework.yaml").write_text(text + "ignore: '*.png'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="ignore: .* is not a list of file-name patterns"):
        HomeworkFolder(folder).load_homework("shift-block-quiz")


def test_a_submission_built_without_intake_s_listing_gets_the_same_note(tmp_path):
    """Gradescope's run builds the submission's folder itself: the folder is listed then, to the same note."""
    from dataclasses import replace

    from attngrade.grading.unread import not_read
    from attngrade.intake.submissions import load_submission
    from attngrade.problems import load_homework

    submission = load_submission(_amy(tmp_path))
    homework = load_homework("cs224n-w21-a5")
    assert submission.listing is not None
    assert not_read(homework, replace(submission, listing=None)) == not_read(homework, submission)
    assert "old-run.params" in not_read(homework, submission)[0]


def test_a_folder_of_many_files_is_listed_again_for_the_note(tmp_path, monkeypatch):
    """Intake keeps no listing of a large folder (memory stays bounded per submission); the note is the same."""
    from attngrade.grading.unread import not_read
    from attngrade.intake import submissions
    from attngrade.intake.submissions import load_submission
    from attngrade.problems import load_homework

    folder = _amy(tmp_path)
    homework = load_homework("cs224n-w21-a5")
    listed = load_submission(folder)
    monkeypatch.setattr(submissions, "MAX_LISTED", 3)
    unlisted = load_submission(folder)
    assert listed.listing is not None and unlisted.listing is None
    assert not_read(homework, unlisted) == not_read(homework, listed)


def test_a_data_file_below_the_answers_is_named_and_a_file_an_answer_names_is_not(tmp_path):
    """Prediction files are read beside the answers file only: one in outputs/ is graded as missing, so the
    note must name it; a notebook an answer names (`notebook: hw8.ipynb`) is read, so it is not named."""
    from attngrade.grading.unread import not_read
    from attngrade.intake.submissions import load_submission
    from attngrade.problems import load_homework

    folder = _amy(tmp_path)
    (folder / "outputs").mkdir()
    (folder / "outputs" / "vanilla.pretrain.dev.predictions").write_text("London\n")
    (note,) = not_read(load_homework("cs224n-w21-a5"), load_submission(folder))
    assert "outputs/vanilla.pretrain.dev.predictions" in note and "src/dataset.py" not in note

    hw8 = tmp_path / "hw8"
    hw8.mkdir()
    (hw8 / "answers.yaml").write_text("homework: eecs182-fa22-hw8\nanswers:\n  1.code: {notebook: hw8.ipynb}\n")
    shutil.copy2(ROOT / "solutions" / "eecs182-fa22-hw8" / "reference" / "Summarization.ipynb", hw8 / "hw8.ipynb")
    (hw8 / "scratch.ipynb").write_text("{}")
    (note,) = not_read(load_homework("eecs182-fa22-hw8"), load_submission(hw8))
    assert "scratch.ipynb" in note and "hw8.ipynb" not in note.replace("scratch.ipynb", "")


def test_links_in_the_folder_are_named_as_never_followed(tmp_path):
    """A link to a folder of code or to a notes file was passed over without a word."""
    from dataclasses import replace

    from attngrade.grading.unread import not_read
    from attngrade.intake.submissions import load_submission
    from attngrade.problems import load_homework

    folder = _amy(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("x")
    (folder / "linked").symlink_to(elsewhere, target_is_directory=True)
    (folder / "notes.txt").symlink_to(elsewhere / "notes.txt")
    submission = load_submission(folder)
    homework = load_homework("cs224n-w21-a5")
    notes = not_read(homework, submission)
    assert notes == not_read(homework, replace(submission, listing=None))
    (linked,) = [n for n in notes if "never follows" in n]
    assert linked.startswith("not read: linked, notes.txt are links, which attngrade never follows")
