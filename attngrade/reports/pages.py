"""The student's report page and the class page."""

from __future__ import annotations

from typing import Any, Iterator

from ..grading.groups import Group
from ..records import Homework, Result
from .environment import environment
from .views import class_view, student_view

STUDENT_PAGE, CLASS_PAGE = "student.html.j2", "index.html.j2"


def compile_templates() -> None:
    """Compile the page templates now (a report process does it while the class is still being read)."""
    for name in (STUDENT_PAGE, CLASS_PAGE):
        environment().get_template(name)


def warm() -> None:
    """Make ready what every report process needs before its first page: the templates compiled
    and the MathML converter imported (a slow import). Done once here, before the report processes
    are forked, they inherit it instead of each doing it again (see `parallel.ReportPool.prepare`)."""
    compile_templates()
    import latex2mathml.converter  # noqa: F401  (imported on first use by `mathml.latex_to_mathml`)


def render_student(result: Result, homework: Homework | None, *, rubric: bool = False) -> str:
    """One student's report page; the rubric of pending parts only when `rubric` (a staff view, or opted in)."""
    return environment().get_template(STUDENT_PAGE).render(**student_view(result, homework), show_rubric=rubric)


def render_index(rows: list[tuple[Result, str]], title: str,
                 homeworks: dict[str, Homework] | None = None,
                 groups: dict[str, dict[str, list[Group]]] | None = None) -> str:
    """The class page: score histogram, per-part statistics, answer groups, links."""
    return "".join(index_pieces(rows, title, homeworks, groups))


def index_pieces(rows: list[tuple[Result, str]], title: str,
                 homeworks: dict[str, Homework] | None = None,
                 groups: dict[str, dict[str, list[Group]]] | None = None) -> Iterator[str]:
    """The class page in pieces, as jinja2 renders it: written as it comes, never whole in memory."""
    view: dict[str, Any] = class_view(rows, homeworks or {}, groups or {})
    stream = environment().get_template(CLASS_PAGE).stream(title=title, **view)
    stream.enable_buffering(500)  # pieces of 500 template outputs: fewer, larger writes
    return iter(stream)
