"""Guarded tabs: no POST, PUT, PATCH or DELETE leaves a guarded tab (form posts included), GETs do; the guard is per
tab, can be lifted and put back, and goes away with the tab."""

from __future__ import annotations

import contextlib
import http.server
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from harness import Stack
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from branchwise.config import EXTENSION_ID
from branchwise.link import BrowserEvent, ExtensionError
from branchwise.protocol import NetworkRequest

pytestmark = pytest.mark.e2e

MUTATING = {"POST", "PUT", "PATCH", "DELETE"}

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Guard test {who}</title></head><body>
<h1>Guard test</h1>
<form id="main-form" method="post" action="/form-post?who={who}"><input name="q" value="1"><button>Send</button></form>
<form id="frame-form" method="post" action="/frame-post?who={who}" target="sink"><input name="q" value="2"></form>
<form id="blank-form" method="post" action="/blank-post?who={who}" target="_blank"><input name="q" value="3">
<button id="blank-submit">Send in a new tab</button></form>
<a id="blank-link" href="/page?who={who}-child" target="_blank">open a new tab</a>
<iframe name="sink" src="/sink?who={who}"></iframe>
<a id="link" href="/next?who={who}">next</a>
<script>
window.send = async (method) => {{
  try {{
    const r = await fetch("/api/item?who={who}&m=" + method, {{method, body: method === "DELETE" ? undefined : "x"}});
    return "status " + r.status;
  }} catch (e) {{
    return "failed: " + e;
  }}
}};
</script>
</body></html>"""


def who_of(path: str) -> str:
    """Which test page a request came from: every page tags its own requests with `who=<label>`."""
    return parse_qs(urlsplit(path).query).get("who", [""])[0]


class Recorder(http.server.BaseHTTPRequestHandler):
    """Answers everything with a small page and records each request as (method, path)."""

    seen: list[tuple[str, str]]

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.server.seen.append((self.command, self.path))  # type: ignore[attr-defined]
        who = who_of(self.path)
        if self.path.startswith("/page"):
            body = PAGE.format(who=who)
        else:
            body = f"<!doctype html><title>{self.command} {self.path}</title><p>{self.command} done</p>"
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass


class RecordingServer:
    def __init__(self) -> None:
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
        self.httpd.seen = []  # type: ignore[attr-defined]
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def seen(self) -> list[tuple[str, str]]:
        return list(self.httpd.seen)  # type: ignore[attr-defined]

    def mutating(self, who: str) -> list[tuple[str, str]]:
        return [(m, p) for m, p in self.seen if m in MUTATING and who_of(p) == who]

    def got(self, method: str, path: str) -> bool:
        return (method, path) in self.seen


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    rec = RecordingServer()
    thread = threading.Thread(target=rec.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield rec
    finally:
        rec.httpd.shutdown()
        rec.httpd.server_close()


def in_extension(stack: Stack, script: str) -> Any:
    """Run async JS with the extension's privileges (its options page)."""
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


def session_rule_ids(stack: Stack) -> list[int]:
    return in_extension(stack, "async () => (await chrome.declarativeNetRequest.getSessionRules()).map((r) => r.id)")


def switch_to(driver: WebDriver, url_end: str) -> str:
    """Selenium onto the tab whose URL ends with `url_end`; returns its window handle."""
    deadline = time.time() + 10
    while time.time() < deadline:
        for handle in driver.window_handles:
            driver.switch_to.window(handle)
            if driver.current_url.endswith(url_end):
                return handle
        time.sleep(0.1)
    raise AssertionError(f"no tab shows {url_end}")


def wait_for(condition: Any, timeout: float = 10, what: str = "condition") -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        with contextlib.suppress(WebDriverException):  # e.g. a script run while the page navigates
            if condition():
                return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@contextlib.contextmanager
def recording(stack: Stack) -> Iterator[list[BrowserEvent]]:
    events: list[BrowserEvent] = []
    unsubscribe = stack.session.browser.on_event(events.append)
    try:
        yield events
    finally:
        unsubscribe()


def test_guarded_tab_sends_no_mutating_request_but_loads_pages(stack: Stack, server: RecordingServer) -> None:
    browser = stack.session.browser
    driver = stack.driver
    with recording(stack) as events:
        guarded = stack.call(browser.open_tab(f"{server.base_url}/page?who=g", guarded=True))
        plain = stack.call(browser.open_tab(f"{server.base_url}/page?who=u"))
        assert guarded.tab_id in session_rule_ids(stack)
        assert plain.tab_id not in session_rule_ids(stack)
        assert server.got("GET", "/page?who=g") and server.got("GET", "/sink?who=g")

        g_handle = switch_to(driver, "/page?who=g")
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            assert driver.execute_async_script("window.send(arguments[0]).then(arguments[1])", method).startswith(
                "failed: TypeError"), method
        assert driver.execute_script("return navigator.sendBeacon('/beacon?who=g', 'x')") in (True, False)
        driver.execute_script("document.getElementById('frame-form').submit()")

        def iframe_text() -> str:
            driver.switch_to.default_content()
            driver.switch_to.frame(driver.find_element(By.NAME, "sink"))
            try:
                return driver.execute_script("return document.body ? document.body.innerText : ''")
            finally:
                driver.switch_to.default_content()

        # Chromium usually shows its blocked page in the frame, but a subframe's error page is not always readable
        # in time on a loaded machine; what counts is checked below: the server never receives the post.
        with contextlib.suppress(AssertionError):
            wait_for(lambda: "ERR_BLOCKED_BY_CLIENT" in iframe_text(), timeout=5, what="the iframe's blocked page")

        # The same moment, another handed-over tab without the guard posts freely.
        switch_to(driver, "/page?who=u")
        assert driver.execute_async_script("window.send('POST').then(arguments[0])") == "status 200"
        assert driver.execute_async_script("window.send('DELETE').then(arguments[0])") == "status 200"

        # GET navigations go through in the guarded tab: a link, and a typed address.
        driver.switch_to.window(g_handle)
        driver.execute_script("document.getElementById('link').click()")
        wait_for(lambda: server.got("GET", "/next?who=g"), what="GET of the link")
        driver.get(f"{server.base_url}/page?who=g&again=1")
        assert server.got("GET", "/page?who=g&again=1")

        # A top-level form post is refused too: the tab shows Chromium's blocked-page error at the post's URL.
        driver.execute_script("document.getElementById('main-form').submit()")
        wait_for(lambda: "ERR_BLOCKED_BY_CLIENT" in driver.execute_script(
            "return document.body ? document.body.innerText : ''"), what="the blocked-page error")
        blocked_page = driver.execute_script("return document.body.innerText")
        assert "blocked by an extension" in blocked_page and "ERR_BLOCKED_BY_CLIENT" in blocked_page, blocked_page
        tab_url = next(t.url for t in stack.call(browser.list_tabs()) if t.tab_id == guarded.tab_id)
        assert tab_url.endswith("/form-post?who=g"), tab_url

    assert server.mutating("g") == [], server.mutating("g")
    assert sorted(server.mutating("u")) == [("DELETE", "/api/item?who=u&m=DELETE"), ("POST", "/api/item?who=u&m=POST")]
    seen_by_extension = {(e.method, e.url.split("?")[0].rsplit("/", 1)[-1]) for e in events
                         if isinstance(e, NetworkRequest) and e.tab_id == guarded.tab_id}
    assert ("GET", "next") in seen_by_extension
    # webRequest still reports the blocked ones: a POST in the event stream does not mean it reached the server.
    assert ("POST", "form-post") in seen_by_extension
    stack.call(browser.close_tab(guarded.tab_id))
    stack.call(browser.close_tab(plain.tab_id))


def test_guard_can_be_lifted_and_put_back(stack: Stack, server: RecordingServer) -> None:
    browser = stack.session.browser
    driver = stack.driver
    tab = stack.call(browser.open_tab(f"{server.base_url}/page?who=t", guarded=True))
    switch_to(driver, "/page?who=t")
    assert driver.execute_async_script("window.send('POST').then(arguments[0])").startswith("failed")

    stack.call(browser.guard_tab(tab.tab_id, False))
    assert tab.tab_id not in session_rule_ids(stack)
    switch_to(driver, "/page?who=t")
    assert driver.execute_async_script("window.send('POST').then(arguments[0])") == "status 200"
    assert server.mutating("t") == [("POST", "/api/item?who=t&m=POST")], "the lifted guard lets one POST through"

    stack.call(browser.guard_tab(tab.tab_id, True))
    stack.call(browser.guard_tab(tab.tab_id, True))  # idempotent
    assert session_rule_ids(stack).count(tab.tab_id) == 1
    switch_to(driver, "/page?who=t")
    assert driver.execute_async_script("window.send('PATCH').then(arguments[0])").startswith("failed")
    assert len(server.mutating("t")) == 1

    # An unguarded tab turned guarded (a committed speculative tab, the other way round) works the same.
    other = stack.call(browser.open_tab(f"{server.base_url}/page?who=o"))
    stack.call(browser.guard_tab(other.tab_id, True))
    switch_to(driver, "/page?who=o")
    assert driver.execute_async_script("window.send('DELETE').then(arguments[0])").startswith("failed")
    assert server.mutating("o") == []
    stack.call(browser.close_tab(tab.tab_id))
    stack.call(browser.close_tab(other.tab_id))


def test_rule_goes_with_the_tab(stack: Stack, server: RecordingServer) -> None:
    browser = stack.session.browser
    driver = stack.driver
    closed_by_backend = stack.call(browser.open_tab(f"{server.base_url}/page?who=c1", guarded=True))
    closed_by_user = stack.call(browser.open_tab(f"{server.base_url}/page?who=c2", guarded=True))
    rules = session_rule_ids(stack)
    assert closed_by_backend.tab_id in rules and closed_by_user.tab_id in rules

    stack.call(browser.close_tab(closed_by_backend.tab_id))
    switch_to(driver, "/page?who=c2")
    driver.close()  # the user closes the tab: chrome.tabs.onRemoved
    driver.switch_to.window(driver.window_handles[0])
    wait_for(lambda: not {closed_by_backend.tab_id, closed_by_user.tab_id} & set(session_rule_ids(stack)),
             what="the rules of closed tabs to go")

    fresh = stack.call(browser.open_tab(f"{server.base_url}/page?who=n"))
    switch_to(driver, "/page?who=n")
    assert driver.execute_async_script("window.send('POST').then(arguments[0])") == "status 200"
    stack.call(browser.close_tab(fresh.tab_id))


def test_guard_needs_a_handed_over_tab(stack: Stack, server: RecordingServer) -> None:
    driver = stack.driver
    driver.switch_to.window(driver.window_handles[0])
    driver.switch_to.new_window("tab")
    driver.get(f"{server.base_url}/page?who=private")  # the user's own tab
    private_id = in_extension(stack, "async () => (await chrome.tabs.query({url: '*://*/page?who=private'}))[0].id")
    with pytest.raises(ExtensionError, match=f"tab {private_id} is not handed over"):
        stack.call(stack.session.browser.guard_tab(private_id, True))
    assert private_id not in session_rule_ids(stack)
    switch_to(driver, "/page?who=private")
    driver.close()
    driver.switch_to.window(driver.window_handles[0])


def test_tab_opened_by_a_guarded_tab_is_guarded(stack: Stack, server: RecordingServer) -> None:
    browser = stack.session.browser
    driver = stack.driver
    opener = stack.call(browser.open_tab(f"{server.base_url}/page?who=p", guarded=True))
    switch_to(driver, "/page?who=p")
    driver.find_element(By.ID, "blank-link").click()
    wait_for(lambda: any(t.url.endswith("who=p-child") for t in stack.call(browser.list_tabs())), what="the child tab")
    child = next(t for t in stack.call(browser.list_tabs()) if t.url.endswith("who=p-child"))
    wait_for(lambda: child.tab_id in session_rule_ids(stack), what="the child's rule")
    switch_to(driver, "/page?who=p-child")
    assert driver.execute_async_script("window.send('POST').then(arguments[0])").startswith("failed")
    assert server.mutating("p-child") == []

    stack.call(browser.close_tab(child.tab_id))
    stack.call(browser.close_tab(opener.tab_id))


@pytest.mark.xfail(reason="known gap: a form posted into a new tab (target=_blank) from a guarded tab leaves before "
                          "the new tab's rule can be installed (tabs.onCreated comes too late)", strict=False)
def test_form_posted_into_a_new_tab_is_blocked(stack: Stack, server: RecordingServer) -> None:
    browser = stack.session.browser
    driver = stack.driver
    opener = stack.call(browser.open_tab(f"{server.base_url}/page?who=b", guarded=True))
    switch_to(driver, "/page?who=b")
    driver.find_element(By.ID, "blank-submit").click()
    wait_for(lambda: len(stack.call(browser.list_tabs())) >= 2, what="the new tab")
    time.sleep(1)
    try:
        assert server.mutating("b") == []
    finally:
        for t in stack.call(browser.list_tabs()):
            if t.tab_id != opener.tab_id and who_of(t.url) == "b":
                stack.call(browser.close_tab(t.tab_id))
        stack.call(browser.close_tab(opener.tab_id))
