"""The Host check of every local HTTP server Branchwise runs (the backend, the scripted model): against DNS rebinding,
a web page that reaches 127.0.0.1 through its own hostname still sends that hostname, and is refused."""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})


def header(scope: Scope, name: bytes) -> str | None:
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    for key, value in headers:
        if key == name:
            return value.decode("latin-1")
    return None


def _host_name(host_header: str) -> str:
    if host_header.startswith("["):
        return host_header.split("]")[0] + "]"
    return host_header.rsplit(":", 1)[0] if ":" in host_header else host_header


def host_refusal(scope: Scope) -> str | None:
    """Why the request is refused for its Host header, or None when it names a loopback address."""
    host = header(scope, b"host")
    if host is None or _host_name(host) not in LOOPBACK_HOSTS:
        return f"Host header {host!r} is not a loopback name"
    return None


class LoopbackHostOnly:
    """ASGI middleware answering 403 to an HTTP request whose Host is not a loopback name."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = host_refusal(scope) if scope["type"] == "http" else None
        if refusal is None:
            await self.app(scope, receive, send)
            return
        log.warning("refused %s: %s", scope.get("path"), refusal)
        await forbidden(send, refusal)


async def forbidden(send: Send, reason: str) -> None:
    body = f"forbidden: {reason}\n".encode()
    await send({
        "type": "http.response.start",
        "status": 403,
        "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())],
    })
    await send({"type": "http.response.body", "body": body})
