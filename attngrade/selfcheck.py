"""`grade check`: a student's self-check of one submission, with no keys anywhere.

Property-checked parts get their real verdict; key-checked parts only say how the
answer was read. Nothing here opens `solutions/`.
"""

from __future__ import annotations

from pathlib import Path

from .errors import ConfigError, SubmissionError
from .grading import InProcess, assignment, grade_submission
from .problems import load_homework
from .records import Result
from .submissions import load_submission


def check(path: Path, budget: float = 2.0, homework: str | None = None) -> Result:
    """Self-check one submission file or folder (`homework`: the id when the file names none)."""
    submission = load_submission(path, homework=homework)
    try:
        homework = load_homework(submission.homework)
    except ConfigError as err:
        raise SubmissionError(str(err), path=str(submission.path)) from None
    return grade_submission(assignment(homework, None, self_check=True), submission, InProcess(budget))
