"""Runs the shop with uvicorn on a background thread, for tests, the demo and the standalone runner."""

from __future__ import annotations

import logging
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import datetime
from types import TracebackType

import uvicorn

from .app import create_app
from .config import ShopConfig

log = logging.getLogger(__name__)

STARTUP_TIMEOUT_S = 15.0
SHUTDOWN_TIMEOUT_S = 10.0


class ShopServer:
    """`with ShopServer(config) as shop: urlopen(shop.base_url + "/")`.

    The listening socket is bound in `start()` before uvicorn runs, so port 0 resolves to a real port up front.
    """

    def __init__(self, config: ShopConfig, clock: Callable[[], datetime] = datetime.now) -> None:
        self.config = config
        self._clock = clock
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("ShopServer is not running; call start() first")
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://{self.config.host}:{self.port}"

    def start(self) -> ShopServer:
        if self._thread is not None:
            raise RuntimeError("ShopServer is already running")
        app = create_app(self.config, clock=self._clock)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.config.host, self.config.port))
        self._port = sock.getsockname()[1]
        # log_config=None leaves logging to the host application instead of uvicorn's own handlers.
        server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="off"))
        self._server = server
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="shop-server", daemon=True)
        self._thread.start()
        self._wait_until_ready()
        log.info("sandbox shop running at %s (database %s)", self.base_url, self.config.db_path)
        return self

    def stop(self) -> None:
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(SHUTDOWN_TIMEOUT_S)
        if self._thread.is_alive():
            log.warning("sandbox shop did not stop within %.0f s", SHUTDOWN_TIMEOUT_S)
        self._server = None
        self._thread = None
        self._port = None

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        # Bypass any configured HTTP proxy: the shop is always on this machine.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        while time.monotonic() < deadline:
            if self._thread is None or not self._thread.is_alive():
                raise RuntimeError("sandbox shop server exited during startup")
            try:
                with opener.open(f"{self.base_url}/healthz", timeout=1) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.02)
        self.stop()
        raise TimeoutError(f"sandbox shop did not answer within {STARTUP_TIMEOUT_S:.0f} s")

    def __enter__(self) -> ShopServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
