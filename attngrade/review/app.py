"""The staff grading app: Starlette routes, server-rendered pages, a JSON API and one static script.

Every request carries the server's token (the `?token=` of the printed URL once, then a cookie of
this port; a write also in the `X-Attngrade-Token` header, which a page of another site cannot
send); a request without it gets 403. Pages are jinja2 templates with autoescaping (student text is
only ever text) under a strict Content-Security-Policy: no inline script or style, nothing from
elsewhere. The API is documented in docs/review.md.
"""

from __future__ import annotations

import hmac
import json
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qsl, urlencode

import jinja2

from ..errors import ConfigError
from .. import staff
from ..staff import Change, Conflict
from ..runtime.text import printable
from . import classroom, grouping
from .classroom import Classroom

try:  # the review extra: `pip install 'attngrade[review]'`
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
    from starlette.routing import Route
except ImportError:  # pragma: no cover - said by `server.check_installed`
    Starlette = None  # type: ignore[assignment, misc]

HERE = Path(__file__).parent
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"),
           (b"cross-origin-opener-policy", b"same-origin"), (b"cache-control", b"no-store")]
STATIC = {"review.js": "text/javascript; charset=utf-8", "review.css": "text/css; charset=utf-8"}
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


class Guard:
    """ASGI middleware: the token on every request, the Host a loopback name (no DNS rebinding), and
    the security headers on every response."""

    def __init__(self, app: Any, token: str, cookie: str, hosts: tuple[str, ...] | None):
        self.app, self.token, self.cookie, self.hosts = app, token, cookie, hosts

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        if self.hosts is not None and _hostname(headers.get("host", "")) not in self.hosts:
            await _plain(send, 400, "this server answers only at the address it printed")
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        jar = SimpleCookie(headers.get("cookie", ""))
        given = headers.get("x-attngrade-token") or query.get("token") or (
            jar[self.cookie].value if self.cookie in jar else "")
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            await _plain(send, 403, "403: this app needs the token in the URL `grade review` printed")
            return
        if scope["method"] not in ("GET", "HEAD") and not hmac.compare_digest(
                headers.get("x-attngrade-token", "").encode(), self.token.encode()):
            await _plain(send, 403, "403: a change needs the X-Attngrade-Token header")
            return
        if "token" in query and scope["method"] == "GET":
            await self._welcome(scope, send, query)
            return
        await self.app(scope, receive, _secured(send))

    async def _welcome(self, scope: dict, send: Any, query: dict[str, str]) -> None:
        """The printed URL, once: the token becomes a cookie and leaves the address bar (and history)."""
        rest = urlencode({k: v for k, v in query.items() if k != "token"})
        where = scope.get("path", "/") + (f"?{rest}" if rest else "")
        cookie = f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"
        await send({"type": "http.response.start", "status": 303,
                    "headers": [(b"location", where.encode()), (b"set-cookie", cookie.encode()), *HEADERS]})
        await send({"type": "http.response.body", "body": b""})


def _hostname(host: str) -> str:
    """The name of a Host header without its port ('[::1]:80' -> '[::1]')."""
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _secured(send: Any) -> Any:
    async def wrapped(message: dict) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
        await send(message)
    return wrapped


async def _plain(send: Any, status: int, text: str) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), *HEADERS]})
    await send({"type": "http.response.body", "body": text.encode()})


def templates() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["points"] = lambda x: "" if x is None else f"{x:g}"
    return env


def _who(request: Request) -> str:
    name = printable(request.headers.get("x-attngrade-grader", "").strip())[:60]
    return name or "staff"


def _anonymous(request: Request) -> bool:
    return request.cookies.get("attngrade_anonymous") == "1"


class Review:
    """The routes over one Classroom."""

    def __init__(self, room: Classroom, token: str):
        self.room, self.token = room, token
        self.env = templates()
        self.static = {name: (HERE / "static" / name).read_bytes() for name in STATIC}

    # ------------------------------------------------------------ pages

    def index(self, request: Request) -> Response:
        rows = [classroom.progress(classroom.state(self.room, p)) for p in self._parts()]
        integrity = self._integrity(_anonymous(request))
        return self._page("index.html.j2", request, rows=rows, integrity=integrity)

    def part_page(self, request: Request) -> Response:
        part = self._part(request)
        found = classroom.state(self.room, part)
        query = request.query_params.get("q", "")
        groups = self._search(found, query)
        data = [classroom.group_json(self.room, found, g, _anonymous(request)) for g in groups]
        return self._page("part.html.j2", request, part=part, found=found, groups=data, query=query,
                          progress=classroom.progress(found), hints=classroom.suggestions(self.room, found),
                          rubric=[i.to_json() for i in found.rubric])

    def next_group(self, request: Request) -> Response:
        for hw, pid in self._parts():
            left = classroom.progress(classroom.state(self.room, self.room.part(hw, pid)))["next_group"]
            if left:
                return RedirectResponse(f"/part/{hw}/{pid}#{left}", status_code=303)
        return RedirectResponse("/", status_code=303)

    def audit_page(self, request: Request) -> Response:
        return self._page("audit.html.j2", request, rows=self._audit(500, _anonymous(request)))

    def _audit(self, limit: int, anonymous: bool) -> list[dict[str, Any]]:
        """The audit log, newest first; graded anonymously, students are their pseudonyms there too."""
        with self.room.open() as conn:
            rows = staff.audit_log(conn, limit)
        if anonymous:
            for row in rows:
                if str(row.get("target") or "").startswith("student:"):
                    row["target"] = "student:" + self.room.pseudonym(row["target"][len("student:"):])
                if row.get("action") == "renamed":  # its before and after are the ids themselves
                    for key in ("before", "after"):
                        row[key] = json.dumps(self.room.pseudonym(json.loads(row[key])))
        return rows

    def static_file(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return PlainTextResponse("not found", status_code=404)
        return Response(self.static[name], media_type=STATIC[name])

    def prefs(self, request: Request) -> Response:
        back = request.query_params.get("back", "/")
        response = RedirectResponse(back if back.startswith("/") and not back.startswith("//") else "/", 303)
        response.set_cookie("attngrade_anonymous", "1" if request.query_params.get("anonymous") == "1" else "0",
                            httponly=True, samesite="strict")
        return response

    def _page(self, name: str, request: Request, **context: Any) -> Response:
        html = self.env.get_template(name).render(token=self.token, anonymous=_anonymous(request),
                                                  path=request.url.path, **context)
        return HTMLResponse(html)

    # ------------------------------------------------------------ API: reading

    def api_parts(self, request: Request) -> Response:
        return JSONResponse([classroom.progress(classroom.state(self.room, p)) for p in self._parts()])

    def api_part(self, request: Request) -> Response:
        part = self._part(request)
        found = classroom.state(self.room, part)
        groups = self._search(found, request.query_params.get("q", ""))
        return JSONResponse({"homework": part.homework, "part": part.id, "statement": part.statement,
                             "written": part.text, "threshold": part.threshold, "embedder": part.embedder,
                             "progress": classroom.progress(found), "rubric": [i.to_json() for i in found.rubric],
                             "suggestions": classroom.suggestions(self.room, found),
                             "groups": [classroom.group_json(self.room, found, g, _anonymous(request))
                                        for g in groups]})

    def api_integrity(self, request: Request) -> Response:
        return JSONResponse(self._integrity(_anonymous(request)))

    def api_audit(self, request: Request) -> Response:
        limit = request.query_params.get("limit", "200")
        if not limit.isdecimal() or not 0 < int(limit) <= 10_000:
            return JSONResponse({"error": "limit is a whole number from 1 to 10000"}, status_code=400)
        return JSONResponse(self._audit(int(limit), _anonymous(request)))

    # ------------------------------------------------------------ API: writing

    async def api_grade(self, request: Request) -> Response:
        body, who, part = await request.json(), _who(request), self._part(request)
        return await run_in_threadpool(self._grade, part, body, who, _anonymous(request))

    def _grade(self, part: classroom.Part, body: dict[str, Any], who: str, anonymous: bool) -> Response:
        units = [part.unit(str(u)) for u in body.get("units", ())]
        if not units or any(u is None for u in units):
            return JSONResponse({"error": "unknown answers: reload the page"}, status_code=409)
        expected = {part.unit(k).key: int(v) for k, v in (body.get("expected") or {}).items() if part.unit(k)}
        what = Change(str(body.get("op")), _int(body.get("item")), tuple(int(i) for i in body.get("items", ())),
                      body.get("value"), expected if body.get("op") in ("adjust", "comment") else None)
        if what.op == "adjust":
            try:
                what = Change("adjust", value=float(body.get("value")), expected=expected)
            except (TypeError, ValueError):
                return JSONResponse({"error": "the adjustment must be a number"}, status_code=400)
        try:
            with self.room.open() as conn:
                staff.change(conn, part.where, {u.key: u.fp for u in units}, what, who)  # type: ignore[union-attr]
        except Conflict as err:
            return JSONResponse({"error": str(err), "current": err.current, **self._group_of(part, units[0],
                                                                                             anonymous)}, 409)
        except ValueError as err:
            return JSONResponse({"error": str(err)}, status_code=400)
        return JSONResponse(self._group_of(part, units[0], anonymous))

    def _group_of(self, part: classroom.Part, unit: Any, anonymous: bool) -> dict[str, Any]:
        fresh = self.room.part(part.homework, part.id) or part
        found = classroom.state(self.room, fresh)
        group = next((g for g in fresh.groups if any(u.key == unit.key for u in g.units)), None)
        return {"group": classroom.group_json(self.room, found, group, anonymous) if group else None,
                "progress": classroom.progress(found)}

    async def api_rubric(self, request: Request) -> Response:
        body, who, part = await request.json(), _who(request), self._part(request)

        def edit() -> Response:
            try:
                with self.room.open() as conn:
                    item = staff.edit_item(conn, part.where, body, who)
            except Conflict as err:
                return JSONResponse({"error": str(err), "current": err.current}, status_code=409)
            except (KeyError, TypeError, ValueError):
                return JSONResponse({"error": "an item takes points (a number) and text"}, status_code=400)
            return JSONResponse({"item": item.to_json() if item else None})
        return await run_in_threadpool(edit)

    async def api_split(self, request: Request) -> Response:
        body, who, part = await request.json(), _who(request), self._part(request)
        unit = part.unit(str(body.get("unit")))
        if unit is None:
            return JSONResponse({"error": "unknown answer: reload the page"}, status_code=409)
        student = self._student(body.get("student"), unit.students, _anonymous(request))
        key = f"student:{student}" if student is not None and len(unit.students) > 1 else unit.key
        label = f"alone:{key}"

        def split() -> Response:
            with self.room.open() as conn:
                staff.place(conn, part.where, {key: unit.fp}, label, who)
            return JSONResponse({"ok": True})
        return await run_in_threadpool(split)

    async def api_merge(self, request: Request) -> Response:
        body, who, part = await request.json(), _who(request), self._part(request)
        groups = [part.group(str(g)) for g in body.get("groups", ())]
        if len(groups) < 2 or any(g is None for g in groups):
            return JSONResponse({"error": "name two groups or more of this part: reload the page"}, status_code=409)
        keys = {u.key: u.fp for g in groups for u in g.units}  # type: ignore[union-attr]
        label = "merged:" + min(g.id for g in groups)  # type: ignore[union-attr]

        def merge() -> Response:
            with self.room.open() as conn:
                staff.place(conn, part.where, keys, label, who)
            return JSONResponse({"ok": True})
        return await run_in_threadpool(merge)

    async def api_threshold(self, request: Request) -> Response:
        body, who, part = await request.json(), _who(request), self._part(request)
        try:
            value = float(body.get("value"))
        except (TypeError, ValueError):
            return JSONResponse({"error": "the threshold is a number between 0 and 1"}, status_code=400)
        if not 0.0 < value <= 1.0:
            return JSONResponse({"error": "the threshold is a number between 0 and 1"}, status_code=400)

        def save() -> Response:
            with self.room.open() as conn:
                staff.set_setting(conn, part.where, "threshold", repr(value), who)
            return JSONResponse({"threshold": value})
        return await run_in_threadpool(save)

    async def api_comment(self, request: Request) -> Response:
        body, who, part = await request.json(), _who(request), self._part(request)
        everyone = [s for u in part.units for s in u.students]
        student = self._student(body.get("student"), everyone, _anonymous(request))
        if student is None:
            return JSONResponse({"error": "unknown student: reload the page"}, status_code=409)

        def save() -> Response:
            try:
                with self.room.open() as conn:
                    version = staff.set_student_comment(conn, part.where, student, str(body.get("text", ""))[:5000],
                                                        _int(body.get("expected")), who)
            except Conflict as err:
                return JSONResponse({"error": str(err), "current": err.current}, status_code=409)
            return JSONResponse({"version": version})
        return await run_in_threadpool(save)

    # ------------------------------------------------------------ helpers

    def _parts(self) -> list[classroom.Part]:
        return [p for p in (self.room.part(hw, pid) for hw, pid in self.room.parts()) if p is not None]

    def _part(self, request: Request) -> classroom.Part:
        part = self.room.part(request.path_params["homework"], request.path_params["part"])
        if part is None:
            raise LookupError("no such part waiting for staff")
        return part

    def _student(self, given: Any, students: list[str], anonymous: bool) -> str | None:
        if given is None:
            return None
        given = str(given)
        if anonymous:
            return next((s for s in students if self.room.pseudonym(s) == given), None)
        return given if given in students else None

    @staticmethod
    def _search(found: classroom.State, query: str) -> list[classroom.Group]:
        needle = staff.normalized(query)
        if not needle:
            return found.part.groups
        return [g for g in found.part.groups
                if any(needle in staff.normalized(classroom.answer_text(u.answer)) or
                       any(needle in staff.normalized(s) for s in u.students) for u in g.units)]

    def _integrity(self, anonymous: bool) -> list[dict[str, Any]]:
        """Near-identical long written answers across students, per part (for staff, never a verdict)."""
        shown = self.room.pseudonym if anonymous else (lambda s: s)
        found = []
        for part in self._parts():
            if not part.text:
                continue
            texts, owners = [], []
            for unit in part.units:
                texts += [unit.text] * len(unit.students)
                owners += unit.students
            for students, overlap in grouping.near_identical(texts, owners):
                found.append({"homework": part.homework, "part": part.id, "students": [shown(s) for s in students],
                              "overlap": overlap})
        return found


def _int(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def app(room: Classroom, token: str, port: int, host: str = "127.0.0.1") -> Any:
    """The ASGI app over `room`: its routes behind the token guard."""
    if Starlette is None:
        raise ConfigError("grade review needs the review extra: pip install 'attngrade[review]'")
    review = Review(room, token)
    routes = [Route("/", review.index), Route("/favicon.ico", lambda request: Response(status_code=204)), Route("/next", review.next_group), Route("/audit", review.audit_page),
              Route("/prefs", review.prefs), Route("/static/{name}", review.static_file),
              Route("/part/{homework}/{part}", review.part_page),
              Route("/api/parts", review.api_parts), Route("/api/integrity", review.api_integrity),
              Route("/api/audit", review.api_audit), Route("/api/parts/{homework}/{part}", review.api_part)]
    posts: dict[str, Callable[..., Any]] = {"grade": review.api_grade, "rubric": review.api_rubric,
                                            "split": review.api_split, "merge": review.api_merge,
                                            "threshold": review.api_threshold, "comment": review.api_comment}
    routes += [Route(f"/api/parts/{{homework}}/{{part}}/{name}", handler, methods=["POST"])
               for name, handler in posts.items()]
    handlers = {LookupError: _not_found, json.JSONDecodeError: _bad_json}
    made = Starlette(routes=routes, exception_handlers=handlers)  # type: ignore[arg-type]
    hosts = None if host not in LOOPBACK else LOOPBACK
    return Guard(made, token, f"attngrade_{port}", hosts)


async def _not_found(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": str(exc)}, status_code=404)


async def _bad_json(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "the body must be JSON"}, status_code=400)
