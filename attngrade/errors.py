"""The exception root of attngrade and the three classes of problem it reports.

A student's unreadable answer, a student's wrong answer and an instructor's broken
configuration are never mixed: only the first and the last are exceptions (a wrong
answer is a Verdict), and each maps to its own CLI exit code.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_SUBMISSION_FAILED = 1
EXIT_USAGE = 2


class AttngradeError(Exception):
    """Root of every error attngrade raises on purpose."""

    exit_code = EXIT_USAGE


class ConfigError(AttngradeError):
    """The homework, keys or command line are wrong: the instructor must act."""

    exit_code = EXIT_USAGE


class SubmissionError(AttngradeError):
    """A whole submission cannot be read (bad YAML, unknown homework, bad folder)."""

    exit_code = EXIT_SUBMISSION_FAILED

    def __init__(self, message: str, *, path: str | None = None):
        super().__init__(message)
        self.path = path

    def __str__(self) -> str:
        message = super().__str__()
        return f"{self.path}: {message}" if self.path else message


class MathError(AttngradeError):
    """An answer could not be read as math; carries the offending character span.

    `render(text)` shows the message with the text and a caret under the span, the way
    PrairieLearn points at a character rather than saying "syntax error".
    """

    exit_code = EXIT_SUBMISSION_FAILED

    def __init__(self, message: str, start: int = 0, end: int | None = None):
        super().__init__(message)
        self.message = message
        self.start = start
        self.end = start + 1 if end is None or end <= start else end

    @property
    def column(self) -> int:
        """1-based column of the first offending character."""
        return self.start + 1

    def render(self, text: str, *, width: int = 72) -> str:
        """The message, the (windowed) text and a caret line under the span."""
        line_start = text.rfind("\n", 0, self.start) + 1
        line_end = text.find("\n", self.start)
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        col = self.start - line_start
        # Long answers are windowed around the error so the caret stays readable.
        lo = max(0, col - width // 2)
        shown = line[lo : lo + width]
        prefix = "..." if lo > 0 else ""
        suffix = "..." if lo + width < len(line) else ""
        span = max(1, min(self.end - self.start, len(shown) - (col - lo)))
        caret = " " * (len(prefix) + col - lo) + "^" * span
        where = f"column {col + 1}"
        if "\n" in text:
            where = f"line {text.count(chr(10), 0, self.start) + 1}, {where}"
        return f"{self.message} ({where})\n    {prefix}{shown}{suffix}\n    {caret}"
