"""When the browser ends the extension's debugger session on a guarded or gated tab (the user cancels the "is
debugging this browser" bar), the extension attaches again and keeps service workers out of the tab: without that
bypass a pass-through service worker carries the tab's posts past the guard's rule and the gate (swbypass.js). Run in
Node against a recording stand-in for the `chrome` API: what is checked is which commands the tab gets."""

from __future__ import annotations

import json
from typing import Any

import pytest

from extension_js import CHROME_STUB, run_js

RUNNER = CHROME_STUB + """
const { when, tabId } = JSON.parse(process.argv[2]);
(async () => {
  const tabstate = await import(base + "tabstate.js");
  await import(base + "guard.js");
  const gate = await import(base + "gate.js");
  gate.startGate(() => true);
  await tabstate.loadTabState();
  if (when === "guarded") await tabstate.update(tabId, { type: "guard", on: true });
  if (when === "gated") await tabstate.update(tabId, { type: "gate", on: true, holdTimeoutMs: 1000 });
  calls.length = 0;
  for (const listener of listeners["chrome.debugger.onDetach"]) listener({ tabId }, "canceled_by_user");
  await new Promise((resolve) => setTimeout(resolve, 100));
  const commands = calls.filter(([path]) => path === "chrome.debugger.sendCommand")
    .map(([, [target, method, params]]) => ({ tab: target.tabId, method, params: params ?? {} }));
  const attached = calls.some(([path]) => path === "chrome.debugger.attach");
  process.stdout.write(JSON.stringify({ attached, commands }));
})().catch((error) => { console.error(error); process.exit(1); });
"""


def after_detach(when: str, tab_id: int = 7) -> dict[str, Any]:
    result: dict[str, Any] = run_js("tabstate.js", RUNNER, json.dumps({"when": when, "tabId": tab_id}))
    return result


@pytest.mark.parametrize("when", ["guarded", "gated"])
def test_a_watched_tab_gets_its_service_worker_bypass_back_after_a_detach(when: str) -> None:
    seen = after_detach(when)
    assert seen["attached"], "attached again"
    assert {"tab": 7, "method": "Network.setBypassServiceWorker", "params": {"bypass": True}} in seen["commands"]


def test_a_tab_neither_guarded_nor_gated_is_left_alone() -> None:
    assert after_detach("plain") == {"attached": False, "commands": []}
