"""A supervisor that fails on its own side still removes the child's temporary folder."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from attngrade.sandbox import isolate, zygote


def test_an_error_before_the_child_starts_leaves_no_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # mkdtemp's folder, for this test only

    def refuse(_pid: int) -> int:
        raise OSError("no uid to give")

    monkeypatch.setattr(isolate, "sandbox_uid", refuse)
    with pytest.raises(OSError, match="no uid to give"):
        zygote.supervise({"files": {"dataset.py": ""}, "job": {}, "timeout": 1})
    assert list(Path(tmp_path).iterdir()) == []
