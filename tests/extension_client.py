"""A Python WebSocket client that plays the extension against the real backend, for tests without a browser."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from branchwise.config import ServerConfig
from branchwise.link import ExtensionHub
from branchwise.pairing import load_or_create_token, new_nonce, proof
from branchwise.protocol import PROTOCOL_VERSION, SUBPROTOCOL
from branchwise.server import BackendServer


@dataclass
class Backend:
    server: BackendServer
    hub: ExtensionHub
    token: str
    config: ServerConfig

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.server.port}/ws"


@contextlib.asynccontextmanager
async def running_backend(data_dir: Path, **overrides: Any) -> AsyncIterator[Backend]:
    config = ServerConfig(port=0, data_dir=data_dir, **overrides)
    token = load_or_create_token(config.data_dir)
    hub = ExtensionHub(config)
    async with BackendServer(config, hub, token) as server:
        yield Backend(server, hub, token, config)


async def open_socket(backend: Backend, *, origin: str | None = None, max_size: int | None = None) -> ClientConnection:
    return await connect(
        backend.url,
        origin=origin if origin is not None else backend.config.extension_origin,  # type: ignore[arg-type]
        subprotocols=[SUBPROTOCOL],  # type: ignore[list-item]
        max_size=max_size,
    )


async def receive_json(ws: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
    """Next message that is not a keepalive ping."""
    while True:
        msg: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), timeout))
        if msg["type"] != "ping":
            return msg


async def paired_socket(backend: Backend, version: int = PROTOCOL_VERSION) -> ClientConnection:
    """A connection through the whole handshake, as the extension makes it: hello with a nonce, the backend's proof
    checked, then the extension's own proof."""
    ws = await open_socket(backend)
    nonce = new_nonce()
    await ws.send(json.dumps({"type": "hello", "id": "h1", "protocol_version": version, "extension_version": "test",
                              "nonce": nonce}))
    reply = await receive_json(ws)
    assert reply["type"] == "hello_ok", reply
    assert reply["proof"] == proof(backend.token, "backend", reply["nonce"], nonce), "the backend's proof is wrong"
    await ws.send(json.dumps({"type": "auth", "id": "a1", "reply_to": reply["id"],
                              "proof": proof(backend.token, "extension", nonce, reply["nonce"])}))
    await backend.hub.wait_link(5)
    return ws
