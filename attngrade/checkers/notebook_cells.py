"""The code of a Jupyter notebook as a module to load in the sandbox: read, classified, never run.

A notebook is read as JSON (nbformat converts a version older than 4), never by a kernel. Its
code cells are taken in notebook order, top to bottom, as a restart-and-run-all would, and
each top-level statement is kept or left out by one rule:

* shell (`!pip ...`) and magic (`%matplotlib ...`) lines are blanked (line numbers stay; an
  indented one becomes `pass`, so that its `if` block stays one); a cell whose first line is a cell
  magic is left out whole (`%%bash`, `%%writefile`, `%%timeit`), except `%%time` and `%%capture`,
  whose cell is Python and defines what it defines; an IPython help line (`obj?`) is blanked; a cell that is not Python even
  then is left out, and said; lines end where Python ends them (a form feed or a pasted U+2028
  ends none);
* kept: imports, `def` and `class` (decorators included), assignments to plain names whose value
  calls nothing as it is assigned (constants, shapes, aliases, lambdas: `D_MODEL = 512`,
  `Tensor = torch.Tensor`, `causal = lambda n: torch.ones(n, n).tril()`), and
  `if`/`try` blocks made only of such statements (`try: import x except ImportError: ...`);
* left out: every other top-level statement: a call (`train(model)`, `plt.show()`,
  `print(...)`), a loop, a `with` block, an assignment whose value calls something
  (`history = fit(...)`, `data = load_dataset(...)`), `if __name__ == "__main__":` blocks;
* calls that are cheap and that definitions often rely on are kept all the same: `KEEP_CALLS`
  (`torch.device(...)`, `torch.manual_seed(...)`, `math.sqrt(...)`, ...).

A homework overrides the rule per part: `keep` and `drop` are glob patterns (`plt.*`, `*.fit`,
`load_*`) matched against the dotted names a statement calls, imports or defines. A statement
that names a `drop` pattern is left out; one whose every call matches a `keep` pattern (or
KEEP_CALLS) is kept. Cell tags win over both: `attngrade-keep` keeps a whole cell (its
magics still blanked), `attngrade-drop` leaves it out.

Each kept statement is one chunk: the sandbox's driver runs the chunks one by one in the
module's namespace, so an import that fails there (a package the sandbox does not have) or a
top-level line that raises costs only what uses it, and says so. Student text is bounded
before it is parsed (`ast.parse` builds a tree; it runs nothing).
"""

from __future__ import annotations

import ast
import fnmatch
import json
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

MAX_CONTAINERS = 500_000  # JSON objects and lists of a notebook: a few thousand in one written by hand
MAX_CELLS = 2_000  # code cells read
MAX_CELL_CHARS = 200_000  # characters of one code cell
MAX_CODE_CHARS = 1_000_000  # characters of code kept, all cells together
# Cell magics whose cell is Python, run by IPython as it stands (timed, its output captured).
PYTHON_CELL_MAGICS = ("%%time", "%%capture")  # (%%timeit runs its cell in a function: it defines nothing)
KEEP_TAG, DROP_TAG = "attngrade-keep", "attngrade-drop"
# Calls definitions lean on that cost nothing: a device, a seed, a math constant, a type helper.
KEEP_CALLS = ("torch.device", "torch.cuda.is_available", "torch.manual_seed", "torch.set_default_dtype",
              "torch.finfo", "torch.iinfo", "torch.tensor", "np.finfo", "numpy.finfo", "np.sqrt", "numpy.sqrt",
              "random.seed", "np.random.seed", "numpy.random.seed", "math.*", "namedtuple",
              "collections.namedtuple", "TypeVar", "typing.*", "dataclasses.field", "field", "float", "int",
              "str", "len", "range", "tuple", "frozenset", "set", "dict", "list")


class NotebookError(Exception):
    """The file is not a notebook whose code can be read; the message says what to do."""


@dataclass(frozen=True)
class Chunk:
    """One kept top-level statement: where it is in the notebook and in the module."""

    cell: int  # the cell's position in the notebook, from 1 (every cell counted, Markdown too)
    line: int  # its first line in the cell, from 1
    first: int  # its first line in the module, from 1
    last: int  # its last line in the module


@dataclass
class Extracted:
    """The kept code as one module, its chunks, the names they bind, and what was left out."""

    source: str = ""
    chunks: list[Chunk] = field(default_factory=list)
    defined: dict[str, Chunk] = field(default_factory=dict)  # name -> the chunk that binds it last
    left_out: dict[str, list[int]] = field(default_factory=dict)  # why -> the cells
    dropped_names: dict[str, int] = field(default_factory=dict)  # name bound only by a left-out statement -> cell
    cells: int = 0  # code cells read
    _lines: list[str] = field(default_factory=list)

    def place(self, line: int) -> str | None:
        """`cell 7, line 3` for a line of the module, or None."""
        for chunk in self.chunks:
            if chunk.first <= line <= chunk.last:
                return f"cell {chunk.cell}, line {chunk.line + line - chunk.first}"
        return None

    def leave_out(self, why: str, cell: int) -> None:
        cells = self.left_out.setdefault(why, [])
        if cell not in cells:
            cells.append(cell)


def extract(text: str, keep: Sequence[str] = (), drop: Sequence[str] = ()) -> Extracted:
    """The notebook's kept code (`text`: the .ipynb file's JSON) under the rule above."""
    rule = _Rule(tuple(keep) + KEEP_CALLS, tuple(drop))
    out = Extracted()
    for number, cell in _code_cells(text):
        out.cells += 1
        if out.cells > MAX_CELLS:
            raise NotebookError(f"the notebook has more than {MAX_CELLS} code cells; attngrade reads at most that")
        _read_cell(number, cell, rule, out)
        if sum(map(len, out._lines)) > MAX_CODE_CHARS:
            raise NotebookError(f"the notebook's code is longer than the {MAX_CODE_CHARS:,} characters attngrade "
                                "reads; leave out what the graded definitions do not need")
    out.source = "".join(out._lines)
    return out


# -- the JSON ------------------------------------------------------------------------------------
def _code_cells(text: str) -> Iterator[tuple[int, dict]]:
    """(position from 1, cell) for each code cell, in order."""
    if text.count("{") + text.count("[") > MAX_CONTAINERS:
        raise NotebookError(f"the notebook holds over {MAX_CONTAINERS:,} JSON objects and lists (cell outputs?); "
                            "clear the outputs (Kernel, Restart and Clear Output), save it and hand it in again")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise NotebookError(f"not a valid notebook: line {err.lineno}, column {err.colno}: {err.msg}; open it in "
                            "Jupyter and save it again") from None
    except RecursionError:
        raise NotebookError("not a valid notebook: nested too deeply") from None
    if isinstance(data, dict) and isinstance(data.get("nbformat"), int) and data["nbformat"] < 4:
        data = _upgraded(text)
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise NotebookError("not a notebook attngrade can read (no list of cells; nbformat 4 is expected)")
    for number, cell in enumerate(cells, start=1):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            yield number, cell


def _upgraded(text: str) -> Any:
    """An nbformat 3 notebook (cells in worksheets) in version 4's layout."""
    import nbformat

    try:
        return nbformat.reads(text, as_version=4)
    except Exception:  # noqa: BLE001 - a malformed old notebook: said as one without cells
        return {}


def _source(cell: dict, number: int) -> str:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(piece, str) for piece in source):
        source = "".join(source)
    if not isinstance(source, str):
        raise NotebookError(f"cell {number}: its source is not text (edited by hand?); open the notebook in "
                            "Jupyter, save it and hand it in again")
    return source


def _tags(cell: dict) -> set[str]:
    metadata = cell.get("metadata")
    tags = metadata.get("tags") if isinstance(metadata, dict) else None
    return {t for t in tags if isinstance(t, str)} if isinstance(tags, list) else set()


# -- one cell ------------------------------------------------------------------------------------
def _read_cell(number: int, cell: dict, rule: "_Rule", out: Extracted) -> None:
    source = _source(cell, number)
    if len(source) > MAX_CELL_CHARS:
        out.leave_out(f"longer than {MAX_CELL_CHARS:,} characters", number)
        return
    tags = _tags(cell)
    if DROP_TAG in tags or not source.strip():
        return
    if not _encodable(source):
        out.leave_out("not text (an unpaired surrogate escape)", number)
        return
    lines = python_lines(source)
    first = next((i for i, line in enumerate(lines) if line.strip()), 0)
    if lines[first].lstrip().startswith("%%"):
        if lines[first].split()[0] not in PYTHON_CELL_MAGICS:
            out.leave_out("a cell magic (%%)", number)
            return
        lines[first] = "\n"  # %%time, %%capture: the cell below is Python, run as it is
    lines, shell = _without_shell(lines)
    if shell:
        out.leave_out("shell or magic lines (! or %)", number)
    tree, lines = _parsed(lines)
    if tree is None:
        out.leave_out("not Python", number)
        return
    statements = tree.body
    for index, node in enumerate(statements):
        if KEEP_TAG in tags or rule.keeps(node):
            _add(out, number, lines, node, _shares_lines(statements, index))
        elif not (isinstance(node, ast.Expr) and not _calls(node)):  # a value shown (`model`, a docstring): nothing
            out.leave_out("top-level code that runs (calls, loops, plots, training)", number)
            for name in _bound(node):
                out.dropped_names[name] = number


def _encodable(source: str) -> bool:
    """Whether the cell has a UTF-8 form (JSON's \\ud800 escape gives one that has none)."""
    try:
        source.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def python_lines(text: str) -> list[str]:
    """`text`'s lines as Python counts them: ended by \\n, \\r\\n or \\r alone, and by nothing else
    (`str.splitlines` also ends one at a form feed or a pasted U+2028, which Python reads as text)."""
    parts = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _without_shell(lines: list[str]) -> tuple[list[str], bool]:
    """The lines with shell and magic lines blanked (kept as empty lines, so numbers stay; as `pass` where
    indented, so that the block around it stays one)."""
    kept, found, opener = [], False, False
    for line in lines:
        if _shell(line.strip()):
            indent = line[:len(line) - len(line.lstrip())]
            # `pass` only where a block opened just above would otherwise be empty (Colab's `if ...:`)
            kept.append(f"{indent}pass\n" if indent and opener else "\n")
            found = True
        else:
            kept.append(line)
            opener = line.strip().endswith(":") if line.strip() else opener
    return kept, found


def _shell(text: str) -> bool:
    """A shell line (`!pip install x`) or a line magic (`%matplotlib inline`, `%%time`), not an expression
    that goes on from the line before (`!= pad_id`, `% (a, b)`)."""
    return (text.startswith("!") and not text.startswith("!=")
            or text.startswith("%") and len(text) > 1 and (text[1].isalpha() or text[1] == "%"))


def _help(text: str) -> bool:
    """An IPython help line: a dotted name with `?` or `??` before or after it, and nothing else."""
    name = text.strip("?").strip()
    return text != name and (text.startswith("?") or text.endswith("?")) and bool(name) and all(
        part.isidentifier() for part in name.split("."))


def _parsed(lines: list[str]) -> tuple[ast.Module | None, list[str]]:
    """The cell's syntax tree, parsed again with its IPython help lines (`obj?`) blanked where it is not
    Python as it stands (twice at most: a cell of many help lines is not parsed once for each); None
    when it is not Python even then."""
    for attempt in range(2):
        try:
            return ast.parse("".join(lines)), lines
        except SyntaxError:
            if attempt or not any(_help(line.strip()) for line in lines):
                return None, lines
            lines = ["\n" if _help(line.strip()) else line for line in lines]
        except (ValueError, RecursionError, MemoryError, OverflowError):
            return None, lines
    return None, lines


def _shares_lines(statements: list[ast.stmt], index: int) -> bool:
    """Whether the statement shares a line with another (`import os; train()`)."""
    node = statements[index]
    first, last = _first_line(node), node.end_lineno or node.lineno
    return any(_first_line(other) <= last and first <= (other.end_lineno or other.lineno)
               for j, other in enumerate(statements) if j != index)


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)])


def _add(out: Extracted, number: int, lines: list[str], node: ast.stmt, shared: bool) -> None:
    """The statement as a chunk: its own lines, or its text alone when it shares a line."""
    first = _first_line(node)
    if shared:
        text = [line + "\n" for line in ast.unparse(node).splitlines()]
    else:
        text = lines[first - 1:(node.end_lineno or node.lineno)]
        text[-1] = text[-1] if text[-1].endswith("\n") else text[-1] + "\n"
    start = len(out._lines) + 1
    out._lines.extend(text)
    chunk = Chunk(number, first, start, start + len(text) - 1)
    out.chunks.append(chunk)
    for name in _bound(node):
        out.defined[name] = chunk
        out.dropped_names.pop(name, None)


def _bound(node: ast.stmt) -> list[str]:
    """The top-level names a statement binds (inside a kept `if` or `try` too)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"]
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(node, (ast.If, ast.Try)):
        inner = node.body + node.orelse + getattr(node, "finalbody", []) + \
            [s for h in getattr(node, "handlers", []) for s in h.body]
        return [name for s in inner for name in _bound(s)]
    return []


# -- the rule ------------------------------------------------------------------------------------
class _Rule:
    """Which top-level statements are kept: definitions, imports, and what calls only KEEP patterns."""

    def __init__(self, keep: tuple[str, ...], drop: tuple[str, ...]):
        self.keep, self.drop = keep, drop

    def keeps(self, node: ast.stmt) -> bool:
        if any(_matches(name, self.drop) for name in _names(node)):
            return False
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            plain = all(isinstance(n, (ast.Name, ast.Tuple, ast.List, ast.Store)) for t in targets
                        for n in ast.walk(t))
            return plain and self._calls_kept(node.value)
        if isinstance(node, ast.Expr):
            return isinstance(node.value, ast.Call) and self._calls_kept(node.value)
        if isinstance(node, ast.If):
            return self._calls_kept(node.test) and self._all_kept(node.body + node.orelse)
        if isinstance(node, ast.Try):
            handlers = [s for h in node.handlers for s in h.body]
            return self._all_kept(node.body + handlers + node.orelse + node.finalbody)
        return isinstance(node, ast.Pass)

    def _all_kept(self, statements: list[ast.stmt]) -> bool:
        return all(self.keeps(s) for s in statements)

    def _calls_kept(self, node: ast.AST | None) -> bool:
        return node is None or all(_matches(name, self.keep) for name in _calls(node))


def _calls(node: ast.AST) -> list[str]:
    """The dotted names a piece of code calls as it runs (`plt.show`, `model.fit`; `<call>` when not a
    name); a lambda's body runs only when it is called, so its calls do not count."""
    found, todo = [], [node]
    while todo:
        current = todo.pop()
        if isinstance(current, ast.Call):
            found.append(_dotted(current.func))
        if isinstance(current, ast.Lambda):
            todo.extend([*current.args.defaults, *(d for d in current.args.kw_defaults if d is not None)])
            continue
        todo.extend(ast.iter_child_nodes(current))
    return found


def _names(node: ast.stmt) -> list[str]:
    """What a statement calls, imports and binds: what `keep` and `drop` patterns are matched against."""
    names = _calls(node) + _bound(node)
    if isinstance(node, ast.Import):
        names += [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module:
        names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return names


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute) and len(parts) < 20:
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return "<call>"
    return ".".join([node.id, *reversed(parts)])


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name[:200], pattern) for pattern in patterns)
