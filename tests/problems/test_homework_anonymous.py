"""`anonymous:` in a homework.yaml: a YAML boolean as written, whether course staff grade the
homework without student ids; anything else is refused with the file and what to write."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from attngrade.cli import main
from attngrade.errors import ConfigError
from attngrade.problems import HomeworkFolder, load_homework

DATA = Path(__file__).parents[1] / "data" / "homeworks"


def test_a_homework_that_asks_for_anonymity_says_so():
    assert HomeworkFolder(DATA / "anonymous-quiz").load_homework("anonymous-quiz").anonymous is True


def test_a_homework_that_says_nothing_is_graded_with_ids():
    assert HomeworkFolder(DATA / "two-heads").load_homework("two-heads-quiz").anonymous is False
    assert load_homework("cs224n-w21-a5").anonymous is False


def with_anonymous(tmp_path: Path, written: str) -> Path:
    folder = Path(shutil.copytree(DATA / "anonymous-quiz", tmp_path / "quiz"))
    path = folder / "homework.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("anonymous: true", f"anonymous: {written}"),
                    encoding="utf-8")
    return folder


@pytest.mark.parametrize("written, read", [("true", True), ("false", False), ("True", True)])
def test_a_yaml_boolean_is_read_as_written(tmp_path, written, read):
    folder = with_anonymous(tmp_path, written)
    assert HomeworkFolder(folder).load_homework("anonymous-quiz").anonymous is read


@pytest.mark.parametrize("written", ['"true"', "1", "0", "maybe", "[true]", "~"])
def test_anything_but_a_boolean_is_refused_never_taken_for_one(tmp_path, written, capsys):
    folder = with_anonymous(tmp_path, written)
    with pytest.raises(ConfigError, match=r"homework\.yaml: anonymous: .* is not true or false; write "
                                          r"'anonymous: true'"):
        HomeworkFolder(folder).load_homework("anonymous-quiz")
    assert main(["validate", str(folder)]) == 2
    assert f"{folder / 'homework.yaml'}: anonymous:" in capsys.readouterr().err
