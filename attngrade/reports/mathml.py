"""Answers as MathML: from our own sympy reading, never from the student's raw LaTeX.

The reading holds only symbols the part declares, so its LaTeX is ours; the MathML
latex2mathml makes of it is still passed through an allowlist of MathML elements and
attributes before it is marked safe, so nothing but math can reach the page.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import sympy
from markupsafe import Markup
from sympy.printing.latex import LatexPrinter

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
    key = value.canonical
    if key not in _CACHE:
        if len(_CACHE) > 4096:
            _CACHE.clear()
        _CACHE[key] = _convert(value)
    return _CACHE[key]


_CACHE: dict[str, Markup | None] = {}


def _convert(value: Value) -> Markup | None:
    try:
        from latex2mathml.converter import convert

        raw = convert(latex(value))
        return Markup(sanitize(raw))
    except Exception:  # noqa: BLE001 - a reading we cannot draw is shown as text instead
        return None


def sanitize(mathml: str) -> str:
    """Keep only allowlisted MathML elements and attributes; drop everything else."""
    root = ET.fromstring(mathml)
    _clean(root)
    ET.register_namespace("", _NS[1:-1])
    return ET.tostring(root, encoding="unicode", short_empty_elements=False)


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
