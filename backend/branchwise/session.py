"""A backend session: the server, the hub, a browser facade, and optionally a Chromium we launched and paired."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from .browser import Browser, BrowserConfig
from .config import ServerConfig
from .launcher import ChromiumConfig, LaunchedBrowser, launch_chromium
from .link import ExtensionHub
from .pairing import load_or_create_token, pairing_url
from .safety.gate import NetworkGate
from .server import BackendServer

log = logging.getLogger(__name__)


@dataclass
class Session:
    config: ServerConfig
    token: str
    hub: ExtensionHub
    server: BackendServer
    browser: Browser
    chromium: LaunchedBrowser | None
    # The backend's one network gate: every run of this session works under it (two would both answer a hold).
    gate: NetworkGate

    @property
    def pairing_url(self) -> str:
        return pairing_url(self.config.extension_id, self.server.port, self.token)


@contextlib.asynccontextmanager
async def open_session(
    config: ServerConfig, launch: ChromiumConfig | None = None, browser_config: BrowserConfig | None = None
) -> AsyncIterator[Session]:
    """Start the backend; with `launch`, also start Chromium with the extension and pair it automatically."""
    token = load_or_create_token(config.data_dir)
    hub = ExtensionHub(config)
    async with BackendServer(config, hub, token) as server:
        chromium = None
        try:
            if launch is not None:
                chromium = await launch_chromium(launch)
                page = await chromium.pair(config.extension_id, server.port, token)
                await hub.wait_link(launch.start_timeout_seconds)
                await chromium.close_page(page)
            browser = Browser(hub, browser_config)
            yield Session(config, token, hub, server, browser, chromium, NetworkGate(browser))
        finally:
            if chromium is not None:
                await chromium.close()
