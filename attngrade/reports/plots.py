"""Inline SVG plots: attention heatmaps and the score histogram.

They are drawn from jinja2 templates (`templates/*.svg.j2`) rather than with matplotlib:
a heatmap is a grid of squares, and a report must stay cheap to write for a whole class
(matplotlib's import and its figures would cost more than grading itself).
Identical plots are drawn once.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Sequence

from markupsafe import Markup

from .environment import environment

CELL = 40  # px per heatmap cell


def _env():
    return environment()


def _shade(value: float) -> str:
    """White at 0 to a strong blue at 1."""
    v = min(1.0, max(0.0, float(value)))
    r, g, b = (round(255 + (c - 255) * v) for c in (38, 92, 170))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(weights: Sequence, target: Sequence | None, title: str,
            rows: Sequence[str] | None = None, cols: Sequence[str] | None = None) -> Markup:
    """Student's attention weights next to the weights the property needs.

    `rows` and `cols` name the queries and the keys as the problem does (q, k_a, x_1, ...);
    without them (or when their number does not fit) they are q1.., x1.. or k1...
    A row of `target` that is all zeros puts no requirement on that query: it is drawn as "–".
    """
    return _heatmap(json.dumps(weights), json.dumps(target), title,
                    json.dumps(list(rows) if rows else None), json.dumps(list(cols) if cols else None))


GREEK = {name: chr(code) for name, code in (
    ("alpha", 0x3B1), ("beta", 0x3B2), ("gamma", 0x3B3), ("delta", 0x3B4), ("epsilon", 0x3B5), ("zeta", 0x3B6),
    ("eta", 0x3B7), ("theta", 0x3B8), ("iota", 0x3B9), ("kappa", 0x3BA), ("lambda", 0x3BB), ("mu", 0x3BC),
    ("nu", 0x3BD), ("xi", 0x3BE), ("pi", 0x3C0), ("rho", 0x3C1), ("sigma", 0x3C3), ("tau", 0x3C4),
    ("phi", 0x3C6), ("chi", 0x3C7), ("psi", 0x3C8), ("omega", 0x3C9))}


def label(name: str) -> dict[str, str]:
    """An axis name as a base and a subscript: k_a -> k, a; mu_b -> μ, b; q1 -> q, 1."""
    base, sep, sub = name.partition("_")
    if not sep:
        stem = base.rstrip("0123456789")
        if stem and stem != base:
            base, sub = stem, base[len(stem):]
    sub = sub.strip("{}")
    return {"base": GREEK.get(base, base), "sub": sub, "width": len(GREEK.get(base, base)) + 0.7 * len(sub)}


def _fit(names: Sequence[str] | None, default: list[str]) -> list[dict[str, str]]:
    return [label(n) for n in (names if names and len(names) == len(default) else default)]


@lru_cache(maxsize=512)
def _heatmap(weights_json: str, target_json: str, title: str, rows_json: str = "null",
             cols_json: str = "null") -> Markup:
    panels = [("your weights", json.loads(weights_json))]
    target = json.loads(target_json)
    if target is not None:
        panels.append(("needed", target))
    row_names, col_names = json.loads(rows_json), json.loads(cols_json)
    drawn = []
    for name, data in panels:
        grid = data if data and isinstance(data[0], list) else [data]
        many = len(grid) > 1
        free = {i for i, row in enumerate(grid) if name == "needed" and not any(float(v) for v in row)}
        drawn.append({
            "label": name,
            "cells": [{"row": i, "col": j, "value": float(v), "fill": "#f4f4f4" if i in free else _shade(v),
                       "dark": float(v) > 0.6, "free": i in free}
                      for i, row in enumerate(grid) for j, v in enumerate(row)],
            "rows": _fit(row_names, [f"q{i + 1}" if many else "q" for i in range(len(grid))]),
            "cols": _fit(col_names, [f"x{j + 1}" if many else f"k{j + 1}" for j in range(len(grid[0]))]),
            "free": bool(free),
        })
    margin = 14 + 8 * max(r["width"] for p in drawn for r in p["rows"])
    return Markup(_env().get_template("heatmap.svg.j2").render(
        panels=drawn, title=title, cell=CELL, margin=round(margin), free=any(p["free"] for p in drawn)))


def histogram(scores: Sequence[float], maximum: float) -> Markup:
    return _histogram(tuple(scores), float(maximum))


@lru_cache(maxsize=32)
def _histogram(scores: tuple[float, ...], maximum: float) -> Markup:
    bins = min(20, max(5, int(maximum) or 5))
    width = (maximum or 1.0) / bins
    counts = [0] * bins
    for s in scores:
        counts[min(bins - 1, max(0, int(s / width)))] += 1
    top = max(counts) or 1
    bars = [{"index": i, "count": c, "low": i * width, "high": (i + 1) * width, "height": c / top}
            for i, c in enumerate(counts)]
    return Markup(_env().get_template("histogram.svg.j2").render(bars=bars, top=top, maximum=maximum))
