"""Write submissions/<case id>.<format> from cases.yaml: each case is one student's small
submission in its format, laid out as `grade assign HW --format FMT` lays out a template.

Run it after editing cases.yaml (`.venv/bin/python tests/data/reader-corpus/make_files.py`);
tests/test_reader_corpus.py checks that every case's answer text is in its file as written.
A case may carry `preamble` (the student's own macros: LaTeX preamble lines, or a `$...$`
line in Markdown and notebooks) and `style` (md: `bold`, `dash` or `bare` field lines;
ipynb: `split`, the answer in a cell of its own under the heading).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
EXTENSIONS = {"yaml": "yaml", "md": "md", "ipynb": "ipynb", "tex": "tex"}
PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._()-]*")


def main() -> int:
    cases = yaml.safe_load((HERE / "cases.yaml").read_text(encoding="utf-8"))
    out = HERE / "submissions"
    out.mkdir(exist_ok=True)
    wanted = set()
    for case in cases:
        path = out / f"{case['id']}.{EXTENSIONS[case['format']]}"
        wanted.add(path.name)
        path.write_text(WRITERS[case["format"]](case), encoding="utf-8")
    for stale in out.iterdir():
        if stale.name not in wanted:
            stale.unlink()
    print(f"wrote {len(cases)} submissions to {out}")
    return 0


def _yaml_scalar(text: str, indent: str) -> str:
    if "\n" in text:
        body = "\n".join(indent + "  " + line for line in text.splitlines())
        return "|-\n" + body
    if PLAIN.fullmatch(text) and ": " not in text and " #" not in text:
        return text
    return "'" + text.replace("'", "''") + "'"


def write_yaml(case: dict) -> str:
    lines = [f"homework: {case['homework']}", "answers:"]
    answer = case["answer"]
    if len(answer) == 1 and case.get("style") == "bare":
        (text,) = answer.values()
        lines.append(f"  {case['part']}: {_yaml_scalar(text, '  ')}")
    else:
        lines.append(f"  {case['part']}:")
        for name, text in answer.items():
            lines.append(f"    {name}: {_yaml_scalar(text, '    ')}")
    return "\n".join(lines) + "\n"


def _field_lines(case: dict) -> list[str]:
    style = case.get("style", "")
    answer = case["answer"]
    if style == "bare" and len(answer) == 1:
        return list(next(iter(answer.values())).splitlines())
    lead = {"bold": "**{}**: ", "dash": "- {}: "}.get(style, "{}: ")
    lines = []
    for name, text in answer.items():
        first, *rest = text.splitlines()
        lines.append(lead.format(name) + first)
        lines.extend(rest)
    return lines


def write_md(case: dict) -> str:
    lines = ["---", f"homework: {case['homework']}", "---", ""]
    for macro in case.get("preamble", []):
        lines += [f"${macro}$", ""]
    lines += [f"## Answer {case['part']}", ""]
    lines += _field_lines(case)
    return "\n".join(lines) + "\n"


def _cell(text: str) -> dict:
    source = text.splitlines(keepends=True)
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def write_ipynb(case: dict) -> str:
    cells = [_cell(f"# {case['homework']}")]
    if case.get("preamble"):
        cells.append(_cell("\n".join(f"${macro}$" for macro in case["preamble"])))
    heading = f"### Answer {case['part']}"
    body = "\n".join(_field_lines(case))
    if case.get("style") == "split":
        cells += [_cell(heading), _cell(body)]
    else:
        cells.append(_cell(f"{heading}\n\n{body}"))
    notebook = {"cells": cells, "metadata": {"attngrade": {"homework": case["homework"]},
                                             "kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    for number, cell in enumerate(notebook["cells"]):
        cell["id"] = f"cell-{number}"
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def write_tex(case: dict) -> str:
    lines = ["\\documentclass{article}", "\\usepackage{attngrade}", *case.get("preamble", []),
             f"\\attnhomework{{{case['homework']}}}", "\\begin{document}", ""]
    single = _single_field(case["homework"], case["part"])
    for name, text in case["answer"].items():
        field = "" if single else f"[{name}]"  # as the template writes a one-field part
        lines.append(f"\\answer{field}{{{case['part']}}}{{{text}}}")
    lines += ["", "\\end{document}"]
    return "\n".join(lines) + "\n"


def _single_field(homework: str, part: str) -> bool:
    from attngrade.problems import load_homework

    return next(p for p in load_homework(homework).parts if p.id == part).single_field


WRITERS = {"yaml": write_yaml, "md": write_md, "ipynb": write_ipynb, "tex": write_tex}

if __name__ == "__main__":
    sys.exit(main())
