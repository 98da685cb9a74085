"""Instructor keys: `solutions/<homework>/keys.yaml`, read and checked up front.

Keys never ship in the wheel. A key that does not parse is a configuration error
for the instructor, raised before any student is graded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..errors import ConfigError
from ..reading import FieldError, read_field
from ..records import Homework
from ..runtime.safe_yaml import SAFE_LOADER, not_yaml
from ..runtime.text import did_you_mean
from .lines import with_line


@dataclass(frozen=True)
class Keys:
    """Parsed key readings per part and field, plus explanations and rubrics."""

    homework: str
    answers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    explain: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    rubrics: Mapping[str, str] = field(default_factory=dict)
    source: Path | None = None


def keys_path(solutions: Path, homework: str) -> Path:
    """solutions/<homework>/keys.yaml; a homework folder (with homework.yaml) holds its own keys.yaml."""
    if (solutions / "homework.yaml").is_file():
        return solutions / "keys.yaml"
    return solutions / homework / "keys.yaml"


def load_keys(solutions: Path, homework: Homework) -> Keys | None:
    """The keys of `homework` under `solutions`, or None if there are none."""
    path = keys_path(solutions, homework.id)
    if not path.is_file():
        return None
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER) or {}  # noqa: S506 - a safe loader
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: {not_yaml(err)}; fix the keys file") from None
    try:
        return _parse(path, data, homework)
    except ConfigError as err:  # point at the line, as an editor expects
        raise ConfigError(with_line(str(err), str(path), path.read_text(encoding="utf-8"))) from None


def _parse(path: Path, data: Any, homework: Homework) -> Keys:
    if not isinstance(data, dict) or data.get("homework") != homework.id:
        said = data.get("homework") if isinstance(data, dict) else None
        raise ConfigError(f"{path}: says homework {said!r}, expected {homework.id!r}")
    answers: dict[str, dict[str, Any]] = {}
    for pid, raw in (data.get("keys") or {}).items():
        part = homework.part(str(pid))
        if part is None:
            hint = did_you_mean(str(pid), [p.id for p in homework.parts])
            raise ConfigError(f"{path}: key for unknown part {str(pid)!r}{hint}; the parts are: "
                              f"{', '.join(p.id for p in homework.parts)}")
        raw = raw if isinstance(raw, dict) else {part.fields[0].name: raw}
        parsed = {}
        for name, value in raw.items():
            try:
                parsed[name] = read_field(part, part.field(name), value)
            except KeyError:
                hint = did_you_mean(str(name), [f.name for f in part.fields])
                raise ConfigError(f"{path}: part {pid} has no field {str(name)!r}{hint}") from None
            except FieldError as err:  # named as `part P, field 'F'`, so the message gets the field's line
                raise ConfigError(f"{path}: part {pid}, field '{name}': the key does not read: {err.message}") from None
            except Exception as err:  # noqa: BLE001 - a key that breaks the reader is the key's fault
                raise ConfigError(f"{path}: the key of {pid}, field {name} cannot be read "
                                  f"({type(err).__name__}: {err})") from None
        answers[str(pid)] = parsed
    explain = {str(k): {str(f): str(t) for f, t in (v or {}).items()} for k, v in (data.get("explain") or {}).items()}
    rubrics = {str(k): str(v).strip() for k, v in (data.get("rubrics") or {}).items()}
    return Keys(homework=homework.id, answers=answers, explain=explain, rubrics=rubrics, source=path)
