#!/usr/bin/env python3
"""Record (or compare) what every entry point writes for a fixed set of classes.

    python tests/tools/pin_outputs.py write    # store tests/data/pinned/ from this checkout
    python tests/tools/pin_outputs.py compare  # exit 1 and list files that differ

The stored files pin the outputs across refactors of the grading pipeline: `grade run`
(results.json, grades.csv) on each class, `grade check --json` on each YAML submission,
and `grade gradescope` (results.json with the run time zeroed) on a few submissions.
tests/test_pinned.py runs the comparison. A change that alters a verdict on purpose
rewrites the pins in the same commit and says which verdicts changed.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PINNED = ROOT / "tests" / "data" / "pinned"
CLASSES = {  # name -> (class folder, extra `grade run` arguments)
    "cs224n-w21-a5": ("examples/cs224n-w21-a5", []),
    "eecs182-fa22-hw8": ("examples/eecs182-fa22-hw8", []),
    "eecs182-sp23-transformers": ("examples/eecs182-sp23-transformers", []),
    "mimuw-2022-p4": ("examples/mimuw-2022-p4", []),
    "nyu-dl-transformer": ("examples/nyu-dl-transformer", []),
    "same-matrix-notations": ("tests/data/classes/same-matrix-notations", []),
    "with-malformed": ("tests/data/classes/with-malformed", []),
}
GRADESCOPE = ("examples/cs224n-w21-a5/full-marks.yaml", "examples/cs224n-w21-a5/seed-000.yaml",
              "examples/cs224n-w21-a5/partial.yaml", "examples/eecs182-fa22-hw8/seed-003.yaml")


def _cli(argv: list[str]) -> tuple[int, str]:
    from attngrade.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    return code, out.getvalue()


def produce(work: Path) -> dict[str, str]:
    """Relative pin path -> text, computed by this checkout (run from the repo root)."""
    files: dict[str, str] = {}
    for name, (folder, extra) in CLASSES.items():
        out = work / "run" / name
        _cli(["run", folder, "-o", str(out), "--solutions", "solutions", "--workers", "1", *extra])
        files[f"run/{name}/results.json"] = (out / "results.json").read_text(encoding="utf-8")
        files[f"run/{name}/grades.csv"] = (out / "grades.csv").read_text(encoding="utf-8")
        for path in sorted((ROOT / folder).glob("*.yaml")):
            code, text = _cli(["check", str(path.relative_to(ROOT)), "--json"])
            files[f"check/{name}/{path.stem}.json"] = f"exit {code}\n{text}"
    for rel in GRADESCOPE:
        files[f"gradescope/{Path(rel).parent.name}/{Path(rel).stem}.json"] = gradescope(work, ROOT / rel)
    return files


def gradescope(work: Path, answers: Path) -> str:
    """results.json of `grade gradescope` in a Gradescope-like root (no wheel needed)."""
    from attngrade.gradescope.manifest import Manifest
    from attngrade.gradescope.run import run_gradescope

    homework = answers.parent.name
    root = work / "gs" / f"{homework}-{answers.stem}"
    source = root / "source"
    (source / "solutions").mkdir(parents=True)
    shutil.copytree(ROOT / "solutions" / homework, source / "solutions" / homework)
    (source / "attngrade-autograder.json").write_text(
        Manifest(homework=homework, attngrade="pinned", wheel="wheels/none.whl").to_json(), encoding="utf-8")
    (root / "submission").mkdir()
    shutil.copy2(answers, root / "submission" / answers.name)
    for sibling in answers.parent.iterdir():  # prediction files beside the answers
        if sibling.is_file() and sibling.suffix not in (".yaml", ".yml"):
            shutil.copy2(sibling, root / "submission" / sibling.name)
    with contextlib.redirect_stdout(io.StringIO()):
        run_gradescope(root)
    data = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    data["execution_time"] = 0.0
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    mode = argv[1] if len(argv) > 1 else "compare"
    with tempfile.TemporaryDirectory() as tmp:
        files = produce(Path(tmp))
    if mode == "write":
        shutil.rmtree(PINNED, ignore_errors=True)
        for rel, text in files.items():
            (PINNED / rel).parent.mkdir(parents=True, exist_ok=True)
            (PINNED / rel).write_text(text, encoding="utf-8")
        print(f"wrote {len(files)} files under {PINNED.relative_to(ROOT)}")
        return 0
    differ = differences(files)
    for rel in differ:
        print(f"differs: {rel}")
    print(f"{len(files) - len(differ)} of {len(files)} pinned outputs identical")
    return 1 if differ else 0


def differences(files: dict[str, str]) -> list[str]:
    stored = {p.relative_to(PINNED).as_posix() for p in PINNED.rglob("*") if p.is_file()}
    out = sorted(stored - set(files))
    for rel, text in files.items():
        path = PINNED / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            out.append(rel)
    return sorted(set(out))


if __name__ == "__main__":
    import os

    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv))
