"""When the socket to the backend closes, the requests the network gate holds fail at once (the answers would come
from a backend that is gone) instead of waiting out the hold timeout. Run in Node against a recording stand-in for the
`chrome` API (extension/lib/connection.js and gate.js)."""

from __future__ import annotations

from typing import Any

from extension_js import CHROME_STUB, run_js

RUNNER = CHROME_STUB + """
(async () => {
  const tabstate = await import(base + "tabstate.js");
  const gate = await import(base + "gate.js");
  const { Connection } = await import(base + "connection.js");
  await gate.loadGate();
  await tabstate.update(7, { type: "gate", on: true, holdTimeoutMs: 150000 });
  await tabstate.update(7, { type: "hold", holdId: "h1",
    hold: { sessionId: undefined, requestId: "req-1", method: "POST", url: "http://shop.test/buy" } });
  const connection = new Connection(() => null, () => gate.failAllHolds("the backend disconnected"));
  const socket = {};
  connection.ws = socket;
  await connection.closed(socket, { code: 1006, reason: "the backend went away" }, "ws://127.0.0.1:9/ws");
  const failed = calls
    .filter(([path, args]) => path === "chrome.debugger.sendCommand" && args[1] === "Fetch.failRequest")
    .map(([, args]) => ({ tab: args[0].tabId, requestId: args[2].requestId }));
  process.stdout.write(JSON.stringify({ failed, holds: [...tabstate.tabState(7).holds.keys()] }));
  process.exit(0);
})().catch((error) => { console.error(error); process.exit(1); });
"""


def test_the_requests_held_when_the_backend_disconnects_fail_at_once() -> None:
    seen: dict[str, Any] = run_js("tabstate.js", RUNNER)
    assert seen == {"failed": [{"tab": 7, "requestId": "req-1"}], "holds": []}
