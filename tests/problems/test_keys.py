"""Instructor keys: read with libyaml's safe loader where it is installed, with the same rules."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from attngrade.problems import keys
from attngrade.errors import ConfigError
from attngrade.problems.keys import load_keys
from attngrade.problems import load_homework

ROOT = Path(__file__).resolve().parents[2]
HOMEWORKS = ("cs224n-w21-a5", "eecs182-fa22-hw8", "eecs182-sp23-transformers", "mimuw-2022-p4", "nyu-dl-transformer")


@pytest.mark.parametrize("homework", HOMEWORKS)
def test_the_bundled_keys_read_the_same_with_either_safe_loader(homework, monkeypatch):
    hw = load_homework(homework)
    fast = load_keys(ROOT / "solutions", hw)
    monkeypatch.setattr(keys, "SAFE_LOADER", yaml.SafeLoader)
    assert fast is not None and fast == load_keys(ROOT / "solutions", hw)


def _solutions_with(tmp_path: Path, text: str) -> Path:
    solutions = tmp_path / "solutions"
    shutil.copytree(ROOT / "solutions" / "nyu-dl-transformer", solutions / "nyu-dl-transformer")
    (solutions / "nyu-dl-transformer" / "keys.yaml").write_text(text, encoding="utf-8")
    return solutions


def test_a_key_file_that_is_not_yaml_is_the_instructors_error_with_its_line(tmp_path):
    solutions = _solutions_with(tmp_path, "homework: nyu-dl-transformer\nkeys: [1.1a: {\n")
    with pytest.raises(ConfigError, match=r"keys\.yaml: line 3, column 1: not valid YAML \(.+\); fix the keys file"):
        load_keys(solutions, load_homework("nyu-dl-transformer"))


def test_a_key_file_never_builds_python_objects(tmp_path):
    text = "homework: nyu-dl-transformer\nkeys: !!python/object/apply:os.system [echo]\n"
    solutions = _solutions_with(tmp_path, text)
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_keys(solutions, load_homework("nyu-dl-transformer"))
