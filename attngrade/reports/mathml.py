"""Answers and statements as MathML: answers from our own sympy reading, never from the
student's raw LaTeX; statements from the bank's own inline LaTeX (`$...$`).

The reading holds only symbols the part declares, so its LaTeX is ours; the MathML
latex2mathml makes of it (and of a statement's math) is still passed through an allowlist
of MathML elements and attributes before it is marked safe, so nothing but math can reach
the page. The text between a statement's math segments is escaped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

import sympy
from markupsafe import Markup, escape
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import PRECEDENCE

from ..mathlang import Value

_ELEMENTS = {
    "math", "mrow", "mi", "mn", "mo", "msup", "msub", "msubsup", "mfrac", "msqrt", "mroot", "mtable", "mtr",
    "mtd", "mfenced", "mspace", "mstyle", "mtext", "mover", "munder", "munderover", "mpadded", "mphantom",
    "semantics", "annotation",
}
_ATTRIBUTES = {
    "display", "xmlns", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace", "columnalign",
    "rowspacing", "columnspacing", "open", "close", "separators", "width", "form", "accent", "linethickness",
    "displaystyle", "scriptlevel", "minsize", "maxsize", "symmetric", "largeop", "movablelimits", "encoding",
}
_NS = "{http://www.w3.org/1998/Math/MathML}"


class _Latex(LatexPrinter):
    """sympy's LaTeX for the notation students use: x^T y for inner products."""

    def _print_OneByOne(self, expr: Any) -> str:
        return self._print(expr.parent)

    def _print_AppliedFunction(self, expr: Any) -> str:
        name = self._print(sympy.Symbol(expr.name))
        return rf"{name}\left({', '.join(self._print(a) for a in expr.arguments)}\right)"

    def _print_Identity(self, expr: Any) -> str:
        return "I"

    def _print_MatMul(self, expr: Any) -> str:
        # sympy's own asks the whole product whether it can take a minus sign, which
        # rebuilds it (costly, for every answer); the sign is the scalar factor's, if any.
        args = list(expr.args)
        minus = not getattr(args[0], "is_Matrix", False) and args[0].could_extract_minus_sign()
        if minus:
            args = args[1:] if args[0] == -1 else [-args[0], *args[1:]]
        body = " ".join(self._print(a) if isinstance(a, sympy.Mul) else self.parenthesize(a, PRECEDENCE["Mul"], False)
                        for a in args)
        return f"- {body}" if minus else body

    def _print_Transpose(self, expr: Any) -> str:
        arg = self._print(expr.arg)
        if not isinstance(expr.arg, sympy.MatrixSymbol):
            arg = rf"\left({arg}\right)"
        return rf"{arg}^{{T}}"


_PRINTER = _Latex({"mat_delim": "[", "mat_str": "matrix"})


def latex(value: Value) -> str:
    text = _PRINTER.doprint(value.expr)
    return rf"O\left({text}\right)" if value.kind == "bigO" else text


def to_mathml(value: Any) -> Markup | None:
    """Sanitized MathML for a math reading, or None when it is not one (or cannot be shown)."""
    if not isinstance(value, Value):
        return None
    return _kept(_CACHE, value.canonical, lambda: _convert(value))


def _kept(cache: dict[str, Any], key: str, make: Callable[[], Any]) -> Any:
    """`cache[key]`, made by `make` if it is not there (a full cache starts again)."""
    if key in cache:
        return cache[key]
    if len(cache) > KEPT:
        cache.clear()
    cache[key] = made = make()
    return made


KEPT = 4096  # distinct readings (and statements) whose MathML a process keeps
_CACHE: dict[str, Markup | None] = {}  # a reading's canonical form -> its MathML
_STATEMENTS: dict[str, Markup] = {}  # a statement's text -> its HTML


@dataclass(frozen=True)
class Shown:
    """How readings (by canonical form) and statements look in a report, made in one process for
    another (see `shown`)."""

    math: dict[str, Markup | None]
    statements: dict[str, Markup]


# Readings whose MathML a run-stage worker makes for the report processes (see `shown`): more than
# the distinct math answers of a realistic class, which its report processes each met again and
# again; few enough that a class whose every answer is distinct (which no two report processes
# share, so nothing is saved) does not add much to its workers, the busiest processes.
SHOWN_FOR_OTHERS = 256


def shown(readings: Iterable[Any], statements: Iterable[str] = ()) -> Shown:
    """The MathML of the math readings among `readings`, and the HTML of `statements`, that this
    process had not made before (up to `SHOWN_FOR_OTHERS` readings and `KEPT` statements).

    A run-stage worker makes them while the class is still being read, and the run `remember`s
    them: the report processes forked for the write stage then find them made, where each would
    otherwise make them again for the readings its students share."""
    global _shown_here
    math: dict[str, Markup | None] = {}
    for value in readings:
        if _shown_here >= SHOWN_FOR_OTHERS:
            break
        if isinstance(value, Value) and value.canonical not in _CACHE:
            _shown_here += 1
            markup = to_mathml(value)
            if markup is not None:  # (one that failed here, under a worker's memory cap, may not fail there)
                math[value.canonical] = markup
    made = {text: statement_html(text) for text in dict.fromkeys(statements)
            if text not in _STATEMENTS and len(_STATEMENTS) < KEPT}
    return Shown(math, made)


_shown_here = 0  # readings this process made the MathML of for others (`shown`)


def shown_of(tasks: Iterable[Any], assignments: Mapping[str, Any]) -> Shown:
    """`shown` for a batch of the run stage (`grading.execute.Showing`): its tasks' readings, and the
    statements of their homeworks."""
    tasks = list(tasks)
    homeworks = {task.key.homework for task in tasks}
    return shown((value for task in tasks for value in task.answers.values()),
                 (part.statement for hid in homeworks for part in assignments[hid].homework.parts))


def remember(made: Shown) -> None:
    """Keep what another process made (`shown`), as far as there is room."""
    for cache, entries in ((_CACHE, made.math), (_STATEMENTS, made.statements)):
        for key, markup in entries.items():
            if len(cache) >= KEPT:
                break
            cache.setdefault(key, markup)


def _convert(value: Value) -> Markup | None:
    try:
        tex = latex(value)
    except Exception:  # noqa: BLE001 - a reading our printer cannot print is shown as text instead
        return None
    return latex_to_mathml(tex)


def latex_to_mathml(tex: str, display: bool = False) -> Markup | None:
    """Sanitized MathML for a piece of LaTeX, or None when latex2mathml cannot read it."""
    try:
        from latex2mathml.converter import convert

        raw = convert(tex, display="block" if display else "inline")
        return Markup(sanitize(raw))
    except Exception:  # noqa: BLE001 - math we cannot draw is shown as text instead
        return None


# $$display$$ or $inline$; a backslash-escaped \$ is a dollar sign, not a delimiter.
_MATH = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<!\\)\$(.+?)(?<!\\)\$", re.DOTALL)


def statement_html(text: str) -> Markup:
    """A statement with inline LaTeX: math segments as sanitized MathML, the text between escaped.

    A segment latex2mathml cannot read is shown as its source, escaped, in <code>.
    """
    return _kept(_STATEMENTS, text, lambda: _statement_html(text))


def _statement_html(text: str) -> Markup:
    out: list[str] = []
    at = 0
    for m in _MATH.finditer(text):
        out.append(_text(text[at:m.start()]))
        tex = m.group(1) if m.group(1) is not None else m.group(2)
        math = latex_to_mathml(tex.strip(), display=m.group(1) is not None) if tex.strip() else None
        out.append(str(math) if math is not None else f"<code>{escape(m.group(0))}</code>")
        at = m.end()
    out.append(_text(text[at:]))
    return Markup("".join(out))


def _text(segment: str) -> str:
    return str(escape(segment.replace("\\$", "$")))


_FENCES = {"(", ")", "[", "]", "{", "}", "|", "\u2016", "\u27e8", "\u27e9", "\u2308", "\u2309", "\u230a", "\u230b"}


def sanitize(mathml: str) -> str:
    """Keep only allowlisted MathML elements and attributes; drop everything else.

    The brackets around a matrix are marked stretchy, so they grow with its rows in every
    browser (latex2mathml leaves `bmatrix`'s brackets plain).
    """
    root = ET.fromstring(mathml)
    _clean(root)
    _stretch_fences(root)
    ET.register_namespace("", _NS[1:-1])
    return ET.tostring(root, encoding="unicode", short_empty_elements=False)


def _stretch_fences(element: ET.Element) -> None:
    children = list(element)
    if any(c.tag.replace(_NS, "") == "mtable" for c in children):
        for c in children:
            if c.tag.replace(_NS, "") == "mo" and (c.text or "").strip() in _FENCES:
                c.set("stretchy", "true")
                c.set("fence", "true")
                c.set("symmetric", "true")
    for c in children:
        _stretch_fences(c)


def _clean(element: ET.Element) -> None:
    for child in list(element):
        tag = child.tag.replace(_NS, "")
        if tag not in _ELEMENTS:
            element.remove(child)
            continue
        _clean(child)
    for name in list(element.attrib):
        if name.replace(_NS, "") not in _ATTRIBUTES or element.attrib[name].lower().startswith("javascript"):
            del element.attrib[name]
