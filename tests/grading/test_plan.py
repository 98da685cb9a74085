"""What the plan finds in a submission folder before anything is read (grading/plan.py)."""

from __future__ import annotations

import os

import pytest

from attngrade.grading.plan import _present


def test_a_file_a_link_and_nothing(tmp_path):
    (tmp_path / "dev.predictions").write_text("Paris\n")
    (tmp_path / "gone.predictions").symlink_to(tmp_path / "nowhere")
    assert _present(tmp_path / "dev.predictions")
    assert _present(tmp_path / "gone.predictions")  # a link is there: reading it says links are refused
    assert not _present(tmp_path / "test.predictions")
    assert not _present(tmp_path / "dev.predictions" / "below")  # under a file: not a folder


def test_a_file_it_may_not_look_at_is_not_taken_for_missing(tmp_path, monkeypatch):
    """No permission to look is the submission's error to report, not a part left blank."""
    def refused(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "lstat", refused)
    with pytest.raises(PermissionError):
        _present(tmp_path / "dev.predictions")
