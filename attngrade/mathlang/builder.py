"""The inline builder: lark reduces a rule, this turns it into a typed Node.

Every operation checks kinds and shapes before sympy sees it, so a student gets
"(d×1)(d×1) cannot be multiplied; did you mean u_c u_d^T?" instead of a ShapeError,
and every error carries the character span it is about.
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import mpmath
import sympy
from lark import Token
from sympy.matrices.expressions.matexpr import MatrixElement

from ..errors import MathError
from ..runtime.text import closest, counted
from .functions import AppliedFunction
from .limits import Limits
from . import blocks, sums
from .nodes import BIGO, FUNCTION, LIST, MATRIX, SCALAR, Node, shape_text
from .symbols import GREEK_NAMES, SymbolTable, normalize_name

BUILTIN_FUNCTIONS = {
    "exp": sympy.exp,
    "log": sympy.log,
    "ln": sympy.log,
    "sin": sympy.sin,
    "cos": sympy.cos,
    "sqrt": sympy.sqrt,
}


@dataclass
class BuildContext:
    """What one parse needs: the table, the source (for messages) and its limits."""

    table: SymbolTable
    source: str
    limits: Limits
    free_name: str | None = None
    notes: list[str] = field(default_factory=list)
    # The indices of the sums being read, innermost last: (name, lower limit, upper limit, where).
    sums: list[tuple[str, Any, Any, int]] = field(default_factory=list)
    components: dict[Any, Any] = field(default_factory=dict)  # x_1[k] -> the vector it is an entry of
    # The parser itself, for shorthands that are text in our language; passed in by
    # the parser so the builder never imports it (the parser imports the builder).
    parse: Any = None

    def text(self, node: Node) -> str:
        return self.source[node.start : node.end].strip()


CURRENT: ContextVar[BuildContext] = ContextVar("attngrade_build_context")


def _span(*items: Any) -> tuple[int, int]:
    starts, ends = [], []
    for item in items:
        if isinstance(item, Token):
            starts.append(item.start_pos)
            ends.append(item.end_pos)
        elif isinstance(item, Node):
            starts.append(item.start)
            ends.append(item.end)
    return min(starts), max(ends)


def _numeric(expr: Any) -> Any:
    """A 30-digit value of a bounded numeric expression (mpmath, any exponent range)."""
    if expr.is_Rational:
        return None
    try:
        return sympy.N(expr, 30)
    except (ValueError, TypeError, OverflowError):
        return sympy.zoo


def _log10(expr: Any) -> float:
    """log10 of |expr| for a numeric expression; 0 for zero, inf when not finite."""
    if expr.is_Rational:
        if expr == 0:
            return 0.0
        p, q = abs(int(expr.p)), int(expr.q)
        return (p.bit_length() - q.bit_length()) * math.log10(2)
    value = _numeric(expr)
    if value is None or not value.is_Number or value in (sympy.zoo, sympy.nan) or not value.is_finite:
        return math.inf if value is not None and not value.is_real else 0.0
    if value == 0:
        return 0.0

    return float(mpmath.log10(abs(mpmath.mpf(value))))


def _magnitude(expr: Any) -> float:
    """|expr| for a bounded numeric expression, as a float (inf if it does not fit)."""
    size = _log10(expr)
    if size > 300:
        return math.inf
    value = expr if expr.is_Rational else _numeric(expr)
    try:
        return abs(float(value))
    except (TypeError, ValueError, OverflowError):
        return math.inf


def _sign(expr: Any) -> int:
    value = expr if expr.is_Rational else _numeric(expr)
    try:
        return int(bool(value > 0)) - int(bool(value < 0))
    except TypeError:
        return 0


def _is_zero(expr: Any) -> bool:
    if not isinstance(expr, sympy.Expr) or isinstance(expr, sympy.MatrixExpr):
        return False
    if expr.is_Rational:
        return expr == 0
    if not expr.is_number:
        if _nonzero_somewhere(expr):  # exact: a function that is not 0 at a point is not 0
            return False
        return expr.is_zero is True
    value = _numeric(expr)
    return value is not None and value.is_Number and value == 0


def _nonzero_somewhere(expr: Any) -> bool:
    """The expression is nonzero at some positive values of its symbols (cheaper than sympy's
    assumption system, which can take milliseconds to prove d^2 + 6 d + 9 ≠ 0)."""
    symbols = sorted(expr.free_symbols, key=str)
    if not all(isinstance(s, sympy.Symbol) for s in symbols):
        return False
    point = {s: sympy.Float(1.37 + 0.61 * i) for i, s in enumerate(symbols)}
    try:
        value = expr.xreplace(point)
        return bool(value.is_Number and value != 0 and value.is_finite)
    except (TypeError, ValueError, ZeroDivisionError):
        return False


class Builder:
    """lark inline transformer: one method per grammar alias."""

    # -- atoms -------------------------------------------------------------------
    def number(self, children: list) -> Node:
        (tok,) = children
        ctx = CURRENT.get()
        digits = len(tok.value.replace(".", ""))
        if digits > ctx.limits.max_digits:
            raise MathError(
                f"this number has {digits} digits; at most {ctx.limits.max_digits} are allowed",
                tok.start_pos, tok.end_pos,
            )
        return Node(sympy.Rational(tok.value), SCALAR, tok.start_pos, tok.end_pos)

    def name(self, children: list) -> Node:
        (tok,) = children
        return self._resolve(tok.value, tok.start_pos, tok.end_pos)

    def exp_name(self, children: list) -> Node:
        # In an exponent, T means transpose unless the part declares a scalar T.
        (tok,) = children
        if tok.value == "T" and CURRENT.get().table.resolve("T") is None:
            return Node(None, "top", tok.start_pos, tok.end_pos, word="T")
        return self._resolve(tok.value, tok.start_pos, tok.end_pos)

    def exp_name_group(self, children: list) -> Node:
        _, tok, close = children
        node = self.exp_name([tok])
        return Node(node.expr, node.kind, children[0].start_pos, close.end_pos, node.shape, node.word)

    def top_group(self, children: list) -> Node:
        return Node(None, "top", children[0].start_pos, children[-1].end_pos, word="T")

    def styled_name(self, children: list) -> Node:
        # \mathbf{u}_a and \boldsymbol{\mu}_{a} read as u_a and mu_a
        style, _, name, rbrace, *sub = children
        text = name.value + (sub[0].value if sub else "")
        end = sub[0].end_pos if sub else rbrace.end_pos
        return self._resolve(text, style.start_pos, end)

    def func_apply(self, children: list) -> Node:
        tok, arg = children
        fname = tok.value.lstrip("\\")
        func = Node(BUILTIN_FUNCTIONS[fname], FUNCTION, tok.start_pos, tok.end_pos, word=fname)
        node = self._apply(func, [arg], tok.start_pos, arg.end)
        source = CURRENT.get().source
        if source[arg.start : arg.start + 1] in ("(", "{", "[") or source.startswith("\\left", arg.start):
            return node  # \exp(x)^2 is (exp x)^2
        return Node(node.expr, node.kind, node.start, node.end, node.shape, applied=(func, arg))

    def top(self, children: list) -> Node:
        (tok,) = children
        return Node(None, "top", tok.start_pos, tok.end_pos, word="T")

    def group(self, children: list) -> Node:
        inner = children[1]
        start, end = _span(*children)
        return Node(inner.expr, inner.kind, start, end, inner.shape, None, inner.bracket)

    def bracket_group(self, children: list) -> Node:
        inner = children[1]
        start, end = _span(*children)
        if inner.kind == LIST:
            # [[a, b]] is a 1×2 row: the outer brackets hold one row.
            return Node([inner], LIST, start, end, bracket="[")
        return Node(inner.expr, inner.kind, start, end, inner.shape, bracket="[")

    def bracket_list(self, children: list) -> Node:
        items = [c for c in children if isinstance(c, Node)]
        start, end = _span(*children)
        return Node(items, LIST, start, end)

    def rows(self, children: list) -> list[list[Node]]:
        return [c for c in children if isinstance(c, list)]

    def row(self, children: list) -> list[Node]:
        return [c for c in children if isinstance(c, Node)]

    def matrix_env(self, children: list) -> Node:
        begin, rows, end_tok = children
        start, end = _span(begin, end_tok)
        if begin.value[len("\\begin"):] != end_tok.value[len("\\end"):]:
            raise MathError(f"'{begin.value}' is closed by '{end_tok.value}'", end_tok.start_pos, end_tok.end_pos)
        return self._matrix_from_rows(rows, start, end)

    def frac(self, children: list) -> Node:
        num, den = children[2], children[5]
        start, end = _span(*children)
        node = self._divide(num, den)
        return Node(node.expr, node.kind, start, end, node.shape)

    def sqrt(self, children: list) -> Node:
        tok, arg = children
        start, end = _span(*children)
        arg = self._as_value(arg)
        self._need_scalar(arg, "\\sqrt")
        return self._bounded(Node(sympy.sqrt(arg.expr), SCALAR, start, end))

    def norm(self, children: list) -> Node:
        open_, arg, close, *sub = children
        start, end = _span(*children)
        if sub and sub[0].value.strip("_{}") != "2":
            raise MathError("only the 2-norm is supported here; write \\|x\\| or \\|x\\|_2",
                            sub[0].start_pos, sub[0].end_pos)
        arg = self._as_value(arg)
        self._no_bigo(arg)
        if arg.kind == SCALAR:
            return Node(sympy.Abs(arg.expr), SCALAR, start, end)
        if not (arg.is_column or arg.is_row):
            raise MathError(f"a norm needs a vector; this is a {shape_text(arg.shape)} matrix",
                            arg.start, arg.end)
        vec = arg.expr if arg.is_column else arg.expr.T
        return Node(sympy.sqrt(self._inner_expr(vec, vec)), SCALAR, start, end)

    def inner(self, children: list) -> Node:
        a, b = children[1], children[3]
        start, end = _span(*children)
        return self._inner(a, b, start, end)

    def bigo(self, children: list) -> Node:
        arg = children[2]
        start, end = _span(*children)
        self._need_scalar(self._as_value(arg), "O(...)")
        return Node(arg.expr, BIGO, start, end)

    def bigo_cal(self, children: list) -> Node:
        name, arg = children[2], children[5]
        if name.value != "O":
            raise MathError("only \\mathcal{O}(...) is understood here", name.start_pos, name.end_pos)
        start, end = _span(*children)
        self._need_scalar(self._as_value(arg), "O(...)")
        return Node(arg.expr, BIGO, start, end)

    # -- sums with limits --------------------------------------------------------
    @staticmethod
    def open_sum(token: Token) -> Token:
        """The lexer read `\\sum_{j=1}^{n}`: its index is bound until the sum is built (see sums.py)."""
        ctx = CURRENT.get()
        index, lower, upper = sums.limits(token.value)
        ctx.sums.append((index, sums.limit(lower, ctx.table, token.start_pos, token.end_pos),
                         sums.limit(upper, ctx.table, token.start_pos, token.end_pos), token.start_pos))
        return token

    def bigsum(self, children: list) -> Node:
        tok, summand = children
        ctx = CURRENT.get()
        index, lower, upper, _ = ctx.sums.pop()
        summand = self._as_value(summand)
        self._no_bigo(summand)
        node = sums.total(summand, index, lower, upper, ctx.components, lambda a, b: self._inner_expr(a, b))
        note = f"read the sum over {index} = {lower}, ..., {upper} as {'its value' if node.kind == SCALAR else 'a sum'}"
        if note not in ctx.notes:
            ctx.notes.append(note)
        return self._bounded(Node(node.expr, node.kind, tok.start_pos, summand.end, node.shape))

    # -- operators ---------------------------------------------------------------
    def add(self, children: list) -> Node:
        a, op, b = children
        return self._add(a, b, op, sign=1)

    def sub(self, children: list) -> Node:
        a, op, b = children
        return self._add(a, b, op, sign=-1)

    def neg(self, children: list) -> Node:
        op, a = children
        a = self._as_value(a)
        self._no_bigo(a)
        start, end = _span(op, a)
        return Node(-a.expr, a.kind, start, end, a.shape)

    def pos(self, children: list) -> Node:
        op, a = children
        start, end = _span(op, a)
        return Node(a.expr, a.kind, start, end, a.shape, a.word, a.bracket)

    def mul(self, children: list) -> Node:
        a, _, b = children
        return self._multiply(a, b, explicit=True)

    def cdot(self, children: list) -> Node:
        a, _, b = children
        a, b = self._as_value(a), self._as_value(b)
        if a.kind == MATRIX and b.kind == MATRIX and a.shape == b.shape and (a.is_column or a.is_row):
            start, end = a.spanning(b)
            return self._inner(a, b, start, end)
        return self._multiply(a, b, explicit=True)

    def odot(self, children: list) -> Node:
        """⊙ with a scalar on one side is an ordinary product (as students use it for a scale)."""
        a, op, b = children
        a, b = self._as_value(a), self._as_value(b)
        if a.kind == MATRIX and b.kind == MATRIX:
            raise MathError("an elementwise product (⊙) of two matrices is not read here; write the product "
                            "you mean, or scale with a number or β", op.start_pos, op.end_pos)
        note = "read ⊙ with a scalar as an ordinary product"
        if note not in CURRENT.get().notes:
            CURRENT.get().notes.append(note)
        return self._multiply(a, b, explicit=True)

    def otimes(self, children: list) -> Node:
        """u ⊗ v between two vectors is the outer product u v^T."""
        a, op, b = children
        a, b = self._as_value(a), self._as_value(b)
        if not all(v.kind == MATRIX and (v.is_column or v.is_row) for v in (a, b)):
            raise MathError("⊗ is read as the outer product of two vectors; write the product you mean",
                            op.start_pos, op.end_pos)
        va = a.expr if a.is_column else a.expr.T
        vb = b.expr if b.is_column else b.expr.T
        start, end = a.spanning(b)
        note = f"read {CURRENT.get().text(a)} ⊗ {CURRENT.get().text(b)} as the outer product"
        if note not in CURRENT.get().notes:
            CURRENT.get().notes.append(note)
        return Node(va * vb.T, MATRIX, start, end, (va.shape[0], vb.shape[0]))

    def maxmin(self, children: list) -> Node:
        tok, *rest = children
        args = [self._as_value(c) for c in rest if isinstance(c, Node)]
        for arg in args:
            self._need_scalar(arg, tok.value.lstrip("\\"))
        start, end = _span(*children)
        pick = sympy.Max if tok.value.lstrip("\\") == "max" else sympy.Min
        return self._bounded(Node(pick(*[a.expr for a in args]), SCALAR, start, end))

    def juxt(self, children: list) -> Node:
        a, b = children
        return self._multiply(a, b, explicit=False)

    def div(self, children: list) -> Node:
        a, _, b = children
        return self._divide(a, b)

    def prime(self, children: list) -> Node:
        a, tok = children
        return self._transpose(a, tok.end_pos)

    def call_pow(self, children: list) -> Node:
        """`f(x)^2` is (f(x))^2 for a function; `M(k+1)^2` is M times (k+1)^2 for anything else."""
        func, lpar, arg, rpar, caret, exp = children
        if func.kind == FUNCTION:
            return self.pow([self.call([func, lpar, arg, rpar]), caret, exp])
        powered = self.pow([self.group([lpar, arg, rpar]), caret, exp])
        return self._times([func], powered, func.start, powered.end)

    def call_prime(self, children: list) -> Node:
        """`u_d (u_a + u_b)'` is u_d (u_a + u_b)^T: the mark is the bracket's, as with ^T."""
        func, lpar, arg, rpar, tok = children
        if func.kind == FUNCTION:
            return self.prime([self.call([func, lpar, arg, rpar]), tok])
        primed = self.prime([self.group([lpar, arg, rpar]), tok])
        product = self._times([func], primed, func.start, primed.end)
        # A power after the mark is the bracket's too: M(k+1)'^2 is M ((k+1)')^2.
        return Node(product.expr, product.kind, product.start, product.end, product.shape, pieces=(func, primed))

    def call_bracket(self, children: list) -> Node:
        func, *rest = children
        if func.kind == FUNCTION:
            return self.call(children)
        listed = len(rest) > 3  # [a, b]: a column of its items; [a]: a factor
        bracket = self.bracket_list(rest) if listed else self.bracket_group(rest)
        return self._multiply(func, bracket, explicit=False)

    def call(self, children: list) -> Node:
        func, *rest = children
        args = [c for c in rest if isinstance(c, Node)]
        start, end = _span(*children)
        if func.kind == FUNCTION:
            return self._apply(func, args, start, end)
        if len(args) > 1:
            raise MathError(
                f"'{CURRENT.get().text(func)}' is not a function, so it cannot take "
                f"{len(args)} arguments",
                func.start, end,
            )
        arg = args[0]
        grouped = Node(arg.expr, arg.kind, rest[0].start_pos, rest[-1].end_pos, arg.shape)
        return self._multiply(func, grouped, explicit=False)

    def pow(self, children: list) -> Node:
        base, caret, exp = children
        ctx = CURRENT.get()
        start, end = _span(base, exp)
        if base.kind == "top" or exp.expr is None and exp.kind != "top":
            raise MathError("a transpose mark cannot be raised to a power; write (x^T)^2 if that is meant",
                            caret.start_pos, caret.end_pos)
        base_v = self._as_value(base) if base.kind == LIST else base
        if base_v.pieces and exp.kind == SCALAR:
            # kM^2 is k M^2: the power binds to the last letter, as it would with a space.
            *head, last = base_v.pieces
            return self._times(head, self.pow([last, caret, exp]), start, end)
        if base_v.applied is not None and exp.kind == SCALAR:
            # \log N^2 is log(N^2): the power belongs to the unbracketed argument.
            func, arg = base_v.applied
            powered = self.pow([arg, caret, exp])
            return self._apply(func, [powered], base_v.start, exp.end)
        if exp.kind == "top" or (exp.word == "T" and base_v.kind == MATRIX):
            return self._transpose(base_v, exp.end)
        if exp.word == "T" and base_v.kind == SCALAR and ctx.table.resolve("T") is None:
            return Node(base_v.expr, SCALAR, start, end)  # a scalar's transpose is itself
        self._no_bigo(base_v)
        if exp.kind != SCALAR:
            raise MathError("an exponent must be a number or a scalar", exp.start, exp.end)
        e = exp.expr
        if e.is_number and isinstance(base_v.expr, sympy.Pow) and base_v.expr.exp.is_number:
            e_total = e * base_v.expr.exp  # (x^64)^64 is x^4096: the limit is on the total
            if _magnitude(e_total) > ctx.limits.max_exponent:
                raise MathError(f"the total exponent {_short(e_total)} is too large; exponents are limited to "
                                f"{ctx.limits.max_exponent} in absolute value", exp.start, exp.end)
        if e.is_number:
            if _magnitude(e) > ctx.limits.max_exponent:
                raise MathError(
                    f"the exponent {_short(e)} is too large; exponents are limited to "
                    f"{ctx.limits.max_exponent} in absolute value",
                    exp.start, exp.end,
                )
        if base_v.kind == FUNCTION:
            raise MathError("write the power after the argument, e.g. \\sin(x)^2", caret.start_pos)
        if base_v.kind == MATRIX:
            return self._matrix_power(base_v, exp, start, end)
        b = base_v.expr
        if b.is_number and e.is_number:
            if _is_zero(b) and _magnitude(e) > 0 and _sign(e) < 0:
                raise MathError("division by zero: 0 to a negative power", start, end)
            if not _is_zero(b) and _magnitude(e) * abs(_log10(b)) > ctx.limits.max_log10:
                raise MathError("this number is too large to work with", start, end)
        power = sympy.Pow(b, e)
        if e.is_number:
            # sympy spreads a power over a product, (x^64 M)^64 = x^4096 M^64: the limit is on what it made
            worst = max((p.exp for p in power.atoms(sympy.Pow) if p.exp.is_number), key=_magnitude, default=None)
            if worst is not None and _magnitude(worst) > ctx.limits.max_exponent:
                raise MathError(f"the total exponent {_short(worst)} is too large; exponents are limited to "
                                f"{ctx.limits.max_exponent} in absolute value", exp.start, exp.end)
        return self._bounded(Node(power, SCALAR, start, end))

    # -- helpers -----------------------------------------------------------------
    def _resolve(self, text: str, start: int, end: int) -> Node:
        ctx = CURRENT.get()
        if ctx.sums:
            found = sums.bound(text, ctx.sums, ctx.components, ctx.table, start, end)
            if found is not None:
                return found
        hit = ctx.table.resolve(text)
        if hit is not None:
            spec, note = hit
            if note and note not in ctx.notes:
                ctx.notes.append(note)
            if spec.define is not None and spec.kind != "function":
                return self._defined(spec, start, end)
            kind = {"scalar": SCALAR, "function": FUNCTION}.get(spec.kind, MATRIX)
            return Node(spec.sympy, kind, start, end, spec.dims, word=text)
        word = normalize_name(text)
        if word in BUILTIN_FUNCTIONS:
            return Node(BUILTIN_FUNCTIONS[word], FUNCTION, start, end, word=word)
        if word == "e":
            return Node(sympy.E, SCALAR, start, end, word=text)  # Euler's number, unless declared
        # "Mk" is M k and "u_au_b" is u_a u_b when the pieces are declared.
        pieces = _split_known(text, ctx.table) if text.isascii() and len(text) <= 40 else None
        if pieces:
            nodes = [self._resolve(piece, start + offset, start + offset + len(piece)) for piece, offset in pieces]
            product = nodes[0]
            for node in nodes[1:]:
                product = self._multiply(product, node, explicit=False)
            return Node(product.expr, product.kind, start, end, product.shape, pieces=tuple(nodes))
        if self._may_be_free(word):
            if ctx.free_name is None or ctx.free_name == word:
                ctx.free_name = word
                return Node(sympy.Symbol(word, positive=True), SCALAR, start, end, word=text)
            raise MathError(
                f"unknown symbol '{text}': this part allows one free constant and you already "
                f"used '{ctx.free_name}'; it declares: {', '.join(ctx.table.names())}",
                start, end,
            )
        raise MathError(self._unknown_message(text, ctx), start, end)

    @staticmethod
    def _defined(spec: Any, start: int, end: int) -> Node:
        ctx = CURRENT.get()
        table = ctx.table.without(spec.name)  # a definition may not refer to itself
        value = ctx.parse(spec.define, table, limits=ctx.limits)
        kind = SCALAR if value.kind == SCALAR else MATRIX
        return Node(value.expr, kind, start, end, value.shape)

    @staticmethod
    def _may_be_free(word: str) -> bool:
        ctx = CURRENT.get()
        if not ctx.table.free_scalar or word in ("T", "O", "e"):
            return False
        base, _, sub = word.partition("_")
        return (len(base) == 1 or base in GREEK_NAMES) and (not sub or len(sub) <= 3)

    @staticmethod
    def _unknown_message(text: str, ctx: BuildContext) -> str:
        names = ctx.table.names()
        hint = ""
        word = normalize_name(text)
        close = [n for n in names if n.replace("_", "") == word.replace("_", "")]
        if not close:  # a typo of a declared name: one letter off, or another case

            folded = {n.lower(): n for n in names}
            match = folded.get(word.lower()) or closest(word, names, cutoff=0.75)
            close = [match] if match else []
        if close:
            hint = f" (did you mean {close[0]}?)"
        declared = ", ".join(names) if names else "no symbols"
        return f"unknown symbol '{text}'{hint}; this part declares: {declared}"

    def _as_value(self, node: Node) -> Node:
        """Turn a bracket list into a matrix; reject things that are not values."""
        if node.kind == LIST:
            return self._list_to_matrix(node)
        if node.kind == "top":
            raise MathError("\\top only makes sense as an exponent, as in u^\\top", node.start, node.end)
        return node

    def _list_to_matrix(self, node: Node) -> Node:
        items = node.expr
        if any(item.kind == LIST for item in items) and not all(item.kind == LIST for item in items):
            if all(item.kind == LIST or item.bracket == "[" for item in items):
                widths = sorted({len(item.expr) if item.kind == LIST else 1 for item in items})
                raise MathError(f"the rows of this matrix have different lengths ({', '.join(map(str, widths))})",
                                node.start, node.end)
        if all(item.kind == LIST for item in items):
            rows = [item.expr for item in items]
            if node.bracket == "[" and len(items) == 1:
                rows = [items[0].expr]
            return self._matrix_from_rows(rows, node.start, node.end)
        # A flat list [a, b, c] is a column vector.
        return self._matrix_from_rows([[item] for item in items], node.start, node.end)

    def _matrix_from_rows(self, rows: list[list[Node]], start: int, end: int) -> Node:
        ctx = CURRENT.get()
        widths = {len(r) for r in rows}
        if len(widths) != 1:
            raise MathError(f"the rows of this matrix have different lengths ({', '.join(map(str, sorted(widths)))})",
                            start, end)
        if len(rows) * len(rows[0]) > ctx.limits.max_matrix_entries:
            raise MathError(f"this matrix is too large (at most {ctx.limits.max_matrix_entries} entries)",
                            start, end)
        rows = [[self._as_value(item) for item in r] for r in rows]
        if blocks.is_block(rows):
            return blocks.build(rows, start, end, ctx.notes)
        entries = []
        for r in rows:
            out = []
            for item in r:
                item = self._as_value(item)
                if item.kind != SCALAR:
                    raise MathError("a matrix entry must be a scalar", item.start, item.end)
                out.append(item.expr)
            entries.append(out)
        matrix = sympy.ImmutableMatrix(entries)
        return Node(matrix, MATRIX, start, end, (sympy.Integer(matrix.rows), sympy.Integer(matrix.cols)))

    def _bounded(self, node: Node) -> Node:
        """Keep every number an answer builds below 10^max_log10.

        With that invariant every later numeric test (is it zero? how large is this
        exponent?) evaluates bounded numbers only, so none of them can hang.
        """
        if node.kind == SCALAR and isinstance(node.expr, sympy.Expr) and node.expr.is_number:
            if _log10(node.expr) > CURRENT.get().limits.max_log10:
                raise MathError("this number is too large to work with", node.start, node.end)
        return node

    def _need_scalar(self, node: Node, where: str) -> None:
        if node.kind != SCALAR:
            what = "a function" if node.kind == FUNCTION else f"a {shape_text(node.shape)} matrix" if node.kind == MATRIX else node.kind
            raise MathError(f"{where} needs a scalar; this is {what}", node.start, node.end)

    def _no_bigo(self, *nodes: Node) -> None:
        for node in nodes:
            if node.kind == BIGO:
                raise MathError("O(...) must be the whole answer, e.g. O(n^2 d)", node.start, node.end)
            if node.kind == FUNCTION:
                raise MathError(f"'{CURRENT.get().text(node)}' is a function; give it an argument in parentheses",
                                node.start, node.end)

    def _add(self, a: Node, b: Node, op: Token, sign: int) -> Node:
        a, b = self._as_value(a), self._as_value(b)
        self._no_bigo(a, b)
        start, end = a.spanning(b)
        if a.kind != b.kind:
            mat, sca = (a, b) if a.kind == MATRIX else (b, a)
            raise MathError(
                f"cannot add a scalar and a {shape_text(mat.shape)} matrix"
                + ("; for a multiple of the identity write c I" if mat.shape[0] == mat.shape[1] else ""),
                op.start_pos, op.end_pos,
            )
        if a.kind == MATRIX and a.shape != b.shape:
            raise MathError(
                f"cannot add a {shape_text(a.shape)} and a {shape_text(b.shape)} matrix",
                op.start_pos, op.end_pos,
            )
        expr = a.expr + b.expr if sign > 0 else a.expr - b.expr
        return self._bounded(Node(expr, a.kind, start, end, a.shape))

    def _multiply(self, a: Node, b: Node, *, explicit: bool) -> Node:
        ctx = CURRENT.get()
        if a.kind == FUNCTION and not explicit:
            return self._apply(a, [b], a.start, b.end)
        a, b = self._as_value(a), self._as_value(b)
        self._no_bigo(a, b)
        start, end = a.spanning(b)
        if not explicit and ctx.source[b.start : b.start + 1] in set("0123456789.") \
                and ctx.source[a.end - 1 : a.end] in set("0123456789."):
            raise MathError("two numbers side by side; write 2 \\cdot 3 or 2*3 for a product, "
                            "and one decimal point per number", b.start, b.end)
        if a.kind == SCALAR or b.kind == SCALAR:
            kind = MATRIX if MATRIX in (a.kind, b.kind) else SCALAR
            shape = a.shape if a.kind == MATRIX else b.shape
            return self._bounded(Node(a.expr * b.expr, kind, start, end, shape))
        if a.shape[1] != b.shape[0] and a.is_column and b.is_column and a.shape == b.shape \
                and ctx.table.juxtaposed_inner and not explicit:
            note = f"read {ctx.text(a)} {ctx.text(b)} as the inner product {ctx.text(a)}^T {ctx.text(b)}"
            if note not in ctx.notes:
                ctx.notes.append(note)
            return Node(self._inner_expr(a.expr, b.expr), SCALAR, start, end)
        if a.shape[1] != b.shape[0]:
            message = f"({shape_text(a.shape)})({shape_text(b.shape)}) cannot be multiplied"
            if a.is_column and b.is_column:
                message += f"; did you mean {ctx.text(a)} {ctx.text(b)}^T?"
            else:
                message += f": {a.shape[1]} columns against {b.shape[0]} rows"
            raise MathError(message, b.start, b.end)
        product = blocks.collapse(a.expr * b.expr)
        shape = (a.shape[0], b.shape[1])
        if shape == (1, 1):
            return Node(_entry(product), SCALAR, start, end)
        return Node(product, MATRIX, start, end, shape)

    def _divide(self, a: Node, b: Node) -> Node:
        a, b = self._as_value(a), self._as_value(b)
        self._no_bigo(a, b)
        start, end = a.spanning(b)
        if b.kind != SCALAR:
            raise MathError(f"cannot divide by a {shape_text(b.shape)} matrix", b.start, b.end)
        if _is_zero(b.expr):
            raise MathError("division by zero", b.start, b.end)
        return self._bounded(Node(a.expr * sympy.Pow(b.expr, -1), a.kind, start, end, a.shape))

    def _times(self, head: list[Node], last: Node, start: int, end: int) -> Node:
        """The product of `head` and `last`, in order, spanning start..end."""
        product = last
        for node in reversed(head):
            product = self._multiply(node, product, explicit=False)
        return Node(product.expr, product.kind, start, end, product.shape)

    def _transpose(self, a: Node, end: int) -> Node:
        a = self._as_value(a)
        self._no_bigo(a)
        if a.kind == SCALAR:
            return Node(a.expr, SCALAR, a.start, end)
        return Node(a.expr.T, MATRIX, a.start, end, (a.shape[1], a.shape[0]))

    def _matrix_power(self, base: Node, exp: Node, start: int, end: int) -> Node:
        if (base.is_column or base.is_row) and exp.expr == 2:
            # v^2 for a vector: a TA reads the squared norm, and so do we, saying so
            ctx = CURRENT.get()
            ctx.notes.append(f"read {ctx.source[base.start:exp.end].strip()} as the squared norm "
                             f"\\|{ctx.source[base.start:base.end].strip()}\\|^2")
            v = base.expr if base.is_column else base.expr.T
            return Node(self._inner_expr(v, v), SCALAR, start, end)
        if base.shape[0] != base.shape[1]:
            hint = "; for a squared norm write \\|u\\|^2 or u^T u" if base.is_column else ""
            raise MathError(f"a {shape_text(base.shape)} matrix cannot be raised to a power{hint}",
                            base.start, exp.end)
        e = exp.expr
        if not (e.is_integer and e.is_number):
            raise MathError("a matrix power needs a whole-number exponent", exp.start, exp.end)
        return Node(sympy.MatPow(base.expr, e), MATRIX, start, end, base.shape)

    def _inner_expr(self, a: Any, b: Any) -> Any:
        return _entry(blocks.collapse(a.T * b))

    def _inner(self, a: Node, b: Node, start: int, end: int) -> Node:
        a, b = self._as_value(a), self._as_value(b)
        for v in (a, b):
            if not (v.kind == MATRIX and (v.is_column or v.is_row)):
                raise MathError("an inner product needs two vectors", v.start, v.end)
        va = a.expr if a.is_column else a.expr.T
        vb = b.expr if b.is_column else b.expr.T
        if va.shape != vb.shape:
            raise MathError(f"cannot take the inner product of vectors of lengths {va.shape[0]} and {vb.shape[0]}",
                            start, end)
        return Node(self._inner_expr(va, vb), SCALAR, start, end)

    def _apply(self, func: Node, args: list[Node], start: int, end: int) -> Node:
        ctx = CURRENT.get()
        args = [self._as_value(a) for a in args]
        if func.word in BUILTIN_FUNCTIONS or func.expr in BUILTIN_FUNCTIONS.values():
            if len(args) != 1:
                raise MathError(f"{func.word} takes one argument", start, end)
            self._need_scalar(args[0], func.word or "this function")
            arg = args[0].expr
            if func.expr is sympy.log and _is_zero(arg):
                raise MathError("log(0) is undefined", args[0].start, args[0].end)
            if func.expr is sympy.exp and arg.is_number and _log10(arg) > 3.4 and _sign(arg) > 0:
                raise MathError("this number is too large to work with", start, end)  # exp(x), x > ~2500
            return self._bounded(Node(func.expr(arg), SCALAR, start, end))
        hit = ctx.table.resolve(func.word or "")
        spec = hit[0] if hit else None
        if spec is None:
            raise MathError("unknown function", func.start, func.end)
        if len(args) != spec.arity:
            raise MathError(f"{spec.name} takes {counted(spec.arity, 'argument')}; you gave {len(args)}", start, end)
        for a in args:
            self._no_bigo(a)
        if spec.result == "scalar":
            return Node(spec.sympy(*[a.expr for a in args]), SCALAR, start, end)
        if spec.result == "same":
            if args[0].kind != MATRIX:
                raise MathError(f"{spec.name} applies to a matrix or vector", args[0].start, args[0].end)
            shape = args[0].shape
        else:
            shape = spec.dims
        return Node(AppliedFunction(spec.name, shape[0], shape[1], *[a.expr for a in args]), MATRIX,
                    start, end, shape)


def _split_known(text: str, table: SymbolTable) -> list[tuple[str, int]] | None:
    """Cut an undeclared run into declared names, longest first, or None."""
    pieces, i = [], 0
    while i < len(text):
        for j in range(len(text), i, -1):
            hit = table.resolve(text[i:j])
            if hit is not None and hit[0].kind != "function":
                pieces.append((text[i:j], i))
                i = j
                break
        else:
            return None
    return pieces if len(pieces) > 1 else None


class OneByOne(MatrixElement):
    """The scalar in a 1×1 product such as x^T y.

    sympy's MatrixElement expands itself into an explicit Sum over indices whenever an
    expression around it is evaluated; an inner product of symbolic vectors must stay
    an inner product (and a declared feature map has no entries to sum at all).
    """

    def doit(self, **hints: Any) -> "OneByOne":
        return self


def _entry(product: Any) -> Any:
    """The scalar in a 1×1 product, kept as `(x^T y)[0,0]` rather than expanded to a Sum."""
    if isinstance(product, sympy.MatrixBase):
        return product[0, 0]
    if isinstance(product, sympy.MatAdd):  # a sum of 1×1 products, as a block product gives it
        return sympy.Add(*[_entry(term) for term in product.args])
    return OneByOne(product, 0, 0)


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 24 else f"{text[:10]}...({len(text)} digits)"
