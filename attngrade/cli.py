"""`grade`: the command line. It parses options and calls the library; nothing else."""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import textwrap
from contextlib import closing, nullcontext
from typing import Any
from pathlib import Path

from .errors import EXIT_OK, EXIT_SUBMISSION_FAILED, AttngradeError, ConfigError, SubmissionError
from .rawtext import printable


def _parser(kind: type[argparse.ArgumentParser] = argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser = kind(
        prog="grade",
        description="Grade transformer and attention homework: math answers by their properties, "
                    "formulas by equivalence, prediction files by accuracy.",
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"attngrade {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = sub.add_parser("check", help="self-check one submission (no keys needed, none shown)")
    check.add_argument("path", type=Path, metavar="FILE",
                       help="an answers file (.yaml, .ipynb, .md, .tex) or a submission folder")
    check.add_argument("--homework", default=None, metavar="ID|DIR",
                       help="the homework: a bundled id, or an instructor's homework folder (with homework.yaml)")
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    check.add_argument("--budget", type=float, default=2.0, metavar="SECONDS",
                       help="time one check of one answer may take (default: 2)")

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
    run.add_argument("--stats", type=Path, default=None, metavar="FILE",
                     help="write reading and checking statistics (memo hits, stage timings) as JSON")

    validate = sub.add_parser("validate", help="check a problem bank and its keys, as grading would load them")
    validate.add_argument("bank", type=Path, nargs="?", default=None, metavar="PATH",
                          help="a homework folder (with homework.yaml), or a bank folder with homeworks/ and "
                               "library/ (default: the bundled bank)")
    validate.add_argument("--solutions", type=Path, default=None,
                          help="folder with <homework>/keys.yaml (default: ./solutions, or the homework folder)")

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

    gs = sub.add_parser("gradescope", help="grade inside a Gradescope container (what run_autograder calls)")
    gs.add_argument("--root", type=Path, default=None,
                    help="the autograder root (default: /autograder, inside a Gradescope container only)")

    assign = sub.add_parser("assign", help="write a student template of a homework (no keys, no answers)")
    assign.add_argument("homework", help="a homework id (see `grade problems`) or a homework folder")
    assign.add_argument("--format", choices=("yaml", "md", "ipynb", "tex"), default="ipynb",
                        help="the template's format (default: ipynb)")
    assign.add_argument("-o", "--out", type=Path, default=Path("."), help="the folder to write into")

    problems = sub.add_parser("problems", help="list homeworks, or the parts of one homework")
    problems.add_argument("homework", nargs="?", help="a homework id or a homework folder")

    export = sub.add_parser("export", help="a run's grades in the columns an LMS imports (Canvas, Gradescope)")
    export.add_argument("out", type=Path, metavar="OUT", help="the output folder of a `grade run`")
    export.add_argument("--format", choices=("canvas", "gradescope"), required=True, help="the LMS to import into")
    export.add_argument("--roster", type=Path, default=None, metavar="FILE",
                        help="the class roster (CSV: id, name, email, sid): names, emails and SIDs for the LMS")
    export.add_argument("--assignment", default=None, help="the assignment column's name (default: the homework id)")
    export.add_argument("--homework", default=None, metavar="ID",
                        help="the homework to export, when the run graded several (one column holds one)")
    export.add_argument("-o", "--output", type=Path, default=None, metavar="FILE",
                        help="the CSV to write (default: OUT/export-FORMAT.csv)")

    new = sub.add_parser("new-homework", help="start a homework folder of your own from a bundled homework")
    new.add_argument("homework", help="the bundled homework to start from (see `grade problems`)")
    new.add_argument("-o", "--out", type=Path, required=True, help="the folder to create (must not exist)")
    new.add_argument("--solutions", type=Path, default=Path("solutions"),
                     help="where the bundled homework's keys are, to copy (default: ./solutions)")
    return parser


# The part of the library each command runs (what its function imports), for `entry`.
_LIBRARY = {"check": "selfcheck", "run": "batch", "autograder": "gradescope", "gradescope": "gradescope",
            "validate": "grading", "assign": "formats.write", "export": "lms", "new-homework": "problems.scaffold",
            "problems": "problems"}


# Threads for numpy's BLAS, unless the user chose (by any of the names a BLAS reads): one.
# attngrade's arrays are a few rows long and its work is split over processes; more BLAS threads
# only spin after each call (0.1 s of a core per run).
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS",
                "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


YOUNG_COLLECTION = 10_000  # allocations (less deallocations) between two collections of the youngest generation


def entry() -> int:
    """The `grade` program (and `python -m attngrade`): main(), then an exit without the last collections."""
    if not any(name in os.environ for name in BLAS_THREADS):  # before numpy is imported: it reads them once
        os.environ.update(dict.fromkeys(BLAS_THREADS, "1"))
    try:
        early = read_early(sys.argv[1:])
    except KeyboardInterrupt:
        return 130
    # Grading makes millions of short-lived objects and few cycles (~13,000 in a class of 1,000): at
    # the default threshold (700) the young generations are collected ~350 times a run, ~50 ms of
    # ~2.5 s, to find them. Collected every 10,000 allocations, the cycles wait a little longer.
    gc.set_threshold(YOUNG_COLLECTION, *gc.get_threshold()[1:])
    try:
        try:
            import_library(sys.argv[1:])
        except KeyboardInterrupt:
            return 130
        code = main(early=early)
    finally:
        if early is not None:
            early.stop()
    # At exit the interpreter collects every cycle once more; with sympy loaded that costs ~50 ms
    # of a ~0.4 s `grade check` and frees nothing the OS does not take back anyway. Frozen objects
    # are out of the collector's reach; atexit handlers, flushes and finalizers still run.
    gc.freeze()
    return code


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


def read_early(argv: list[str]) -> Any:
    """For `grade run` with more than one local worker: a child forked now, before the library is
    imported, that begins reading the class meanwhile (`early.EarlyLoad`); else None."""
    if not argv or "run" not in argv:
        return None
    try:
        args = _parser(_QuietParser).parse_args(argv)
    except _Unparsed:
        return None
    if args.command != "run" or args.executor != "local":
        return None
    from .early import EarlyLoad

    def source() -> tuple[Any, str | None]:  # in the child: only a homework or bank named costs it the library
        if args.homework is None and args.bank is None:
            return None, None
        bank, homework, _, _ = _homework_source(args)
        return bank, homework

    return EarlyLoad.start(args.paths, args.out, args.workers, source)


def import_library(argv: list[str]) -> None:
    """Import what the command in `argv` runs with the cyclic collector off, then freeze it.

    Importing sympy and numpy makes a few hundred thousand objects that live as long as the
    process; the collector's passes over them while they are made find nothing to free and
    cost ~55 ms of a ~0.4 s `grade check`. Frozen, no later collection walks them either. An
    import that fails is left for the command itself to make (and report)."""
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    if command not in _LIBRARY or {"-h", "--help"} & set(argv):
        return  # nothing to run, or only its help to print
    import importlib

    collecting = gc.isenabled()
    gc.disable()
    try:
        importlib.import_module(f"{__package__}.{_LIBRARY[command]}")
    except Exception:  # noqa: BLE001 - main() imports it again, and reports what is wrong
        pass
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def main(argv: list[str] | None = None, early: Any = None) -> int:
    from .rawtext import UNENCODABLE

    for stream in (sys.stdout, sys.stderr):  # student text is printed too (see rawtext.UNENCODABLE)
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors=UNENCODABLE)
    args = _parser().parse_args(argv)
    try:
        if args.command == "check":
            return _check(args)
        if args.command == "run":
            return _run(args, early)
        if args.command == "autograder":
            return _autograder(args)
        if args.command == "gradescope":
            return _gradescope(args)
        if args.command == "validate":
            return _validate(args)
        if args.command == "assign":
            return _assign(args)
        if args.command == "new-homework":
            return _new_homework(args)
        if args.command == "export":
            return _export(args)
        return _problems(args)
    except AttngradeError as err:
        print(f"grade: {printable(str(err))}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `grade problems | head`: the reader has what it wanted
        sys.stderr.close()
        return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    from .selfcheck import check

    bank, homework, _, _ = _homework_source(args)
    try:
        result = check(args.path, budget=args.budget, homework=homework, bank=bank)
    except SubmissionError as err:
        if args.json:
            print(json.dumps({"student": args.path.stem, "homework": None, "score": 0, "max_score": 0,
                              "parts": [], "error": str(err)}, indent=2))
        else:
            print(f"grade: {printable(str(err))}", file=sys.stderr)
        return EXIT_SUBMISSION_FAILED
    if args.json:
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
        return EXIT_OK
    from .terminal import print_result

    print_result(result)
    return EXIT_OK


def _folder(text: str) -> Path:
    """A folder named on the command line: an empty name (`-o "$UNSET"`) is not the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name; name the folder")
    return Path(text)


def _run(args: argparse.Namespace, early: Any = None) -> int:
    from .batch import run

    bank, homework, solutions, gold = _homework_source(args)
    missing = [str(p) for p in args.paths if not p.exists() and not p.is_symlink()]
    if missing:
        raise ConfigError(f"no such file or folder: {', '.join(missing)}; nothing was graded")
    if args.budget <= 0 or (args.workers is not None and args.workers < 0):
        raise ConfigError("--budget must be positive and --workers at least 0")
    runner = None
    if args.executor != "local":
        from .grading.distributed import executor_from

        runner = executor_from(args.executor, args.budget, args.workers)
    with closing(runner) if runner is not None else nullcontext():  # the cluster: the checks', then the reports'
        if runner is not None:
            runner.check()  # a cluster that cannot check is said before the class is read
        try:
            batch = run(args.paths, args.out, solutions, gold=gold, workers=args.workers, budget=args.budget,
                        overrides=args.overrides, bank=bank, homework=homework, runner=runner,
                        rubric=args.rubric_to_students, roster=args.roster, early=early)
        except OSError as err:  # OUT's disk or folder: no submission's fault, and nothing a traceback helps with
            where = f" ({err.filename})" if err.filename else ""
            raise ConfigError(f"-o {args.out}: could not write the outputs: {err.strerror or err}{where}; free "
                              "space, make the folder writable, or name another -o folder, then run again") from err
    if args.stats is not None:
        from .output import write_atomic

        write_atomic(args.stats, json.dumps(batch.stats_json(), indent=1) + "\n")
    failed = batch.failed
    print(f"graded {len(batch.results) - len(failed)} of {len(batch.results)} submissions; "
          f"wrote {args.out / 'results.json'}, {args.out / 'grades.csv'} and one report per student")
    for message in batch.messages:
        print(printable(message))
    for result in failed:
        print(f"  not graded: {printable(result.error or '')}", file=sys.stderr)
    flagged = [(r.student, v.part) for r in batch.results for v in r.parts if v.flags]
    if flagged:
        shown = ", ".join(f"{student} {part}" for student, part in flagged[:8])
        more = f" and {len(flagged) - 8} more" if len(flagged) > 8 else ""
        print(printable(f"integrity flags for course staff (see 'flags' in results.json): {shown}{more}"))
    return EXIT_SUBMISSION_FAILED if failed else EXIT_OK


def _bank(path: Path | None):
    from .problems import BUNDLED, Bank

    if path is None:
        return BUNDLED
    if not (path / "homeworks").is_dir():
        raise ConfigError(f"{path}: not a problem bank (no homeworks/ folder in it)")
    return Bank(path)


def _homework_source(args: argparse.Namespace) -> tuple[Any, str | None, Path, dict[str, Path]]:
    """(bank, homework id or None, solutions, gold) from --homework, --bank, --solutions and --gold.

    A homework folder brings its own problems, keys (its keys.yaml) and gold (its gold/).
    """
    from .problems import HomeworkFolder, open_homework

    gold = _gold(getattr(args, "gold", []))
    solutions = getattr(args, "solutions", None)
    spec = getattr(args, "homework", None)
    bank_path = getattr(args, "bank", None)
    if spec is None:
        return _bank(bank_path), None, solutions or Path("solutions"), gold
    bank, homework = open_homework(spec)
    if isinstance(bank, HomeworkFolder):
        if bank_path is not None:
            raise ConfigError(f"--homework {spec} is a homework folder with its own problems; leave out --bank")
        return bank, homework, solutions or bank.root, {**bank.gold(), **gold}
    return _bank(bank_path), homework, solutions or Path("solutions"), gold


def _validate(args: argparse.Namespace) -> int:
    from .checkers.accuracy import expected_lines, load_gold
    from .grading import assignment
    from .keys import load_keys
    from .problems import HOMEWORK_FILE, HomeworkFolder

    if args.bank is not None and (args.bank / HOMEWORK_FILE).is_file():
        bank = HomeworkFolder(args.bank)
        solutions = args.solutions or bank.root
    else:
        bank, solutions = _bank(args.bank), args.solutions or Path("solutions")
    ids = bank.homework_ids()
    if not ids:
        raise ConfigError(f"{args.bank}: no homeworks/*.yaml in this bank")
    gold = bank.gold() if isinstance(bank, HomeworkFolder) else {}
    for hid in ids:
        homework = bank.load_homework(hid)  # problem files: params, fields, checks
        keys = load_keys(solutions, homework)
        assignment(homework, keys, solutions=solutions)  # keys cover every key-based check
        for part in homework.parts:  # every gold a check reads is there and readable, or its length is known
            for spec in part.checks:
                if spec.check == "accuracy_file":
                    expected_lines(part, spec.prepared, load_gold(spec.prepared["gold"], gold))
        checks = sum(len(p.checks) for p in homework.parts)
        print(f"{hid}: ok ({len(homework.parts)} parts, {checks} checks, "
              f"{'keys from ' + str(keys.source) if keys else 'no keys needed'})")
    return EXIT_OK


def _assign(args: argparse.Namespace) -> int:
    from .formats.write import STYLE, WRITERS
    from .output import write_atomic
    from .problems import open_homework

    bank, hid = open_homework(args.homework)
    homework = bank.load_homework(hid)
    write, suffix = WRITERS[args.format]
    target = args.out / f"{homework.id}{suffix}"
    write_atomic(target, write(homework))
    written = [target]
    if args.format == "tex":
        write_atomic(args.out / "attngrade.sty", STYLE)
        written.append(args.out / "attngrade.sty")
    print("wrote " + " and ".join(str(p) for p in written))
    return EXIT_OK


def _gold(items: list[str]) -> dict[str, Path]:
    gold = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ConfigError(f"--gold takes NAME=PATH, got {item!r}")
        if not Path(path).is_file():
            raise ConfigError(f"--gold {name}: no file at {path}")
        gold[name] = Path(path).absolute()  # read where the checks run: a Dask worker elsewhere
    return gold


def _autograder(args: argparse.Namespace) -> int:
    from .gradescope import build_autograder

    bank, homework, solutions, gold = _homework_source(args)
    path = build_autograder(homework, args.out, solutions=solutions, gold=gold, source=args.source, bank=bank)
    print(f"wrote {path}")
    return EXIT_OK


def _export(args: argparse.Namespace) -> int:
    from .lms import export, read_roster
    from .output import write_atomic

    source = args.out / "results.json"
    try:
        results = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ConfigError(f"{source}: not the results of a `grade run` ({err})") from None
    roster = read_roster(args.roster) if args.roster else {}
    text, said = export(results, roster, args.format, args.assignment, args.homework)
    target = args.output or args.out / f"export-{args.format}.csv"
    write_atomic(target, text)
    count, *said = said
    print(printable(f"wrote {target} ({args.format}: {count})"))
    for line in said:
        print(printable(line))
    return EXIT_OK


def _new_homework(args: argparse.Namespace) -> int:
    from .problems.scaffold import scaffold

    written = scaffold(args.homework, args.out, args.solutions)
    print(f"wrote {args.out}: " + ", ".join(written))
    print(f"edit it, then: grade validate {args.out}; grade run SUBMISSIONS -o OUT --homework {args.out}")
    return EXIT_OK


def _gradescope(args: argparse.Namespace) -> int:
    from .gradescope import run_gradescope

    root = args.root
    if root is None:
        root = Path("/autograder")
        if not (root / "source").is_dir():
            raise ConfigError("this is not a Gradescope container (/autograder/source does not exist), so nothing "
                              "was written; to try the autograder here, pass --root FOLDER laid out like "
                              "Gradescope's (source/, submission/)")
    return run_gradescope(root)


def _problems(args: argparse.Namespace) -> int:
    from .problems import homework_ids, load_homework, open_homework

    if not args.homework:
        for hid in homework_ids():
            hw = load_homework(hid)
            print(f"{hid}\t{hw.course}: {hw.title} ({hw.max_score:g} points)")
        return EXIT_OK
    bank, hid = open_homework(args.homework)
    hw = bank.load_homework(hid)
    for part in hw.parts:
        fields = ", ".join(f"{f.name}:{f.expect or f.kind}" for f in part.fields)
        symbols = ", ".join(part.table.names()) or "-"
        checks = ", ".join(c.check for c in part.checks)
        print(f"{part.id}\t{part.points:g} pt{'' if part.points == 1 else 's'}\t{checks}\tfields {fields}\tsymbols {symbols}")
        if part.statement:
            print(textwrap.fill(part.statement, width=100, initial_indent="    ", subsequent_indent="    "))
        for f in part.fields:
            if f.kind == "file" and f.filename:
                print(f"    expects the file {f.filename} ({f.name})")
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
