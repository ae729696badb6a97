"""Ways out of a gated tab other than a page's own fetch (issue 13 H4), each on a page of its own under a run that
denies everything: a `keepalive` fetch and a beacon sent as the page unloads (held like any request), a WebSocket a
click opens (refused while the act runs), and a POST the page's service worker sends on for it (the gated tab bypasses
service workers, so the tab's own session holds it). The server records what reaches it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from branchwise.actions import Click, Goto
from branchwise.core.requests import GatedRequest
from branchwise.sandbox.recording import Recorded, RecordingServer, Reply
from branchwise.store import RunStore

from harness import Stack, wait_for
from test_network_gate_e2e import GatedRun

pytestmark = pytest.mark.e2e

UNLOAD = """<!doctype html><html><head><meta charset="utf-8"><title>Unload {who}</title></head><body>
<h1>Leaving</h1><a href="/next?who={who}">Next page</a>
<script>
addEventListener("pagehide", () => {{
  fetch("/keepalive?who={who}", {{method: "POST", body: "k", keepalive: true}});
  navigator.sendBeacon("/beacon?who={who}", "b");
}});
</script></body></html>"""

SOCKET = """<!doctype html><html><head><meta charset="utf-8"><title>Chat {who}</title></head><body>
<h1>Chat</h1><p id="status">idle</p>
<button onclick="open_socket()">Send message</button>
<script>
function open_socket() {{
  const ws = new WebSocket("ws://127.0.0.1:{port}/socket?who={who}");
  ws.onopen = () => ws.send("hello");
  ws.onerror = () => {{ document.getElementById("status").textContent = "socket failed"; }};
}}
</script></body></html>"""

WORKER_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Offline-first {who}</title></head><body>
<h1>Offline-first</h1><p id="status">registering</p>
<button onclick="post()">Save</button>
<script>
function show(text) {{ document.getElementById("status").textContent = text; }}
function post() {{
  fetch("/sw-post?who={who}", {{method: "POST", body: "s"}}).then((r) => show("status " + r.status),
    (e) => show("failed: " + e));
}}
navigator.serviceWorker.register("/sw.js?who={who}").then(() => navigator.serviceWorker.ready)
  .then(() => show(navigator.serviceWorker.controller ? "controlled" : "registered"));
</script></body></html>"""

# Answers every request itself, forwarding it to the network: what a site's offline-first worker does.
SERVICE_WORKER = """
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (e) => e.waitUntil(self.clients.claim()));
self.addEventListener("fetch", (e) => e.respondWith(fetch(e.request)));
"""


def respond(request: Recorded, port: int) -> Reply | None:
    pages = {"/unload": UNLOAD, "/socket-page": SOCKET, "/worker-page": WORKER_PAGE}
    if request.route in pages:
        return Reply(pages[request.route].format(who=request.who, port=port))
    if request.route == "/sw.js":
        return Reply(SERVICE_WORKER, "text/javascript")
    return None


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with RecordingServer(respond) as rec:
        yield rec


def test_a_keepalive_fetch_and_a_beacon_sent_as_the_page_unloads_are_held(
        stack: Stack, server: RecordingServer, store: RunStore) -> None:
    run = GatedRun(stack, server, store, "unload", [False, False], path="/unload")
    try:
        with run:
            view = run.observe()
            assert view.page is not None
            link = next(e.id for e in view.page.elements.values() if e.role == "link" and e.name == "Next page")
            result = stack.call(run.env.execute(Click(link)))
            assert result.ok
            wait_for(lambda: server.got("GET", "/next?who=unload"), what="the next page")
        assert set(result.requests or ()) == {
            GatedRequest("POST", f"{server.base_url}/keepalive?who=unload", "failed"),
            GatedRequest("POST", f"{server.base_url}/beacon?who=unload", "failed")}
        assert server.mutating("unload") == []
    finally:
        run.close_tab()


def test_a_websocket_a_click_opens_is_refused_while_the_act_runs(
        stack: Stack, server: RecordingServer, store: RunStore) -> None:
    run = GatedRun(stack, server, store, "socket", [], path="/socket-page")
    try:
        with run:
            assert run.click("Send message").ok
            wait_for(lambda: run.page_text("status") == "socket failed", what="the socket to be refused")
        assert not server.got("GET", "/socket?who=socket")
    finally:
        run.close_tab()


def test_a_post_the_pages_service_worker_would_send_on_is_held(
        stack: Stack, server: RecordingServer, store: RunStore) -> None:
    run = GatedRun(stack, server, store, "worker", [False], path="/worker-page")
    try:
        wait_for(lambda: run.page_text("status") in ("controlled", "registered"), what="the service worker")
        if run.page_text("status") != "controlled":  # a worker controls the pages loaded after it is active
            stack.call(run.env.execute(Goto(run.url)))
            wait_for(lambda: run.page_text("status") == "controlled", what="the page to be controlled")
        with run:
            result = run.click("Save")
            assert result.requests == (GatedRequest("POST", f"{server.base_url}/sw-post?who=worker", "failed"),)
            wait_for(lambda: run.page_text("status").startswith("failed"), what="the page's fetch to fail")
        assert server.mutating("worker") == []
    finally:
        run.close_tab()
