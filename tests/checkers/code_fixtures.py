"""Code submissions for the sandboxed checks: the reference solution's code, and each bug class as an edit of it."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

CODE = Path(__file__).resolve().parents[1] / "data" / "code"
CORRECT = Path(__file__).resolve().parents[2] / "solutions" / "cs224n-w21-a5" / "reference"  # the reference solution
BUGS = yaml.safe_load((CODE / "bugs.yaml").read_text(encoding="utf-8"))


def code_submission(folder: Path, bug: str | None = None, layout: str = "src", student: str = "s1") -> Path:
    """A submission folder with answers.yaml and the code under `layout` (e.g. src, a5/src, '.')."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "answers.yaml").write_text(f"homework: cs224n-w21-a5\nstudent: {student}\nanswers: {{}}\n",
                                         encoding="utf-8")
    code = folder / layout
    code.mkdir(parents=True, exist_ok=True)
    for path in CORRECT.glob("*.py"):
        shutil.copy(path, code / path.name)
    if bug is not None:
        edit = BUGS[bug]
        target = code / edit["file"]
        text = target.read_text(encoding="utf-8")
        old, new = edit["old"].rstrip("\n"), edit["new"].rstrip("\n")
        assert text.count(old) == 1, f"{bug}: the edit does not apply to {edit['file']}"
        target.write_text(text.replace(old, new), encoding="utf-8")
    return folder


def grade_code(folder: Path, a5, a5_keys):
    """The Result of grading one code submission in this process (code checks in the sandbox)."""
    from attngrade.grading import InProcess, assignment, grade_submission
    from attngrade.intake.submissions import load_submission

    return grade_submission(assignment(a5, a5_keys), load_submission(folder), InProcess(budget=0))


def part(result, part_id: str):
    return next(v for v in result.parts if v.part == part_id)


def failing(verdict) -> list[str]:
    return [p["name"] for p in verdict.evidence.get("properties", []) if not p["ok"]]


# Characters no output may hold raw: a terminal acts on them (ESC, BEL, NUL, a carriage return), they
# reorder what is shown (bidi overrides and isolates) or hide (a zero-width space). The bug classes
# that raise and print them are in bugs.yaml.
RAW = ("\x1b", "\x07", "\x00", "\r", "\u202e", "\u2066", "\u200b")


def raw_characters(text: str) -> set[str]:
    return {c for c in RAW if c in text}


def grader_wording(lines) -> list[str]:
    """Lines that say attngrade failed: only the sandbox's own status `failed` may make one."""
    from attngrade.runtime.text import GRADER_OWN

    return [line for line in lines if any(words in line for words in GRADER_OWN)]
