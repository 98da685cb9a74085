"""`grade check`: a student's self-check of one submission, with no keys anywhere.

Property-checked parts get their real verdict; key-checked parts only say how the
answer was read. Nothing here opens `solutions/`.
"""

from __future__ import annotations

from pathlib import Path

from .errors import ConfigError, SubmissionError
from .grading import InProcess, assignment, grade_submission
from .problems import BUNDLED, Bank
from .records import Result
from .submissions import load_submission


def check(path: Path, budget: float = 2.0, homework: str | None = None, bank: Bank = BUNDLED) -> Result:
    """Self-check one submission file or folder (`homework`: the id when the file names none;
    `bank`: where the homework is, e.g. the instructor's homework folder a course hands out)."""
    submission = load_submission(path, homework=homework, bank=bank)
    try:
        homework = bank.load_homework(submission.homework)
    except ConfigError as err:
        raise SubmissionError(str(err), path=str(submission.path)) from None
    return grade_submission(assignment(homework, None, self_check=True), submission, InProcess(budget))
