"""A local HTTP server that records every request it receives, server-side, before it answers.

Its record is what "the server" got: a request the browser blocked, failed or held never shows up in it, whatever the
page or the extension's events say. Tests and benchmarks serve their pages from a responder; every other route gets a
small page naming the request.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

# Every method but these may change a server (WebDAV's MOVE, a custom verb): counted as mutating.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def who_of(path: str) -> str:
    """Which test page a request came from, when pages tag their requests with `who=<label>`."""
    return parse_qs(urlsplit(path).query).get("who", [""])[0]


@dataclass(frozen=True)
class Recorded:
    """One request as the server received it; `path` keeps its query."""

    method: str
    path: str
    body: bytes = b""

    @property
    def route(self) -> str:
        return urlsplit(self.path).path

    @property
    def mutating(self) -> bool:
        return self.method.upper() not in SAFE_METHODS

    @property
    def who(self) -> str:
        return who_of(self.path)


@dataclass(frozen=True)
class Reply:
    body: str | bytes = ""
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()


# What to answer a request with (the server's port given, for pages that link to their other origin, localhost);
# None: the default page.
Responder = Callable[[Recorded, int], Reply | None]


def default_reply(request: Recorded) -> Reply:
    return Reply(f"<!doctype html><title>{request.method} {request.path}</title><p>{request.method} done</p>")


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = Recorded(self.command, self.path, self.rfile.read(length) if length else b"")
        self.server.owner.record(request)
        reply = self.server.owner.respond(request, self.server.server_address[1]) or default_reply(request)
        data = reply.body.encode() if isinstance(reply.body, str) else reply.body
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Access-Control-Allow-Origin", "*")
        for name, value in reply.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def __getattr__(self, name: str) -> Any:
        # Every method is answered and recorded, the ones nobody lists (MOVE, PROPPATCH, a custom verb) included.
        if name.startswith("do_"):
            return self._answer
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    owner: RecordingServer


class RecordingServer:
    """`with RecordingServer(respond) as server:` serves on 127.0.0.1 (also reachable as localhost, a second origin)."""

    def __init__(self, respond: Responder | None = None) -> None:
        self.respond: Responder = respond or (lambda request, port: None)
        self._seen: list[Recorded] = []
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="recording-server", daemon=True)

    def __enter__(self) -> RecordingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def record(self, request: Recorded) -> None:
        with self._lock:
            self._seen.append(request)

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._seen)

    @property
    def seen(self) -> list[tuple[str, str]]:
        return [(r.method, r.path) for r in self.requests]

    def mutating(self, who: str | None = None, *, children: bool = False) -> list[tuple[str, str]]:
        """Mutating requests received, in order: all of them, or those of pages tagged `who` (and, with `children`,
        of their children, tagged `who-...`)."""
        return [(r.method, r.path) for r in self.requests if r.mutating and (
            who is None or r.who == who or (children and r.who.startswith(f"{who}-")))]

    def got(self, method: str, path: str) -> bool:
        return (method, path) in self.seen
