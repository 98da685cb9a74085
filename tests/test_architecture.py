"""The package's structure, held as tests: layers that import only downward, no import circles,
imports inside functions only for heavy optional modules, short functions, and a README whose
layout section names the tree."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "attngrade"

# Bottom to top: a module may import its own package and the layers below it, never above.
LAYERS = [
    {"attngrade", "errors", "runtime"},  # the package root holds only the version
    {"mathlang", "sandbox"},
    {"records"},
    {"reading"},
    {"checkers"},
    {"problems"},
    {"intake"},
    {"grading"},
    {"staff"},  # the staff store: below the outputs that apply it, above the grading it regrades with
    {"reports"},
    {"outputs"},
    {"gradescope", "review"},
    {"commands"},
    {"cli", "__main__"},
]

# Modules imported inside a function, and why each is worth the exception: heavy, optional, or
# needed only on one rare path, so that `grade --help` and `grade check` do not pay for them.
DEFERRED = {
    "torch": "the torch extra: only the sandbox's children run student code",
    "dask": "the dask extra: only --executor dask",
    "distributed": "the dask extra: only --executor dask",
    "playwright": "browser tests and screenshots only",
    "pylatexenc": "only a LaTeX submission needs its parser",
    "nbformat": "only a notebook older than version 4 is converted",
    "latex2mathml": "only reports render MathML",
    "rich": "only a terminal shows a progress bar",
    "pebble": "only worker processes with time limits",
    "jinja2": "only the Gradescope zip's scripts are rendered from templates here",
    "wordllama": "the embed extra: loaded only when written answers are grouped by meaning",
    "uvicorn": "the review extra: only grade review's server",
}

# Functions allowed an import of the package's own modules inside them, each with its reason.
OWN_DEFERRED = {
    ("attngrade.commands.early", "source"):
        "runs in the early child after the fork: opening a named homework imports the library, "
        "which the parent must not wait for",
    ("attngrade.sandbox.zygote", "warm"):
        "the zygote imports the drivers (and torch) once, so every child it forks inherits them",
    ("attngrade.sandbox.zygote", "_run_child"):
        "the drivers import torch: a child of a zygote that was not warmed imports them itself",
    ("attngrade.intake.submissions", "_load_submission"):
        "only a notebook, Markdown or LaTeX file needs the bundled homework's parts (and sympy): "
        "a class of YAML files is read without them, in the early child too",
    ("attngrade.intake.formats.notebook_code", "stub"):
        "a template's stubs need the contracts (numpy); reading a notebook's answers, in the early child "
        "too, needs only the part's definitions",
}

MAX_LINES = 80
MAX_PARAMS = 8
# Functions allowed to be longer or to take more parameters, each with its reason.
LONG = {
}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the module imported (for `from X import name`: X.name if that is a module, else X)
    function: str | None  # the enclosing function, if any
    line: int


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports() -> list[Import]:
    modules = _modules()
    found = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function, node in _walk(tree, None):
            if isinstance(node, ast.Import):
                found += [Import(name, alias.name, function, node.lineno) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                for alias in node.names:
                    child = f"{base}.{alias.name}"
                    found.append(Import(name, child if child in modules else base, function, node.lineno))
    return found


def _walk(node: ast.AST, function: str | None):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _walk(child, child.name)
        else:
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield function, child
            yield from _walk(child, function)


def _layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else module
    return next(i for i, layer in enumerate(LAYERS) if top in layer)


def _own(imports: list[Import]) -> list[Import]:
    return [i for i in imports if i.target.split(".")[0] == "attngrade" and i.target != i.module]


def test_every_module_is_in_a_layer():
    for module in _modules():
        assert _layer(module) >= 0, module


def test_each_package_imports_only_the_layers_below_it():
    upward = [f"{i.module}:{i.line} imports {i.target}" for i in _own(_imports()) if _layer(i.target) > _layer(i.module)]
    assert upward == []


def test_no_module_imports_itself_through_others():
    graph: dict[str, set[str]] = {}
    modules = _modules()
    for i in _own(_imports()):
        target = i.target if i.target in modules else i.target.rpartition(".")[0]
        graph.setdefault(i.module, set()).add(target)
    circles = []
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                circles.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    # A package's __init__ that re-exports its submodules is not a circle of the code.
    circles = [c for c in circles if not _through_a_package_face(c, modules)]
    assert circles == []


def _through_a_package_face(circle: str, modules: dict[str, Path]) -> bool:
    steps = circle.split(" -> ")
    return any(modules.get(step, Path()).name == "__init__.py" and steps[i + 1].startswith(step + ".")
               for i, step in enumerate(steps[:-1]))


def test_imports_inside_functions_are_only_the_deferred_ones():
    inside = [i for i in _imports() if i.function is not None]
    wrong = [f"{i.module}:{i.line} ({i.function}) imports {i.target}" for i in inside
             if i.target.split(".")[0] not in DEFERRED and (i.module, i.function) not in OWN_DEFERRED]
    assert wrong == []


def test_the_lists_of_exceptions_name_what_is_there():
    inside = {(i.module, i.function) for i in _imports() if i.function is not None}
    assert set(OWN_DEFERRED) <= inside, "an exception that no longer exists: remove it from the list"
    long = {f"{m}:{f}" for m, f, _, _ in _functions() if (m, f) in LONG}
    assert {f"{m}:{f}" for m, f in LONG} == long


def _functions():
    for name, path in _modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
                count = len(params) + bool(args.vararg) + bool(args.kwarg)
                if params and params[0].arg in ("self", "cls"):
                    count -= 1
                yield name, node.name, node.end_lineno - node.lineno + 1, count


def test_functions_are_short_and_take_few_parameters():
    over = [f"{m}:{f} ({lines} lines, {params} parameters)" for m, f, lines, params in _functions()
            if (lines > MAX_LINES or params > MAX_PARAMS) and (m, f) not in LONG]
    assert over == []


def test_the_readmes_layout_names_every_package_and_module_of_the_tree():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"^\s*([\w/.-]+(?:/|\.py))", section, flags=re.M))
    tree = {f"{p.name}/" for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    tree |= {p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    assert tree - named == set(), "in the tree, not in README's layout"
    assert {n for n in named if n.endswith(".py") or n.endswith("/")} - tree - {"attngrade/"} <= {
        "solutions/", "examples/", "bench/", "tests/", "docs/"}, "in README's layout, not in the tree"
