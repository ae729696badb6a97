"""Serving an ASGI app on loopback: binding first (so port 0 is known at once and a taken port is a clear error), and
running uvicorn on a background thread for the sandbox sites and the scripted model."""

from __future__ import annotations

import logging
import socket
import threading
import time

import uvicorn
from starlette.types import ASGIApp

log = logging.getLogger(__name__)


class PortInUse(OSError):
    pass


def bind(host: str, port: int) -> socket.socket:
    """A listening-ready socket; uvicorn would exit the whole process on a taken port instead of raising."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise PortInUse(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    return sock


class BackgroundServer:
    """uvicorn on its own thread; `start()` returns once it accepts connections."""

    def __init__(self, app: ASGIApp, host: str, port: int, name: str, startup_timeout_s: float = 15.0) -> None:
        self.host = host
        self.name = name
        self._requested_port = port
        self._startup_timeout_s = startup_timeout_s
        # log_config=None leaves logging to the host application instead of uvicorn's own handlers.
        self._server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="off"))
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    @property
    def port(self) -> int:
        if self._socket is None:
            raise RuntimeError(f"{self.name} is not running; call start() first")
        return int(self._socket.getsockname()[1])

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError(f"{self.name} is already running")
        self._socket = bind(self.host, self._requested_port)
        sock, server = self._socket, self._server
        self._thread = threading.Thread(target=lambda: server.run(sockets=[sock]), name=self.name, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + self._startup_timeout_s
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.name} did not start on {self.host}")
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
            if self._thread.is_alive():
                log.warning("%s did not stop within 10 s", self.name)
        if self._socket is not None:
            self._socket.close()
        self._thread, self._socket = None, None
        # A uvicorn.Server runs once; a later start() needs a fresh one.
        self._server = uvicorn.Server(self._server.config)
