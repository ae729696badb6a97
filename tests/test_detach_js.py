"""When the browser ends the extension's debugger session on a guarded or gated tab (the user cancels the "is
debugging this browser" bar), the extension attaches again and keeps service workers out of the tab: without that
bypass a pass-through service worker carries the tab's posts past the guard's rule and the gate (swbypass.js); and the
requests the gate held then, which Chromium lets go, are reported as gone out. Run in
Node against a recording stand-in for the `chrome` API: what is checked is which commands the tab gets."""

from __future__ import annotations

import json
from typing import Any

import pytest

from extension_js import CHROME_STUB, run_js

RUNNER = CHROME_STUB + """
const { when, tabId, reason, holds } = JSON.parse(process.argv[2]);
(async () => {
  const tabstate = await import(base + "tabstate.js");
  await import(base + "guard.js");
  const gate = await import(base + "gate.js");
  const emitted = [];
  gate.startGate((message) => { emitted.push(message); return true; });
  await tabstate.loadTabState();
  if (when === "guarded") await tabstate.update(tabId, { type: "guard", on: true });
  if (when === "gated") await tabstate.update(tabId, { type: "gate", on: true, holdTimeoutMs: 1000 });
  for (const [holdId, hold] of holds) await tabstate.update(tabId, { type: "hold", holdId, hold });
  calls.length = 0;
  for (const listener of listeners["chrome.debugger.onDetach"]) listener({ tabId }, reason);
  await new Promise((resolve) => setTimeout(resolve, 100));
  const commands = calls.filter(([path]) => path === "chrome.debugger.sendCommand")
    .map(([, [target, method, params]]) => ({ tab: target.tabId, method, params: params ?? {} }));
  const attached = calls.some(([path]) => path === "chrome.debugger.attach");
  const sent = emitted.map(({ id, ...message }) => message);
  process.stdout.write(JSON.stringify({ attached, commands, sent, holds: tabstate.tabState(tabId).holds.size }));
})().catch((error) => { console.error(error); process.exit(1); });
"""


def after_detach(when: str, tab_id: int = 7, reason: str = "canceled_by_user",
                 holds: list[tuple[str, dict[str, str]]] | None = None) -> dict[str, Any]:
    result: dict[str, Any] = run_js("tabstate.js", RUNNER, json.dumps(
        {"when": when, "tabId": tab_id, "reason": reason, "holds": holds or []}))
    return result


BUY = {"requestId": "r-1", "sessionId": "", "method": "POST", "url": "http://shop.test/buy"}


@pytest.mark.parametrize("when", ["guarded", "gated"])
def test_a_watched_tab_gets_its_service_worker_bypass_back_after_a_detach(when: str) -> None:
    seen = after_detach(when)
    assert seen["attached"], "attached again"
    assert {"tab": 7, "method": "Network.setBypassServiceWorker", "params": {"bypass": True}} in seen["commands"]


def test_a_tab_neither_guarded_nor_gated_is_left_alone() -> None:
    assert after_detach("plain") == {"attached": False, "commands": [], "sent": [], "holds": 0}


def test_requests_held_when_the_user_ends_the_debugging_session_are_reported_as_gone_out() -> None:
    """Chromium lets a held request go when the debugger session ends: the backend must hear that it went out, or
    its question stays open and a later "no" is logged as if the request had been refused."""
    seen = after_detach("gated", holds=[("h1", BUY)])
    assert seen["sent"] == [{"type": "request_sent", "tab_id": 7, "method": "POST", "url": "http://shop.test/buy",
                             "hold_id": "h1", "detached": "canceled_by_user"}]
    assert seen["holds"] == 0, "nothing is left to answer"
    assert seen["attached"], "the gate is put back for what comes next"


def test_requests_held_in_a_tab_that_closed_are_not_reported_as_sent() -> None:
    seen = after_detach("gated", reason="target_closed", holds=[("h1", BUY)])
    assert seen["sent"] == [] and seen["holds"] == 0


IN_FLIGHT = CHROME_STUB + """
const { tabId, when } = JSON.parse(process.argv[2]);
(async () => {
  const tabstate = await import(base + "tabstate.js");
  const gate = await import(base + "gate.js");
  const emitted = [];
  gate.startGate((message) => { emitted.push(message); return true; });
  await tabstate.loadTabState();
  await tabstate.update(tabId, { type: "gate", on: true, holdTimeoutMs: 1000 });
  const detach = () => { for (const f of listeners["chrome.debugger.onDetach"]) f({ tabId }, "canceled_by_user"); };
  callDelayMs = 30;  // every browser call (storage, CDP) takes a moment: the session can end in between
  if (when === "answering") {
    await tabstate.update(tabId, { type: "hold", holdId: "h1",
      hold: { requestId: "r-1", sessionId: "", method: "POST", url: "http://shop.test/buy" } });
    const answer = gate.releaseHold("h1", false);
    detach();
    await answer;
  } else {
    const paused = { requestId: "r-2", resourceType: "XHR", request: { method: "POST", url: "http://shop.test/buy" } };
    for (const f of listeners["chrome.debugger.onEvent"]) f({ tabId }, "Fetch.requestPaused", paused);
    await new Promise((resolve) => setTimeout(resolve, 5));
    detach();
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  process.stdout.write(JSON.stringify(emitted.map(({ id, hold_id, ...message }) => message)));
})().catch((error) => { console.error(error); process.exit(1); });
"""

GONE = {"type": "request_sent", "tab_id": 7, "method": "POST", "url": "http://shop.test/buy",
        "detached": "canceled_by_user"}


def test_a_hold_whose_answer_is_on_its_way_when_the_session_ends_is_reported_let_go() -> None:
    """The backend said no, and the extension had taken the hold off its record to fail it, when the session ended:
    the failing never reached the browser, so the request went out and must be reported."""
    assert run_js("tabstate.js", IN_FLIGHT, json.dumps({"tabId": 7, "when": "answering"})) == [GONE]


def test_a_request_paused_just_as_the_session_ends_is_reported_let_go_and_never_asked_about() -> None:
    assert run_js("tabstate.js", IN_FLIGHT, json.dumps({"tabId": 7, "when": "pausing"})) == [GONE]
