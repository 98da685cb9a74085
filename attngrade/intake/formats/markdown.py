"""Markdown write-ups: `## Answer <part>` headings, YAML front matter, attngrade fences.

The same reader serves a notebook's Markdown cells. Nothing is rendered or run: the
text is split into lines and scanned.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from ...errors import SubmissionError
from ...mathlang.macros import find_definitions
from ...records import Homework, Submission
from .answers import ANY_HEADING, FENCE, HEADING, Collected, block_answer

MAX_MARKDOWN_BYTES = 2_000_000
# The student id `grade assign` writes into a template: a slot to fill, never anyone's id.
PLACEHOLDER_ID = "<your-id>"
# What a template's id slot has said, or a student may leave there: read as no id at all.
_PLACEHOLDERS = {"your-id", "yourid", "your-name", "student-id", "your-student-id", "id", "name", "student"}


@dataclass(frozen=True)
class Block:
    """One answer block: under an `Answer <part>` heading, or a fenced attngrade YAML block."""

    kind: str  # "heading" or "yaml"
    text: str
    line: int  # 1-based line of the heading or the fence in its text
    column: int = 1
    part: str = ""
    open: bool = False  # a heading block that runs to the end of its text (a notebook's next cells go on)


def without_comments(text: str) -> str:
    """`text` with each HTML comment (`<!-- ... -->`) blanked out, its line breaks kept for
    numbering; a `<!--` never closed is left as text (no answer after it vanishes unsaid).
    A scan, not a regular expression: a lazy `<!--.*?-->` tries every unclosed `<!--` to the
    end, quadratic on a hostile file."""
    pieces, start = [], 0
    while (opening := text.find("<!--", start)) != -1 and (closing := text.find("-->", opening + 4)) != -1:
        pieces += [text[start:opening], "\n" * text.count("\n", opening, closing + 3)]
        start = closing + 3
    return "".join(pieces) + text[start:]


def blocks(text: str) -> Iterator[Block]:
    """Answer blocks in Markdown text, in order. Other fenced code is skipped whole, and
    HTML comments (`<!-- ... -->`) are blanked out, keeping line numbers."""
    text = without_comments(text)
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence or line.lstrip().startswith(("```", "~~~")):
            marker = (fence.group(1) if fence else line.lstrip()[:3])[:3]
            end = next((j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith(marker)), len(lines))
            if fence:
                yield Block("yaml", "\n".join(lines[i + 1:end]), i + 1)
            i = end + 1
            continue
        heading = HEADING.match(line)
        if heading is None:
            i += 1
            continue
        level = len(heading.group(1))
        end = i + 1
        while end < len(lines):
            if lines[end].lstrip().startswith(("```", "~~~")) and not FENCE.match(lines[end]):
                marker = lines[end].lstrip()[:3]  # code inside the answer: its `# comments` are no headings
                end = next((j for j in range(end + 1, len(lines)) if lines[j].lstrip().startswith(marker)),
                           len(lines) - 1) + 1
                continue
            other = ANY_HEADING.match(lines[end])
            if other and len(other.group(1)) <= level or HEADING.match(lines[end]) or FENCE.match(lines[end]):
                break  # the next answer (at any level), a heading as high as this one, or a fence
            end += 1
        yield Block("heading", "\n".join(lines[i + 1:end]), i + 1, line.index("#") + 1, heading.group(2),
                    open=end >= len(lines))
        i = end


def collect(text: str, collected: Collected, where: Callable[[Block], str], parse_yaml: Callable[[str, str], Any]) -> None:
    """Add every answer block of `text` to `collected`; `where` names a block's place."""
    for block in blocks(text):
        add_block(block, where(block), collected, parse_yaml)


def add_block(block: Block, place: str, collected: Collected, parse_yaml: Callable[[str, str], Any]) -> None:
    """One answer block's answers, added to `collected` (`place`: where the block is)."""
    if block.kind == "yaml":
        data = parse_yaml(block.text, place)
        answers = data.get("answers", data) if isinstance(data, dict) else None
        if not isinstance(answers, dict):
            raise SubmissionError(f"{place}: an attngrade block holds YAML answers: a mapping from part id "
                                  "to answer, or 'answers:' with that mapping")
        for pid, answer in answers.items():
            if str(pid) not in ("homework", "student"):
                collected.add(str(pid), answer, place)
        return
    part = collected.homework.part(block.part)
    collected.add(block.part, block_answer(part, block.text, collected.notes, place) if part else None, place)


def has_heading(text: str) -> bool:
    """Whether Markdown `text` holds a heading or an attngrade fence outside its code blocks
    (a `# comment` in fenced code is no heading)."""
    marker = None
    for line in without_comments(text).splitlines():
        stripped = line.lstrip()
        if marker is not None:
            marker = None if stripped.startswith(marker) else marker
            continue
        if FENCE.match(line) or ANY_HEADING.match(line):
            return True
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
    return False


def front_matter(text: str, parse_yaml: Callable[[str, str], Any]) -> tuple[dict, str]:
    """YAML between `---` lines at the very top, and the text after it (lines kept, for numbering)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return {}, text
    data = parse_yaml("\n".join(lines[1:end]), "front matter")
    rest = "\n" * (end + 1) + "\n".join(lines[end + 1:])  # blank lines keep line numbers
    return (data if isinstance(data, dict) else {}), rest


def read_markdown(path: Path, text: str, homework_for: Callable[[str | None], Homework],
                  parse_yaml: Callable[[str, str], Any]) -> Submission:
    meta, body = front_matter(text, parse_yaml)
    homework = homework_for(_text(meta.get("homework")))
    collected = Collected(homework)
    collect(body, collected, lambda b: f"line {b.line}, column {b.column}", parse_yaml)
    return _submission(path, meta, homework, collected, find_definitions(without_comments(body)))


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _submission(path: Path, meta: dict, homework: Homework, collected: Collected,
                definitions: tuple = ()) -> Submission:
    """The Submission of a Markdown or notebook file; `definitions`: the macros its math defines.

    A file that a part of the homework names (the notebook whose code a part grades) is a
    submission by itself even without answers: that part reads it (that file, nothing beside it)."""
    named_by = [p.id for p in homework.parts for f in p.fields if f.kind == "file" and f.filename == path.name]
    if not collected.blocks and named_by:
        collected.notes.append(f"no answers were found in {path.name}; it is graded as the file part "
                               f"{named_by[0]} reads (answer the other parts under '## Answer <part id>' headings)")
    elif not collected.blocks:
        raise SubmissionError("no answers were found: an answer is a heading '## Answer <part id>' (for example "
                              f"'## Answer {homework.parts[0].id}') followed by the answer, or a fenced "
                              "```attngrade block of YAML answers", path=str(path))
    claimed = _text(meta.get("student"))
    if claimed is not None and is_placeholder_id(claimed):
        collected.notes.append(placeholder_note(claimed))
        claimed = None
    return Submission(student=claimed or path.stem, homework=homework.id, answers=collected.answers, path=path,
                      notes=tuple(collected.notes), invalid=dict(collected.invalid), definitions=definitions)


def is_placeholder_id(value: str) -> bool:
    """Whether a student id is a template's slot left as it was (`<your-id>`, `your-id`)."""
    return "-".join(value.strip().strip("<>[]{}").replace("_", " ").lower().split()) in _PLACEHOLDERS


def placeholder_note(claimed: str) -> str:
    """Why a submission is listed under its file or folder name rather than the id it says."""
    return (f"the student id '{claimed}' is the template's placeholder, so this submission is listed under "
            "its file (or folder) name; write your own id there, or leave the line out")
