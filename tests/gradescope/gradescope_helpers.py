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
import yaml

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


# -- an instructor's own homework, as a new user makes it ------------------------------------------
NYU = "nyu-dl-transformer"
RENAMED = "dl-hw3"  # the instructor's own id for a homework started from NYU's
NYU_ANSWERS = {  # the reference answers: every machine point of the homework
    "1.1a": {"H": "V softargmax_beta(K^T Q)", "shape": "t \\times n"},
    "1.1b": {"beta": "1/\\sqrt{d}", "why": "It keeps the scores' scale independent of d."},
    "1.1c": {"beta": "large", "type": "hard", "why": "A one-hot softargmax passes one value through."},
    "1.1d": {"beta": "small", "type": "soft", "why": "A flat softargmax averages the values."},
}
NYU_MACHINE_POINTS = 6


def renamed_homework(folder: Path, new_id: str = RENAMED) -> Path:
    """A homework folder made by `grade new-homework`, given the instructor's own id (in homework.yaml
    and keys.yaml, as the keys file's header says) and the keys, as an instructor writes them."""
    homework = folder / "homework.yaml"
    homework.write_text(re.sub(r"(?m)^id: .*$", f"id: {new_id}", homework.read_text(encoding="utf-8")),
                        encoding="utf-8")
    keys = (REPO / "solutions" / NYU / "keys.yaml").read_text(encoding="utf-8")
    (folder / "keys.yaml").write_text(keys.replace(f"homework: {NYU}", f"homework: {new_id}"), encoding="utf-8")
    return folder


def fill_template(path: Path, answers: dict[str, dict[str, str]]) -> Path:
    """A template written by `grade assign`, filled in as a student fills it (its id left as it was)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".yaml":
        data = yaml.safe_load(text)
        for part, fields in answers.items():
            data["answers"][part].update(fields)
        text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    elif path.suffix == ".md":
        text = _fill_lines(text, answers)
    elif path.suffix == ".ipynb":
        notebook = json.loads(text)
        for cell in notebook["cells"]:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = _fill_lines(source, answers)
        text = json.dumps(notebook, indent=1)
    else:
        text = _fill_latex(text, answers)
    path.write_text(text, encoding="utf-8")
    return path


def _fill_lines(text: str, answers: dict[str, dict[str, str]]) -> str:
    part, out = None, []
    for line in text.split("\n"):
        heading = re.match(r"^#+ Answer (\S+)", line)
        part = heading.group(1) if heading else part
        slot = re.match(r"^(\w+):\s*$", line)
        if part in answers and slot and slot.group(1) in answers[part]:
            line = f"{slot.group(1)}: {answers[part][slot.group(1)]}"
        out.append(line)
    return "\n".join(out)


def _fill_latex(text: str, answers: dict[str, dict[str, str]]) -> str:
    def slot(match: re.Match) -> str:
        field, part = match.group(1), match.group(2)
        value = answers.get(part, {}).get(field) if field else next(iter(answers.get(part, {}).values()), None)
        return match.group(0) if value is None else match.group(0)[:-2] + "{" + value + "}"

    def text_slot(match: re.Match) -> str:
        value = answers.get(match.group(2), {}).get(match.group(1))
        return match.group(0) if value is None else f"{match.group(0).split(chr(10))[0]}\n{value}\n\\end{{answertext}}"

    text = re.sub(r"\\answer(?:\[(\w+)\])?\{([^}]+)\}\{\}", slot, text)
    return re.sub(r"\\begin\{answertext\}\[(\w+)\]\{([^}]+)\}\n\n\\end\{answertext\}", text_slot, text)


def run_setup_sh(autograder: Path, tmp_path: Path, python: str = sys.executable) -> tuple[Path, dict[str, str], str]:
    """The autograder's setup.sh, run for real into a fresh venv (no apt: `python` is given);
    returns the venv, the environment and what setup.sh printed."""
    source = tmp_path / "setup-source"
    with zipfile.ZipFile(autograder) as archive:
        archive.extractall(source)
    venv = tmp_path / "autograder-venv"
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(ATTNGRADE_VENV=str(venv), ATTNGRADE_SETUP_PYTHON=str(python))
    done = subprocess.run(["bash", str(source / "setup.sh")], cwd=source, env=env, capture_output=True, text=True,
                          timeout=400)
    assert done.returncode == 0, done.stdout + done.stderr
    return venv, env, done.stdout
