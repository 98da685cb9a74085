"""The autograder zip's own description: what `grade gradescope` needs to find in it.

`grade autograder` writes `attngrade-autograder.json` at the root of the zip; on Gradescope
the zip is unpacked into `/autograder/source`, where `grade gradescope` reads it back. Every
path in it is relative to that folder and may not leave it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Mapping

from ..errors import ConfigError

MANIFEST_NAME = "attngrade-autograder.json"
FORMAT = 1
DEFAULT_VENV = "/opt/attngrade-venv"  # where setup.sh installs attngrade, and run_autograder looks for it
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
DEFAULT_VISIBILITY = {
    "property": "visible",  # parts checked by what the answer does: no key, nothing to fish for
    "key": "after_published",  # parts compared with a key or with instructor gold (e.g. the test set)
}
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class Manifest:
    homework: str
    attngrade: str
    wheel: str  # e.g. wheels/attngrade-0.1.0-py3-none-any.whl
    solutions: str = "solutions"  # holds <homework>/keys.yaml when the homework has keys
    gold: Mapping[str, str] = field(default_factory=dict)  # NAME -> path of an instructor gold file
    visibility: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_VISIBILITY))
    homework_folder: str | None = None  # an instructor's own homework (homework.yaml, problems/), not bundled

    def to_json(self) -> str:
        data = {"format": FORMAT, "homework": self.homework, "attngrade": self.attngrade, "wheel": self.wheel,
                "solutions": self.solutions, "gold": dict(self.gold), "visibility": dict(self.visibility)}
        if self.homework_folder:
            data["homework_folder"] = self.homework_folder
        return json.dumps(data, indent=2, sort_keys=True) + "\n"


def check_visibility(visibility: Mapping[str, str] | None) -> dict[str, str]:
    """The default visibilities with `visibility` applied; unknown kinds or values are errors."""
    out = dict(DEFAULT_VISIBILITY)
    for kind, value in (visibility or {}).items():
        if kind not in DEFAULT_VISIBILITY:
            raise ConfigError(f"visibility: unknown kind of part {kind!r}; known: {', '.join(DEFAULT_VISIBILITY)} "
                              "(integrity flags are always hidden)")
        if value not in VISIBILITIES:
            raise ConfigError(f"visibility {kind}={value!r}: use one of {', '.join(VISIBILITIES)}")
        out[kind] = value
    return out


def _relative(value: Any, what: str, where: Path) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: {what} must be a relative path")
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts or "\\" in value:
        raise ConfigError(f"{where}: {what} {value!r} must stay inside the autograder folder")
    return value


def read_manifest(source: Path) -> Manifest:
    """The manifest in `source` (on Gradescope, /autograder/source)."""
    path = source / MANIFEST_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path} is missing: {source} is not an autograder built by `grade autograder`") from None
    except (OSError, ValueError) as err:
        raise ConfigError(f"{path} cannot be read: {err}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"{path}: expected a mapping with \"format\": {FORMAT}; rebuild the autograder "
                          "with this version of attngrade")
    homework = data.get("homework")
    if not isinstance(homework, str) or not homework:
        raise ConfigError(f"{path}: no homework")
    gold = data.get("gold") or {}
    if not isinstance(gold, dict) or not all(isinstance(k, str) and NAME.match(k) for k in gold):
        raise ConfigError(f"{path}: gold must map names to paths")
    visibility = data.get("visibility")
    return Manifest(
        homework=homework,
        attngrade=str(data.get("attngrade", "")),
        wheel=_relative(data.get("wheel"), "wheel", path),
        solutions=_relative(data.get("solutions", "solutions"), "solutions", path),
        gold={name: _relative(rel, f"gold {name}", path) for name, rel in gold.items()},
        visibility=check_visibility(visibility if isinstance(visibility, dict) else None),
        homework_folder=(_relative(data["homework_folder"], "homework_folder", path)
                         if data.get("homework_folder") else None),
    )
