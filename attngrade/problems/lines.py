"""Line numbers for configuration errors: `file:line: message`, as an editor expects.

The loaders raise ConfigErrors that name the file, the part and the offending name
(`'positons'`). Here the YAML is composed (nodes with their positions, no objects
built, so nothing in the file can run) and the line of that name, inside that part,
is found, so an instructor can jump to it.
"""

from __future__ import annotations

import re
from typing import Iterator

import yaml

_PART = re.compile(r"\bpart '?([^',:\s]+)'?")
_QUOTED = re.compile(r"'([^']+)'")


def with_line(message: str, where: str, text: str) -> str:
    """`message` (which starts with `where`) with `where:LINE` when the line can be found."""
    if not message.startswith(where) or re.match(r":\d", message[len(where):]):
        return message  # not about this file, or already with its line
    rest = message[len(where):]
    part = _PART.search(rest)
    quoted = [q for q in _QUOTED.findall(rest) if not part or q != part.group(1)]
    line = locate(text, part.group(1) if part else None, quoted[0] if quoted else None)
    return f"{where}:{line}{rest}" if line else message


def locate(text: str, part: str | None = None, name: str | None = None) -> int | None:
    """1-based line of `name` within the part `part` (a mapping with that id, or under that key)."""
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None
    if root is None:
        return None
    anchor = scope = root
    if part is not None:
        found = next(_part_nodes(root, part), None)
        if found is None:
            return None
        anchor, scope = found
    if name is not None:
        hit = next((node for node in _nodes(scope) if isinstance(node, yaml.ScalarNode) and node.value == name), None)
        if hit is not None:
            return hit.start_mark.line + 1
    return anchor.start_mark.line + 1


def _nodes(node: yaml.Node, seen: set[int] | None = None) -> Iterator[yaml.Node]:
    seen = set() if seen is None else seen
    if id(node) in seen:  # an anchor that refers to itself
        return
    seen.add(id(node))
    yield node
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield from _nodes(key, seen)
            yield from _nodes(value, seen)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _nodes(item, seen)


def _part_nodes(root: yaml.Node, part: str) -> Iterator[tuple[yaml.Node, yaml.Node]]:
    """(where the part starts, its subtree): a mapping with `id: part` (a problem file) first,
    else the key `part` and its value (a keys file)."""
    mappings = [node for node in _nodes(root) if isinstance(node, yaml.MappingNode)]
    for node in mappings:
        if any(key.value == "id" and isinstance(value, yaml.ScalarNode) and value.value == part
               for key, value in node.value):
            yield node, node
    for node in mappings:
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == part:
                yield key, value
