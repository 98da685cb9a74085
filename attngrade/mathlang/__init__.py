"""The answer language: LaTeX and ASCII math read into sympy, never evaluated as code."""

from .limits import DEFAULT_LIMITS, Limits
from .nodes import Value
from .parser import parse
from .symbols import SymbolSpec, SymbolTable

__all__ = ["DEFAULT_LIMITS", "Limits", "SymbolSpec", "SymbolTable", "Value", "parse"]
