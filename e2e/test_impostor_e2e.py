"""A listener on the backend's port that is not Branchwise: the real extension, paired with a token the listener does
not hold, connects to it, sends no token, runs none of its commands, and says why in its options page."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from websockets.asyncio.server import ServerConnection, serve

from branchwise.config import ServerConfig
from branchwise.launcher import ChromiumConfig, launch_chromium
from branchwise.pairing import new_nonce
from branchwise.protocol import PROTOCOL_VERSION, SUBPROTOCOL
from branchwise.sandbox.recording import RecordingServer
from branchwise.selenium_attach import attach_selenium

from harness import LoopThread

pytestmark = pytest.mark.e2e

TOKEN = "the-users-real-pairing-token-0123456789"


class Impostor:
    """Answers hello with a made-up proof and at once asks the extension to open, observe and list tabs."""

    def __init__(self, canary_url: str) -> None:
        self.canary_url = canary_url
        self.headers: list[str] = []
        self.received: list[dict[str, Any]] = []

    async def handle(self, ws: ServerConnection) -> None:
        self.headers.append(str(ws.request.headers) if ws.request is not None else "")
        async for raw in ws:
            message = json.loads(raw)
            self.received.append(message)
            if message.get("type") != "hello":
                continue
            await ws.send(json.dumps({"type": "hello_ok", "id": "x1", "reply_to": message["id"],
                                      "protocol_version": PROTOCOL_VERSION, "backend_version": "0.1.0",
                                      "nonce": new_nonce(), "proof": "0" * 64}))
            for command in ({"type": "open_tab", "id": "x2", "url": self.canary_url},
                            {"type": "list_tabs", "id": "x3"}, {"type": "observe", "id": "x4", "tab_id": 1}):
                await ws.send(json.dumps(command))


def test_a_listener_that_is_not_branchwise_gets_no_token_and_nothing_run(tmp_path: Path) -> None:
    loop = LoopThread()
    config = ServerConfig(port=0, data_dir=tmp_path)
    with RecordingServer() as site:
        impostor = Impostor(f"{site.base_url}/canary")

        async def listen() -> Any:
            return await serve(impostor.handle, "127.0.0.1", 0, subprotocols=[SUBPROTOCOL])  # type: ignore[list-item]

        server = loop.call(listen())
        port = next(iter(server.sockets)).getsockname()[1]
        chromium = loop.call(launch_chromium(ChromiumConfig(headless=True)))
        driver = None
        try:
            loop.call(chromium.pair(config.extension_id, port, TOKEN))
            driver = attach_selenium(chromium.debugger_address)
            driver.get(f"chrome-extension://{config.extension_id}/options.html")
            WebDriverWait(driver, 20).until(lambda d: "did not prove" in d.find_element(By.ID, "status").text)
            status = driver.find_element(By.ID, "status")
            assert status.get_attribute("data-state") == "refused"
            assert "check the token" in status.text
            loop.call(asyncio.sleep(2))  # time for anything the commands would have done
            hello = impostor.received[0]
            assert hello["type"] == "hello" and len(hello["nonce"]) >= 16
            # The token never reached the listener: not in the upgrade, not in any message.
            assert impostor.headers and not any(TOKEN in h for h in impostor.headers)
            assert not any(TOKEN in json.dumps(m) for m in impostor.received)
            # Nothing was run: no proof of its own, no answer to a command, no tab opened, no request to the site.
            assert [m["type"] for m in impostor.received] == ["hello"] * len(impostor.received)
            assert site.requests == []
            urls = []
            for handle in driver.window_handles:
                driver.switch_to.window(handle)
                urls.append(driver.current_url)
            assert not any("canary" in url for url in urls), urls
        finally:
            if driver is not None:
                driver.quit()
            loop.call(chromium.close())
            server.close()
            loop.close()
