"""Nothing in a submission folder is ignored without a word: the files no part reads are named once, in
the submission's notes (results.json, the report), and the files parts read are not."""

from __future__ import annotations

import json
from pathlib import Path

from attngrade.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "unread"


def test_a_checkpoint_a_plot_and_an_extra_notebook_are_named_as_not_read(tmp_path, capsys):
    main(["run", str(DATA), "-o", str(tmp_path / "out"), "--workers", "1"])
    capsys.readouterr()
    (result,) = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    (note,) = [n for n in result.get("notes", []) if n.startswith("not read")]
    for name in ("plots/loss.png", "scratch.ipynb", "vanilla.finetune.params"):
        assert name in note
    for read in ("answers.yaml", "dataset.py", "attention.py", "model.py"):
        assert read not in note
    report = next((tmp_path / "out").rglob("report.html")).read_text(encoding="utf-8")
    assert "not read" in report and "plots/loss.png" in report
