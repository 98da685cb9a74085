"""`grade autograder` refuses what would make a broken or leaky autograder, before building it."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

import attngrade
from attngrade.cli import main
from attngrade.errors import ConfigError
from attngrade.gradescope import build_autograder
from attngrade.gradescope.build import check_wheel, find_source_tree
from gradescope_helpers import HOMEWORK, REPO, write_gold

SOLUTIONS = REPO / "solutions"


def test_unknown_homework_is_a_usage_error(tmp_path, capsys):
    assert main(["autograder", "no-such-homework", "-o", str(tmp_path / "a.zip")]) == 2
    assert "unknown homework 'no-such-homework'" in capsys.readouterr().err
    assert not (tmp_path / "a.zip").exists()


@pytest.mark.parametrize("name, lines, says", [
    ("tset", 437, "no check of cs224n-w21-a5 uses a gold named 'tset' (the ones it uses: test)"),
    ("dev", 500, "the dev gold ships with attngrade"),
    ("test", 436, "has 436 lines, but the checks of cs224n-w21-a5 expect 437"),
])
def test_gold_must_be_used_and_fit(tmp_path, name, lines, says):
    gold = write_gold(tmp_path / "gold.tsv", lines)
    with pytest.raises(ConfigError) as err:
        build_autograder(HOMEWORK, tmp_path / "a.zip", solutions=SOLUTIONS, gold={name: gold})
    assert says in str(err.value)
    assert not list(tmp_path.glob("*.zip")) and not list(tmp_path.glob(".a.zip*"))


def test_broken_gold_file(tmp_path):
    gold = tmp_path / "gold.tsv"
    gold.write_text("Where was X born? London\n" * 437)  # no tab
    with pytest.raises(ConfigError, match="expected 'question<TAB>place'"):
        build_autograder(HOMEWORK, tmp_path / "a.zip", solutions=SOLUTIONS, gold={"test": gold})


def test_keys_are_required_when_parts_need_them(tmp_path):
    (tmp_path / "solutions").mkdir()
    with pytest.raises(ConfigError, match="no keys at"):
        build_autograder(HOMEWORK, tmp_path / "a.zip", solutions=tmp_path / "solutions")


def test_keys_must_cover_every_key_check(tmp_path):
    keys = tmp_path / "solutions" / HOMEWORK / "keys.yaml"
    keys.parent.mkdir(parents=True)
    keys.write_text(f"homework: {HOMEWORK}\nkeys:\n  1e.i:\n    c2: u_a\n")  # no key for 'possible'
    with pytest.raises(ConfigError, match=r"no key for part 1e.i, field possible"):
        build_autograder(HOMEWORK, tmp_path / "a.zip", solutions=tmp_path / "solutions")


def test_source_must_be_an_attngrade_tree(tmp_path):
    with pytest.raises(ConfigError, match="not an attngrade source tree"):
        build_autograder(HOMEWORK, tmp_path / "a.zip", solutions=SOLUTIONS, source=tmp_path)
    assert not (tmp_path / "a.zip").exists()
    assert find_source_tree() == REPO  # this checkout: attngrade is installed from it


def test_an_install_that_recorded_no_files_is_a_clear_config_error(tmp_path, monkeypatch):
    """Away from a checkout the wheel is packed from the installed files (the slow wheel test does that
    for real); here the distribution is this editable install, which recorded no package files."""
    fake = tmp_path / "site-packages" / "attngrade" / "__init__.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("")
    monkeypatch.setattr(attngrade, "__file__", str(fake))
    with pytest.raises(ConfigError, match=r"did not record its files; reinstall it with pip, or pass a checkout "
                                          r"with --source DIR"):
        build_autograder(HOMEWORK, tmp_path / "a.zip", solutions=SOLUTIONS)


def test_visibility_values_are_checked(tmp_path):
    with pytest.raises(ConfigError, match="use one of hidden, after_due_date, after_published, visible"):
        build_autograder(HOMEWORK, tmp_path / "a.zip", solutions=SOLUTIONS, visibility={"key": "soon"})
    with pytest.raises(ConfigError, match="integrity flags are always hidden"):
        build_autograder(HOMEWORK, tmp_path / "a.zip", solutions=SOLUTIONS, visibility={"flags": "visible"})


def _wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def test_check_wheel_refuses_keys_solutions_and_gold_by_name_or_content(tmp_path):
    keys = (SOLUTIONS / HOMEWORK / "keys.yaml").read_bytes()
    gold = b"Where was Testperson 000 born?\tLondon\n"
    forbidden = {hashlib.sha256(keys).hexdigest(): "keys.yaml", hashlib.sha256(gold).hexdigest(): "gold"}
    clean = {"attngrade/__init__.py": b"__version__ = '0'\n", "attngrade-0.dist-info/METADATA": b"Name: attngrade\n"}
    check_wheel(_wheel(tmp_path / "ok.whl", clean), forbidden)
    for name, extra in [("renamed", {"attngrade/data/x.yaml": keys}),
                        ("gold", {"attngrade/data/test.tsv": gold}),
                        ("keys", {"attngrade/keys.yaml": b"homework: x\n"}),
                        ("solutions", {"attngrade/solutions/hw/notes.txt": b"x\n"})]:
        with pytest.raises(ConfigError, match="must never be in it"):
            check_wheel(_wheel(tmp_path / f"{name}.whl", {**clean, **extra}), forbidden)


@pytest.mark.parametrize("homework, torch", [("cs224n-w21-a5", True), ("nyu-dl-transformer", False)])
def test_setup_installs_the_cpu_torch_only_where_parts_run_code(tmp_path, homework, torch):
    zip_path = build_autograder(homework, tmp_path / "a.zip", solutions=SOLUTIONS)
    setup = zipfile.ZipFile(zip_path).read("setup.sh").decode()
    line = "--index-url https://download.pytorch.org/whl/cpu torch==2.13.0"
    assert (line in setup) is torch


def test_the_torch_pin_is_the_torch_extra_of_the_project():
    from attngrade.sandbox import TORCH_REQUIREMENT

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["torch"] == [TORCH_REQUIREMENT]
