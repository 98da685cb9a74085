"""`grade new-homework ID -o DIR`: a homework folder of the instructor's own, started
from a bundled homework (its homework file, its problem files, and its keys and reference
solution when they are at hand), to edit and grade with `grade run --homework DIR`."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from ..checkers import REGISTRY
from ..errors import ConfigError
from . import BUNDLED, HOMEWORK_FILE
from .keys import keys_path

_README = """\
# {id}

A homework folder for attngrade, started from the bundled homework {id}.

- `homework.yaml`: the homework (title, course, which problems, points per part).
- `problems/*.yaml`: the problem files, yours to edit (statements, fields, checks).
- `keys.yaml`: the keys of the parts checked against a key. Never give it to students.
- `{id}/reference` (a homework whose parts run student code): the reference solution, answers and
  code files (a notebook, modules). `grade autograder` puts it in the zip, which grades it first
  on Gradescope to prove the container can run student code. Never give it to students.
- `gold/NAME.*` (optional): instructor gold files, one per gold name the checks read.

    grade validate {folder}                 # every file loaded as grading loads it
    grade run SUBMISSIONS -o OUT --homework {folder}
    grade assign {folder} --format ipynb    # the students' template (no keys)
    grade autograder {folder} -o autograder.zip
"""


def scaffold(homework_id: str, out: Path, solutions: Path) -> list[str]:
    """Write the folder; returns what was written, relative to it."""
    homework = BUNDLED.load_homework(homework_id)  # unknown id: a ConfigError listing the bank's
    if out.exists():
        raise ConfigError(f"{out} already exists; name a new folder (nothing was written)")
    (out / "problems").mkdir(parents=True)
    written = [HOMEWORK_FILE]
    (out / HOMEWORK_FILE).write_bytes(BUNDLED._path("homeworks", homework_id).read_bytes())
    for problem in homework.problems:
        (out / "problems" / f"{problem.id}.yaml").write_bytes(BUNDLED._path("library", problem.id).read_bytes())
        written.append(f"problems/{problem.id}.yaml")
    keys = keys_path(solutions, homework_id)
    if keys.is_file():
        (out / "keys.yaml").write_bytes(keys.read_bytes())
    else:  # a skeleton that names every part; `grade validate` says which keys are still missing
        skeleton = {"homework": homework_id, "keys": {}}
        (out / "keys.yaml").write_text(f"# no keys for {homework_id} were found under {solutions}; "
                                       "write them here\n" + yaml.safe_dump(skeleton, sort_keys=False),
                                       encoding="utf-8")
    written.append("keys.yaml")
    if any(REGISTRY[spec.check].runs_code for part in homework.parts for spec in part.checks):
        written += _reference(solutions, homework_id, out)
    (out / "README.md").write_text(_README.format(id=homework_id, folder=out), encoding="utf-8")
    written.append("README.md")
    return written


def _reference(solutions: Path, homework_id: str, out: Path) -> list[str]:
    """The reference solution (a folder, or one answers file) where a homework folder's own solutions
    are looked up (DIR/<id>/reference); nothing when there is none."""
    for name in ("reference", "reference.yaml"):
        source = Path(solutions) / homework_id / name
        target = out / homework_id / name
        if source.is_dir():
            shutil.copytree(source, target, symlinks=False)
            return sorted(p.relative_to(out).as_posix() for p in target.rglob("*") if p.is_file())
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
            return [target.relative_to(out).as_posix()]
    return []
