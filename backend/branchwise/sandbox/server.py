"""Runs the shop with uvicorn on a background thread, for tests, the demo and the standalone runner."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from types import TracebackType

from ..serving import BackgroundServer
from .app import create_app
from .config import ShopConfig

log = logging.getLogger(__name__)

class ShopServer:
    """`with ShopServer(config) as shop: urlopen(shop.base_url + "/")`."""

    def __init__(self, config: ShopConfig, clock: Callable[[], datetime] = datetime.now) -> None:
        self.config = config
        self._clock = clock
        self._background: BackgroundServer | None = None

    @property
    def port(self) -> int:
        if self._background is None:
            raise RuntimeError("ShopServer is not running; call start() first")
        return self._background.port

    @property
    def base_url(self) -> str:
        return f"http://{self.config.host}:{self.port}"

    def start(self) -> ShopServer:
        if self._background is not None:
            raise RuntimeError("ShopServer is already running")
        background = BackgroundServer(create_app(self.config, clock=self._clock), self.config.host, self.config.port,
                                      "shop-server")
        background.start()
        self._background = background
        log.info("sandbox shop running at %s (database %s)", self.base_url, self.config.db_path)
        return self

    def stop(self) -> None:
        if self._background is not None:
            self._background.stop()
            self._background = None

    def __enter__(self) -> ShopServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
