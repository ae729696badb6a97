"""Runs the shop with uvicorn on a background thread, for tests, the demo and the standalone runner."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from types import TracebackType
from typing import Generic, Protocol, TypeVar

from starlette.types import ASGIApp

from ..serving import BackgroundServer
from .app import create_app
from .config import ShopConfig

log = logging.getLogger(__name__)


class SiteConfig(Protocol):
    """What every sandbox site's config has (ShopConfig, TrackerConfig, ...)."""

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...


ConfigT = TypeVar("ConfigT", bound=SiteConfig)


class SandboxServer(Generic[ConfigT]):
    """One sandbox site on a background thread: `with Server(config) as site: site.base_url`."""

    # Thread name and log wording; subclasses override.
    site_name = "sandbox"

    def __init__(self, config: ConfigT, build_app: Callable[[], ASGIApp]) -> None:
        self.config = config
        self._build_app = build_app
        self._background: BackgroundServer | None = None

    @property
    def port(self) -> int:
        if self._background is None:
            raise RuntimeError(f"{type(self).__name__} is not running; call start() first")
        return self._background.port

    @property
    def base_url(self) -> str:
        return f"http://{self.config.host}:{self.port}"

    def _start(self) -> None:
        if self._background is not None:
            raise RuntimeError(f"{type(self).__name__} is already running")
        background = BackgroundServer(self._build_app(), self.config.host, self.config.port,
                                      f"{self.site_name}-server")
        background.start()
        self._background = background
        log.info("sandbox %s running at %s", self.site_name, self.base_url)

    def stop(self) -> None:
        if self._background is not None:
            self._background.stop()
            self._background = None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def wait_until_interrupted() -> None:
    """For standalone runners (`python -m ...`): block the main thread until Ctrl-C."""
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        log.info("stopping")


class ShopServer(SandboxServer[ShopConfig]):
    """`with ShopServer(config) as shop: urlopen(shop.base_url + "/")`."""

    site_name = "shop"

    def __init__(self, config: ShopConfig, clock: Callable[[], datetime] = datetime.now) -> None:
        super().__init__(config, lambda: create_app(config, clock=clock))
        self._clock = clock

    def start(self) -> ShopServer:
        self._start()
        log.info("shop database %s", self.config.db_path)
        return self

    def __enter__(self) -> ShopServer:
        return self.start()
