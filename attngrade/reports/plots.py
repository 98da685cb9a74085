"""Inline SVG plots drawn with matplotlib: attention heatmaps and the score histogram.

Plots of identical evidence are drawn once (a class shares a few distinct answers),
and matplotlib is imported only when a report needs a plot.
"""

from __future__ import annotations

import io
import json
import re
from functools import lru_cache
from typing import Sequence

from markupsafe import Markup

_XML_HEADER = re.compile(r"^.*?(<svg)", re.S)


def _svg(fig) -> Markup:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    # Drop the XML prolog and doctype: the SVG is embedded in an HTML page.
    return Markup(_XML_HEADER.sub(r"\1", buffer.getvalue(), count=1))


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "attngrade"  # stable ids: the same plot gives the same SVG
    import matplotlib.pyplot as plt

    return plt


def heatmap(weights: Sequence, target: Sequence | None, title: str) -> Markup:
    """Student's attention weights next to the weights the property needs."""
    return _heatmap(json.dumps(weights), json.dumps(target), title)


@lru_cache(maxsize=512)
def _heatmap(weights_json: str, target_json: str, title: str) -> Markup:
    import numpy as np

    plt = _pyplot()
    panels = [("your weights", np.atleast_2d(np.array(json.loads(weights_json), dtype=float)))]
    target = json.loads(target_json)
    if target is not None:
        panels.append(("needed", np.atleast_2d(np.array(target, dtype=float))))
    fig, axes = plt.subplots(1, len(panels), figsize=(2.6 * len(panels), 2.4), squeeze=False)
    for ax, (label, data) in zip(axes[0], panels):
        ax.imshow(data, vmin=0, vmax=1, cmap="Blues")
        rows, cols = data.shape
        for i in range(rows):
            for j in range(cols):
                ax.text(j, i, f"{data[i, j]:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if data[i, j] > 0.6 else "black")
        ax.set_xticks(range(cols), [f"x{j + 1}" if rows > 1 else f"k{j + 1}" for j in range(cols)], fontsize=7)
        ax.set_yticks(range(rows), [f"q{i + 1}" for i in range(rows)] if rows > 1 else ["q"], fontsize=7)
        ax.set_title(label, fontsize=8)
    fig.suptitle(title, fontsize=9)
    return _svg(fig)


def histogram(scores: Sequence[float], maximum: float) -> Markup:
    return _histogram(tuple(scores), maximum)


@lru_cache(maxsize=32)
def _histogram(scores: tuple[float, ...], maximum: float) -> Markup:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 2.4))
    bins = min(20, max(5, int(maximum) or 5))
    ax.hist(scores, bins=bins, range=(0, maximum or 1), color="#4a78c2", edgecolor="white")
    ax.set_xlabel("score")
    ax.set_ylabel("students")
    return _svg(fig)
