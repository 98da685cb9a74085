"""The LaTeX and Unicode front end: what students type, made into what the normalization stage reads.

Before the frame of an answer is taken off (normalize.py), four things are undone here, each
through `apply_edits` so an error still points at what the student wrote:

- the student's own macros (`\\newcommand`, `\\DeclareMathOperator`, `\\def`), found anywhere in
  the submission or in the answer itself, are expanded with their arguments (macros.py);
- environments: `aligned`, `align*`, `gather`, `split`, `equation` are one chain of
  equalities (their `&` and `\\\\` only lay it out); `array`, `smallmatrix` and the starred
  `bmatrix*` are matrices; `cases` is not read (a person reads it);
- wrappers that only typeset: `\\boxed{...}`, `\\fbox{...}`, `\\textcolor{red}{...}`, `\\tag{1}`,
  `\\label{...}`, `\\nonumber`;
- Unicode as it is typed or pasted: subscripts (`q₁`, `dₖ`, `Qᵢ`), combining accents (`q̂`),
  `≈`, `≤`, `…` and `∑` (mathematical italic and bold letters such as `𝑐` stay unread: they are
  as often pasted junk as a letter).

pylatexenc reads the environments (it knows where each ends and which `&` is its own); the rest
are bounded patterns over the text.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from ..errors import MathError
from .macros import Definition, definition_spans, expand, find_definitions, walkable
from .rewrite import Rewritten, Rule, apply_edits, run_rules, start

# Environments whose `&` and `\\` lay out one chain of equalities.
DISPLAY = frozenset({"aligned", "align", "align*", "alignat", "alignat*", "alignedat", "gather", "gather*",
                     "gathered", "split", "equation", "equation*", "multline", "multline*", "eqnarray",
                     "eqnarray*", "flalign", "flalign*", "displaymath", "math"})
MATRICES = frozenset({"matrix", "pmatrix", "bmatrix", "Bmatrix", "smallmatrix", "array", "pmatrix*", "bmatrix*",
                      "Bmatrix*", "matrix*", "psmallmatrix", "bsmallmatrix"})
CASES = frozenset({"cases", "cases*", "dcases", "rcases", "numcases"})
# What may open the next line of a chain laid out over lines: a relation or an operator.
_CONTINUES = re.compile(r"\s*(?:\\(?:q?quad(?![A-Za-z])|[,;:! ])\s*)*(?:=|\\approx|≈|\\simeq|\\equiv|\\coloneqq|:=|\+|-|−|\\cdot|\\times|\\le|\\ge|$)")
_BEGIN = re.compile(r"\\begin\s*\{\s*([A-Za-z]+\*?)\s*\}")
_OTHER_ENVIRONMENT = re.compile(r"\\begin\s*\{(?![pbBvV]?matrix\})")


def prepare(out: Rewritten, definitions: tuple[Definition, ...], max_length: int) -> None:
    """Macros, environments, wrappers and Unicode of `out.text`, undone in that order; then matrices
    written as a Markdown table or with `;` between rows."""
    _macros(out, definitions, max_length)
    if _OTHER_ENVIRONMENT.search(out.text):  # bmatrix, pmatrix, ... the grammar reads itself
        _environments(out)
    _wrappers(out)
    if not out.text.isascii():
        run_rules(out, UNICODE)
    _table(out)
    _semicolon_rows(out)


def for_check(text: str, definitions: tuple[Definition, ...], max_length: int) -> str:
    """A text answer that a check reads as math (a block matrix described in words): the student's macros
    expanded, a Markdown table or `;`-separated rows made a matrix, nothing else changed."""
    out = start(text)
    _macros(out, definitions, max_length)
    _table(out)
    _semicolon_rows(out)
    return out.text


# -- matrices written as a table or with `;` between rows ------------------------------------
_SEPARATOR = re.compile(r"\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*")


def _table(out: Rewritten) -> None:
    """| cos ω | sin ω | / |---|---| / | −sin ω | cos ω |: a Markdown table as the matrix of its cells
    (the header row is the first row, as students write a matrix in a table)."""
    lines = out.text.strip().splitlines()
    if len(lines) < 3 or "|" not in out.text or not all(line.strip().startswith("|") for line in lines):
        return
    rows = [line.strip().strip("|").split("|") for line in lines if not _SEPARATOR.fullmatch(line)]
    if len(rows) != len(lines) - 1 or not _SEPARATOR.fullmatch(lines[1]) or len({len(r) for r in rows}) != 1:
        return
    body = " \\\\ ".join(" & ".join(cell.strip() for cell in row) for row in rows)
    apply_edits(out, [(0, len(out.text), f"\\begin{{bmatrix}} {body} \\end{{bmatrix}}")])
    out.note("read the table as a matrix (its first row is the matrix's first row)")


def _semicolon_rows(out: Rewritten) -> None:
    """[a, b; c, d] (as in MATLAB): rows split by `;` inside one bracket, read as [[a, b], [c, d]]."""
    if ";" not in out.text or "[" not in out.text:
        return
    edits: list[tuple[int, int, str]] = []
    opened: list[tuple[str, int, list[int]]] = []  # each open bracket, where, and the `;` directly inside it
    for i, ch in enumerate(out.text):
        if ch in "([{":
            opened.append((ch, i, []))
        elif ch in ")]}" and opened:
            kind, at, semis = opened.pop()
            if kind == "[" and ch == "]" and semis:
                edits += [(at, at + 1, "[["), *((j, j + 1, "], [") for j in semis), (i, i + 1, "]]")]
        elif ch == ";" and opened:
            opened[-1][2].append(i)
    if edits:
        apply_edits(out, sorted(edits))


# -- the student's macros --------------------------------------------------------------------
_DEFINES = re.compile(r"\\(?:newcommand|renewcommand|providecommand|DeclareMathOperator|def)(?![A-Za-z])")


def _macros(out: Rewritten, definitions: tuple[Definition, ...], max_length: int) -> None:
    own = find_definitions(out.text) if _DEFINES.search(out.text) else ()
    if own:  # `\newcommand{\x}{...} \x_1` in the answer itself: used, then taken out
        apply_edits(out, [(start, end, " ") for start, end in definition_spans(out.text)])
        names = {d.name for d in own}
        definitions = tuple(d for d in definitions if d.name not in names) + own
    if not definitions or "\\" not in out.text:
        return
    edits = expand(out.text, definitions, max_length)
    if edits:
        shown = sorted({out.text[start:end].split("{")[0].split("[")[0].strip() for start, end, _ in edits})
        apply_edits(out, edits)
        out.note(f"read your macro{'s' if len(shown) > 1 else ''} {', '.join(shown)} as you defined "
                 f"{'them' if len(shown) > 1 else 'it'}")


# -- environments ----------------------------------------------------------------------------


def _environments(out: Rewritten) -> None:
    from pylatexenc.latexwalker import LatexWalker, LatexWalkerError

    if not walkable(out.text):
        return  # a brace or bracket left open: the grammar says where

    try:
        nodes, _, _ = LatexWalker(out.text, tolerant_parsing=True).get_latex_nodes()
    except (LatexWalkerError, RecursionError):
        return  # the grammar then says what it cannot read
    edits: list[tuple[int, int, str]] = []
    _visit(out.text, nodes, edits)
    if edits:
        apply_edits(out, sorted(edits))


def _visit(text: str, nodes: Any, edits: list) -> None:
    for node in nodes or []:
        if node is None:
            continue
        name = getattr(node, "environmentname", None)
        if name in CASES:
            raise MathError(f"a case distinction ({name}) is not read here; course staff will read it",
                            node.pos, node.pos + node.len)
        if name in MATRICES:
            edits.extend(_matrix_edits(text, node, name))
        elif name in DISPLAY:
            edits.extend(_display_edits(text, node, name))
        _visit(text, getattr(node, "nodelist", None), edits)
        _visit(text, getattr(getattr(node, "nodeargd", None), "argnlist", None), edits)


def _spans(text: str, node: Any, name: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """Where `\\begin{name}` (with its arguments) and `\\end{name}` stand."""
    begin = _BEGIN.match(text, node.pos)
    begin_end = begin.end() if begin else node.pos + len(f"\\begin{{{name}}}")
    args = [a for a in getattr(getattr(node, "nodeargd", None), "argnlist", None) or [] if a is not None]
    if args:
        begin_end = max(begin_end, max(a.pos + a.len for a in args))
    end = node.pos + node.len
    closing = text.rfind("\\end", node.pos, end)
    return (node.pos, begin_end), (closing if closing >= begin_end else end, end)


_STAR_OPTION = re.compile(r"\s*\[[lcr]\]")  # \begin{bmatrix*}[r]: the alignment of mathtools' starred matrices


def _matrix_edits(text: str, node: Any, name: str) -> list[tuple[int, int, str]]:
    """`array`, `smallmatrix` and `bmatrix*` as the matrices the grammar reads."""
    if name in ("matrix", "pmatrix", "bmatrix", "Bmatrix"):
        return []
    (b0, b1), (e0, e1) = _spans(text, node, name)
    kind = {"psmallmatrix": "pmatrix", "bsmallmatrix": "bmatrix"}.get(name, name.rstrip("*"))
    kind = "matrix" if kind in ("array", "smallmatrix") else kind
    if name.endswith("*"):
        option = _STAR_OPTION.match(text, b1)
        b1 = option.end() if option else b1
    return [(b0, b1, f"\\begin{{{kind}}}"), (e0, e1, f"\\end{{{kind}}}")]


def _display_edits(text: str, node: Any, name: str) -> list[tuple[int, int, str]]:
    """`\\begin{aligned} V &= a \\\\ &= b \\end{aligned}` as `V = a = b`: each line after the first must
    go on with a relation or an operator, or the lines are not one chain (an error, for staff)."""
    (b0, b1), (e0, e1) = _spans(text, node, name)
    edits = [(b0, b1, " "), (e0, e1, " ")]
    for child in node.nodelist or []:
        if getattr(child, "specials_chars", None) == "&":
            edits.append((child.pos, child.pos + child.len, " "))
        elif getattr(child, "macroname", None) == "\\":
            after = text[child.pos + child.len:e0].replace("&", " ", 1)
            if not _CONTINUES.match(after):
                line = after.strip().split("\\\\")[0][:40]
                raise MathError(f"the lines of this {name} environment are read as one chain of equalities, but "
                                f"the line '{line}' does not go on with '=' or an operator; write one answer",
                                child.pos, child.pos + child.len)
            edits.append((child.pos, child.pos + child.len, " "))
    return edits


# -- wrappers that only typeset --------------------------------------------------------------
_WRAPPER = re.compile(r"\\(?:boxed|fbox|framebox|bbox|colorbox\s*\{[A-Za-z]{1,20}\}|textcolor\s*\{[A-Za-z]{1,20}\}"
                      r"|color\s*\{[A-Za-z]{1,20}\}|underbrace|overbrace|mathbin|mathrel|mathord|mathop|ensuremath"
                      r"|displaylines)\s*\{")
_DROPPED = re.compile(r"\\(?:tag|label|eqref|ref)\*?\s*\{[^{}]{0,80}\}|\\(?:nonumber|notag|nolimits|limits)"
                      r"(?![A-Za-z])|\\(?:color)\s*\{[A-Za-z]{1,20}\}")


_WRAPPING = re.compile(r"box|color|\\under|\\over|\\math(?:bin|rel|ord|op)|\\ensuremath|\\displaylines|\\tag|\\label|ref"
                       r"|\\no|limits")  # a text without any of these has no wrapper (spared the patterns below)


def _wrappers(out: Rewritten) -> None:
    """`\\boxed{X}` is X; `\\tag{1}` and `\\label{eq}` are nothing."""
    if not _WRAPPING.search(out.text):
        return
    edits = [(m.start(), m.end(), " ") for m in _DROPPED.finditer(out.text)]
    if edits:
        apply_edits(out, edits)
    edits = []
    for m in _WRAPPER.finditer(out.text):
        close = _closing(out.text, m.end() - 1)
        if close is not None and not any(s < m.end() and close < e for s, _, e in _claimed(edits)):
            edits += [(m.start(), m.end(), " "), (close, close + 1, " ")]
    if edits:
        apply_edits(out, sorted(edits))


def _claimed(edits: list[tuple[int, int, str]]) -> list[tuple[int, int, int]]:
    return [(edits[i][0], edits[i][1], edits[i + 1][1]) for i in range(0, len(edits), 2)]


def _closing(text: str, open_at: int) -> int | None:
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{" and text[i - 1] != "\\":
            depth += 1
        elif text[i] == "}" and text[i - 1] != "\\":
            depth -= 1
            if depth == 0:
                return i
    return None


# -- Unicode as typed ------------------------------------------------------------------------
SUBSCRIPTS = {"₀": "0", "₁": "1", "₂": "2", "₃": "3", "₄": "4", "₅": "5", "₆": "6", "₇": "7", "₈": "8", "₉": "9",
              "ₐ": "a", "ₑ": "e", "ₒ": "o", "ₓ": "x", "ₕ": "h", "ₖ": "k", "ₗ": "l", "ₘ": "m", "ₙ": "n", "ₚ": "p",
              "ₛ": "s", "ₜ": "t", "ᵢ": "i", "ⱼ": "j", "ᵣ": "r", "ᵤ": "u", "ᵥ": "v", "ᵦ": "\\beta", "ᵧ": "\\gamma",
              "ᵨ": "\\rho", "ᵩ": "\\phi", "ᵪ": "\\chi"}
_ACCENTS = {"\u0302": "hat", "\u0303": "tilde", "\u0304": "bar", "\u0305": "bar", "\u0306": "breve"}
_SYMBOLS = {"\u2002": " ", "\u2003": " ", "\u2004": " ", "\u2005": " ", "\u2006": " ", "\u2007": " ",
            "\u2008": " ", "\u2009": " ", "\u200a": " ", "\u202f": " ", "\u205f": " ", "\u3000": " ",
            "≈": "\\approx ", "≃": "\\simeq ", "≤": "\\le ", "≥": "\\ge ", "≠": "\\neq ", "…": "\\ldots ",
            "⋯": "\\cdots ", "∑": "\\sum ", "∏": "\\prod ", "⟨": "\\langle ", "⟩": "\\rangle "}


def _subscript(m: re.Match) -> str:
    text = "".join(SUBSCRIPTS[ch] for ch in m.group(0))
    return "_" + text if len(m.group(0)) == 1 and not text.startswith("\\") else "_{" + text + "}"


def _accented(m: re.Match) -> str:
    letter, marks = m.group(1), m.group(2)
    accent = _ACCENTS.get(marks[0])
    return f"\\{accent}{{{letter}}}" if accent and len(marks) == 1 else m.group(0)


def _decompose(m: re.Match) -> str:
    """ĉ, ã, x̄ written as one character: the letter and its combining accent."""
    return unicodedata.normalize("NFD", m.group(0))


UNICODE: list[Rule] = [
    Rule("unicode_accents", re.compile("[ĉĈâÂãÃāĀēĒūŪōŌīĪẽỹŷŵĝĥĵŝẑŭŏ]"), _decompose, hint=()),
    Rule("unicode_accents", re.compile("([A-Za-z\u0391-\u03a9\u03b1-\u03c9])([\u0302\u0303\u0304\u0305\u0306]+)"),
         _accented, hint=tuple(_ACCENTS)),
    Rule("unicode_subscripts", re.compile("[" + "".join(SUBSCRIPTS) + "]+"), _subscript, hint=tuple(SUBSCRIPTS)),
    Rule("unicode_relations", re.compile("[" + "".join(_SYMBOLS) + "]"), lambda m: _SYMBOLS[m.group(0)],
         hint=tuple(_SYMBOLS)),
]
