"""`grade`: the command line. It parses options and runs the command's module (`commands/`)."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

from . import __version__
from .errors import EXIT_OK, AttngradeError
from .runtime import tuning
from .runtime.text import UNENCODABLE, printable

# Each command's module under attngrade.commands: only the one that runs is imported.
COMMANDS = {"check": "check", "run": "run", "validate": "validate", "assign": "assign", "export": "export",
            "autograder": "autograder", "gradescope": "gradescope", "new-homework": "new_homework",
            "problems": "problems", "review": "review", "groups": "groups"}


def parser(kind: type[argparse.ArgumentParser] = argparse.ArgumentParser) -> argparse.ArgumentParser:
    """`grade`'s options, one subcommand per module of `commands`."""
    made = kind(
        prog="grade",
        description="Grade transformer and attention homework: math answers by their properties, "
                    "formulas by equivalence, prediction files by accuracy.",
    )
    made.add_argument("--version", action="version", version=f"attngrade {__version__}")
    sub = made.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_check(sub)
    _add_run(sub)
    _add_validate(sub)
    _add_autograder(sub)
    _add_gradescope(sub)
    _add_assign(sub)
    _add_problems(sub)
    _add_export(sub)
    _add_new_homework(sub)
    _add_review(sub)
    _add_groups(sub)
    return made


def _add_check(sub: Any) -> None:
    check = sub.add_parser("check", help="self-check one submission (no keys needed, none shown)")
    check.add_argument("path", type=Path, metavar="FILE",
                       help="an answers file (.yaml, .ipynb, .md, .tex) or a submission folder")
    check.add_argument("--homework", default=None, metavar="ID|DIR",
                       help="the homework: a bundled id, or an instructor's homework folder (with homework.yaml)")
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    check.add_argument("--budget", type=float, default=2.0, metavar="SECONDS",
                       help="time one check of one answer may take (default: 2)")


def _add_run(sub: Any) -> None:
    run = sub.add_parser("run", help="grade a batch of submissions and write results, grades and reports")
    run.add_argument("paths", type=Path, nargs="+", metavar="PATH", help="submission files, folders or class folders")
    run.add_argument("-o", "--out", type=_folder, required=True, help="output folder")
    run.add_argument("--solutions", type=Path, default=None,
                     help="folder with <homework>/keys.yaml (default: ./solutions, or the --homework folder)")
    run.add_argument("--gold", action="append", default=[], metavar="NAME=PATH",
                     help="an instructor gold file, e.g. test=birth_test.tsv (repeatable)")
    run.add_argument("--workers", type=int, default=None, metavar="N",
                     help="processes that check distinct answers in parallel (default: all cores)")
    run.add_argument("--budget", type=float, default=2.0, metavar="SECONDS",
                     help="time one check of one answer may take (default: 2)")
    run.add_argument("--overrides", type=Path, default=None, metavar="FILE",
                     help="scores and comments decided by course staff (see OUT/overrides.yaml)")
    run.add_argument("--rubric-to-students", action="store_true",
                     help="show the rubric of parts waiting for staff in the students' reports (default: not)")
    run.add_argument("--homework", default=None, metavar="ID|DIR",
                     help="the homework: a bundled id (for files that do not name it), or an instructor's homework "
                          "folder (homework.yaml, problems/, keys.yaml, gold/) anywhere on disk")
    run.add_argument("--bank", type=Path, default=None, metavar="DIR",
                     help="a problem bank folder (homeworks/ and library/) instead of the bundled one")
    run.add_argument("--executor", default="local", metavar="local|dask[=ADDRESS]",
                     help="where distinct answers are checked and reports rendered: worker processes here "
                          "(local, the default), or a Dask cluster (dask: a LocalCluster of --workers processes; "
                          "dask=ADDRESS: a running scheduler); needs attngrade[dask]")
    run.add_argument("--roster", type=Path, default=None, metavar="FILE",
                     help="the class roster (CSV: id, name, email, sid) to join into grades.csv")
    run.add_argument("--ids-from-names", action="store_true",
                     help="each student id is the file or folder name, whatever the file says (an LMS download)")
    run.add_argument("--unreadable", choices=("pending", "zero"), default=None,
                     help="what an answer that cannot be read gets: pending (course staff grade it, the default "
                          "unless the homework says otherwise) or zero (0, with the reason)")
    run.add_argument("--stats", type=Path, default=None, metavar="FILE",
                     help="write reading and checking statistics (memo hits, stage timings) as JSON")


def _add_validate(sub: Any) -> None:
    validate = sub.add_parser("validate", help="check a problem bank and its keys, as grading would load them")
    validate.add_argument("bank", type=Path, nargs="?", default=None, metavar="PATH",
                          help="a homework folder (with homework.yaml), or a bank folder with homeworks/ and "
                               "library/ (default: the bundled bank)")
    validate.add_argument("--solutions", type=Path, default=None,
                          help="folder with <homework>/keys.yaml (default: ./solutions, or the homework folder)")
    validate.add_argument("--show-keys", action="store_true", help="print every key as it was read")


def _add_autograder(sub: Any) -> None:
    auto = sub.add_parser("autograder", help="build a Gradescope autograder zip for one homework")
    auto.add_argument("homework", help="a homework id (see `grade problems`) or a homework folder")
    auto.add_argument("-o", "--out", type=Path, default=Path("autograder.zip"), help="the zip to write")
    auto.add_argument("--solutions", type=Path, default=None,
                      help="folder with <homework>/keys.yaml (default: ./solutions, or the homework folder)")
    auto.add_argument("--gold", action="append", default=[], metavar="NAME=PATH",
                      help="an instructor gold file to bundle, e.g. test=birth_test.tsv (repeatable)")
    auto.add_argument("--source", type=Path, default=None,
                      help="attngrade source tree to build the wheel from (default: the checkout attngrade runs "
                           "from; installed from a wheel, the installed files are packed)")


def _add_gradescope(sub: Any) -> None:
    gs = sub.add_parser("gradescope", help="grade inside a Gradescope container (what run_autograder calls)")
    gs.add_argument("--root", type=Path, default=None,
                    help="the autograder root (default: /autograder, inside a Gradescope container only)")
    gs.add_argument("--prove", action="store_true",
                    help="setup.sh's self-check: grade the reference solution's code here and say what this "
                         "container can grade (exit 1 when some code part cannot be)")


def _add_assign(sub: Any) -> None:
    assign = sub.add_parser("assign", help="write a student template of a homework (no keys, no answers)")
    assign.add_argument("homework", help="a homework id (see `grade problems`) or a homework folder")
    assign.add_argument("--format", choices=("yaml", "md", "ipynb", "tex"), default="ipynb",
                        help="the template's format (default: ipynb)")
    assign.add_argument("-o", "--out", type=Path, default=Path("."), help="the folder to write into")


def _add_problems(sub: Any) -> None:
    problems = sub.add_parser("problems", help="list homeworks, or the parts of one homework")
    problems.add_argument("homework", nargs="?", help="a homework id or a homework folder")


def _add_export(sub: Any) -> None:
    export = sub.add_parser("export", help="a run's grades in the columns an LMS imports (Canvas, Gradescope)")
    export.add_argument("out", type=Path, metavar="OUT", help="the output folder of a `grade run`")
    export.add_argument("--format", choices=("canvas", "gradescope"), required=True, help="the LMS to import into")
    export.add_argument("--roster", type=Path, default=None, metavar="FILE",
                        help="the class roster (CSV: id, name, email, sid): names, emails and SIDs for the LMS")
    export.add_argument("--assignment", default=None, help="the assignment column's name (default: the homework id)")
    export.add_argument("--homework", default=None, metavar="ID",
                        help="the homework to export, when the run graded several (one column holds one)")
    export.add_argument("-o", "--output", type=Path, default=None, metavar="FILE",
                        help="the CSV to write (default: OUT/export-HOMEWORK-FORMAT.csv)")


def _add_new_homework(sub: Any) -> None:
    new = sub.add_parser("new-homework", help="start a homework folder of your own from a bundled homework")
    new.add_argument("homework", help="the bundled homework to start from (see `grade problems`)")
    new.add_argument("-o", "--out", type=Path, required=True, help="the folder to create (must not exist)")
    new.add_argument("--solutions", type=Path, default=Path("solutions"),
                     help="where the bundled homework's keys are, to copy (default: ./solutions)")


def _add_review(sub: Any) -> None:
    review = sub.add_parser("review", help="the staff grading app over a run's output folder (a local web server "
                                           "for a team of graders)")
    review.add_argument("out", type=Path, metavar="OUT", help="the output folder of a `grade run`")
    review.add_argument("--graders", default=None, metavar="NAMES",
                        help="the graders, comma-separated: each gets a URL of their own (default: your login name)")
    review.add_argument("--grader", action="append", default=[], metavar="NAME",
                        help="one grader to print a URL for (again for more)")
    review.add_argument("--add-grader", action="append", default=[], metavar="NAME",
                        help="add a grader to the store (a running app lets them in at once), print their URL, stop")
    review.add_argument("--revoke-grader", action="append", default=[], metavar="NAME",
                        help="end a grader's access (at once, in a running app too), then stop")
    review.add_argument("--anonymous", action=argparse.BooleanOptionalAction, default=None,
                        help="grade without student ids, for the whole run (--no-anonymous lifts it)")
    review.add_argument("--requests", type=Path, default=None, metavar="FILE",
                        help="take students' regrade requests (CSV or YAML: student, part, message) in, then stop")
    review.add_argument("--port", type=int, default=None, metavar="N",
                        help="the port to listen on (default: the first free from 8765; 0: any free port)")
    review.add_argument("--host", default=None, metavar="H",
                        help="the address to listen on (default: a loopback address of its own, 127.x.y.z)")
    review.add_argument("--homework", default=None, metavar="ID|DIR",
                        help="the homework folder the run graded, if not a bundled one (its parts' fields and rubric)")
    review.add_argument("--bank", type=Path, default=None, metavar="DIR", help="the problem bank the run graded with")
    review.add_argument("--solutions", type=Path, default=None, metavar="DIR",
                        help="keys and reference solutions, as graded with (the reference on the grading page; "
                             "transcriptions graded): default ./solutions")
    review.add_argument("--import", dest="import_overrides", type=Path, default=None, metavar="FILE",
                        help="take the decisions of an overrides file into the staff store, then stop")
    review.add_argument("--export", dest="export_overrides", type=Path, default=None, metavar="FILE",
                        help="write the staff store's decisions as an overrides file, then stop")


def _add_groups(sub: Any) -> None:
    groups = sub.add_parser("groups", help="each part's groups of answers waiting for staff (no server)")
    groups.add_argument("out", type=Path, metavar="OUT", help="the output folder of a `grade run`")
    groups.add_argument("--part", default=None, metavar="ID", help="only this part (its id, or HOMEWORK:ID)")
    groups.add_argument("--json", action="store_true", help="print a JSON object: part id -> its groups")
    groups.add_argument("--homework", default=None, metavar="ID|DIR",
                        help="the homework folder the run graded, if not a bundled one")
    groups.add_argument("--bank", type=Path, default=None, metavar="DIR", help="the problem bank the run graded with")


def _folder(text: str) -> Path:
    """A folder named on the command line: an empty name (`-o "$UNSET"`) is not the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name; name the folder")
    return Path(text)


def entry() -> int:
    """The `grade` program (and `python -m attngrade`): main(), then an exit without the last collections."""
    tuning.for_grading()
    try:
        child = read_early(sys.argv[1:])
    except KeyboardInterrupt:
        return 130
    try:
        try:
            import_library(sys.argv[1:])
        except KeyboardInterrupt:
            return 130
        code = main(early=child)
    finally:
        if child is not None:
            child.stop()
    tuning.exit_without_collecting()
    return code


def main(argv: list[str] | None = None, early: Any = None) -> int:
    """Parse `argv` and run its command; a problem is one line on stderr and an exit code."""
    for stream in (sys.stdout, sys.stderr):  # student text is printed too (see runtime.text.UNENCODABLE)
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors=UNENCODABLE)
    args = parser().parse_args(argv)
    try:
        command = _command(args.command)
        return command.main(args, early) if args.command == "run" else command.main(args)
    except AttngradeError as err:
        print(f"grade: {printable(str(err))}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `grade problems | head`: the reader has what it wanted
        sys.stderr.close()
        return EXIT_OK


def read_early(argv: list[str]) -> Any:
    """For `grade run` with more than one local worker: a child forked now, before the library is
    imported, that begins reading the class meanwhile (`commands.early`); else None."""
    args = _parsed_quietly(argv)
    if args is None or args.command != "run":
        return None
    # The run command's own module imports the library; its early read is a module of its own
    # that imports none of it (`commands.early`), loaded only for a run.
    return importlib.import_module(f"{__package__}.commands.early").start(args)


def import_library(argv: list[str]) -> None:
    """Import the module of the command in `argv` with the collector off, then freeze what the
    import made (`tuning.import_frozen`); nothing for help, or for what does not parse (main() says it)."""
    args = _parsed_quietly(argv)
    if args is not None:
        _command(args.command)


def _command(name: str) -> Any:
    return tuning.import_frozen(f"{__package__}.commands.{COMMANDS[name]}")


class _Unparsed(Exception):
    pass


class _QuietParser(argparse.ArgumentParser):
    """Parses as `grade` does, but says nothing and exits nowhere: what it cannot parse, main() will."""

    def error(self, message: str):  # type: ignore[override]
        raise _Unparsed(message)

    def exit(self, status: int = 0, message: str | None = None):  # type: ignore[override]
        raise _Unparsed(message or "")

    def _print_message(self, message: str, file: Any = None) -> None:
        pass


def _parsed_quietly(argv: list[str]) -> argparse.Namespace | None:
    """`argv` parsed before anything is imported, or None if it asks only for help or does not parse."""
    if {"-h", "--help"} & set(argv):
        return None
    try:
        return parser(_QuietParser).parse_args(argv)
    except _Unparsed:
        return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
