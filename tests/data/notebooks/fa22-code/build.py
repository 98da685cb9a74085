#!/usr/bin/env python3
"""Write the Fa22 notebook class, class/: reference/ (the reference notebook as it is) and one folder per
mistake of mistakes.yaml (the reference with that one edit), each with an answers.yaml that names
the homework and answers nothing else (a notebook is no answers file). alternative/ is written by
hand and left as it is. Run from the repository's root:

    python tests/data/notebooks/fa22-code/build.py
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REFERENCE = HERE.parents[3] / "solutions" / "eecs182-fa22-hw8" / "reference" / "Summarization.ipynb"


def edited(notebook: dict, old: str, new: str) -> dict:
    """The notebook with `old` replaced by `new` in the one code cell that holds it, once."""
    hits = [cell for cell in notebook["cells"] if cell["cell_type"] == "code" and old in "".join(cell["source"])]
    assert len(hits) == 1 and "".join(hits[0]["source"]).count(old) == 1, old
    hits[0]["source"] = "".join(hits[0]["source"]).replace(old, new).splitlines(keepends=True)
    return notebook


def main() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    folders = {"reference": json.loads(text)}
    for name, edit in yaml.safe_load((HERE / "mistakes.yaml").read_text(encoding="utf-8")).items():
        folders[name] = edited(json.loads(text), edit["old"], edit["new"])
    for name, notebook in folders.items():
        folder = HERE / "class" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "Summarization.ipynb").write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n",
                                                    encoding="utf-8")
        (folder / "answers.yaml").write_text(ANSWERS.format(student=name), encoding="utf-8")


ANSWERS = "homework: eecs182-fa22-hw8\nstudent: {student}\nanswers: {{}}\n"


if __name__ == "__main__":
    main()
