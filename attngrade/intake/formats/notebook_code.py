"""Parts whose answer is code in a notebook, in the student's notebook template.

A part checked by `notebook_code` names the functions its notebook must define. `grade assign
--format ipynb` writes, under the part's statement, a code cell of imports and one per definition:
a stub with the definition's signature that raises NotImplementedError (tagged `attngrade-code`,
a hint only), and an answer cell whose `notebook:` line the student fills with the notebook the
part reads: this template (`<id>.ipynb`, the name `grade assign` gives it, or the name it was
saved under), or the course's own notebook handed in next to it (found by its name when the line
is left empty). An unfilled template stays an unanswered part. Where no file the line names is
beside it, the answer that names the template by the name `grade assign` gave it names the notebook
itself, whatever it was saved under (an LMS renames files); so does an empty line in a notebook whose
code cells define one of the part's functions other than as its stub. Both are said in the notes,
and decided by the plan, which knows the submission's folder (`own_notebook`).

The code cells are read by the check, never here: the notebook reader reads Markdown cells only
(`notebook.py`), and `attngrade.checkers.notebook_cells` reads code cells, without a kernel.
"""

from __future__ import annotations

from typing import Any, Callable

from ...records import Homework, Part

CODE_TAG = "attngrade-code"


def definitions(part: Part) -> dict[str, tuple[str | None, str]]:
    """The definitions a part's notebook must hold (name -> (contract, signature)); {} for other parts."""
    found: dict[str, tuple[str | None, str]] = {}
    for spec in part.checks:
        if spec.check == "notebook_code" and isinstance(spec.prepared, dict):
            found.update(spec.prepared["definitions"])
    return found


def notebook_field(part: Part) -> str | None:
    """The file field a notebook-code part reads its notebook from."""
    for spec in part.checks:
        if spec.check == "notebook_code" and isinstance(spec.prepared, dict):
            return spec.prepared["field"]
    return None


def template_name(homework: Homework) -> str:
    """The notebook template's file name, as `grade assign` writes it."""
    return f"{homework.id}.ipynb"


def stub(name: str, contract: str | None, signature: str) -> str:
    """The stub of one definition: its signature, what it returns, and NotImplementedError."""
    from ...checkers.notebook_contracts import CONTRACTS  # (numpy: not for reading a notebook's answers)

    summary = CONTRACTS[contract].summary if contract else "see the part's statement"
    return (f"def {name}{signature}:\n"
            f"    \"\"\"{summary}.\"\"\"\n"
            f"    {_unwritten(name)}\n")


def _unwritten(name: str) -> str:
    """The line a stub raises with, which no written definition keeps."""
    return f"raise NotImplementedError(\"{name}: write it here\")"


IMPORTS = "import math\n\nimport torch\nimport torch.nn.functional as F\n"  # what the contracts' stubs need


def stub_cells(part: Part) -> list[dict[str, Any]]:
    """The code cells of a notebook-code part: its imports, then one stub per definition, in the
    order the part names them."""
    made = [(IMPORTS, None)] + [(stub(name, contract, signature), name)
                                for name, (contract, signature) in definitions(part).items()]
    return [{"cell_type": "code", "execution_count": None, "outputs": [], "source": source,
             "metadata": {"tags": [CODE_TAG], "attngrade": {"part": part.id, **({"definition": name} if name else {})}}}
            for source, name in made]


def written_code(cells: list, homework: Homework) -> dict[str, tuple[str, ...]]:
    """Each notebook-code part whose definitions the notebook's code cells write (other than as the
    template's stubs), with those definitions: a notebook that holds its own code (`own_notebook`)."""
    found = {}
    for part in homework.parts:
        names = definitions(part)
        if notebook_field(part) is not None and names and (written := _written(cells, part, names)):
            found[part.id] = tuple(written)
    return found


def own_notebook(part: Part, raw: Any, name: str, written: tuple[str, ...], homework: Homework,
                 present: Callable[[str], bool]) -> tuple[Any, str | None]:
    """The answer to a notebook-code part of the answers notebook `name`, its `notebook:` line pointed at
    `name` itself where no file it names is there (`present`) and it names the template by the name
    `grade assign` gave it, or is empty while the notebook's code cells write the part's definitions
    (`written`); with the note that says so. Decided where the submission's folder is known (a file
    the line names, or the course's notebook beside it, is read as named)."""
    field = notebook_field(part)
    if field is None or raw is not None and not isinstance(raw, dict):
        return raw, None  # answered as text: reading it says what is wrong
    named = str((raw or {}).get(field) or "").strip()
    if present(named or part.field(field).filename or ""):
        return raw, None
    if named and named == template_name(homework) and named != name:
        return {**(raw or {}), field: name}, (
            f"{part.id}: the `{field}:` line names {named}, the template's name, and no file of that name is beside "
            f"it: this notebook, {name}, is the one read")
    if not named and written:
        return {**(raw or {}), field: name}, (
            f"{part.id}: the `{field}:` line is empty, but this notebook's code cells define {', '.join(written)}: "
            f"they are the code graded for {part.id} (name the notebook on the line to say so, or hand in the "
            "notebook the part asks for)")
    return raw, None


def _written(cells: list, part: Part, names: dict[str, tuple[str | None, str]]) -> list[str]:
    """The part's definitions that a code cell holds other than as the template's stub (a `def NAME(`
    or `class NAME` at a line's start, in a cell without the stub's `raise`), by plain string search."""
    found = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        lines = "\n" + ("".join(x for x in source if isinstance(x, str)) if isinstance(source, list) else str(source))
        found += [n for n in names if n not in found and (f"\ndef {n}(" in lines or f"\nclass {n}" in lines)
                  and _unwritten(n) not in lines]
    return [n for n in names if n in found]


def has_code(homework: Homework) -> bool:
    return any(definitions(part) for part in homework.parts)


def describe(part: Part, homework: Homework, filename: str) -> str:
    """What a notebook template says of a notebook-code part, in place of "hand in the file"."""
    names = ", ".join(f"`{name}`" for name in definitions(part))
    return (f"Write {names} in the code cells below and name this notebook on the answer line "
            f"(`notebook: {template_name(homework)}`, or the name you saved it under), or hand in `{filename}` "
            "next to it instead. The code cells of the notebook named there are read, never run as a notebook: "
            "imports, definitions and constants are loaded; plots, training and shell lines are left out. "
            "Self-check with `grade check` on this notebook, or on the folder holding both.")
