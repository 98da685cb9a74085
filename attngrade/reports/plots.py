"""Inline SVG plots: attention heatmaps and the score histogram.

They are drawn from jinja2 templates (`templates/*.svg.j2`) rather than with matplotlib:
a heatmap is a grid of squares, and a report must stay cheap to write for a whole class
(matplotlib cost 1.3 s to import and 0.13 s per figure here, more than grading itself).
Identical plots are drawn once.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Sequence

from markupsafe import Markup

CELL = 34  # px per heatmap cell


def _env():
    from . import environment

    return environment()


def _shade(value: float) -> str:
    """White at 0 to a strong blue at 1."""
    v = min(1.0, max(0.0, float(value)))
    r, g, b = (round(255 + (c - 255) * v) for c in (38, 92, 170))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(weights: Sequence, target: Sequence | None, title: str) -> Markup:
    """Student's attention weights next to the weights the property needs."""
    return _heatmap(json.dumps(weights), json.dumps(target), title)


@lru_cache(maxsize=512)
def _heatmap(weights_json: str, target_json: str, title: str) -> Markup:
    panels = [("your weights", json.loads(weights_json))]
    target = json.loads(target_json)
    if target is not None:
        panels.append(("needed", target))
    drawn = []
    for label, data in panels:
        rows = data if data and isinstance(data[0], list) else [data]
        many = len(rows) > 1
        drawn.append({
            "label": label,
            "cells": [{"row": i, "col": j, "value": float(v), "fill": _shade(v), "dark": float(v) > 0.6}
                      for i, row in enumerate(rows) for j, v in enumerate(row)],
            "rows": [f"q{i + 1}" if many else "q" for i in range(len(rows))],
            "cols": [f"x{j + 1}" if many else f"k{j + 1}" for j in range(len(rows[0]))],
        })
    return Markup(_env().get_template("heatmap.svg.j2").render(panels=drawn, title=title, cell=CELL))


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
