"""Serving the app: bind the address, print the URL with a fresh token (as Jupyter does), run uvicorn."""

from __future__ import annotations

import errno
import secrets
import socket
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..problems import BUNDLED, Bank
from ..records import Homework
from . import app as review_app
from .classroom import Classroom

DEFAULT_PORT = 8765
TRIES = 20  # ports tried from the default one when it is taken


def bind(host: str, port: int | None) -> socket.socket:
    """A listening socket: `port` exactly (0: any free one), or the first free from DEFAULT_PORT."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    wanted = [port] if port is not None else list(range(DEFAULT_PORT, DEFAULT_PORT + TRIES))
    last: OSError | None = None
    for candidate in wanted:
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, candidate))
        except OSError as err:
            sock.close()
            last = err
            if err.errno != errno.EADDRINUSE:
                break
            continue
        sock.listen(128)
        sock.set_inheritable(True)
        return sock
    where = f"port {port}" if port is not None else f"ports {wanted[0]}-{wanted[-1]}"
    raise ConfigError(f"--host {host}: cannot listen on {where} ({getattr(last, 'strerror', last)}); "
                      "name another with --port")


def url_of(host: str, port: int, token: str) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else (f"[{host}]" if ":" in host else host)
    return f"http://{shown}:{port}/?token={token}"


def serve(out: Path, host: str = "127.0.0.1", port: int | None = None, bank: Bank = BUNDLED,
          homework: Homework | None = None) -> int:
    """Serve OUT until Ctrl-C; the URL (with its token) is printed first, on its own line."""
    if review_app.Starlette is None:
        raise ConfigError("grade review needs the review extra: pip install 'attngrade[review]'")
    token = secrets.token_urlsafe(24)
    room = Classroom(out, bank, homework, secret=token)
    room.start()
    sock = bind(host, port)
    actual = sock.getsockname()[1]
    asgi = review_app.app(room, token, actual, host)
    print(f"grade review: staff grading for {out} (grouping by {room.embedder.name}); open\n"
          f"    {url_of(host, actual, token)}\n"
          "Ctrl-C stops it. Grades are saved as you go, in " + str(room.path), flush=True)
    if host not in review_app.LOOPBACK:
        print(f"grade review: listening on {host}: anyone who can reach it and has the token can grade",
              file=sys.stderr, flush=True)
    _run(asgi, sock)
    return 0


def _run(asgi: Any, sock: socket.socket) -> None:
    # uvicorn: the review extra, imported only when the server starts (`grade groups` needs none of it)
    import uvicorn  # noqa: PLC0415

    config = uvicorn.Config(asgi, log_level="warning", access_log=False, lifespan="off",
                            server_header=False, date_header=False)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
