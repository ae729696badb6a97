"""uvicorn's h11 protocol with a deadline for the request head.

uvicorn times out only idle keep-alive connections, and only after a first response: a client that connects and sends
nothing, or half a request line and headers, holds its file descriptor forever. A few hundred such connections (any
local process can open them) used up the backend's descriptors, and the extension could no longer connect. Here a
connection must send a whole request head within the deadline of connecting (or of its previous response), else it
is closed. A WebSocket upgrade hands the connection on and takes it out of the deadline.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)


def head_timeout_protocol(seconds: float) -> type[H11Protocol]:
    """The protocol class for uvicorn.Config(http=...), closing a connection whose request head is `seconds` late."""

    class HeadTimeoutProtocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None
        _cycle_before: Any = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._expect_head()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._head_timer is not None and self.cycle is not self._cycle_before:
                self._cancel_head()  # the head arrived: a request cycle began

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._expect_head()

        def handle_websocket_upgrade(self, event: Any) -> None:
            self._cancel_head()
            super().handle_websocket_upgrade(event)

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_head()
            super().connection_lost(exc)

        def _expect_head(self) -> None:
            self._cancel_head()
            self._cycle_before = self.cycle
            self._head_timer = self.loop.call_later(seconds, self._head_overdue)

        def _cancel_head(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_overdue(self) -> None:
            self._head_timer = None
            if not self.transport.is_closing():
                log.info("closed a connection from %s that sent no whole request within %g s", self.client, seconds)
                self.transport.close()

    return HeadTimeoutProtocol
