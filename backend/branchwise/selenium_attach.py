"""Selenium on a Chromium we launched ourselves: attaching avoids chromedriver's launch hang (docs/platform.md).

Used by the e2e tests, the benchmark and the fixture capture script; selenium comes with the `test` extra.
"""

from __future__ import annotations

import shutil

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def attach_selenium(debugger_address: str) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.debugger_address = debugger_address
    return webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"))
