"""The staff grading app: Starlette routes, page shells, the JSON API (api.py) and one static script.

Pages are shells: a jinja2 template with no data in it, which the script fills from the API with
the grader's secret (see guard.py for where the secret lives and why). Student text is only ever
text: the script sets it with `textContent`, under a strict Content-Security-Policy (no inline
script or style, nothing from elsewhere). Every handler of the API runs in a worker thread; what a
request gets wrong is a 4xx saying so, a store that cannot be used a 503 naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import jinja2

from ..errors import ConfigError
from ..staff import Conflict, StoreError
from ..staff import graders as roster
from ..staff.transcripts import Unreadable
from . import inputs
from .api import Answer, Api, Call
from .classroom import Classroom
from .guard import Guard
from .inputs import BadInput

try:  # the review extra: `pip install 'attngrade[review]'`
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, PlainTextResponse, Response
    from starlette.routing import Route
except ImportError:  # pragma: no cover - said by `server.serve`
    Starlette = None  # type: ignore[assignment, misc]

HERE = Path(__file__).parent
STATIC = {"review.js": "text/javascript; charset=utf-8", "review.css": "text/css; charset=utf-8"}
PAGES = {"index": "What waits for staff", "part": "Grading", "audit": "Audit log", "requests": "Regrade requests",
         "next": "Next ungraded group"}
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


class Json(Response):
    """JSON as ASCII (any text, a lone surrogate included, travels as an escape) and never NaN."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def templates() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True,
                              trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)


def answered(handler: Callable[[Call], Answer], call: Call) -> Answer:
    """`handler(call)`, with what went wrong said as a 4xx (or a 503 for the store)."""
    try:
        return handler(call)
    except BadInput as err:
        return Answer(err.status, {"error": str(err)})
    except Conflict as err:
        return Answer(409, {"error": str(err), "current": err.current})
    except Unreadable as err:
        return Answer(422, {"error": str(err)})
    except LookupError as err:
        return Answer(404, {"error": str(err).strip("'\"")})
    except StoreError as err:
        return Answer(503, {"error": str(err)})
    except ValueError as err:
        return Answer(400, {"error": str(err)})


def endpoint(handler: Callable[[Call], Answer], post: bool) -> Callable[[Request], Any]:
    async def run(request: Request) -> Response:
        try:
            body = {}
            if post:
                body = inputs.parse_body(await _body(request), request.headers.get("content-type", ""))
            call = Call(request.state.grader, dict(request.path_params), dict(request.query_params), body)
        except BadInput as err:
            return Json({"error": str(err)}, status_code=err.status)
        answer = await run_in_threadpool(answered, handler, call)
        return Json(answer.data, status_code=answer.status)
    return run


async def _body(request: Request) -> bytes:
    pieces, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > inputs.MAX_BODY:
            raise BadInput(f"the body is larger than {inputs.MAX_BODY} bytes", 413)
        pieces.append(chunk)
    return b"".join(pieces)


class Shells:
    """The pages: one template, no data, the script fills them."""

    def __init__(self) -> None:
        self.env = templates()
        self.static = {name: (HERE / "static" / name).read_bytes() for name in STATIC}

    def page(self, name: str) -> Callable[[Request], Response]:
        def render(request: Request) -> Response:
            html = self.env.get_template("shell.html.j2").render(page=name, title=PAGES[name])
            return HTMLResponse(html)
        return render

    def static_file(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return PlainTextResponse("not found", status_code=404)
        return Response(self.static[name], media_type=STATIC[name])


def app(room: Classroom, hosts: set[str] | None) -> Any:
    """The ASGI app over `room`, behind the guard; `hosts`: the Host values it answers to (None: any)."""
    if Starlette is None:
        raise ConfigError("grade review needs the review extra: pip install 'attngrade[review]'")
    api, shells = Api(room), Shells()
    part = "/api/parts/{homework}/{part}"
    routes = [Route("/", shells.page("index")), Route("/next", shells.page("next")),
              Route("/audit", shells.page("audit")), Route("/part/{homework}/{part}", shells.page("part")),
              Route("/requests/{homework}/{part}", shells.page("requests")),
              Route("/favicon.ico", lambda request: Response(status_code=204)),
              Route("/static/{name}", shells.static_file)]
    gets = {"/api/me": api.me, "/api/parts": api.parts, part: api.part, f"{part}/requests": api.requests,
            "/api/integrity": api.integrity, "/api/audit": api.audit}
    posts = {"/api/next": api.next_any, "/api/requests/{rid}/reply": api.reply, f"{part}/grade": api.grade,
             f"{part}/rubric": api.rubric, f"{part}/split": api.split, f"{part}/merge": api.merge,
             f"{part}/threshold": api.threshold, f"{part}/comment": api.comment, f"{part}/next": api.next_in_part,
             f"{part}/poll": api.poll, f"{part}/transcribe": api.transcribe, f"{part}/leave": api.leave}
    routes += [Route(path, endpoint(handler, False)) for path, handler in gets.items()]
    routes += [Route(path, endpoint(handler, True), methods=["POST"]) for path, handler in posts.items()]
    made = Starlette(routes=routes)

    def grader_of(secret: str) -> str | None:
        with room.open() as conn:
            return roster.grader_of(conn, secret)
    return Guard(made, grader_of, hosts)
