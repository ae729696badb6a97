"""Guarded tabs: no POST, PUT, PATCH or DELETE leaves a guarded tab (form posts included), GETs do; its pages cannot
open tabs (so nothing is posted into a new tab) and its site's service worker stays out; the guard is per tab, can be
lifted and put back, and goes away with the tab."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from branchwise.config import EXTENSION_ID
from branchwise.link import ExtensionError
from branchwise.protocol import NetworkRequest
from branchwise.sandbox.recording import Recorded, RecordingServer, Reply, who_of

from harness import Stack, in_extension, recording, wait_for

pytestmark = pytest.mark.e2e

SANDBOX_BIT = 1 << 30


def sandbox_rule_id(tab_id: int) -> int:
    """The id of a guarded tab's second rule (the sandbox header), as extension/lib/guard.js derives it."""
    return (tab_id ^ SANDBOX_BIT) or 0x7FFFFFFF

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Guard test {who}</title></head><body>
<h1>Guard test</h1>
<form id="main-form" method="post" action="/form-post?who={who}"><input name="q" value="1"><button>Send</button></form>
<form id="frame-form" method="post" action="/frame-post?who={who}" target="sink"><input name="q" value="2"></form>
<form id="blank-form" method="post" action="/blank-post?who={who}" target="_blank"><input name="q" value="3">
<button id="blank-submit">Send in a new tab</button></form>
<form id="ft-form" method="post" action="/ft-post?who={who}"><input name="q" value="4">
<button id="ft-submit" formtarget="_blank">Send, the button says in a new tab</button></form>
<form id="named-form" method="post" action="/named-post?who={who}" target="win1"><input name="q" value="5"></form>
<form id="unseen-form" method="post" action="/unseen-post?who={who}" target="never-opened"><input name="q" value="6">
</form>
<button id="open-and-submit" onclick="window.opened = String(window.open('', 'win1'));
  document.getElementById('named-form').submit()">Open a window and post into it</button>
<button id="open-url-then-submit" onclick="window.opened = String(window.open('/next?who={who}-win', 'win1'));
  setTimeout(() => document.getElementById('named-form').submit(), 300)">Open a page, post into it later</button>
<button id="script-submit" onclick="document.getElementById('blank-form').submit()">Script posts in a new tab</button>
<button id="unseen-submit" onclick="document.getElementById('unseen-form').submit()">Post into a new window</button>
<button id="open-window" onclick="window.opened = String(window.open('/page?who={who}-popup'))">window.open</button>
<form id="search-form" method="get" action="/search"><input name="who" value="{who}"><input name="q" value="shoes">
<button id="search-submit">Search</button></form>
<a id="blank-link" href="/page?who={who}-child" target="_blank">open a new tab</a>
<iframe name="sink" src="/sink?who={who}"></iframe>
<a id="link" href="/next?who={who}">next</a>
<script>
window.ran = true;
window.send = async (method) => {{
  try {{
    const body = method === "DELETE" || method === "GET" ? undefined : "x";
    const r = await fetch("/api/item?who={who}&m=" + method, {{method, body}});
    return "status " + r.status;
  }} catch (e) {{
    return "failed: " + e;
  }}
}};
</script>
</body></html>"""

# A pass-through service worker, as many sites have: the fetches it makes for a page carry no tab id.
SERVICE_WORKER = """self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (e) => e.waitUntil(self.clients.claim()));
self.addEventListener("fetch", (e) => e.respondWith(fetch(e.request)));"""


def respond(request: Recorded, port: int) -> Reply | None:
    if request.path.startswith("/page"):
        return Reply(PAGE.format(who=request.who))
    if request.path.startswith("/sw.js"):
        return Reply(SERVICE_WORKER, "text/javascript")
    return None


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with RecordingServer(respond) as rec:
        yield rec


def session_rule_ids(stack: Stack) -> list[int]:
    ids: list[int] = in_extension(stack,
                                  "async () => (await chrome.declarativeNetRequest.getSessionRules()).map((r) => r.id)")
    return ids


def guard_rules_of(stack: Stack, tab_id: int) -> list[int]:
    """Which of a tab's two guard rules (the block rule, id = tab id, and the sandbox rule) are in place."""
    return [i for i in session_rule_ids(stack) if i in (tab_id, sandbox_rule_id(tab_id))]


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


def test_guarded_tab_sends_no_mutating_request_but_loads_pages(stack: Stack, server: RecordingServer) -> None:
    browser = stack.session.browser
    driver = stack.driver
    with recording(stack) as events:
        guarded = stack.call(browser.open_tab(f"{server.base_url}/page?who=g", guarded=True))
        plain = stack.call(browser.open_tab(f"{server.base_url}/page?who=u"))
        both = sorted([guarded.tab_id, sandbox_rule_id(guarded.tab_id)])
        assert sorted(guard_rules_of(stack, guarded.tab_id)) == both
        assert guard_rules_of(stack, plain.tab_id) == []
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
                text: str = driver.execute_script("return document.body ? document.body.innerText : ''")
                return text
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
    assert guard_rules_of(stack, tab.tab_id) == []
    switch_to(driver, "/page?who=t")
    assert driver.execute_async_script("window.send('POST').then(arguments[0])") == "status 200"
    assert server.mutating("t") == [("POST", "/api/item?who=t&m=POST")], "the lifted guard lets one POST through"

    stack.call(browser.guard_tab(tab.tab_id, True))
    stack.call(browser.guard_tab(tab.tab_id, True))  # idempotent
    assert sorted(guard_rules_of(stack, tab.tab_id)) == sorted([tab.tab_id, sandbox_rule_id(tab.tab_id)])
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
    for tab in (closed_by_backend, closed_by_user):
        assert tab.tab_id in rules and sandbox_rule_id(tab.tab_id) in rules

    stack.call(browser.close_tab(closed_by_backend.tab_id))
    switch_to(driver, "/page?who=c2")
    driver.close()  # the user closes the tab: chrome.tabs.onRemoved
    driver.switch_to.window(driver.window_handles[0])
    gone = {closed_by_backend.tab_id, closed_by_user.tab_id}
    gone |= {sandbox_rule_id(t) for t in gone}
    wait_for(lambda: not gone & set(session_rule_ids(stack)),
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
    assert guard_rules_of(stack, private_id) == []
    switch_to(driver, "/page?who=private")
    driver.close()
    driver.switch_to.window(driver.window_handles[0])


def send(driver: WebDriver, method: str) -> str:
    outcome: str = driver.execute_async_script("window.send(arguments[0]).then(arguments[1])", method)
    return outcome


def close_tabs_of(stack: Stack, who: str) -> None:
    """Close the handed-over tabs showing pages of `who` (and of its children: `who-child`, `who-popup`...)."""
    for t in stack.call(stack.session.browser.list_tabs()):
        label = who_of(t.url)
        if label == who or label.startswith(f"{who}-"):
            stack.call(stack.session.browser.close_tab(t.tab_id))


def register_service_worker(stack: Stack, server: RecordingServer, who: str) -> int:
    """A handed-over, unguarded tab (the user's own browsing, as far as the site can tell) installs the site's
    pass-through service worker and is controlled by it; returns the tab id."""
    tab = stack.call(stack.session.browser.open_tab(f"{server.base_url}/page?who={who}"))
    switch_to(stack.driver, f"/page?who={who}")
    assert stack.driver.execute_async_script(
        "const done = arguments[0]; navigator.serviceWorker.register('/sw.js')"
        ".then(() => navigator.serviceWorker.ready).then(() => done('ready'), (e) => done(String(e)))") == "ready"
    wait_for(lambda: stack.driver.execute_script("return !!navigator.serviceWorker.controller"),
             what="the service worker to control the page")
    return tab.tab_id


def is_controlled(driver: WebDriver) -> bool:
    return bool(driver.execute_script("return !!navigator.serviceWorker.controller"))


NEW_TAB_POSTS = {
    "blank-submit": "a form with target=_blank, its submit button clicked",
    "ft-submit": "a button with formtarget=_blank in a form without a target",
    "open-and-submit": "window.open('', name) and a form posted to that name at once",
    "open-url-then-submit": "window.open(url, name), and a form posted to that name 300 ms later",
    "script-submit": "form.submit() called by script on a target=_blank form",
    "unseen-submit": "a form posted to a window name that no window has yet",
}


@pytest.mark.parametrize("button", list(NEW_TAB_POSTS))
def test_form_posted_into_a_new_tab_is_blocked(stack: Stack, server: RecordingServer, button: str) -> None:
    browser = stack.session.browser
    driver = stack.driver
    who = f"b-{button}"
    opener = stack.call(browser.open_tab(f"{server.base_url}/page?who={who}", guarded=True))
    switch_to(driver, f"/page?who={who}")
    handles = set(driver.window_handles)
    driver.find_element(By.ID, button).click()  # a trusted click: the page has user activation for its popup
    time.sleep(1.5)
    try:
        assert server.mutating(who) == [], NEW_TAB_POSTS[button]
        # The sandbox (no allow-popups) stops the new tab itself: the browser opens none, window.open returns null.
        assert set(driver.window_handles) == handles, "the guarded page opened a tab"
        assert driver.execute_script("return window.opened === undefined ? 'not called' : window.opened") in (
            "null", "not called")
        assert [t.tab_id for t in stack.call(browser.list_tabs()) if who_of(t.url).startswith(who)] == [opener.tab_id]
    finally:
        close_tabs_of(stack, who)


def test_same_tab_forms_links_and_scripts_work_in_a_guarded_tab(stack: Stack, server: RecordingServer) -> None:
    browser = stack.session.browser
    driver = stack.driver
    tab = stack.call(browser.open_tab(f"{server.base_url}/page?who=s", guarded=True))
    switch_to(driver, "/page?who=s")
    handles = set(driver.window_handles)
    assert driver.execute_script("return window.ran === true"), "scripts run"
    assert driver.execute_script("return self.origin") == server.base_url, "the origin is the site's, not opaque"
    driver.execute_script("document.cookie = 'seen=1; path=/'; localStorage.setItem('k', 'v')")
    assert send(driver, "GET") == "status 200"

    # A same-tab GET search form, its button clicked, then the same form submitted by script.
    driver.find_element(By.ID, "search-submit").click()
    wait_for(lambda: driver.current_url.endswith("/search?who=s&q=shoes"), what="the search results")
    assert server.got("GET", "/search?who=s&q=shoes")
    assert "seen=1" in driver.execute_script("return document.cookie")
    assert driver.execute_script("return localStorage.getItem('k')") == "v"
    driver.back()
    wait_for(lambda: driver.current_url.endswith("/page?who=s"), what="the page again")
    driver.execute_script("const f = document.getElementById('search-form'); f.q.value = 'hats'; f.submit()")
    wait_for(lambda: server.got("GET", "/search?who=s&q=hats"), what="the scripted search")
    driver.back()
    wait_for(lambda: driver.current_url.endswith("/page?who=s"), what="the page again")
    driver.find_element(By.ID, "link").click()
    wait_for(lambda: server.got("GET", "/next?who=s"), what="the link")
    driver.back()
    wait_for(lambda: driver.current_url.endswith("/page?who=s"), what="the page again")

    # Dialogs still open (allow-modals).
    driver.execute_script("setTimeout(() => alert('hello'), 0)")
    wait_for(lambda: driver.switch_to.alert.text == "hello", what="the alert")
    driver.switch_to.alert.accept()

    # No new tab, even from a plain link or a window.open on a click.
    driver.find_element(By.ID, "blank-link").click()
    driver.find_element(By.ID, "open-window").click()
    time.sleep(1)
    assert set(driver.window_handles) == handles
    assert driver.execute_script("return window.opened") == "null"
    assert not server.got("GET", "/page?who=s-child") and not server.got("GET", "/page?who=s-popup")
    assert server.mutating("s") == []
    stack.call(browser.close_tab(tab.tab_id))


def test_service_worker_stays_out_of_a_guarded_tab(stack: Stack, server: RecordingServer) -> None:
    browser = stack.session.browser
    driver = stack.driver
    user_tab = register_service_worker(stack, server, "w-user")
    assert send(driver, "POST") == "status 200", "the worker passes posts on"

    guarded = stack.call(browser.open_tab(f"{server.base_url}/page?who=w", guarded=True))
    switch_to(driver, "/page?who=w")
    assert not is_controlled(driver), "the service worker is bypassed in the guarded tab"
    assert send(driver, "POST").startswith("failed"), "so the tab's own rule stops the post"
    driver.execute_script("document.getElementById('main-form').submit()")
    wait_for(lambda: "ERR_BLOCKED_BY_CLIENT" in driver.execute_script(
        "return document.body ? document.body.innerText : ''"), what="the blocked-page error")
    assert server.mutating("w") == []

    # Lifting the guard lifts the bypass too: the tab's next page is the worker's again.
    stack.call(browser.guard_tab(guarded.tab_id, False))
    driver.get(f"{server.base_url}/page?who=w-after")
    wait_for(lambda: is_controlled(driver), what="the service worker to control the unguarded tab")
    stack.call(browser.close_tab(guarded.tab_id))
    stack.call(browser.close_tab(user_tab))


def test_lifted_guard_sandbox_lasts_until_the_tab_navigates(stack: Stack, server: RecordingServer) -> None:
    browser = stack.session.browser
    driver = stack.driver
    tab = stack.call(browser.open_tab(f"{server.base_url}/page?who=l", guarded=True))
    stack.call(browser.guard_tab(tab.tab_id, False))  # a committed speculative tab becomes the working tab
    assert guard_rules_of(stack, tab.tab_id) == []
    switch_to(driver, "/page?who=l")
    handles = set(driver.window_handles)

    # The document loaded under the guard keeps its sandbox: it still opens no tab (its posts go through, though).
    driver.find_element(By.ID, "blank-link").click()
    time.sleep(1)
    assert set(driver.window_handles) == handles and not server.got("GET", "/page?who=l-child")
    assert send(driver, "POST") == "status 200"

    # The next document is not sandboxed: a target=_blank link opens its tab, which is handed over and unguarded.
    driver.get(f"{server.base_url}/page?who=l2")
    driver.find_element(By.ID, "blank-link").click()
    wait_for(lambda: any(t.url.endswith("who=l2-child") for t in stack.call(browser.list_tabs())), what="the child")
    child = next(t for t in stack.call(browser.list_tabs()) if t.url.endswith("who=l2-child"))
    assert guard_rules_of(stack, child.tab_id) == []
    stack.call(browser.close_tab(child.tab_id))
    stack.call(browser.close_tab(tab.tab_id))


def test_tab_opened_by_a_page_guarded_after_it_loaded_is_guarded(stack: Stack, server: RecordingServer) -> None:
    """A guard put on a tab that already shows a page reaches that page's requests but not its sandbox: it can still
    open tabs, which are guarded from tabs.onCreated on (their very first request may leave before)."""
    browser = stack.session.browser
    driver = stack.driver
    opener = stack.call(browser.open_tab(f"{server.base_url}/page?who=p"))
    stack.call(browser.guard_tab(opener.tab_id, True))
    switch_to(driver, "/page?who=p")
    driver.find_element(By.ID, "blank-link").click()
    wait_for(lambda: any(t.url.endswith("who=p-child") for t in stack.call(browser.list_tabs())), what="the child tab")
    child = next(t for t in stack.call(browser.list_tabs()) if t.url.endswith("who=p-child"))
    wait_for(lambda: len(guard_rules_of(stack, child.tab_id)) == 2, what="the child's rules")
    switch_to(driver, "/page?who=p-child")
    assert send(driver, "POST").startswith("failed")
    assert server.mutating("p-child") == []

    stack.call(browser.close_tab(child.tab_id))
    stack.call(browser.close_tab(opener.tab_id))


def test_guard_outlives_a_restarted_worker(stack: Stack, server: RecordingServer) -> None:
    """The rules and the service-worker bypass live in the browser; a restarted worker rebuilds its view of them."""
    browser = stack.session.browser
    driver = stack.driver
    user_tab = register_service_worker(stack, server, "r-user")
    guarded = stack.call(browser.open_tab(f"{server.base_url}/page?who=r", guarded=True))
    late = stack.call(browser.open_tab(f"{server.base_url}/page?who=q"))
    stack.call(browser.guard_tab(late.tab_id, True))  # its page loaded unguarded: it can still open tabs

    assert stack.session.chromium is not None
    targets = stack.call(stack.session.chromium.cdp("Target.getTargets"))["targetInfos"]
    worker = next(t for t in targets if t["type"] == "service_worker" and EXTENSION_ID in t["url"])
    link = stack.session.hub.link
    stack.call(stack.session.chromium.cdp("Target.closeTarget", {"targetId": worker["targetId"]}))
    wait_for(lambda: stack.session.hub.link is not link, what="the worker to stop")
    driver.switch_to.window(driver.window_handles[0])
    driver.switch_to.new_window("tab")  # a tab event wakes the worker
    driver.close()
    stack.call(stack.session.hub.wait_link(30))

    switch_to(driver, "/page?who=r")
    driver.get(f"{server.base_url}/page?who=r2")
    assert not is_controlled(driver), "the bypass outlived the worker"
    assert send(driver, "POST").startswith("failed")
    # The restarted worker knows `late` is guarded (from the stored tab state, tabstate.js): the tab its page opens
    # is guarded too.
    switch_to(driver, "/page?who=q")
    driver.find_element(By.ID, "blank-link").click()
    wait_for(lambda: any(t.url.endswith("who=q-child") for t in stack.call(browser.list_tabs())), what="the child tab")
    child = next(t for t in stack.call(browser.list_tabs()) if t.url.endswith("who=q-child"))
    wait_for(lambda: len(guard_rules_of(stack, child.tab_id)) == 2, what="the child's rules")

    stack.call(browser.guard_tab(guarded.tab_id, False))
    assert guard_rules_of(stack, guarded.tab_id) == []
    switch_to(driver, "/page?who=r2")
    driver.get(f"{server.base_url}/page?who=r3")
    wait_for(lambda: is_controlled(driver), what="the service worker to control the unguarded tab")
    assert server.mutating("r") == server.mutating("r2") == []
    for tab_id in (child.tab_id, late.tab_id, guarded.tab_id, user_tab):
        stack.call(browser.close_tab(tab_id))
