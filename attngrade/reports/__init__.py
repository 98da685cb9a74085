"""HTML reports rendered with jinja2 templates (autoescaped: student text is data)."""

from __future__ import annotations

from functools import lru_cache

from jinja2 import Environment, PackageLoader, select_autoescape

from ..records import Homework, Result


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader(__package__, "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["points"] = lambda x: f"{x:g}"
    return env


def render_student(result: Result, homework: Homework | None) -> str:
    """One student's report page."""
    parts = {p.id: p for p in homework.parts} if homework else {}
    return environment().get_template("student.html.j2").render(result=result, homework=homework, parts=parts)


def render_index(rows: list[tuple[Result, str]], title: str) -> str:
    """The class page: every student with a link to their report."""
    return environment().get_template("index.html.j2").render(rows=rows, title=title)
