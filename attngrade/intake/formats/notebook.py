"""Jupyter notebooks (nbformat 4 JSON), read and never run: answers live in Markdown cells.

Outputs, images and code cells are ignored; cell tags and metadata written by
`grade assign` are hints only (editors such as VS Code and Colab drop them). The
homework id comes from the notebook's `attngrade.homework` metadata when present.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from ...errors import SubmissionError
from ...records import Homework, Submission
from .answers import Collected
from .markdown import _submission, _text, collect

MAX_NOTEBOOK_BYTES = 100_000_000
# A notebook's JSON objects and lists: a few thousand in one written by hand, however large its
# images; each costs the reader memory, so a file of millions of empty outputs is refused.
MAX_CONTAINERS = 500_000


def read_notebook(path: Path, text: str, homework_for: Callable[[str | None], Homework],
                  parse_yaml: Callable[[str, str], Any]) -> Submission:
    containers = text.count("{") + text.count("[")  # braces in strings count too: a bound, not a census
    if containers > MAX_CONTAINERS:
        raise SubmissionError(f"the notebook holds over {MAX_CONTAINERS:,} JSON objects and lists (cell outputs?), "
                              "more than attngrade reads; clear the outputs (Kernel, Restart and Clear Output), "
                              "save it and submit it again", path=str(path))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise SubmissionError(f"not a valid notebook: line {err.lineno}, column {err.colno}: {err.msg}; "
                              "open it in Jupyter and save it again", path=str(path)) from None
    except RecursionError:
        raise SubmissionError("not a valid notebook: nested too deeply", path=str(path)) from None
    # Plain JSON, without nbformat's schema validation or its NotebookNode copy: validating is
    # slow on big outputs, a stray output field must not cost a student the answers written in
    # Markdown, and the copy doubled the memory of a notebook of many small outputs.
    notebook = _upgraded(data, text) if isinstance(data, dict) else data
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise SubmissionError("not a notebook that attngrade can read (no list of cells; nbformat 4 is expected)",
                              path=str(path))
    metadata = notebook.get("metadata") or {}
    meta = metadata.get("attngrade") if isinstance(metadata, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    homework = homework_for(_text(meta.get("homework")))
    collected = Collected(homework)
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("markdown", "raw"):
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and not all(isinstance(line, str) for line in source):
            raise SubmissionError(f"cell {number}: its source is not text (a notebook file that was edited by "
                                  "hand?); open it in Jupyter, save it again and submit it again", path=str(path))
        source = "".join(source) if isinstance(source, list) else str(source)
        collect(source, collected, lambda b, n=number: f"cell {n}, line {b.line}", parse_yaml)
    return _submission(path, meta, homework, collected)


def _upgraded(data: dict, text: str) -> dict:
    """Version 4 as it is; an older notebook (version 3 kept its cells in worksheets, and titles
    in heading cells) read again by nbformat, which knows every version's layout."""
    version = data.get("nbformat")
    if not isinstance(version, int) or version >= 4:
        return data
    import nbformat

    try:
        return nbformat.reads(text, as_version=4)
    except Exception:  # noqa: BLE001 - a malformed old notebook: the caller says it cannot be read
        return data
