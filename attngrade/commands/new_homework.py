"""`grade new-homework ID -o DIR`: start a homework folder of one's own from a bundled homework.

Besides the homework and problem files (`problems.scaffold`), the folder gets a keys file
that documents itself (what each key-checked field takes, with an example; `explain:` and
`rubrics:`), holding the bundled keys where they are at hand (a checkout's `solutions/`),
and `handout/<id>/`: the homework without its keys, for students' self-checks.
"""

from __future__ import annotations

import argparse
import textwrap

from ..checkers import REGISTRY
from ..errors import EXIT_OK
from ..intake.formats.write import field_kind
from ..problems import HomeworkFolder
from ..problems.keys import keys_path
from ..problems.scaffold import scaffold
from ..records import Homework, Part
from ..runtime.files import write_atomic
from ..runtime.text import printable
from .assign import keyless_copy

HEADER = """\
# The keys of {id}: what the parts checked against a key are compared with.
# Never give this file to students: `grade autograder` puts it in the zip, never in the wheel.
#
# homework: the homework's id, as in homework.yaml (rename both together).
# keys:     part id -> field -> the key, written as a student would write the answer (LaTeX or
#           ASCII, in the part's symbols; quote LaTeX that starts with a backslash). A part with
#           one field may take the value directly:  2c: O(n^2 d)
# explain:  (optional) part id -> field -> a sentence a student whose answer is wrong reads
#           beside the verdict (choice, bigO and equivalent checks).
# rubrics:  (optional) part id -> what course staff look for in a written answer; in the reports
#           for staff (students see it only with `grade run --rubric-to-students`).
#
# `grade validate {folder} --show-keys` prints every key as it was read, and grades each key
# with its own check: a key that does not earn full marks is an error.
"""


def main(args: argparse.Namespace) -> int:
    written = scaffold(args.homework, args.out, args.solutions)
    folder = HomeworkFolder(args.out)
    homework = folder.load_homework(folder.id)
    bundled = keys_path(args.solutions, args.homework)
    keys = bundled.read_text(encoding="utf-8") if bundled.is_file() else None
    write_atomic(args.out / "keys.yaml", keys_document(homework, keys, str(args.out)))
    copy = keyless_copy(folder, args.out / "handout" / homework.id)
    written.append(f"{copy.relative_to(args.out).as_posix()}/")
    print(printable(f"wrote {args.out}: " + ", ".join(written)))
    if keys is None:
        print(printable(f"no keys for {args.homework} under {args.solutions}: keys.yaml says, part by part, what "
                        "to write; until then `grade validate` names the keys still missing"))
    print(printable(f"edit it, then: grade validate {args.out} --show-keys; grade assign {args.out} -o "
                    f"{args.out / 'handout'}; grade run SUBMISSIONS -o OUT --homework {args.out}"))
    return EXIT_OK


def keys_document(homework: Homework, keys: str | None, folder: str) -> str:
    """The keys file: the header, then the keys given (a bundled homework's), or, part by part,
    commented examples of what each key-checked field takes."""
    head = HEADER.format(id=homework.id, folder=folder)
    if keys is not None:
        return head + "\n" + keys
    lines = [head.rstrip("\n"), f"homework: {homework.id}", "keys:"]
    for part in homework.parts:
        lines += _part_example(part)
    lines += ["", "# explain:", "#   <part>:", "#     <field>: \"why the key is right, for a student who missed it\""]
    written = [p.id for p in homework.parts if any(c.check == "manual" for c in p.checks)]
    if written:
        lines += ["", "# rubrics:"] + [f"#   {pid}: \"what course staff look for\"" for pid in written]
    return "\n".join(lines) + "\n"


def _part_example(part: Part) -> list[str]:
    keyed = [(spec.check, name) for spec in part.checks if REGISTRY[spec.check].needs_key for name in spec.fields]
    if not keyed:
        return []
    statement = textwrap.shorten(" ".join(part.statement.split()), 100, placeholder=" ...")
    points = f"{part.points:g} point{'' if part.points == 1 else 's'}"
    lines = ["", f"  # {part.id} ({points}): {statement}", f"  # {part.id}:"]
    for check, name in keyed:
        example, what = _example(part, check, name)
        lines.append(f"  #   {name}: {example}".ljust(40) + f"# {check}: {what}")
    return lines


def _example(part: Part, check: str, name: str) -> tuple[str, str]:
    """An example key of `check` for field `name`, and what the field takes."""
    f = part.field(name)
    symbols = ", ".join(part.table_for(name).names()) or "numbers only"
    if f.kind in ("choice", "bool"):
        first = next(iter(f.options), "yes")
        return first, field_kind(f)
    if check == "bigO":
        return "O(...)", f"an order of growth in {symbols}, such as O(n^2 d)"
    if check == "dimensions":
        return "m \\times d", "a shape, rows \\times columns"
    return "...", f"a {f.expect or 'formula'} in {symbols}"
