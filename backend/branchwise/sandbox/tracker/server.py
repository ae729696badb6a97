"""Runs the tracker with uvicorn on a background thread, like ShopServer."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from ..server import SandboxServer
from .app import create_app
from .config import TrackerConfig


class TrackerServer(SandboxServer[TrackerConfig]):
    """`with TrackerServer(config) as tracker: urlopen(tracker.base_url + "/explore/projects")`."""

    site_name = "tracker"

    def __init__(self, config: TrackerConfig, clock: Callable[[], datetime] = datetime.now) -> None:
        super().__init__(config, lambda: create_app(config, clock=clock))

    def start(self) -> TrackerServer:
        self._start()
        return self

    def __enter__(self) -> TrackerServer:
        return self.start()
