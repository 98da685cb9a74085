"""Submissions as students write them: YAML, Jupyter notebooks, Markdown and LaTeX.

Every carrier becomes the same Submission (`{part: {field: text}}`), so nothing after
loading knows which one a student used. Nothing is ever executed: notebooks are read as
JSON (nbformat converts older versions), LaTeX is parsed by pylatexenc, Markdown is
scanned line by line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ...errors import ConfigError, SubmissionError
from ...records import Homework, Submission
from .latex import MAX_LATEX_BYTES, read_latex
from .markdown import PLACEHOLDER_ID, is_placeholder_id, placeholder_note, read_markdown
from .notebook import read_notebook

__all__ = ["FORMATS", "MAX_BYTES", "OWN_HOMEWORK", "PLACEHOLDER_ID", "READ", "WITH_HOMEWORK", "is_answers_format",
           "is_placeholder_id", "placeholder_note", "read_carrier"]

FORMATS = {".yaml": "YAML", ".yml": "YAML", ".ipynb": "notebook", ".md": "Markdown", ".tex": "LaTeX"}
READ = ", ".join(dict.fromkeys(FORMATS))
# A LaTeX file is parsed whole, and pylatexenc's time grows faster than the file: its bound is
# ten times a long write-up, not the Markdown one.
MAX_BYTES = {".ipynb": 100_000_000, ".md": 2_000_000, ".tex": MAX_LATEX_BYTES}


# How a student names the homework when the file does not, or names a course's own homework
# that is not bundled with attngrade (said wherever a homework cannot be found).
WITH_HOMEWORK = ("`--homework ID` (a bundled homework, see `grade problems`) or `--homework DIR` (the homework "
                 "folder your course handed out, with homework.yaml in it)")
OWN_HOMEWORK = ("if it is a course's own homework, name its folder (the one with homework.yaml that the course "
                "handed out) with --homework DIR")


def is_answers_format(path: Path) -> bool:
    return path.suffix.lower() in FORMATS


def read_carrier(path: Path, text: str, *, homework: str | None, bank: Any,
                 parse_yaml: Callable[[str, str], Any]) -> Submission:
    """A notebook, Markdown or LaTeX submission; `homework` is the id to use when the file names none."""
    suffix = path.suffix.lower()

    def homework_for(found: str | None) -> Homework:
        wanted = found or homework
        if not wanted:
            how = {".ipynb": "notebook metadata 'attngrade.homework' (the template from `grade assign` has it)",
                   ".md": "front matter at the top ('---', 'homework: <id>', '---')",
                   ".tex": "\\attnhomework{<id>} in the preamble"}[suffix]
            raise SubmissionError(f"the file does not say which homework it answers; add {how}, or name it on "
                                  f"the command line: {WITH_HOMEWORK}", path=str(path))
        try:
            return bank.load_homework(wanted)
        except ConfigError as err:
            if wanted in bank.homework_ids():
                raise
            raise SubmissionError(f"{err}; {OWN_HOMEWORK}", path=str(path)) from None

    if suffix == ".ipynb":
        return read_notebook(path, text, homework_for, parse_yaml)
    if suffix == ".md":
        return read_markdown(path, text, homework_for, parse_yaml)

    return read_latex(path, text, homework_for)
