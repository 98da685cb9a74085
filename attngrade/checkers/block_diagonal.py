"""Reading a written shift matrix M (p_{t+1} = M p_t): its 2×2 blocks, and whether it says they
sit on M's diagonal.

A sinusoidal encoding p_t of size d holds d/2 pairs (sin ω_k t, cos ω_k t), and the matrix that
moves it one step is block-diagonal with one 2×2 rotation block per frequency. Students write
that matrix in several ways, all read here:

* `diag(M_0, \\ldots, M_{d/2-1})`, `\\operatorname{blockdiag}(...)`, `\\bigoplus_{k=0}^{d/2-1} M_k` or
  words ("block diagonal, with blocks M_k = ..."), and the general k-th block as a matrix, written
  with ω_k, with k and d (10000^{-2k/d}), or with the frequency spelled out;
* the whole matrix with dots: `\\begin{bmatrix} \\cos\\omega_0 & \\sin\\omega_0 & \\cdots \\\\ ... \\end{bmatrix}`,
  its first and last diagonal blocks written out and dots for the rest;
* a single 2×2 block (for one frequency ω, or the general k-th block) with no word on the rest.

Student text is scanned, never run: matrices are found by matching brackets and
`\\begin{...}`/`\\end{...}` pairs, words by plain substring search (no regular expression runs
over the answer), and each block is read by the answer language (`mathlang.parse`) within a
time limit. A subscripted frequency (ω_0, \\omega_{d/2-1}, w_k) is read as ω at that index:
ω_j = base^{-2j/d}. What cannot be read raises `Unread` with what to write instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import sympy

from ..errors import MathError
from ..mathlang import SymbolTable, parse
from ..runtime.deadline import BudgetExceeded, time_limit

READ_SECONDS = 2.0  # for every block of one answer together, as for a math field
MAX_BLOCKS = 8  # blocks read from one answer: the first and last, a general one, and a few more
ENVIRONMENTS = ("bmatrix", "pmatrix", "vmatrix", "Vmatrix", "Bmatrix", "smallmatrix", "matrix", "array")
DOTS = ("\\cdots", "\\ldots", "\\vdots", "\\ddots", "\\dotsc", "\\dotsb", "\\dots", "...", "\u22ef", "\u2026",
        "\u22ee", "\u22f1")
# Said outside the matrices, these put the blocks on M's diagonal: diag(...), blockdiag, "block
# diagonal", "on the diagonal", \oplus, \bigoplus, "direct sum".
STRUCTURE = ("diag", "oplus", "direct sum")
OMEGAS = ("\\omega", "omega", "\u03c9")
HOLE = "\u25a0"  # where a matrix stood in the text around it (keeps commas and parentheses in place)


class Unread(Exception):
    """The answer could not be read as M or as one of its blocks; the message says what to write."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Block:
    """One 2×2 block as written: its matrix (ω unsubscripted) and the index of its ω, if any."""

    text: str
    value: Any  # the parsed mathlang Value
    index: Any = None  # sympy expression in k and d; None: ω is written without an index
    at: str | None = None  # "first" or "last": a block of a matrix with dots that names no index (its place does)


@dataclass(frozen=True)
class Written:
    """What an answer says of M."""

    blocks: tuple[Block, ...]
    structure: bool  # the blocks are said to sit on M's diagonal
    first: Any = None  # the index of M's first block, where the answer names it
    last: Any = None  # the index of its last block


def read(text: str, table: SymbolTable) -> Written:
    """The blocks of a written M and what it says of their place (Unread when it cannot be read)."""
    text = _unwrapped(text)
    spans = _matrices(text)
    around = _around(text, spans)
    structure = any(word in around.lower() for word in STRUCTURE)
    try:
        with time_limit(READ_SECONDS):
            blocks, first, last, structure = _blocks(text, spans, around, table, structure)
    except (BudgetExceeded, MemoryError):
        # sympy may have been stopped halfway through what it caches: none of it is kept
        sympy.core.cache.clear_cache()
        raise Unread("reading your blocks took too long; write them more simply") from None
    if not blocks:
        raise Unread("no 2×2 block was found: write M's k-th block as a matrix, e.g. [[a, b], [c, d]] or "
                     "\\begin{bmatrix} a & b \\\\ c & d \\end{bmatrix}, and say that M is block-diagonal")
    return Written(tuple(blocks), structure, first, last)


def _blocks(text: str, spans: list[tuple[int, int]], around: str, table: SymbolTable,
            structure: bool) -> tuple[list[Block], Any, Any, bool]:
    """Every block of the answer, the range it names, and whether it places them on M's diagonal."""
    blocks: list[Block] = []
    first = last = None
    for start, end in spans:
        inside = text[start:end]
        if any(mark in inside for mark in DOTS):
            dotted = _dotted_blocks(inside, table)
            blocks += dotted
            structure = True
            if dotted[0].index is not None and dotted[-1].index is not None:
                first, last = dotted[0].index, dotted[-1].index
        else:
            blocks.append(_block(inside, table))
        if len(blocks) > MAX_BLOCKS:
            raise Unread(f"more than {MAX_BLOCKS} blocks are written out; give M's k-th block once, in "
                         "terms of k (or ω_k), and say that M is block-diagonal")
    if first is None:
        first, last = _named_range(around, table)
    return blocks, first, last, structure


# -- finding the matrices ------------------------------------------------------------------------
def _unwrapped(text: str) -> str:
    """The answer without math delimiters ($, \\[ \\], \\( \\)): only typesetting."""
    for mark in ("$", "\\[", "\\]", "\\(", "\\)"):
        text = text.replace(mark, " ")
    return text


def _matrices(text: str) -> list[tuple[int, int]]:
    """The spans of the matrices written in `text`, outermost only, in order."""
    spans: list[tuple[int, int]] = []
    at = 0
    while True:
        begin = text.find("\\begin{", at)
        bracket = text.find("[[", at)
        if begin < 0 and bracket < 0:
            return spans
        if begin >= 0 and (bracket < 0 or begin < bracket):
            end = _environment_end(text, begin)
        else:
            end = _bracket_end(text, bracket)
            begin = bracket
        if end is None:
            raise Unread(f"a matrix opened at character {begin + 1} is never closed")
        if end > begin:
            spans.append((begin, end))
        at = max(end, begin + 1)


def _environment_end(text: str, begin: int) -> int | None:
    """Where the environment opened at `begin` ends (past its \\end{...}); `begin` itself for one
    that is not a matrix (it is then only text)."""
    close = text.find("}", begin)
    name = text[begin + len("\\begin{"):close] if close > 0 else ""
    if name not in ENVIRONMENTS:
        return begin
    opening, ending = f"\\begin{{{name}}}", f"\\end{{{name}}}"
    depth, at = 0, begin
    while True:
        next_open, next_close = text.find(opening, at), text.find(ending, at)
        if next_close < 0:
            return None
        if 0 <= next_open < next_close:
            depth, at = depth + 1, next_open + len(opening)
            continue
        depth, at = depth - 1, next_close + len(ending)
        if depth == 0:
            return at


def _bracket_end(text: str, begin: int) -> int | None:
    depth = 0
    for i in range(begin, len(text)):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _around(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with each matrix replaced by one HOLE."""
    pieces, at = [], 0
    for start, end in spans:
        pieces += [text[at:start], HOLE]
        at = end
    return "".join(pieces) + text[at:]


# -- reading one block ---------------------------------------------------------------------------
def _block(written: str, table: SymbolTable) -> Block:
    """One 2×2 block, its ω's index read off the subscript."""
    bare, index_text = _unindexed(_as_bmatrix(written))
    try:
        value = parse(bare, table, name="M")
    except MathError as err:
        raise Unread(f"the block {_short(written)} could not be read: {err.message}") from None
    return Block(written.strip(), value, _index(index_text, table) if index_text is not None else None)


def _as_bmatrix(written: str) -> str:
    """An `array` environment (whose column spec the answer language does not read) as a bmatrix."""
    if not written.startswith("\\begin{array}"):
        return written
    body = written[len("\\begin{array}"):]
    if body.startswith("{"):
        body = body[body.find("}") + 1:]
    return "\\begin{bmatrix}" + body.replace("\\end{array}", "\\end{bmatrix}")


def _unindexed(written: str) -> tuple[str, str | None]:
    """The block with every ω_j (ω_{j}, \\omega_j, w_j) written as plain ω, and the index j.

    Two different indices in one block are not one block of M."""
    out, indices, i = [], set(), 0
    starts = {w[0] for w in OMEGAS} | {"w"}
    while i < len(written):
        if written[i] not in starts:  # most characters start no name of ω
            out.append(written[i])
            i += 1
            continue
        word = next((w for w in (*OMEGAS, "w") if written.startswith(w, i) and _is_name(written, i, len(w))), None)
        if word is None or (word == "w" and not written.startswith("w_", i)):
            out.append(written[i])
            i += 1
            continue
        i += len(word)
        sub, i = _subscript(written, i)
        if sub is not None:
            indices.add(" ".join(sub.split()))
        out.append("\\omega ")
    if len(indices) > 1:
        raise Unread(f"the block {_short(written)} mixes the frequencies of several pairs "
                     f"({', '.join(sorted(indices))}); each block of M rotates one pair by its own ω_k")
    return "".join(out), next(iter(indices), None)


def _is_name(text: str, i: int, size: int) -> bool:
    """`text[i:i+size]` is a name of its own, not part of a longer one (`\\omegas`, `\\sin w`, `\\cdot w`)."""
    before = text[i - 1] if i and not text.startswith("\\", i) else " "  # \cos\omega: a command starts anew
    after = text[i + size] if i + size < len(text) else " "
    return not (before.isalpha() or before == "\\" or after.isalpha())


def _subscript(text: str, i: int) -> tuple[str | None, int]:
    """The subscript at text[i] (`_0`, `_{d/2-1}`), or None, and where the text goes on."""
    j = i
    while j < len(text) and text[j] == " ":
        j += 1
    if j >= len(text) or text[j] != "_":
        return None, i
    j += 1
    if j < len(text) and text[j] == "{":
        depth = 0
        for end in range(j, min(len(text), j + 80)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                return text[j + 1:end], end + 1
        raise Unread(f"a subscript opened at character {j + 1} is never closed")
    if j < len(text) and text[j].isalnum():
        return text[j], j + 1
    return None, i


@lru_cache(maxsize=256)
def _index(text: str, table: SymbolTable) -> Any:
    """A block index as written (0, k, d/2-1, \\frac{d}{2}) as a sympy expression in k and d; a class
    writes a handful of them (k, j, 0), so each is read once."""
    try:
        value = parse(text, table, name="index")
    except MathError as err:
        raise Unread(f"the index {text!r} of a frequency ω could not be read ({err.message}); write ω_k, or "
                     "ω_0 and ω_{d/2-1}") from None
    if value.kind != "scalar":
        raise Unread(f"the index {text!r} of a frequency ω is not a number")
    return value.expr


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 80 else text[:77] + "..."


# -- the whole matrix with dots ------------------------------------------------------------------
def _dotted_blocks(written: str, table: SymbolTable) -> list[Block]:
    """The diagonal blocks of a matrix written with dots (its first and last, or a general one).

    Cells are dots, zeros (or empty) or entries; the entries must come as 2×2 squares on the
    diagonal, in the same place in rows and columns."""
    body = written[written.find("}") + 1:written.rfind("\\end{")]
    if written.startswith("\\begin{array}") and body.startswith("{"):
        body = body[body.find("}") + 1:]
    rows = [[cell.strip() for cell in row.split("&")] for row in body.split("\\\\") if row.strip()]
    filled = {(r, c) for r, row in enumerate(rows) for c, cell in enumerate(row) if _entry(cell)}
    blocks, seen, corner = [], set(), (-1, -1)
    for r, c in sorted(filled):
        if (r, c) in seen:
            continue
        square = {(r, c), (r, c + 1), (r + 1, c), (r + 1, c + 1)}
        if not square <= filled or r <= corner[0] or c <= corner[1]:
            raise Unread("in your matrix with dots, the written entries do not form 2×2 blocks down the diagonal "
                         "(zeros and dots elsewhere); write M as diag(M_0, ..., M_{d/2-1}) with M_k = ...")
        seen |= square
        corner = (r + 1, c + 1)
        cells = [[rows[r][c], rows[r][c + 1]], [rows[r + 1][c], rows[r + 1][c + 1]]]
        blocks.append(_block("\\begin{bmatrix}" + " \\\\ ".join(" & ".join(row) for row in cells) +
                             "\\end{bmatrix}", table))
    if not blocks:
        raise Unread("your matrix with dots writes out no block; write out its first and last diagonal blocks")
    return _placed_by_position(blocks)


def _placed_by_position(blocks: list[Block]) -> list[Block]:
    """A first or last block that names no index (cos 1, sin 1) is the first or last pair's."""
    if len(blocks) < 2:
        return blocks
    ends = {0: "first", len(blocks) - 1: "last"}
    return [replace(b, at=ends[i]) if i in ends and b.index is None else b for i, b in enumerate(blocks)]


def _entry(cell: str) -> bool:
    """A cell that holds an entry: not empty, not a zero, not dots."""
    bare = cell.strip().strip("{}").strip()
    return bool(bare) and bare not in ("0", "\\mathbf{0}", "\\mathbf 0", "\\boldsymbol{0}", "O") \
        and not any(bare == mark or bare.startswith(mark) for mark in DOTS)


# -- the range of the blocks ---------------------------------------------------------------------
def _named_range(around: str, table: SymbolTable) -> tuple[Any, Any]:
    """The first and last block index the text names: diag(M_0, ..., M_{d/2-1}) or
    \\bigoplus_{k=0}^{d/2-1}; (None, None) when it names none."""
    lower = around.lower()
    at = lower.find("oplus_")
    if at >= 0:
        low, after = _subscript(around, at + len("oplus"))
        high = _superscript(around, after)
        if low is not None and high is not None:
            low = low.split("=", 1)[-1]
            return _index(low, table), _index(high, table)
    at = lower.find("diag")
    opening = around.find("(", at) if at >= 0 else -1
    if opening < 0 or opening - at > 40:
        return None, None
    names = [sub for arg in _arguments(around, opening) if (sub := _name_index(arg)) is not None]
    if len(names) < 2:
        return None, None
    return _index(names[0], table), _index(names[-1], table)


def _superscript(text: str, i: int) -> str | None:
    j = i
    while j < len(text) and text[j] == " ":
        j += 1
    if j >= len(text) or text[j] != "^":
        return None
    return _subscript(text[:j] + "_" + text[j + 1:], j)[0]


def _arguments(text: str, opening: int) -> list[str]:
    """The comma-separated arguments of the parenthesis opened at `opening`."""
    args, depth, start = [], 0, opening + 1
    for i in range(opening, min(len(text), opening + 2000)):
        ch = text[i]
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
            if depth == 0:
                return args + [text[start:i]]
        elif ch == "," and depth == 1:
            args.append(text[start:i])
            start = i + 1
    return []


def _name_index(arg: str) -> str | None:
    """The subscript of a block named like M_0, M_{d/2-1}, R_k (not dots, not a matrix)."""
    arg = arg.strip()
    if not arg or HOLE in arg or any(mark in arg for mark in DOTS):
        return None
    at = arg.find("_")
    return _subscript(arg, at)[0] if at > 0 else None
