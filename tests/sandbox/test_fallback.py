"""The fallback, a fresh interpreter per job where no zygote serves: it starts in a private working
folder with only attngrade's own folder first on its path, so a module planted in the shared
temporary folder (where it used to start, with that folder on its path) never runs as the grader.
Checked in this process and, as an ordinary user, in a namespace of the test's own."""

from __future__ import annotations

import base64
import json
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_cases import HOSTILE, MODES, confinable, hand_over, owned_folder, run_confined  # noqa: E402

from attngrade import sandbox  # noqa: E402

REFERENCE = Path(__file__).resolve().parents[2] / "solutions" / "cs224n-w21-a5" / "reference" / "dataset.py"
REQUEST = {"files": {"dataset.py": base64.b64encode(REFERENCE.read_bytes()).decode()},
           "job": {"kind": "span_corruption", "class": "CharCorruptionDataset", "module": "dataset", "seed": 0,
                   "cases": [{"name": "one", "block_size": 24, "documents": ["a short document of text " * 4],
                              "draws": [0, 0]}]},
           "timeout": 20}
ASK = ("import json, sys; from attngrade import sandbox; "
       f"print(json.dumps(sandbox._ask_fresh({REQUEST!r}, 120)))")


def _plant(shared: Path) -> None:
    shutil.copytree(HOSTILE / "planted" / "attngrade", shared / "attngrade")


def _ran_the_job(answer: dict) -> bool:
    draws = ((answer.get("data") or {}).get("cases") or [{}])[0].get("draws") or []
    return answer.get("status") == "ok" and len(draws) == 2 and all("x" in d for d in draws)


def test_a_module_planted_in_the_temporary_folder_never_runs(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    shared = tmp_path / "shared"
    shared.mkdir()
    _plant(shared)
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    answer = sandbox._ask_fresh(REQUEST, 120)
    assert not (shared / "planted-ran").exists()
    assert _ran_the_job(answer), answer
    assert sorted(p.name for p in shared.iterdir()) == ["attngrade"]  # its private folder went with it


@pytest.mark.skipif(not confinable(), reason="needs unshare (and setpriv as root) and PID namespaces")
@pytest.mark.parametrize("mode", MODES)
def test_as_root_and_as_a_user_a_planted_module_never_runs(tmp_path, mode):
    pytest.importorskip("torch")
    shared = owned_folder(mode)
    try:
        _plant(shared)
        hand_over(shared, mode)
        report = run_confined(tmp_path, mode, [sys.executable, "-c", ASK], {"TMPDIR": str(shared)})
        answer = json.loads((tmp_path / "stdout").read_text() or "{}")
        assert not (shared / "planted-ran").exists()
        assert _ran_the_job(answer), (answer, (tmp_path / "stderr").read_text()[-2000:])
        assert report["left"] == []
    finally:
        shutil.rmtree(shared, ignore_errors=True)
