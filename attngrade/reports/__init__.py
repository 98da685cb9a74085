"""HTML reports rendered with jinja2 templates (autoescaped: student text is data).

Each page is one self-contained file: styles inline, math as MathML, plots as inline
SVG, no script, and a Content-Security-Policy that would block one anyway.
"""

from .pages import render_index, render_student

__all__ = ["render_index", "render_student"]
