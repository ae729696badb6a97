"""The local backend: FastAPI on loopback, the extension's WebSocket, and the guard in front of both.

Only a request that names a loopback Host, comes from the pinned extension Origin (or none, for local tools) and carries
the pairing token gets through; everything else is answered 403 and logged. The health check alone needs no token, but
the same Host and Origin.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from . import __version__
from .config import ServerConfig
from .headtimeout import head_timeout_protocol
from .hostcheck import forbidden, header, host_refusal
from .link import ExtensionHub
from .looperrors import Handler, RateLimitedLoopErrors
from .pairing import tokens_match
from .protocol import PROTOCOL_VERSION, SUBPROTOCOL
from .serving import bind

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class Refusal:
    reason: str


def offered_token(scope: Scope) -> str | None:
    """The token from an HTTP bearer header (the WebSocket proves it in its handshake instead, link.py)."""
    auth = header(scope, b"authorization") or ""
    return auth[len("Bearer "):] if auth.startswith("Bearer ") else None


def check_request(scope: Scope, config: ServerConfig, token: str | None) -> Refusal | None:
    """`token`: None on an open path (the health check), which needs no token but the same Host and Origin."""
    bad_host = host_refusal(scope)
    if bad_host is not None:
        return Refusal(bad_host)
    origin = header(scope, b"origin")
    if scope["type"] == "websocket" and origin != config.extension_origin:
        return Refusal(f"Origin {origin!r} is not the Branchwise extension")
    if scope["type"] == "http" and origin is not None and origin != config.extension_origin:
        return Refusal(f"Origin {origin!r} is not the Branchwise extension")
    if token is not None and not tokens_match(offered_token(scope), token):
        return Refusal("missing or wrong pairing token")
    return None


class Guard:
    """ASGI middleware refusing anything that is not the paired extension (or a local tool holding the token)."""

    def __init__(self, app: ASGIApp, config: ServerConfig, token: str, open_paths: frozenset[str]) -> None:
        self.app = app
        self.config = config
        self.token = token
        self.open_paths = open_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        open_path = scope.get("path") in self.open_paths
        refusal = check_request(scope, self.config, None if open_path else self.token)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        client = scope.get("client") or ("?", 0)
        log.warning("refused %s %s from %s:%s: %s", scope["type"], scope.get("path"), client[0], client[1],
                    refusal.reason)
        if scope["type"] == "websocket":
            await receive()  # the connect event; closing before accept makes the server answer 403
            await send({"type": "websocket.close", "code": 1008, "reason": "forbidden"})
            return
        await forbidden(send, refusal.reason)


def create_app(config: ServerConfig, hub: ExtensionHub, token: str) -> FastAPI:
    app = FastAPI(title="Branchwise backend", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        # Unauthenticated on purpose and free of secrets: lets the CLI tell "port taken by Branchwise" from anything
        # else.
        return {"service": "branchwise", "version": __version__}

    @app.get("/api/status")
    async def status(request: Request) -> dict[str, Any]:
        link = hub.link
        return {
            "version": __version__,
            "protocol_version": PROTOCOL_VERSION,
            "extension_connected": link is not None,
            "extension_version": link.hello.extension_version if link and link.hello else None,
        }

    @app.websocket("/ws")
    async def extension_socket(ws: WebSocket) -> None:
        if SUBPROTOCOL not in ws.scope.get("subprotocols", []):
            await ws.close(code=1002, reason=f"the {SUBPROTOCOL} subprotocol is required")
            return
        await ws.accept(subprotocol=SUBPROTOCOL)
        await hub.serve(ws, token)

    # The socket carries no token: both ends prove they hold it in the handshake, so a listener that is not
    # Branchwise never receives it. Host and Origin are still checked at the upgrade.
    app.add_middleware(Guard, config=config, token=token, open_paths=frozenset({"/healthz", "/ws"}))
    return app


class _SignalFree(uvicorn.Server):
    """uvicorn that leaves the process's signals to the command (terminate.py, asyncio.run's Ctrl-C). uvicorn's own
    handlers would stop the backend the moment a stop signal arrives, while the run being cancelled still needs the
    extension to lift its network gate and record how it ended: that clean-up waited the whole reconnect grace (45 s)
    for a link that could not come back."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class BackendServer:
    """Runs the app on loopback inside the current event loop; `port` is known once started (port 0 picks one)."""

    def __init__(self, config: ServerConfig, hub: ExtensionHub, token: str) -> None:
        if config.host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"refusing to bind {config.host}: the backend listens on loopback only")
        self.config = config
        self._hub = hub
        self.app = create_app(config, hub, token)
        self._server = _SignalFree(
            uvicorn.Config(
                self.app,
                host=config.host,
                port=config.port,
                ws_max_size=config.transport_max_bytes,
                ws_ping_interval=None,
                http=head_timeout_protocol(config.request_head_timeout_seconds),
                log_level="warning",
                lifespan="off",
                # asyncio's accept loop retries up to `backlog` times per wake-up when descriptors run out, reporting
                # each failure; uvicorn's 2,048 made that storm 16 times larger than it needs to be.
                backlog=128,
            )
        )
        self._task: asyncio.Task[None] | None = None
        self._loop_errors: tuple[asyncio.AbstractEventLoop, Handler | None] | None = None
        self.port = config.port

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        previous = loop.get_exception_handler()
        self._loop_errors = (loop, previous)
        loop.set_exception_handler(RateLimitedLoopErrors(then=previous))
        sock = bind(self.config.host, self.config.port)
        self.port = self._hub.port = sock.getsockname()[1]
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                raise RuntimeError("the backend stopped while starting") from self._task.exception()
            await asyncio.sleep(0.01)
        log.info("backend listening on ws://%s:%d/ws", self.config.host, self.port)

    async def stop(self) -> None:
        self._server.should_exit = True
        if self._task is not None:
            await self._task
        if self._loop_errors is not None:
            loop, previous = self._loop_errors
            loop.set_exception_handler(previous)
            self._loop_errors = None

    async def __aenter__(self) -> BackendServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
