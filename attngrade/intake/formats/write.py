"""Write a homework as a student document: statements, symbols, expected files, answer slots.

`grade assign` writes these with every slot empty (a template); the same writers with
answers filled in turn a YAML submission into the other carriers, which is how the
tests show that every carrier grades the same. Keys and reference answers never
reach a template: the writers see only the homework and the answers they are given.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

import yaml

from ...records import Field, Homework, Part
from . import notebook_code
from .markdown import PLACEHOLDER_ID, is_placeholder_id

FORMAT_NAMES = ("yaml", "md", "ipynb", "tex")

STYLE = r"""% attngrade.sty: the answer commands of attngrade templates, so the document compiles.
% attngrade reads the .tex source itself (never the PDF); these only typeset the answers.
\NeedsTeXFormat{LaTeX2e}
\ProvidesPackage{attngrade}[2026/11/23 attngrade answer commands]
% Statements are the bank's own math: \mathbb, \operatorname, \text and bold symbols need these.
\RequirePackage{amsmath,amssymb}
\RequirePackage{verbatim}
\newcommand{\attnhomework}[1]{\gdef\attn@homework{#1}}% the preamble only records it
\newcommand{\answer}[3][]{\par\noindent\textbf{Answer \detokenize{#2}\if\relax\detokenize{#1}\relax\else, \detokenize{#1}\fi}:\quad \(#3\)\par}
\newenvironment{answertext}[2][]{\par\noindent\textbf{Answer \detokenize{#2}, \detokenize{#1}:}\par\verbatim}{\endverbatim}
\endinput
"""


def _say(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "" if value is None else str(value)


def _fields_of(part: Part, answer: Any) -> dict[str, Any] | str | None:
    """The answer as {field: value}; a plain value of a multi-field part stays as it is."""
    if answer is None:
        return None
    if isinstance(answer, dict):
        return {str(k): v for k, v in answer.items()}
    if part.single_field:
        return {part.fields[0].name: answer}
    return _say(answer)


def _symbols(part: Part) -> str:
    names = part.table.names()
    free = " and one constant of your own (such as C)" if part.table.free_scalar else ""
    return f"Symbols: {', '.join(names)}{free}." if names else ("You may use one constant of your own." if free else "")


def _points(part: Part) -> str:
    return f"{part.points:g} point{'' if part.points == 1 else 's'}"


def _files(part: Part) -> list[Field]:
    return [f for f in part.fields if f.kind == "file"]


def _describe(part: Part) -> list[str]:
    lines = [part.statement.strip()] if part.statement.strip() else []
    if _symbols(part):
        lines.append(_symbols(part))
    for f in _files(part):
        lines.append(f"Hand in the file `{f.filename}` next to this document (it is read from there).")
    kinds = [f"{f.name} ({field_kind(f)})" for f in part.fields if f.kind != "file"]
    if kinds:
        lines.append("Fields: " + ", ".join(kinds) + ".")
    return lines


def field_kind(f: Field) -> str:
    """What a field takes, as a student reads it: a choice field names its options."""
    if f.kind == "choice" and f.options:
        return "one of " + ", ".join(f.options)
    if f.kind == "bool":
        return "yes or no"
    return f.expect or f.kind


# -- Markdown ------------------------------------------------------------------------------------
def _answer_block(part: Part, answer: Any, *, hashes: str = "###", files: bool = False) -> str:
    """`files`: file fields get a line too (a notebook-code part names its notebook there)."""
    lines = [f"{hashes} Answer {part.id}", ""]
    fields = _fields_of(part, answer)
    if isinstance(fields, str):
        lines.append(fields)
    else:
        for f in part.fields:
            if f.kind == "file" and not files:
                continue
            value = _say((fields or {}).get(f.name))
            first, *rest = value.split("\n") if value else [""]
            lines.append(f"{f.name}: {first}".rstrip())
            lines.extend(rest)
    return "\n".join(lines).rstrip() + "\n"


def markdown(homework: Homework, answers: Mapping[str, Any] | None = None, student: str = PLACEHOLDER_ID) -> str:
    answers = answers or {}
    out = ["---", f"homework: {homework.id}", f"student: {_student_line(student)}", "---", "",
           f"# {homework.course}: {homework.title}".strip(": "), "",
           "Write each answer under its `#### Answer <part>` heading: `field: value`, one per line "
           "(a text answer may go on over several lines). Math may be wrapped in `$...$`.", ""]
    for problem in homework.problems:
        out += [f"## {problem.title or problem.id}", ""]
        if problem.intro.strip():
            out += [problem.intro.strip(), ""]
        for part in problem.parts:
            # The statement under a heading of its own, so an answer block ends where the next part starts.
            out += [f"### {part.id} ({_points(part)})", "", *(line + "\n" for line in _describe(part))]
            if any(f.kind != "file" for f in part.fields):
                out += [_answer_block(part, answers.get(part.id), hashes="####")]
    return "\n".join(out)


# -- notebook -------------------------------------------------------------------------------------
def _student_line(student: str) -> str:
    """The YAML value of `student:`: the placeholder says what to do with it."""
    if is_placeholder_id(student):
        return f"{student}  # your id; left as it is, your file's name is used"
    return json.dumps(student, ensure_ascii=False) if _needs_quotes(student) else student


def _needs_quotes(text: str) -> bool:
    return yaml.safe_load(f"x: {text}") != {"x": text}


def _cell(kind: str, text: str, **metadata: Any) -> dict[str, Any]:
    return {"cell_type": kind, "metadata": metadata, "source": text}


def notebook(homework: Homework, answers: Mapping[str, Any] | None = None, student: str = PLACEHOLDER_ID) -> str:
    answers = answers or {}
    code = ("code cells are read only for the parts that ask for code, from the notebook their answer line names."
            if notebook_code.has_code(homework) else "code cells are not read.")
    cells = [_cell("markdown", f"# {homework.course}: {homework.title}\n\nWrite each answer in the cell under "
                               "its heading `### Answer <part>`: `field: value`, one per line. Keep the heading. "
                               f"An answer may go on in Markdown cells below it, up to the next heading; {code}")]
    for problem in homework.problems:
        cells.append(_cell("markdown", f"## {problem.title or problem.id}\n\n{problem.intro.strip()}".strip()))
        for part in problem.parts:
            cells += _part_cells(homework, part, answers.get(part.id))
    data = {"nbformat": 4, "nbformat_minor": 5, "cells": cells,
            "metadata": {"attngrade": {"homework": homework.id, "student": student},
                         "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}
    for number, cell in enumerate(data["cells"]):
        cell["id"] = f"cell-{number}"
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def _part_cells(homework: Homework, part: Part, answer: Any) -> list[dict[str, Any]]:
    """A part's statement cell (a heading of its own, so the answer cell before it ends there), the
    stubs of a notebook-code part, and its answer cell."""
    code = notebook_code.definitions(part)
    lines = _describe(part)
    if code:
        field = notebook_code.notebook_field(part)
        filename = part.field(field).filename or ""
        lines = [notebook_code.describe(part, homework, filename) if line.startswith(f"Hand in the file `{filename}`")
                 else line for line in lines]
    cells = [_cell("markdown", f"### {part.id} ({_points(part)})\n\n" + "\n\n".join(lines),
                   attngrade={"statement": part.id})]
    if code:
        cells += notebook_code.stub_cells(part)
        fields = _fields_of(part, answer)
        answer = {field: "", **(fields if isinstance(fields, dict) else {})}
    if code or any(f.kind != "file" for f in part.fields):
        cells.append(_cell("markdown", _answer_block(part, answer, files=bool(code)), tags=["attngrade-answer"],
                           attngrade={"part": part.id}))
    return cells


# -- LaTeX ------------------------------------------------------------------------------------------
_TEXT_ESCAPES = str.maketrans({"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                               "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                               "^": r"\textasciicircum{}"})


def _prose(text: str) -> str:
    return text.translate(_TEXT_ESCAPES)


_INLINE_MATH = re.compile(r"(?<!\\)(\$[^$]+(?<!\\)\$)")


def _statement(text: str) -> str:
    """A statement for LaTeX: its $...$ math kept as math (it is the bank's own), the rest escaped."""
    return "".join(piece if _INLINE_MATH.fullmatch(piece) else _prose(piece) for piece in _INLINE_MATH.split(text))


def latex(homework: Homework, answers: Mapping[str, Any] | None = None, student: str = PLACEHOLDER_ID) -> str:
    answers = answers or {}
    author = "" if is_placeholder_id(student) else _prose(student)  # LaTeX's id is the file's name
    out = [r"\documentclass{article}", r"\usepackage{attngrade}", f"\\attnhomework{{{homework.id}}}",
           f"\\title{{{_prose(homework.course)}: {_prose(homework.title)}}}", f"\\author{{{author}}}",
           r"\begin{document}", r"\maketitle", ""]
    for problem in homework.problems:
        out += [f"\\section*{{{_prose(problem.title or problem.id)}}}", _statement(problem.intro.strip()), ""]
        for part in problem.parts:
            out += [f"\\subsection*{{{_prose(part.id)} ({_points(part)})}}",
                    *(_statement(line) + "\n" for line in _describe(part))]
            fields = _fields_of(part, answers.get(part.id))
            for f in part.fields:
                if f.kind == "file":
                    continue
                value = "" if isinstance(fields, str) else _say((fields or {}).get(f.name))
                if isinstance(fields, str) and f is part.fields[0]:
                    value = fields
                option = "" if part.single_field else f"[{f.name}]"
                if f.kind == "text":
                    out += [f"\\begin{{answertext}}[{f.name}]{{{part.id}}}", value, r"\end{answertext}"]
                else:
                    out.append(f"\\answer{option}{{{part.id}}}{{{value.replace('%', chr(92) + '%')}}}")
            out.append("")
    out += [r"\end{document}", ""]
    return "\n".join(out)


# -- YAML -------------------------------------------------------------------------------------------
def yaml_answers(homework: Homework, answers: Mapping[str, Any] | None = None, student: str = PLACEHOLDER_ID) -> str:

    answers = answers or {}
    lines = [f"# {homework.course}: {homework.title}", f"homework: {homework.id}",
             f"student: {_student_line(student)}", "answers:"]
    for part in homework.parts:
        lines += [f"  # {line}" for text in _describe(part) for line in text.splitlines()]
        fields = _fields_of(part, answers.get(part.id))
        block: Any = fields if isinstance(fields, str) else {
            f.name: (fields or {}).get(f.name) for f in part.fields if f.kind != "file"}
        if not block:
            continue
        dumped = yaml.safe_dump({part.id: block}, allow_unicode=True, sort_keys=False, width=1000)
        lines += ["  " + line for line in dumped.rstrip("\n").splitlines()]
    return "\n".join(lines) + "\n"


WRITERS = {"yaml": (yaml_answers, ".yaml"), "md": (markdown, ".md"), "ipynb": (notebook, ".ipynb"),
           "tex": (latex, ".tex")}
