"""The jinja2 environment every page is rendered in: autoescaped, with the filters the templates use."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from ..records import Status
from ..runtime.text import counted, printable


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("attngrade.reports", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,  # the templates ship with the package: no stat of their files per report
        finalize=_shown,
    )
    env.filters["points"] = lambda x: f"{round(x, 2):g}"  # two decimals for reading; JSON keeps them exact
    env.filters["counted"] = counted  # {{ n | counted("point") }}: '1 point', '2 points'
    env.filters["percent"] = lambda x: f"{100 * x:.1f}%"
    # Ids and other short student text shown among other names: the controls that would reorder
    # what follows them (a right-to-left override makes "\u202eecila" look like "alice") are shown
    # as their escapes, as in grades.csv and on the terminal.
    env.filters["printable"] = lambda text: printable(str(text))
    env.globals["Status"] = Status  # templates compare statuses with its members, never with bare words
    return env


def _shown(value: Any) -> Any:
    """Every value a page shows, as it is shown: autoescaping makes text safe for HTML, not for the
    reader. Feedback quotes what a student's code said and answers are the student's own, so the
    controls and the marks that would reorder or hide text (an override that makes a line read
    backwards, a zero-width space, a carriage return) are shown as their escapes wherever they come
    from; markup keeps its type (the translation only replaces such characters, and leaves tags)."""
    if isinstance(value, str) and not value.isprintable():  # (most values: no call beyond this line)
        return printable(value)
    return value
