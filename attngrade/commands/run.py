"""`grade run PATH... -o OUT`: grade files, submission folders or class folders into OUT."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import closing, nullcontext
from typing import Any

from ..errors import EXIT_OK, EXIT_SUBMISSION_FAILED, ConfigError
from ..grading import Options
from ..grading.distributed import executor_from
from ..outputs.run import Batch, RunRequest, grade_run
from ..records import Unreadable
from ..staff import STORE
from ..runtime.files import write_atomic
from ..runtime.text import counted, printable
from .options import homework_source

FLAGGED_SHOWN = 8  # integrity flags named in the summary; results.json has them all


def main(args: argparse.Namespace, early: Any = None) -> int:
    source = homework_source(args)
    missing = [str(p) for p in args.paths if not p.exists() and not p.is_symlink()]
    if missing:
        raise ConfigError(f"no such file or folder: {', '.join(missing)}; nothing was graded")
    if args.budget <= 0 or (args.workers is not None and args.workers < 0):
        raise ConfigError("--budget must be positive and --workers at least 0")
    runner = None if args.executor == "local" else executor_from(args.executor, args.budget, args.workers)
    grading = Options(solutions=source.solutions, gold=source.gold, bank=source.bank, homework=source.homework,
                      workers=args.workers, budget=args.budget, runner=runner,
                      unreadable=Unreadable(args.unreadable) if args.unreadable else None,
                      ids_from_names=args.ids_from_names)
    request = RunRequest(args.paths, args.out, grading, overrides=args.overrides, rubric=args.rubric_to_students,
                         roster=args.roster, early=early)
    with closing(runner) if runner is not None else nullcontext():  # the cluster: the checks', then the reports'
        if runner is not None:
            runner.check()  # a cluster that cannot check is said before the class is read
        try:
            batch = grade_run(request)
        except OSError as err:  # OUT's disk or folder: no submission's fault, and nothing a traceback helps with
            where = f" ({err.filename})" if err.filename else ""
            raise ConfigError(f"-o {args.out}: could not write the outputs: {err.strerror or err}{where}; free "
                              "space, make the folder writable, or name another -o folder, then run again") from err
    if args.stats is not None:
        write_atomic(args.stats, json.dumps(batch.stats_json(), indent=1) + "\n")
    _summary(batch, args)
    return EXIT_SUBMISSION_FAILED if batch.failed else EXIT_OK


def _first_staff_hint(batch: Batch, args: argparse.Namespace) -> None:
    """Before staff have a store in OUT: how many answers wait for them, and where to grade them."""
    waiting = sum(v.pending_points > 1e-9 for r in batch.results for v in r.parts)
    if waiting and not (args.out / STORE).is_file():
        print(printable(f"{counted(waiting, 'answer')} {'waits' if waiting == 1 else 'wait'} for course staff: grade "
                        f"{'it' if waiting == 1 else 'them'} in `grade review {args.out}` (a web app a team of "
                        f"graders can share), or by hand in {args.out / 'overrides.yaml'}"))


def _summary(batch: Batch, args: argparse.Namespace) -> None:
    failed = batch.failed
    print(f"graded {len(batch.results) - len(failed)} of {counted(len(batch.results), 'submission')}; "
          f"wrote {args.out / 'results.json'}, {args.out / 'grades.csv'} and one report per student")
    for message in batch.messages:
        print(printable(message))
    _first_staff_hint(batch, args)
    for result in failed:
        print(f"  not graded: {printable(result.error or '')}", file=sys.stderr)
    flagged = [(r.student, v.part) for r in batch.results for v in r.parts if v.flags]
    if flagged:
        shown = ", ".join(f"{student} {part}" for student, part in flagged[:FLAGGED_SHOWN])
        more = f" and {len(flagged) - FLAGGED_SHOWN} more" if len(flagged) > FLAGGED_SHOWN else ""
        print(printable(f"integrity flags for course staff (see 'flags' in results.json): {shown}{more}"))
