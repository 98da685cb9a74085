"""YAML of untrusted origin read with the safe loader, and its errors said with their place."""

from __future__ import annotations

from typing import Any

import yaml

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's where installed: the same rules, faster


class Loader(SAFE_LOADER):  # type: ignore[misc,valid-type]
    """The safe loader (libyaml's when present: same rules, faster), with base-60 numbers and
    booleans left as text."""


def _number(base_constructor):
    def construct(loader: Any, node: Any) -> Any:
        text = loader.construct_scalar(node)
        # YAML 1.1 reads 1:30 as 90, in base 60, built one bignum product per group: a long
        # run of them costs minutes. No answer means that reading; what was typed is kept.
        if ":" in text:
            return text
        return base_constructor(loader, node)

    return construct


# YAML 1.1 reads yes, no, on and off as booleans: an answer keeps the word its student wrote
# (a yes/no field reads the word as any other format's text).
Loader.add_constructor("tag:yaml.org,2002:bool", lambda loader, node: loader.construct_scalar(node))
Loader.add_constructor("tag:yaml.org,2002:int", _number(yaml.SafeLoader.construct_yaml_int))
Loader.add_constructor("tag:yaml.org,2002:float", _number(yaml.SafeLoader.construct_yaml_float))


def not_yaml(err: yaml.YAMLError) -> str:
    """'line L, column C: not valid YAML (what)', the position where the error has one."""
    mark = getattr(err, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    return f"{where}not valid YAML ({yaml_problem(err)})"


def yaml_problem(err: yaml.YAMLError) -> str:
    return getattr(err, "problem", None) or str(err)
