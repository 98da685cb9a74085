"""Serving the app: bind a loopback address of its own, print each grader's URL, run uvicorn.

By default the server listens on a random address of 127.0.0.0/8 (say 127.84.201.17), not on
127.0.0.1: other local servers live on 127.0.0.1, and a browser treats every port of a host as one
site for its cookies and more. Each grader's URL carries their secret in its fragment
(`http://127.84.201.17:8765/#k=SECRET`), which no browser sends to any server; the page keeps it for
the tab and takes it out of the address bar (guard.py). The address is kept in the store while the
server runs, so `grade review OUT --add-grader NAME` prints a URL that opens it.
"""

from __future__ import annotations

import errno
import getpass
import ipaddress
import secrets
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import staff
from ..errors import ConfigError
from ..problems import BUNDLED, Bank
from ..records import Homework
from ..staff import graders as roster
from . import app as review_app
from .classroom import Classroom

DEFAULT_PORT = 8765
TRIES = 20  # ports tried from the default one when it is taken
SERVER = ("", "")  # where the store keeps the running server's address


@dataclass
class Serving:
    """What `grade review OUT` serves, where, and for whom."""

    out: Path
    host: str | None = None  # None: a loopback address of its own
    port: int | None = None
    bank: Bank = BUNDLED
    homework: Homework | None = None
    solutions: Path | None = None
    graders: list[str] = field(default_factory=list)  # each gets a URL with a fresh secret (none: the login name)


def instructor() -> str:
    """Who the audit log names for what the command line does."""
    try:
        return f"{getpass.getuser()} (command line)"
    except (KeyError, OSError):
        return "instructor (command line)"


def own_loopback() -> str:
    """A random address of 127.0.0.0/8 other than 127.0.0.1, for this run alone."""
    return f"127.{1 + secrets.randbelow(254)}.{secrets.randbelow(256)}.{1 + secrets.randbelow(254)}"


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
                      "name another with --port or --host") from None


def _bound(serving: Serving) -> tuple[socket.socket, str]:
    if serving.host is not None:
        return bind(serving.host, serving.port), serving.host
    host = own_loopback()
    try:
        return bind(host, serving.port), host
    except ConfigError:  # a system with only 127.0.0.1 on its loopback (macOS): the secret is in no cookie anyway
        return bind("127.0.0.1", serving.port), "127.0.0.1"


def shown_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "") else (f"[{host}]" if ":" in host else host)


def url_of(base: str, secret: str) -> str:
    return f"{base}/#k={secret}"


def loopback(host: str) -> bool:
    if host in review_app.LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def grader_urls(room: Classroom, names: list[str], base: str) -> list[tuple[str, str]]:
    """(name, URL) for each grader, each with a fresh secret (an old one of theirs no longer opens anything)."""
    made = []
    with room.open() as conn:
        for name in names:
            try:
                made.append((roster.checked_name(name), url_of(base, roster.add(conn, name, instructor()))))
            except ValueError as err:
                raise ConfigError(f"--graders: {err}") from None
    return made


def serve(serving: Serving) -> int:
    """Serve OUT until Ctrl-C; each grader's URL is printed first, on a line of its own."""
    if review_app.Starlette is None:
        raise ConfigError("grade review needs the review extra: pip install 'attngrade[review]'")
    room = Classroom(serving.out, serving.bank, serving.homework, solutions=serving.solutions)
    room.start()
    sock, host = _bound(serving)
    port = sock.getsockname()[1]
    base = f"http://{shown_host(host)}:{port}"
    urls = grader_urls(room, serving.graders or [_login()], base)
    hosts = {f"{shown_host(host)}:{port}".lower()} if loopback(host) else None
    asgi = review_app.app(room, hosts)
    with room.open() as conn:
        staff.set_setting(conn, SERVER, "server", base, instructor())
    print(f"grade review: staff grading for {serving.out} (grouping by {room.embedder.name}); each grader opens "
          "their own URL:", flush=True)
    for name, url in urls:
        print(f"    {name}: {url}", flush=True)
    print("Ctrl-C stops it. Grades are saved as you go, in " + str(room.path), flush=True)
    if hosts is None:
        print(f"grade review: listening on {host}: anyone who can reach it and has a grader's URL can grade",
              file=sys.stderr, flush=True)
    try:
        _run(asgi, sock)
    finally:
        _forget(room, base)
    return 0


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "staff"


def _forget(room: Classroom, base: str) -> None:
    """The store no longer names this server (unless another one took its place meanwhile)."""
    try:
        with room.open() as conn:
            if staff.setting(conn, SERVER, "server") == base:
                staff.set_setting(conn, SERVER, "server", "", instructor())
    except staff.StoreError:
        pass  # the store went away with OUT: nothing names the server any more


def running(room: Classroom) -> str | None:
    """The address of the server serving this store, if one is."""
    with room.open() as conn:
        return staff.setting(conn, SERVER, "server") or None


def _run(asgi: Any, sock: socket.socket) -> None:
    # uvicorn: the review extra, imported only when the server starts (`grade groups` needs none of it)
    import uvicorn  # noqa: PLC0415

    config = uvicorn.Config(asgi, log_level="warning", access_log=False, lifespan="off",
                            server_header=False, date_header=False, h11_max_incomplete_event_size=16 * 1024)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
