"""The students' folders of a staged OUT, made by a child process while the class is checked.

Every report lives in a folder of its own, and making a folder is the costliest file-system
call a run makes: 0.2 to 0.9 ms of kernel time each on an ext4 virtual disk, and made one at a
time in one parent folder however many processes ask (they queue on its lock). For 1,000
students that is a fixed 0.2 to 0.9 s of the write stage that no number of report processes
shortens. The names are known as soon as the class is read, so with more than one worker a
child forked then makes them while the class is checked and the report writers find them made.

A process, not a thread: a thread would wait for the interpreter's lock after every folder
while this process reads and checks. The child (`forked.Share`) makes the folders
and exits. A large class is not forked from: while the child lived, every page this process
wrote would be copied (see `reports.parallel`); its folders are a job for a report process
forked before the class was read (`pool`). If either fails for any
reason the folders not made are made here, where an error is raised with its file name (`wait`).
"""

from __future__ import annotations

import os
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Sequence

from ..forked import Share


class FolderMaker:
    """`root`/<name> for every name, made by a child process from `start` on; `wait` before use."""

    def __init__(self, root: Path, names: Sequence[str], pool: Executor | None = None):
        self.root, self.names, self.pool = root, list(names), pool
        self._child: Share | None = None
        self._job: Future | None = None

    def start(self) -> "FolderMaker":
        if not self.names:
            return self
        if self.pool is not None:
            self._job = self.pool.submit(make_folders, self.root, self.names)
        else:
            self._child = Share(lambda: make_folders(self.root, self.names))
        return self

    def wait(self) -> None:
        """Return once every folder is made; made here whatever the child did not make."""
        job, self._job = self._job, None
        child, self._child = self._child, None
        try:
            if job is not None and job.result() is True:
                return
        except Exception:  # noqa: BLE001 - made here instead, where a real error is raised
            pass
        if child is not None and child.result() is True:
            return
        for name in self.names:
            (self.root / name).mkdir(exist_ok=True)

    def stop(self) -> None:
        """End the child now (the run stopped before its reports were written). A job of a report
        process cannot be stopped: it ends at its next folder once the stage is removed."""
        if self._job is not None:
            self._job.cancel()
            self._job = None
        if self._child is not None:
            self._child.stop()
            self._child = None


def make_folders(root: Path, names: Sequence[str]) -> bool:
    base = os.fspath(root)
    for name in names:
        os.mkdir(os.path.join(base, name))
    return True
