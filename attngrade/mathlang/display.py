"""Show a parsed answer back to its author: "read as u_b u_b^T/beta^2"."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import sympy
from sympy.core.mul import _keep_coeff
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.str import StrPrinter


def _enclosed(text: str) -> bool:
    """Whether one pair of parentheses holds all of `text`: "(a + b)", not "(a) b - c"."""
    if not text.startswith("("):
        return False
    depth = 0
    for position, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return position == len(text) - 1
    return False


class ReadingPrinter(StrPrinter):
    """sympy's str printer in the notation students typed: ^ for powers, ^T, no `*`."""

    def _print_Pow(self, expr: Any, rational: bool = False) -> str:
        text = super()._print_Pow(expr, rational)
        return text.replace("**", "^")

    def _print_Mul(self, expr: Any) -> str:
        return super()._print_Mul(expr).replace("**", "^").replace("*", " ")

    def _print_MatMul(self, expr: Any) -> str:
        # A scalar that divides, as in (u_a u_a^T + I)/beta^2, is shown after a slash.
        scalars = [a for a in expr.args if not isinstance(a, sympy.MatrixExpr)]
        if len(scalars) == 1 and scalars[0] is expr.args[0]:
            num, den = sympy.fraction(scalars[0])
            if den != 1:
                rest = sympy.MatMul(*expr.args[1:]) if len(expr.args) > 2 else expr.args[1]
                body = self._print(rest)
                if isinstance(rest, sympy.MatAdd) and not _enclosed(body):
                    body = f"({body})"
                if num == -1:
                    body = f"-{body}"
                elif num != 1:
                    body = f"{self._print(num)} {body}"
                denominator = self._print(den)
                if not (den.is_Symbol or den.is_Integer or isinstance(den, sympy.Pow)):
                    denominator = f"({denominator})"
                return f"{body}/{denominator}"
        return self._product(expr).replace("*", " ")

    def _product(self, expr: Any) -> str:
        # sympy's StrPrinter asks the whole product for its precedence, which tests whether it
        # can take a minus sign by rebuilding it (milliseconds an answer); once a negative
        # coefficient is pulled out in front, a product's precedence is a product's.
        c, m = expr.as_coeff_mmul()
        sign = ""
        if c.is_number and c.is_extended_negative:
            expr = _keep_coeff(-c, m)
            sign = "-"
        return sign + "*".join(self.parenthesize(arg, PRECEDENCE["Mul"]) for arg in expr.args)

    def _print_Transpose(self, expr: Any) -> str:
        arg = self._print(expr.arg)
        if not isinstance(expr.arg, sympy.MatrixSymbol):
            arg = f"({arg})"
        return f"{arg}^T"

    def _print_MatPow(self, expr: Any) -> str:
        return f"({self._print(expr.base)})^{self._print(expr.exp)}"

    def _print_MatrixElement(self, expr: Any) -> str:
        # A 1×1 product such as x^T y is shown as the inner product it is.
        if expr.parent.shape == (1, 1):
            return self._print(expr.parent)
        return super()._print_MatrixElement(expr)

    def _print_Identity(self, expr: Any) -> str:
        return "I"

    def _print_ImmutableDenseMatrix(self, expr: Any) -> str:
        rows = ", ".join("[" + ", ".join(self._print(x) for x in row) + "]" for row in expr.tolist())
        return f"[{rows}]"

    _print_ImmutableMatrix = _print_ImmutableDenseMatrix
    _print_MutableDenseMatrix = _print_ImmutableDenseMatrix


_PRINTER = ReadingPrinter({"order": "none"})


def reading(expr: Any) -> str:
    """A plain-text rendering of a sympy object in the students' own notation."""
    return _PRINTER.doprint(expr)


def combination(coefficients: dict[str, Any]) -> str:
    """`{u_b: 1, u_c: -1}` as "u_b - u_c", in the order given; all zero is "0"."""
    out = ""
    for name, coeff in coefficients.items():
        if isinstance(coeff, float):
            coeff = sympy.Rational(Fraction(coeff).limit_denominator(12))
        coeff = sympy.cancel(coeff)
        if coeff == 0:
            continue
        negative = coeff.could_extract_minus_sign()
        size = -coeff if negative else coeff
        term = name if size == 1 else f"{_factor(size)} {name}"
        if not out:
            out = f"-{term}" if negative else term
        else:
            out += f" - {term}" if negative else f" + {term}"
    return out or "0"


def _factor(coeff: Any) -> str:
    text = reading(coeff)
    return f"({text})" if isinstance(coeff, sympy.Add) else text
