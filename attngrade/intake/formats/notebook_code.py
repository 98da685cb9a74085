"""Parts whose answer is code in a notebook, in the student's notebook template.

A part checked by `notebook_code` names the functions its notebook must define. `grade assign
--format ipynb` writes, under the part's statement, a code cell of imports and one per definition:
a stub with the definition's signature that raises NotImplementedError (tagged `attngrade-code`,
a hint only), and an answer cell whose `notebook:` line the student fills with the notebook the
part reads: this template (`<id>.ipynb`, the name `grade assign` gives it, or the name it was
saved under), or the course's own notebook handed in next to it (found by its name when the line
is left empty). An unfilled template stays an unanswered part.

The code cells are read by the check, never here: the notebook reader reads Markdown cells only
(`notebook.py`), and `attngrade.checkers.notebook_cells` reads code cells, without a kernel.
"""

from __future__ import annotations

from typing import Any

from ...checkers.notebook_contracts import CONTRACTS
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
    summary = CONTRACTS[contract].summary if contract else "see the part's statement"
    return (f"def {name}{signature}:\n"
            f"    \"\"\"{summary}.\"\"\"\n"
            f"    raise NotImplementedError(\"{name}: write it here\")\n")


IMPORTS = "import math\n\nimport torch\nimport torch.nn.functional as F\n"  # what the contracts' stubs need


def stub_cells(part: Part) -> list[dict[str, Any]]:
    """The code cells of a notebook-code part: its imports, then one stub per definition, in the
    order the part names them."""
    made = [(IMPORTS, None)] + [(stub(name, contract, signature), name)
                                for name, (contract, signature) in definitions(part).items()]
    return [{"cell_type": "code", "execution_count": None, "outputs": [], "source": source,
             "metadata": {"tags": [CODE_TAG], "attngrade": {"part": part.id, **({"definition": name} if name else {})}}}
            for source, name in made]


def has_code(homework: Homework) -> bool:
    return any(definitions(part) for part in homework.parts)


def describe(part: Part, homework: Homework, filename: str) -> str:
    """What a notebook template says of a notebook-code part, in place of "hand in the file"."""
    names = ", ".join(f"`{name}`" for name in definitions(part))
    return (f"Write {names} in the code cells below and name this notebook on the answer line "
            f"(`notebook: {template_name(homework)}`, or the name you saved it under), or hand in `{filename}` "
            "next to it instead. The code cells of the notebook named there are read, never run as a notebook: "
            "imports, definitions and constants are loaded; plots, training and shell lines are left out. "
            "Self-check with `grade check FOLDER`, the folder holding the notebook.")
