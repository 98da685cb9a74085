"""Helpers for the Gradescope tests (imported by conftest.py and the test modules)."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "gradescope"
SCHEMA = Path(__file__).resolve().with_name("gradescope-results.schema.json")
HOMEWORK = "cs224n-w21-a5"
REFERENCE = REPO / "solutions" / HOMEWORK / "reference"
EXAMPLES = REPO / "examples" / HOMEWORK
GOLD_MARK = "Testperson"  # in every line of the synthetic test gold, and nowhere else
TEST_LINES = 437


def write_gold(path: Path, lines: int = TEST_LINES) -> Path:
    """A synthetic CS224N test gold: the reference test predictions (London throughout) score 100%."""
    path.write_text("".join(f"Where was {GOLD_MARK} {i:03d} born?\tLondon\n" for i in range(lines)),
                    encoding="utf-8")
    return path


class Gradescope:
    """Lays out a root the way Gradescope does and runs the autograder's run_autograder in it."""

    def __init__(self, base: Path, validator: jsonschema.Draft202012Validator):
        self.base = base
        self.validator = validator
        self.count = 0

    def root(self, autograder: Path, submission: dict[str, Path | str | bytes] | None = None,
             metadata: Path | dict | None = DATA / "submission_metadata.json") -> Path:
        """ROOT/source (the zip unpacked), ROOT/run_autograder, ROOT/submission, ROOT/results.

        `submission` maps paths inside ROOT/submission to a file or folder to copy, or to
        the text/bytes to write.
        """
        self.count += 1
        root = self.base / f"autograder-{self.count}"
        (root / "source").mkdir(parents=True)
        with zipfile.ZipFile(autograder) as archive:
            archive.extractall(root / "source")
        shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
        (root / "run_autograder").chmod(0o755)
        (root / "submission").mkdir()
        (root / "results").mkdir()
        for name, content in (submission or {}).items():
            target = root / "submission" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, Path) and content.is_dir():
                shutil.copytree(content, target)
            elif isinstance(content, Path):
                shutil.copy2(content, target)
            elif isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
        if isinstance(metadata, Path):
            shutil.copy2(metadata, root / "submission_metadata.json")
        elif isinstance(metadata, dict):
            (root / "submission_metadata.json").write_text(json.dumps(metadata), encoding="utf-8")
        return root

    def run(self, root: Path, python: str | Path = sys.executable, **env: str) -> dict[str, Any]:
        """Run ROOT/run_autograder as Gradescope would (from ROOT) and return a valid results.json."""
        environment = {**os.environ, "ATTNGRADE_ROOT": str(root), "ATTNGRADE_PYTHON": str(python), **env}
        done = subprocess.run(["bash", str(root / "run_autograder")], cwd=root, env=environment,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        self.stdout = done.stdout
        return self.results(root)

    def results(self, root: Path) -> dict[str, Any]:
        data = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
        check_results(data, self.validator)
        return data


def check_results(data: dict[str, Any], validator: jsonschema.Draft202012Validator) -> None:
    """results.json meets the schema and adds up."""
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)
    scored = [t for t in data["tests"] if "score" in t]
    assert data["score"] == pytest.approx(sum(t["score"] for t in scored))
    for test in scored:
        assert 0 <= test["score"] <= test["max_score"] + 1e-9, test
        if test["status"] == "passed":  # full marks, or everything decided was earned and staff do the rest
            assert test["score"] >= test["max_score"] - 1e-9 or "Course staff grade the rest" in test["output"], test
    numbers = [t["number"] for t in data["tests"] if "number" in t]
    assert len(numbers) == len(set(numbers))


def visible_text(data: dict[str, Any]) -> str:
    """Everything a student can see before grades are published, as text (tags dropped, unescaped)."""
    parts = [data.get("output", "")]
    parts += [t.get("output", "") + "\n" + t.get("name", "") for t in data["tests"] if t.get("visibility") == "visible"]
    return html.unescape(re.sub(r"<[^>]*>", "", "\n".join(parts)))


def parts_by_number(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["number"]: t for t in data["tests"] if "number" in t}
