"""Bounds on what one answer may make the parser do."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Every number here bounds work done on untrusted text before sympy sees it."""

    max_length: int = 2000  # characters in one answer field
    max_depth: int = 40  # nesting of brackets and environments
    max_powers: int = 100  # `^` signs in one answer (towers nest sympy objects)
    max_exponent: int = 64  # |n| in x^n when n is a number
    max_digits: int = 40  # digits in one number literal
    max_log10: float = 1000.0  # size of a number a numeric power may produce
    max_matrix_entries: int = 400
    max_functions: int = 40  # applications of exp, log, sin, ... (they nest without brackets)
    max_members: int = 8  # of a chain `a = b = c`: each is read and compared with the answer


DEFAULT_LIMITS = Limits()
