"""The autograder's self-check: the reference canary, run once when Gradescope builds the image.

setup.sh calls `grade gradescope --prove`, which grades the reference solution's code (packed in
the zip beside the keys) through the same sandbox and checks a submission gets. It prints what
this container can and cannot grade; a check it cannot prove is graded as pending for course
staff at every submission (the same canary runs again there), never charged to a student.
"""

from __future__ import annotations

from pathlib import Path

from ..grading import assignment
from ..grading.canary import prove_homework
from ..problems import BUNDLED, HomeworkFolder
from ..problems.keys import load_keys
from .manifest import read_manifest


def prove_autograder(root: Path) -> int:
    """Run the canary on ROOT/source's homework; print its findings. 0 when every code check is proven."""
    source = root / "source"
    manifest = read_manifest(source)
    bank = HomeworkFolder(source / manifest.homework_folder) if manifest.homework_folder else BUNDLED
    homework = bank.load_homework(manifest.homework)
    solutions = source / manifest.solutions
    given = assignment(homework, load_keys(solutions, homework), solutions=solutions)
    proof = prove_homework(given, bank=bank)
    for note in proof.notes:
        print(f"attngrade self-check: {note}")
    if proof.layers:
        active = "; ".join(str(a) for a in proof.layers.get("active") or [])
        missing = "; ".join(f"{name} ({why})" for name, why in (proof.layers.get("missing") or {}).items())
        print(f"attngrade self-check: a job here runs with: {active}")
        if missing:
            print(f"attngrade self-check: not available here: {missing}")
    if not proof.unproven:
        print(f"attngrade self-check: this container grades {homework.id}'s code parts (the reference earns full "
              "marks on each)" if given.reference is not None else "attngrade self-check: nothing to prove")
    return 0 if not proof.unproven else 1
