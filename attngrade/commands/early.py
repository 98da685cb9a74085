"""The early read of `grade run`: a child forked before the library is imported, that begins
reading the class meanwhile (`intake.early.EarlyLoad`). Light: imported before the library."""

from __future__ import annotations

import argparse
from typing import Any

from ..intake.early import EarlyLoad
from ..outputs.history import class_folders
from ..runtime.scale import default_workers


def start(args: argparse.Namespace) -> EarlyLoad | None:
    """The child for a `grade run` with more than one local worker; else None."""
    if args.command != "run" or args.executor != "local" or default_workers(args.workers) <= 1:
        return None
    if args.ids_from_names:
        return None  # the child reads as a run without the flag would: the run reads the class itself

    def source() -> tuple[Any, str | None]:
        if args.homework is None and args.bank is None:
            return None, None
        # In the child, after the fork, and only when a homework or bank is named: opening it
        # imports the library, which the parent must not wait for.
        from .options import homework_source

        opened = homework_source(args)
        return opened.bank, opened.homework

    return EarlyLoad.start(args.paths, args.out, args.workers, source, class_folders)
