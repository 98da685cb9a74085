"""Block matrices: a matrix whose entries are themselves vectors or matrices.

`\\begin{bmatrix} x_1 \\\\ p_1 \\end{bmatrix}` stacks two vectors (the concatenation [x_1, p_1]);
`[x_1, p_1]` is the same column. Each block row must have one height and each block column one
width; a `0` block takes the size of its row and column. The identity written in blocks,
`\\begin{bmatrix} I & 0 \\\\ 0 & I \\end{bmatrix}`, is the part's identity I (its blocks have no
size of their own to give). Anything whose sizes cannot be worked out is an error, for staff.
"""

from __future__ import annotations

from typing import Any

import sympy

from ..errors import MathError
from .nodes import MATRIX, SCALAR, Node


def is_block(rows: list[list[Node]]) -> bool:
    return any(item.kind == MATRIX for row in rows for item in row)


def _zero(item: Node) -> bool:
    return item.kind == SCALAR and item.expr == 0


def build(rows: list[list[Node]], start: int, end: int, notes: list[str]) -> Node:
    """The block matrix of `rows` (each entry a matrix, or a 0 block)."""
    for row in rows:
        for item in row:
            if item.kind != MATRIX and not _zero(item):
                first = next(i for r in rows for i in r if i.kind == MATRIX)
                raise MathError("a matrix entry must be a scalar", first.start, first.end)
    identity = _identity_blocks(rows)
    if identity is not None:
        notes.append("read the block matrix with I on its diagonal and 0 elsewhere as the identity I")
        return Node(identity.expr, MATRIX, start, end, identity.shape)
    heights = [_size({item.shape[0] for item in row if item.kind == MATRIX}, "rows", row, start, end) for row in rows]
    widths = [_size({row[j].shape[1] for row in rows if row[j].kind == MATRIX}, "columns", [row[j] for row in rows],
                    start, end) for j in range(len(rows[0]))]
    blocks = [[item.expr if item.kind == MATRIX else sympy.ZeroMatrix(heights[i], widths[j])
               for j, item in enumerate(row)] for i, row in enumerate(rows)]
    matrix = sympy.BlockMatrix(blocks)
    return Node(matrix, MATRIX, start, end, (sum(heights, sympy.Integer(0)), sum(widths, sympy.Integer(0))))


def _identity_blocks(rows: list[list[Node]]) -> Node | None:
    """[[I, 0], [0, I]]: the identity, when every diagonal block is I and every other block is 0."""
    if len(rows) != len(rows[0]) or len(rows) < 2:
        return None
    for i, row in enumerate(rows):
        for j, item in enumerate(row):
            if i == j and not isinstance(item.expr, sympy.Identity) or i != j and not _zero(item):
                return None
    return rows[0][0]


def _size(found: set, what: str, items: list[Node], start: int, end: int) -> Any:
    if len(found) == 1:
        return found.pop()
    if not found:
        raise MathError(f"a block row or column of this matrix holds only 0 blocks, so its number of {what} "
                        "cannot be told", start, end)
    shown = " and ".join(sorted(map(str, found)))
    first = items[0]
    raise MathError(f"the blocks of one block row or column of this matrix have {shown} {what}", first.start,
                    items[-1].end)


def collapse(product: Any) -> Any:
    """A product or transpose with block matrices in it, multiplied out block by block."""
    if not product.has(sympy.BlockMatrix):
        return product
    return sympy.block_collapse(product)
