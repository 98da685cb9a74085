"""The bundled homeworks' parts, read from the problem files `grade new-homework` writes.

attngrade is reached only through its command line (`attngrade.cli.main` in a process of its
own): `grade problems` lists the bundled homeworks, `grade new-homework ID -o DIR` writes each
one's homework.yaml and problems/*.yaml, and this module reads what they declare: each part's
check kinds, its fields and their kinds, and its positive scalar symbols.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# In a process of its own: list the homeworks (`grade problems`), then write each one (`grade new-homework`).
_WRITE_ALL = """
import contextlib, io, sys
from attngrade import cli
listing = io.StringIO()
with contextlib.redirect_stdout(listing):
    code = cli.main(["problems"])
ids = [line.split("\\t", 1)[0] for line in listing.getvalue().splitlines() if "\\t" in line]
with contextlib.redirect_stdout(io.StringIO()):
    for hw in ids:
        code = max(code, cli.main(["new-homework", hw, "-o", sys.argv[1] + "/" + hw]))
sys.exit(code)
"""


@dataclass(frozen=True)
class PartInfo:
    id: str
    checks: tuple[str, ...]  # the check kinds, in the order the part lists them
    fields: tuple[tuple[str, str], ...]  # (name, kind), kind "math" where the file gives none
    positive_scalar: str | None  # the first scalar symbol of the part assumed positive

    @property
    def math_fields(self) -> tuple[str, ...]:
        return tuple(name for name, kind in self.fields if kind == "math")

    @property
    def single_field(self) -> bool:
        return len(self.fields) == 1


def _load_yaml(path: Path) -> Any:
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _part(raw: dict[str, Any], sets: dict[str, Any]) -> PartInfo:
    symbols = raw.get("symbols")
    if isinstance(symbols, str):
        symbols = sets.get(symbols)
    specs = {str(name): spec or {} for name, spec in (symbols or {}).items()}
    scalar = next((name for name, spec in specs.items()
                   if spec.get("kind", "scalar") == "scalar" and "positive" in spec.get("assumptions", ())), None)
    fields = tuple((str(name), (spec or {}).get("kind", "math")) for name, spec in (raw.get("fields") or {}).items())
    checks = tuple(str(c["check"]) for c in raw.get("checks") or [])
    return PartInfo(str(raw["id"]), checks, fields, scalar)


def read_homework(folder: Path) -> dict[str, PartInfo]:
    """Part id -> PartInfo of a homework folder (homework.yaml and problems/*.yaml)."""
    parts: dict[str, PartInfo] = {}
    for entry in _load_yaml(folder / "homework.yaml").get("problems", []):
        problem_id = entry if isinstance(entry, str) else entry["id"]
        problem = _load_yaml(folder / "problems" / f"{problem_id}.yaml")
        sets = problem.get("symbol_sets") or {}
        for raw in problem.get("parts") or []:
            info = _part(raw, sets)
            parts[info.id] = info
    return parts


def bundled(python: str = sys.executable, source: Path | None = None) -> dict[str, dict[str, PartInfo]]:
    """Homework id -> part id -> PartInfo of every bundled homework; `source`: a checkout to put first on the path."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([python, "-c", _WRITE_ALL, tmp], capture_output=True, text=True, env=env, cwd=tmp)
        if done.returncode != 0:
            raise SystemExit(f"grade problems / grade new-homework failed (exit {done.returncode}):\n"
                             f"{done.stderr[-2000:]}")
        return {folder.name: read_homework(folder) for folder in sorted(Path(tmp).iterdir()) if folder.is_dir()}


def check_kinds(homeworks: dict[str, dict[str, PartInfo]]) -> list[str]:
    """Every check kind the homeworks use."""
    return sorted({kind for parts in homeworks.values() for part in parts.values() for kind in part.checks})
