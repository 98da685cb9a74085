"""A part's reference solution and rubric from solutions/ (keys.yaml and the reference answers), for the
staff's grading page only: the app serves it behind a grader's secret, never to students."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError
from ..grading.assignment import reference_of
from ..problems.keys import load_keys
from ..records import Homework
from ..runtime.safe_yaml import SAFE_LOADER
from ..staff.inputs import read_text

TEXT_CHARS = 20_000


def reference(solutions: Path | None, homework: Homework, part_id: str) -> dict[str, Any] | None:
    """{answer, key, rubric, explain} of one part, each where solutions/ has it; None where it has nothing."""
    if solutions is None:
        return None
    try:
        keys = load_keys(Path(solutions), homework)
    except ConfigError:
        keys = None
    made: dict[str, Any] = {"answer": _answers(solutions, homework.id).get(part_id) or {}}
    if keys is not None:
        made["key"] = {name: _text(getattr(value, "text", value)) for name, value in
                       (keys.answers.get(part_id) or {}).items()}
        made["rubric"] = _text(keys.rubrics.get(part_id) or "")
        made["explain"] = {name: _text(text) for name, text in (keys.explain.get(part_id) or {}).items()}
    return made if any(made.values()) else None


def _text(value: Any) -> str:
    return str(value)[:TEXT_CHARS]


def _answers(solutions: Path, homework: str) -> dict[str, dict[str, str]]:
    """Part -> field -> the reference solution's answer (its answers.yaml, or reference.yaml)."""
    where = reference_of(solutions, homework)
    if where is None:
        return {}
    path = where / "answers.yaml" if where.is_dir() else where
    if path.suffix not in (".yaml", ".yml") or not path.is_file():
        return {}
    try:
        data = yaml.load(read_text(path, "reference solution"), Loader=SAFE_LOADER)  # noqa: S506 - the safe loader
    except (ConfigError, yaml.YAMLError):
        return {}
    answers = data.get("answers") if isinstance(data, dict) else None
    if not isinstance(answers, dict):
        return {}
    return {str(part): ({str(k): _text(v) for k, v in value.items()} if isinstance(value, dict)
                        else {"answer": _text(value)}) for part, value in answers.items()}
