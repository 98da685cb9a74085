"""Read one answer string into a typed sympy Value, with no eval anywhere.

The text goes through three bounded steps: a scan (length, nesting, norm bars), an
LALR parse whose reductions build sympy objects through `Builder`, and a final
check of the result's kind. Every failure is a MathError that points at a column.
"""

from __future__ import annotations

import hashlib
import os
import re
from importlib.resources import files
from typing import Any, Callable

import lark
import sympy
from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from ..errors import MathError
from . import frame
from .builder import BUILTIN_FUNCTIONS, CURRENT, BuildContext, Builder
from .chain import same_meaning
from .limits import DEFAULT_LIMITS, Limits
from .macros import Definition
from .nodes import BIGO, FUNCTION, LIST, SCALAR, Value
from .normalize import normalize
from .rewrite import Rewritten
from .symbols import SymbolTable, normalize_name

_BUILDER = Builder()
_GRAMMAR = files(__package__).joinpath("grammar.lark").read_text(encoding="utf-8")


def _cache_file() -> str | bool:
    """Where lark keeps the LALR tables: the user's own cache folder, never shared /tmp
    (lark's cache is a pickle, so it must not be a file another user could plant)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "attngrade")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if os.stat(folder).st_uid != os.getuid() or not os.access(folder, os.W_OK):
            return False
    except (OSError, AttributeError):
        return False
    digest = hashlib.sha256((_GRAMMAR + lark.__version__).encode()).hexdigest()[:16]
    return os.path.join(folder, f"grammar-{digest}.lark")


def _parser() -> Lark:
    options = dict(parser="lalr", lexer="contextual", transformer=_BUILDER, maybe_placeholders=False,
                   lexer_callbacks={"SUM": _BUILDER.open_sum})
    cache = _cache_file()
    if cache:
        try:
            return Lark(_GRAMMAR, cache=cache, **options)
        except OSError:
            pass
    return Lark(_GRAMMAR, **options)


_PARSER = _parser()

# Norm bars, longest spelling first; \lVert/\rVert, \lvert/\rvert and \left\|/\right\| know their side.
_BARS = re.compile(r"\\left\\\||\\right\\\||\\[lr][vV]ert|\\[vV]ert(?![A-Za-z])|\\\||\|\||\u2016|\|")
OPEN_MARK, CLOSE_MARK = "\ue000", "\ue001"
# One pass over brackets; environments first, so the braces of \begin{bmatrix} are not brackets.
_BRACKETS = re.compile(
    r"(?P<open>\\begin\{[a-zA-Z]*\}|\\left\(|\\left\[|\\langle|[(\[{\ue000\u27e8])"
    r"|(?P<close>\\end\{[a-zA-Z]*\}|\\right\)|\\right\]|\\rangle|[)\]}\ue001\u27e9])"
)
_SCIENTIFIC = re.compile(r"(?<![A-Za-z_])[0-9.]+[eE][+-]?[0-9]")
_FUNCTIONS = re.compile(r"\\?(exp|log|ln|sin|cos|sqrt|max|min)(?![A-Za-z_])")
_CLOSING_TOKENS = {"RPAR": ")", "RBRACE": "}", "RBRACK": "]", "RIGHT_RPAR": "\\right)",
                   "RIGHT_RBRACK": "\\right]", "RANGLE": "\\rangle", "MAT_END": "\\end{...}"}


def _mark_norms(text: str) -> str:
    """Replace norm bars by same-length open/close marks (columns stay the same)."""
    out, last, opened = [], 0, False
    for m in _BARS.finditer(text):
        bar = m.group()
        if bar.startswith(("\\lVert", "\\lvert", "\\left")):
            mark = OPEN_MARK
        elif bar.startswith(("\\rVert", "\\rvert", "\\right")):
            mark = CLOSE_MARK
        else:
            mark = CLOSE_MARK if opened else OPEN_MARK
        opened = mark == OPEN_MARK
        out.append(text[last : m.start()])
        out.append(mark + " " * (len(bar) - 1))
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def _scan(text: str, limits: Limits) -> None:
    """Reject text whose size alone would make parsing or sympy expensive."""
    if len(text) > limits.max_length:
        raise MathError(
            f"the answer is {len(text)} characters long; at most {limits.max_length} are read",
            limits.max_length, limits.max_length + 1,
        )
    if not text.strip():
        raise MathError("the answer is empty", 0)
    if "\x00" in text:
        raise MathError("the answer contains a NUL character", text.index("\x00"))
    depth = 0
    for m in _BRACKETS.finditer(text):
        depth += 1 if m.group("open") else -1
        if depth > limits.max_depth:
            raise MathError(f"brackets are nested more than {limits.max_depth} deep", m.start(), m.end())
    scientific = _SCIENTIFIC.search(text)
    if scientific:
        raise MathError("scientific notation is not read; write 10^{5} or 1.5 \\cdot 10^{-3} instead",
                        scientific.start(), scientific.end())
    functions = list(_FUNCTIONS.finditer(text))
    if len(functions) > limits.max_functions:
        first = functions[limits.max_functions]
        raise MathError(f"the answer applies {len(functions)} functions; at most {limits.max_functions} are allowed",
                        first.start(), first.end())
    powers = text.count("^")
    if powers > limits.max_powers:
        raise MathError(f"the answer has {powers} powers; at most {limits.max_powers} are allowed",
                        text.index("^"))


def _explain(err: UnexpectedInput, text: str, written: Callable[[int, int], str]) -> MathError:
    """The parser's complaint in words; `written` gives the student's own text of a span, so a bracket the
    stage rewrote (`\\right)` became `)`) is quoted as it was written."""
    if isinstance(err, UnexpectedCharacters):
        ch = text[err.pos_in_stream]
        shown = {OPEN_MARK: "\\|", CLOSE_MARK: "\\|"}.get(ch, ch)
        if ch == "\\":
            cmd = re.match(r"\\[A-Za-z]*", text[err.pos_in_stream :]).group()
            return MathError(f"'{cmd}' is not understood here", err.pos_in_stream,
                             err.pos_in_stream + max(1, len(cmd)))
        if not ch.isprintable():
            return MathError(f"unexpected control character U+{ord(ch):04X}", err.pos_in_stream)
        return MathError(f"unexpected character '{shown}'", err.pos_in_stream)
    if isinstance(err, UnexpectedToken) and err.token.type != "$END":
        tok = err.token
        value = {OPEN_MARK: "\\|", CLOSE_MARK: "\\|"}.get(tok.value[:1], tok.value)
        value = written(tok.start_pos, tok.end_pos) or value
        if tok.type in _CLOSING_TOKENS:
            return MathError(f"unmatched '{value}'", tok.start_pos, tok.end_pos)
        return MathError(f"'{value}' cannot appear here", tok.start_pos, tok.end_pos)
    # The end came too soon: something was left open or an operand is missing.
    end = len(text.rstrip())
    opened = _unclosed(text)
    if opened is not None:
        pos, what = opened
        return MathError(f"'{written(pos, pos + len(what)) or what}' is never closed", pos, pos + len(what))
    return MathError("the answer ends too early: an operand is missing", max(0, end - 1), end)


def _unclosed(text: str) -> tuple[int, str] | None:
    stack: list[tuple[int, str]] = []
    for m in _BRACKETS.finditer(text):
        if m.group("open"):
            what = m.group()
            stack.append((m.start(), "\\|" if what == OPEN_MARK else what))
        elif stack:
            stack.pop()
    return stack[-1] if stack else None


def _known(table: SymbolTable) -> Callable[[str], bool]:
    """Whether a name is one the part declares or a built-in function (for `f(x, y) =` in front)."""
    def known(name: str) -> bool:
        word = normalize_name(name).lstrip("\\")
        return table.resolve(name) is not None or word in BUILTIN_FUNCTIONS or word in ("max", "min")

    return known


def parse(text: str, table: SymbolTable, *, limits: Limits = DEFAULT_LIMITS, name: str | None = None,
          definitions: tuple[Definition, ...] = ()) -> Value:
    """Parse `text` with the names of `table` into a Value, or raise MathError.

    `name` is the field's own name, which may stand in front of the answer (`encoder: O(M k^2)`);
    `definitions` are the student's own macros (macros.py), expanded before anything is read."""
    if not isinstance(text, str):
        raise MathError(f"expected math text, got {type(text).__name__}", 0)
    _scan(text, limits)
    rewritten = normalize(text, known=_known(table), names=(name,) if name else (), definitions=definitions,
                          max_length=limits.max_length)
    members = rewritten.chain + rewritten.labels
    if len(members) >= limits.max_members:
        start, end, _ = sorted(members)[limits.max_members - 1]
        raise MathError(f"the answer has more than {limits.max_members} members joined by '='; "
                        "write only your answer", start, end)
    try:
        _scan(rewritten.text, limits)  # `**` and `²` became powers: the limits hold for them too
    except MathError as err:
        raise _back(err, rewritten) from None
    node, ctx = _build(rewritten, table, limits)
    expr = node.expr
    small = _small_conditions(rewritten, ctx.free_name, ctx.notes)
    if not small and node.shape is not None and 1 in tuple(node.shape):
        _only_divided(expr, ctx.free_name, rewritten)  # a query: its length is what the constant scales
    expr = expr.xreplace(small) if small else expr
    kind = node.kind if node.kind in (SCALAR, BIGO) else "matrix"
    orders = _check_chain(rewritten, (expr, kind), table, limits, small)
    notes = tuple(dict.fromkeys([*rewritten.notes, *ctx.notes]))
    return Value(expr=expr, kind=kind, text=text, shape=node.shape, notes=notes, members=orders)


def _build(rewritten: Rewritten, table: SymbolTable, limits: Limits) -> tuple[Any, BuildContext]:
    """The typed node of the normalized text, built by the grammar's reductions."""
    prepared = _mark_norms(rewritten.text)
    ctx = BuildContext(table=table, source=rewritten.text, limits=limits, parse=parse)
    token = CURRENT.set(ctx)
    try:
        node = _PARSER.parse(prepared)
        node = _BUILDER._as_value(node) if node.kind == LIST else node
        if node.kind == FUNCTION:
            raise MathError(f"'{ctx.text(node)}' is a function; give it an argument", node.start, node.end)
        if node.kind == "top":
            raise MathError("\\top only makes sense as an exponent", node.start, node.end)
    except UnexpectedInput as err:
        raise _back(_explain(err, prepared, rewritten.written), rewritten) from None
    except MathError as err:
        raise _back(err, rewritten) from None
    except RecursionError:
        raise MathError("the answer is nested too deeply to read", 0, len(rewritten.original)) from None
    finally:
        CURRENT.reset(token)
    return node, ctx


_DIVIDES = re.compile(r"/|\\[dt]?frac|\^\s*\{?\s*-")


def _only_divided(expr: Any, free: str | None, rewritten: Rewritten) -> None:
    """`\\alpha^{-1/4}(\\mu_a + \\mu_b)`: a vector scaled by a constant of the student's own that appears
    only divided by grows only as the constant tends to 0. Which way it goes is the student's to say
    (`, \\alpha \\to 0`); reading it as growing would be a guess, so the answer is left to course staff.
    (A matrix such as V is read as written: a constant that only divides it makes it wrong either way.)"""
    if free is None or not isinstance(expr, sympy.Basic) or not _DIVIDES.search(rewritten.text):
        return  # nothing divides: a quick look at the text spares most answers the walk over the tree
    symbol = sympy.Symbol(free, positive=True)
    if not expr.has(symbol):
        return
    powers = [p for p in expr.atoms(sympy.Pow) if p.base == symbol]
    divided = {p: sympy.Dummy() for p in powers if p.exp.is_number and p.exp < 0}
    if divided and not expr.xreplace(divided).has(symbol):
        raise MathError(f"your constant {free} appears only in a denominator or with a negative power, so it makes "
                        f"the answer large only as it tends to 0; say which way it goes (for example ', {free} \\to 0' "
                        f"or ', {free} \\to \\infty')", 0, len(rewritten.original))


def _small_conditions(rewritten: Rewritten, free: str | None, notes: list[str]) -> dict[Any, Any]:
    """`\\lambda \\to 0^+` after the answer: 1/λ is the large constant, so λ is read as 1/(1/λ)."""
    swap: dict[Any, Any] = {}
    for subject, size, shown, start, end in rewritten.conditions:
        if size != "small":
            continue
        word = normalize_name(subject)
        if word != free:
            raise MathError(f"'{shown}' says {word} tends to 0, but it is not a constant of your "
                            "own in this answer; write the answer with a constant that grows instead", start, end)
        large = sympy.Symbol(f"(1/{word})", positive=True)
        swap[sympy.Symbol(word, positive=True)] = 1 / large
        notes.append(f"read '{shown}' as saying 1/{word} is your large constant (the check lets it grow)")
    return swap


def _check_chain(rewritten: Rewritten, answer: tuple[Any, str], table: SymbolTable, limits: Limits,
                 small: dict[Any, Any]) -> tuple[Any, ...]:
    """In `c_2 = x_2 = u_a` the last member is graded, so every other member must mean the same.

    A member that cannot be read, or means something else, makes the chain an error (never a
    free pass for the last member); an undeclared name in the middle (`c_2 = v_2 = u_a`) only
    names the answer. Orders of growth are compared by the bigO check: their members are returned."""
    expr, kind = answer
    orders = []
    for start, end, member in rewritten.chain:
        try:
            value = parse(member, table, limits=limits)
        except MathError as err:
            if frame.is_name(member) and err.message.startswith("unknown symbol"):
                rewritten.note(f"read '{member.strip()}' as a name for your answer")
                continue
            if member.lstrip().startswith("\\sum") and err.message.startswith("unknown symbol"):
                # a step in the student's own notation (weights \alpha_{2j}): the answer is the last member
                rewritten.note(f"read '{member.strip()}' as a step in your own notation (it is not compared)")
                continue
            raise MathError(f"'{member.strip()}' in your chain of equalities cannot be read ({err.message}); "
                            "write only your answer", start, end) from None
        other = value.expr.xreplace(small) if small else value.expr
        same = same_meaning(other, expr, table, rtol=1e-2 if rewritten.approximate else 1e-8, reader=parse)
        if not same and {kind, value.kind} <= {SCALAR, BIGO} and BIGO in (kind, value.kind):
            orders.append(other)  # O(N^2 d + N^2) = O(N^2 d): the same order, which the bigO check decides
            continue
        if same is None:
            raise MathError(f"attngrade could not tell whether '{member.strip()}' in your chain of equalities "
                            "equals your answer; write only your answer", start, end)
        if not same:
            raise MathError(f"your chain of equalities says '{member.strip()}' equals your answer, but it does not; "
                            "write only your answer", start, end)
    return tuple(orders)


def _back(err: MathError, rewritten: Rewritten) -> MathError:
    """The error with its span in the text as the student wrote it."""
    start, end = rewritten.where(err.start), rewritten.where(err.end)
    return MathError(err.message, start, max(end, start + 1))
