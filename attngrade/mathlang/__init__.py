"""The answer language: LaTeX and ASCII math read into sympy, never evaluated as code.

The parser, the symbol tables and the typed values load sympy and lark; they are loaded when
first named (`from attngrade.mathlang import parse`), so that the modules that need neither
(`macros`, which finds a submission's own LaTeX macros as it is loaded) load on their own:
reading a class's submission files never waits for sympy.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .limits import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from .nodes import Value
    from .parser import parse
    from .symbols import SymbolSpec, SymbolTable

__all__ = ["DEFAULT_LIMITS", "Limits", "SymbolSpec", "SymbolTable", "Value", "parse"]

_LOADED_WHEN_NAMED = {"Value": "nodes", "parse": "parser", "SymbolSpec": "symbols", "SymbolTable": "symbols"}


def __getattr__(name: str) -> Any:
    if name not in _LOADED_WHEN_NAMED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_LOADED_WHEN_NAMED[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
