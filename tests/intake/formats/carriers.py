"""Build copies of a YAML class in the other carriers (used by the carrier tests)."""

from __future__ import annotations

import shutil
from pathlib import Path

from attngrade.intake.formats.write import STYLE, WRITERS
from attngrade.problems import load_homework
from attngrade.intake.submissions import discover, load_submission


def convert_class(folder: Path, out: Path, fmt: str) -> Path:
    """Every submission of `folder` written in format `fmt` under `out`; data files copied."""
    write, suffix = WRITERS[fmt]
    out.mkdir(parents=True, exist_ok=True)
    for path in discover([folder]):
        try:
            sub = load_submission(path)
        except Exception:  # noqa: BLE001 - a broken YAML file is copied as it is: it stays broken
            target = out / path.name
            shutil.copytree(path, target) if path.is_dir() else shutil.copy2(path, target)
            continue
        homework = load_homework(sub.homework)
        text = write(homework, sub.answers, sub.student)
        if path.is_dir():
            target = out / path.name
            shutil.copytree(path, target, ignore=shutil.ignore_patterns("*.yaml", "*.yml"))
            (target / f"answers{suffix}").write_text(text, encoding="utf-8")
            if fmt == "tex":
                (target / "attngrade.sty").write_text(STYLE, encoding="utf-8")
        else:
            name = sub.student if fmt == "tex" else path.stem  # LaTeX names its student by the file name
            (out / f"{name}{suffix}").write_text(text, encoding="utf-8")
    return out
