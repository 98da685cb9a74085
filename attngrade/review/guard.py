"""Who may ask the app for what: an ASGI middleware in front of every route.

- The secret never rides in a cookie or a URL the server sees: `grade review` prints each grader's
  URL with the secret in its fragment (`#k=...`), which browsers never send; the page moves it to
  sessionStorage, takes it out of the address bar and history, and sends it in the
  `X-Attngrade-Token` header of each API request. A cookie would go to every server on the same
  host, whatever its port; a header goes only where the page sends it.
- Pages and static files are shells with no data in them: anyone may load them. Every `/api/`
  request needs a grader's secret, looked up in the store at each request (a grader added while the
  app runs is let in, one revoked is shut out at once); a change is a POST of JSON.
- The server answers only to the address it printed (a foreign Host is DNS rebinding), bounds the
  request line and body, and adds the security headers to every answer.
"""

from __future__ import annotations

from typing import Any, Callable

from ..staff import StoreError
from .inputs import MAX_BODY

try:  # the review extra: `pip install 'attngrade[review]'`
    from starlette.concurrency import run_in_threadpool
except ImportError:  # pragma: no cover - said by `server.serve`
    run_in_threadpool = None  # type: ignore[assignment]

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"),
           (b"cross-origin-opener-policy", b"same-origin"), (b"cross-origin-resource-policy", b"same-origin"),
           (b"cache-control", b"no-store")]
MAX_PATH = 2_048
MAX_QUERY = 4_096
TOKEN_HEADER = "x-attngrade-token"


class Guard:
    """The checks above, then the app. `grader_of(secret)`: the grader a secret belongs to (or None);
    `hosts`: the Host values this server answers to (None: any, for --host on a network)."""

    def __init__(self, app: Any, grader_of: Callable[[str], str | None], hosts: set[str] | None):
        self.app, self.grader_of, self.hosts = app, grader_of, hosts

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await self.app(scope, receive, send)
            return
        refused = self._refused(scope)
        if refused is not None:
            await plain(send, *refused)
            return
        headers = _headers(scope)
        if scope["path"].startswith("/api/"):
            try:
                grader = await _in_thread(self.grader_of, headers.get(TOKEN_HEADER, ""))
            except StoreError as err:
                await plain(send, 503, f"503: {err}")
                return
            if grader is None:
                await plain(send, 403, "403: this needs a grader's secret: open the URL `grade review` printed for you "
                                       "(a revoked grader's URL no longer works)")
                return
            scope.setdefault("state", {})["grader"] = grader
        await self.app(scope, receive, secured(send))

    def _refused(self, scope: dict) -> tuple[int, str] | None:
        headers = _headers(scope)
        path, query = scope.get("path", ""), scope.get("query_string", b"")
        if len(path) > MAX_PATH or len(query) > MAX_QUERY:
            return 414, "414: the address is too long"
        if not path.isprintable() or not _unicode(path):
            return 400, "400: the address is not text"
        if self.hosts is not None and headers.get("host", "").lower() not in self.hosts:
            return 400, "400: this server answers only at the address it printed"
        method = scope["method"]
        if method not in ("GET", "HEAD", "POST"):
            return 405, "405: only GET and POST"
        if method == "POST" and not path.startswith("/api/"):
            return 405, "405: a change is a POST to /api/"
        if method != "POST" and path.startswith("/api/") and _changes(path):
            return 405, "405: a change is a POST"
        origin = headers.get("origin")
        if origin is not None and self.hosts is not None and origin.lower().split("://", 1)[-1] not in self.hosts:
            return 403, "403: a page of another site cannot use this app"
        length = headers.get("content-length", "0")
        if not length.isdecimal() or int(length) > MAX_BODY:
            return 413, f"413: a request body is at most {MAX_BODY} bytes"
        return None


CHANGES = ("grade", "rubric", "split", "merge", "threshold", "comment", "next", "poll", "transcribe", "reply", "leave")


def _changes(path: str) -> bool:
    return path.rstrip("/").rsplit("/", 1)[-1] in CHANGES or path.startswith("/api/requests/")


def _unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _headers(scope: dict) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}


async def _in_thread(work: Callable[[str], str | None], value: str) -> str | None:
    return await run_in_threadpool(work, value)


def secured(send: Any) -> Any:
    async def wrapped(message: dict) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
        await send(message)
    return wrapped


async def plain(send: Any, status: int, text: str) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), *HEADERS]})
    await send({"type": "http.response.body", "body": text.encode()})
