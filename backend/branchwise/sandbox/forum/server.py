"""Runs the forum with uvicorn on a background thread, for tests, the harness and the standalone runner."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from ..server import SandboxServer
from .app import create_app
from .config import ForumConfig

log = logging.getLogger(__name__)


class ForumServer(SandboxServer[ForumConfig]):
    """`with ForumServer(config) as forum: urlopen(forum.base_url + "/forums")`."""

    site_name = "forum"

    def __init__(self, config: ForumConfig, clock: Callable[[], datetime] = datetime.now) -> None:
        super().__init__(config, lambda: create_app(config, clock=clock))

    def start(self) -> ForumServer:
        self._start()
        log.info("forum database %s", self.config.db_path)
        return self

    def __enter__(self) -> ForumServer:
        return self.start()
