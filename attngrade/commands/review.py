"""`grade review OUT`: the staff grading app over a run's output folder, for a team of graders; or, with
--add-grader, --revoke-grader, --requests, --import or --export, a change to the staff store (a
running app picks it up at once) or the store's decisions written out, and then stop."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .. import staff
from ..errors import EXIT_OK, ConfigError
from ..review.classroom import Classroom
from ..review.server import Serving, instructor, running, serve, url_of
from ..runtime.files import write_atomic
from ..runtime.text import printable
from ..staff import graders as roster
from ..staff import requests as regrades
from .options import homework_source


def main(args: argparse.Namespace) -> int:
    source = homework_source(args)
    homework = source.bank.load_homework(source.homework) if source.homework else None
    if not (args.out / "results.json").is_file():
        raise ConfigError(f"{args.out}: no results.json here; run `grade run ... -o {args.out}` first")
    room = Classroom(args.out, source.bank, homework, solutions=args.solutions or source.solutions)
    room.start()
    for hid in sorted(room.unknown):
        print(printable(f"{hid}: not a bundled homework, so whether it asks for anonymous grading is not known "
                        f"here: graded anonymously unless the store says otherwise; name its folder with "
                        f"--homework DIR (or lift anonymity with --no-anonymous)"))
    if args.anonymous is not None:
        with room.open() as conn:
            staff.set_anonymous(conn, args.anonymous, instructor())
        print(f"{room.path}: graded {'anonymously' if args.anonymous else 'with student ids'} from now on")
    if _maintain(args, room):
        return EXIT_OK
    names = [n for n in (args.graders or "").split(",") if n.strip()] + list(args.grader)
    return serve(Serving(args.out, args.host, args.port, source.bank, homework, room.solutions, names))


def _maintain(args: argparse.Namespace, room: Classroom) -> bool:
    """The store changes of the command line (each one audited); whether one was asked for."""
    said: list[str] = []
    with room.open() as conn:
        for name in args.revoke_grader:
            gone = roster.revoke(conn, _named(name), instructor())
            said.append(f"{name}: access ended" if gone else f"{name}: no such grader in {room.path}")
        base = running(room)
        for name in args.add_grader:
            secret = roster.add(conn, _named(name), instructor())
            where = url_of(base, secret) if base else f"#k={secret} (after the address `grade review {args.out}` " \
                                                          "prints, once it runs)"
            said.append(f"{name}: {where}")
        if args.requests is not None:
            said += regrades.import_requests(conn, args.requests, _answers(room), instructor())
        if args.import_overrides is not None:
            said += staff.import_overrides(conn, args.import_overrides, instructor())
        if args.export_overrides is not None:
            write_atomic(args.export_overrides, staff.export_overrides(conn, room.anonymous()))
            said.append(f"wrote {args.export_overrides}: pass it to grade run with --overrides")
    if args.requests is not None:
        room.refresh(force=True)  # the requested answers join the snapshot, so the app shows them
    for line in said:
        print(printable(line))
    return bool(said)


def _named(name: str) -> str:
    try:
        return roster.checked_name(name)
    except ValueError as err:
        raise ConfigError(f"--add-grader/--revoke-grader: {err}") from None


def _answers(room: Classroom) -> dict[tuple[str, str], tuple[str, str | None]]:
    """(student, part) -> (homework, fingerprint) for every part of the run's results."""
    results = json.loads(Path(room.out / "results.json").read_text(encoding="utf-8"))
    found: dict[tuple[str, str], tuple[str, str | None]] = {}
    for result in results:
        if result.get("error") or not result.get("homework"):
            continue
        for part in result.get("parts", ()):
            answer = staff.answer_of(result["homework"], result["student"], part, None, True)
            found[(result["student"], str(part["id"]))] = (result["homework"], answer.fp if answer else None)
    return found
