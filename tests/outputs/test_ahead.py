"""The students' folders made by another process while the class is checked (reports/folders.py)."""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from attngrade.outputs.ahead import FolderMaker

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="folders are made by a forked child")

NAMES = [f"s{i:03d}" for i in range(200)]


def made(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_dir())


def test_a_child_makes_every_folder_while_this_process_goes_on(tmp_path):
    maker = FolderMaker(tmp_path, NAMES).start()
    pid = maker._child._pid
    assert pid is not None and pid != os.getpid()
    maker.wait()
    assert made(tmp_path) == NAMES
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the child ended and was reaped: nothing is left behind


def test_what_the_child_could_not_make_is_made_here(tmp_path):
    # The child stops at the first folder that is there already (a person's): wait() makes the rest.
    (tmp_path / NAMES[5]).mkdir()
    (tmp_path / NAMES[5] / "notes.txt").write_text("kept")
    maker = FolderMaker(tmp_path, NAMES).start()
    maker.wait()
    assert made(tmp_path) == NAMES
    assert (tmp_path / NAMES[5] / "notes.txt").read_text() == "kept"


def test_a_folder_that_cannot_be_made_is_an_error_raised_here_with_its_name(tmp_path):
    (tmp_path / NAMES[3]).write_text("a file where a folder goes")
    maker = FolderMaker(tmp_path, NAMES).start()
    with pytest.raises(FileExistsError, match=NAMES[3]):
        maker.wait()


def test_stopped_the_child_ends_at_once(tmp_path):
    maker = FolderMaker(tmp_path, [f"x{i:06d}" for i in range(100_000)]).start()
    pid = maker._child._pid
    maker.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    count = len(list(tmp_path.iterdir()))
    time.sleep(0.2)
    assert len(list(tmp_path.iterdir())) == count, "no folder is made after stop()"


def test_a_pool_made_before_the_class_was_read_can_make_them_instead(tmp_path):
    with ProcessPoolExecutor(1) as pool:
        maker = FolderMaker(tmp_path, NAMES, pool).start()
        assert maker._child is None and maker._job is not None
        maker.wait()
    assert made(tmp_path) == NAMES
