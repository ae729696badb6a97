"""Real parts for e2e tests: the backend on its own event loop thread, Chromium with the extension (paired by the
backend), Selenium attached to that same Chromium, and static test pages on two origins."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.server
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from branchwise.config import EXTENSION_ID, ServerConfig
from branchwise.launcher import ChromiumConfig
from branchwise.link import BrowserEvent
from branchwise.selenium_attach import attach_selenium
from branchwise.session import Session, open_session

T = TypeVar("T")
PAGES = Path(__file__).parent / "pages"


class LoopThread:
    """An asyncio loop in a thread, so synchronous tests (and Selenium) can drive the async backend."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="backend-loop", daemon=True)
        self.thread.start()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 120) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@dataclass
class Stack:
    loop: LoopThread
    session: Session
    driver: webdriver.Chrome

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 120) -> T:
        return self.loop.call(coro, timeout)


@contextlib.contextmanager
def running_stack(data_dir: Path) -> Iterator[Stack]:
    loop = LoopThread()
    context = open_session(ServerConfig(port=0, data_dir=data_dir), ChromiumConfig(headless=True))
    session = loop.call(context.__aenter__())
    driver = None
    try:
        assert session.chromium is not None
        driver = attach_selenium(session.chromium.debugger_address)
        yield Stack(loop, session, driver)
    finally:
        if driver is not None:
            driver.quit()
        loop.call(context.__aexit__(None, None, None))
        loop.close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass


@contextlib.contextmanager
def static_site(root: Path) -> Iterator[int]:
    """Serves `root` on 127.0.0.1 (and so also as http://localhost:<port>, a second origin for cross-origin iframes)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def wait_for(condition: Callable[[], Any], timeout: float = 10, what: str = "condition") -> Any:
    """Poll until `condition()` is truthy and return its value. A script run while a page navigates, or a lookup that
    finds nothing yet, counts as not yet."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with contextlib.suppress(WebDriverException, AssertionError, StopIteration):
            value = condition()
            if value:
                return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def click_card(driver: WebDriver, button: str, timeout: float = 10) -> None:
    """A real click on the side panel's confirmation card (`approve` or `deny`) once it takes clicks (a new card waits
    a moment: confirmview.js `cardPause`); a button replaced by a redraw just before it is clicked again (a stale one
    was not clicked)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            found = driver.find_element(By.CSS_SELECTOR, f"#confirm-card button.{button}")
            if found.is_enabled():
                found.click()
                return
        except StaleElementReferenceException:
            pass
        time.sleep(0.05)
    raise AssertionError(f"could not click {button}")


def in_page(stack: Stack, url: str, script: str) -> Any:
    """Run JS through Selenium in the tab showing exactly `url` (tests use unique query strings): the page as it is,
    read independently of Branchwise."""
    driver = stack.driver
    shown = []
    for handle in driver.window_handles:
        driver.switch_to.window(handle)
        if driver.current_url == url:
            return driver.execute_script(script)
        shown.append(driver.current_url)
    raise AssertionError(f"no tab shows {url}; tabs: {shown}")


def in_extension(stack: Stack, script: str) -> Any:
    """Run async JS with the extension's privileges (its options page), for facts only chrome.* APIs know."""
    driver = stack.driver
    driver.switch_to.window(driver.window_handles[0])  # the tab Selenium was on may be gone
    driver.switch_to.new_window("tab")
    driver.get(f"chrome-extension://{EXTENSION_ID}/options.html")
    try:
        return driver.execute_async_script(
            f"const done = arguments[0]; ({script})().then(done, (e) => done(String(e)));")
    finally:
        driver.close()
        driver.switch_to.window(driver.window_handles[0])


@contextlib.contextmanager
def recording(stack: Stack) -> Iterator[list[BrowserEvent]]:
    """The browser's events (requests, tab events, dialogs, gate events) for as long as the block runs."""
    events: list[BrowserEvent] = []
    unsubscribe = stack.session.browser.on_event(events.append)
    try:
        yield events
    finally:
        unsubscribe()
