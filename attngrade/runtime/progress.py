"""What a long run shows while it works: one line per stage, over the whole run.

`grade run` reads every submission, checks the distinct answers, then writes the
reports; each stage reports its own count (and, while checking, the rate). On a
terminal rich draws it; anywhere else nothing is drawn (logs stay clean).
"""

from __future__ import annotations

import sys
from typing import Any


class Quiet:
    """Progress that shows nothing (not a terminal, or a library call)."""

    def stage(self, name: str, total: int) -> None:
        pass

    def advance(self, count: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


class Bars(Quiet):
    """rich progress bars on standard error, one per stage, cleared at the end."""

    def __init__(self, console: Any = None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(TextColumn("{task.description:<32}"), BarColumn(), MofNCompleteColumn(),
                                  _rate_column(), TimeElapsedColumn(), console=console or Console(stderr=True),
                                  transient=True)
        self._progress.start()
        self._task: Any = None

    def stage(self, name: str, total: int) -> None:
        if self._task is not None:
            self._progress.update(self._task, completed=self._progress.tasks[-1].total)
        self._task = self._progress.add_task(name, total=max(total, 0))

    def advance(self, count: int = 1) -> None:
        if self._task is not None:
            self._progress.advance(self._task, count)

    def close(self) -> None:
        self._progress.stop()


def _rate_column() -> Any:
    from rich.progress import ProgressColumn
    from rich.text import Text

    class Rate(ProgressColumn):
        """Items a second, while a stage runs (how fast distinct answers are checked)."""

        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:,.0f}/s" if speed else "", style="progress.data.speed")

    return Rate()


def for_terminal(show: bool) -> Quiet:
    return Bars() if show and sys.stderr.isatty() else Quiet()
