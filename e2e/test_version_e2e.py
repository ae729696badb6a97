"""A backend speaking another protocol version refuses the extension, and both sides say why."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from branchwise.config import ServerConfig
from branchwise.launcher import ChromiumConfig, launch_chromium
from branchwise.link import ExtensionHub
from branchwise.pairing import load_or_create_token
from branchwise.protocol import PROTOCOL_VERSION
from branchwise.selenium_attach import attach_selenium
from branchwise.server import BackendServer

from harness import LoopThread

pytestmark = pytest.mark.e2e


def test_version_mismatch_is_refused_with_a_message_on_both_sides(tmp_path: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    loop = LoopThread()
    backend_version = PROTOCOL_VERSION + 1
    config = ServerConfig(port=0, data_dir=tmp_path, protocol_version=backend_version)
    token = load_or_create_token(tmp_path)
    hub = ExtensionHub(config)
    server = BackendServer(config, hub, token)
    loop.call(server.start())
    chromium = loop.call(launch_chromium(ChromiumConfig(headless=True)))
    driver = None
    try:
        with caplog.at_level(logging.ERROR, logger="branchwise.link"):
            loop.call(chromium.pair(config.extension_id, server.port, token))
            driver = attach_selenium(chromium.debugger_address)
            driver.get(f"chrome-extension://{config.extension_id}/options.html")
            WebDriverWait(driver, 20).until(lambda d: "mismatch" in d.find_element(By.ID, "status").text)
            status = driver.find_element(By.ID, "status")
        assert status.get_attribute("data-state") == "refused"
        assert (f"the backend speaks version {backend_version}, the extension {PROTOCOL_VERSION}. "
                "Update the extension") in status.text
        assert hub.link is None
        assert any("refusing extension" in r.getMessage() for r in caplog.records)
    finally:
        if driver is not None:
            driver.quit()
        loop.call(chromium.close())
        loop.call(server.stop())
        loop.close()
