"""Jupyter notebooks (nbformat 4 JSON), read and never run: answers live in Markdown cells.

An answer is every Markdown cell from its `Answer <part>` heading to the next heading: a
student who writes the answer in a new cell below the heading's cell is read. Outputs,
images and code cells are never read; a code cell under an answer heading is said (the
answer typed into it is lost otherwise without a word). Cell tags and metadata written by
`grade assign` are hints only (editors such as VS Code and Colab drop them). The homework
id comes from the notebook's `attngrade.homework` metadata when present.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from ...errors import SubmissionError
from ...mathlang.macros import find_definitions
from ...records import Homework, Submission
from .answers import Collected
from .notebook_code import written_code
from .markdown import Block, _submission, _text, add_block, blocks, has_heading, without_comments

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
    _collect_cells(path, cells, collected, parse_yaml)
    submission = _submission(path, meta, homework, collected, find_definitions(_markdown_text(path, cells)))
    return replace(submission, written=written_code(cells, homework))


def _markdown_text(path: Path, cells: list) -> str:
    """The text of every Markdown cell (where a notebook's `$\\newcommand...$` lines are)."""
    return "\n".join(without_comments(_source(path, cell, number)) for number, cell in enumerate(cells, start=1)
                     if isinstance(cell, dict) and cell.get("cell_type") == "markdown")


def _collect_cells(path: Path, cells: list, collected: Collected, parse_yaml: Callable[[str, str], Any]) -> None:
    """Every answer of the notebook's Markdown cells into `collected`.

    An answer heading whose block runs to the end of its cell goes on in the Markdown cells
    after it (a blank line between cells) until a cell with a heading of its own."""
    open_block: tuple[Block, str, list[str]] | None = None  # the block, its place, the cells after it
    for number, cell in enumerate(cells, start=1):
        kind = cell.get("cell_type") if isinstance(cell, dict) else None
        if kind == "code":
            if open_block is not None and _written(cell.get("source")):
                collected.notes.append(_code_note(number, open_block[0].part))
            continue
        if kind not in ("markdown", "raw"):
            continue
        source = _source(path, cell, number)
        if open_block is not None and not has_heading(source) and not _template_statement(source):
            open_block[2].append(without_comments(source))
            continue
        _close(open_block, collected, parse_yaml)
        open_block = None
        found = list(blocks(source))
        for block in found:
            place = f"cell {number}, line {block.line}"
            if block is found[-1] and block.kind == "heading" and block.open:
                open_block = (block, place, [])
            else:
                add_block(block, place, collected, parse_yaml)
    _close(open_block, collected, parse_yaml)


def _close(open_block: tuple[Block, str, list[str]] | None, collected: Collected,
           parse_yaml: Callable[[str, str], Any]) -> None:
    if open_block is not None:
        block, place, after = open_block
        text = "\n\n".join([block.text, *after]) if after else block.text
        add_block(Block(block.kind, text, block.line, block.column, block.part), place, collected, parse_yaml)


def _source(path: Path, cell: dict, number: int) -> str:
    source = cell.get("source", "")
    if isinstance(source, list) and not all(isinstance(line, str) for line in source):
        raise SubmissionError(f"cell {number}: its source is not text (a notebook file that was edited by "
                              "hand?); open it in Jupyter, save it again and submit it again", path=str(path))
    return "".join(source) if isinstance(source, list) else str(source)


def _written(source: Any) -> bool:
    """Whether a code cell's source holds anything but blanks (a cell left empty is no answer lost)."""
    pieces = source if isinstance(source, list) else [source]
    return any(isinstance(piece, str) and piece.strip() for piece in pieces)


def _code_note(number: int, part: str) -> str:
    return (f"cell {number}: a code cell under the heading 'Answer {part}' is not read (answers are read from "
            "Markdown cells only); if your answer is in it, change the cell to Markdown (in Jupyter: Esc, then "
            "M) and submit again")


# The statement cell of a part in templates that wrote it in bold, not as a heading: the
# answer cell before it ends there.
_OLD_STATEMENT = re.compile(r"^\*\*[^*\n]+\*\* \([\d.]+ points?\)")


def _template_statement(source: str) -> bool:
    return _OLD_STATEMENT.match(source.lstrip()) is not None


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
