"""Taking a tab back (the side panel's "Take back", extension/lib/tabs.js `takeBack`, run in Node against a recording
`chrome` stand-in): the tab is no longer handed over, a request its gate held fails (it is not let through), the gate
comes off before the debugger lets go (failing a hold needs the debugger), and the tab leaves the Branchwise group. A
tab that was not handed over is refused, and nothing is touched."""

from __future__ import annotations

from typing import Any

from extension_js import CHROME_STUB, run_js

RUNNER = CHROME_STUB + """
(async () => {
  const tabstate = await import(base + "tabstate.js");
  const gate = await import(base + "gate.js");
  const tabs = await import(base + "tabs.js");
  await gate.loadGate();
  await tabstate.update(5, { type: "hand_over" });
  await tabstate.update(5, { type: "gate", on: true, holdTimeoutMs: 150000 });
  await tabstate.update(5, { type: "hold", holdId: "h1",
    hold: { sessionId: undefined, requestId: "req-1", method: "POST", url: "http://shop.test/buy" } });
  const setUp = calls.length;
  const refused = await tabs.takeBack(6).then(() => "", (error) => error.message);
  const touchedOnRefusal = calls.slice(setUp).map(([path]) => path)
    .filter((path) => !path.startsWith("chrome.storage"));
  const callsBefore = calls.length;
  await tabs.takeBack(5);
  const names = calls.slice(callsBefore).map(([path, args]) =>
    path === "chrome.debugger.sendCommand" ? args[1] : path);
  const record = tabstate.tabState(5);
  process.stdout.write(JSON.stringify({
    refused, touchedOnRefusal, names,
    record: { handed: record.handed, gate: record.gate, holds: record.holds.size },
    ungrouped: calls.filter(([path]) => path === "chrome.tabs.ungroup").map(([, args]) => args[0]),
  }));
  process.exit(0);
})().catch((error) => { console.error(error); process.exit(1); });
"""


def test_a_tab_taken_back_is_let_go_of_entirely_and_its_held_request_fails() -> None:
    seen: dict[str, Any] = run_js("tabstate.js", RUNNER)
    assert seen["refused"] == "tab 6 is not handed over to Branchwise" and seen["touchedOnRefusal"] == []
    assert seen["record"] == {"handed": False, "gate": None, "holds": 0}
    names = seen["names"]
    assert "Fetch.continueRequest" not in names
    assert names.index("Fetch.failRequest") < names.index("Fetch.disable") < names.index("chrome.debugger.detach")
    assert seen["ungrouped"] == [5]
