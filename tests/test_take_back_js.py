"""Taking a tab back (the side panel's "Take back", extension/lib/tabs.js `takeBack`, run in Node against a recording
`chrome` stand-in): the tab is no longer handed over, a request its gate held fails (it is not let through), the gate
comes off before the debugger lets go (a request still held then would go out), its block rules go, and the tab leaves
the Branchwise group, even when lifting the guard's rules fails. A tab that was not handed over is refused, and
nothing is touched."""

from __future__ import annotations

import json
from typing import Any

import pytest

from extension_js import CHROME_STUB, run_js

RUNNER = CHROME_STUB + """
const { failRules } = JSON.parse(process.argv[2]);
const recording = globalThis.chrome;
// Lifting rules fails (Chrome refuses the update) when asked to: the rest of the taking back must still happen.
globalThis.chrome = new Proxy(recording, {
  get(target, prop) {
    if (prop !== "declarativeNetRequest" || !failRules) return target[prop];
    return { updateSessionRules: async (change) => {
      calls.push(["chrome.declarativeNetRequest.updateSessionRules", [change]]);
      throw new Error("the rules could not be changed");
    } };
  },
});
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
  const problem = await tabs.takeBack(5).then(() => "", (error) => error.message);
  const mine = calls.slice(callsBefore);
  const names = mine.map(([path, args]) => path === "chrome.debugger.sendCommand" ? args[1] : path);
  const removedRules = mine.filter(([path]) => path === "chrome.declarativeNetRequest.updateSessionRules")
    .flatMap(([, args]) => args[0].removeRuleIds || []);
  const record = tabstate.tabState(5);
  process.stdout.write(JSON.stringify({
    refused, touchedOnRefusal, problem, names, removedRules,
    record: { handed: record.handed, gate: record.gate, holds: record.holds.size },
    ungrouped: calls.filter(([path]) => path === "chrome.tabs.ungroup").map(([, args]) => args[0]),
  }));
  process.exit(0);
})().catch((error) => { console.error(error); process.exit(1); });
"""

OPENED_RULE_BIT, CHANNEL_RULE_BIT = 1 << 29, 1 << 28


@pytest.mark.parametrize("fail_rules", [False, True])
def test_a_tab_taken_back_is_let_go_of_entirely_and_its_held_request_fails(fail_rules: bool) -> None:
    seen: dict[str, Any] = run_js("tabstate.js", RUNNER, json.dumps({"failRules": fail_rules}))
    assert seen["refused"] == "tab 6 is not handed over to Branchwise" and seen["touchedOnRefusal"] == []
    assert seen["problem"] == ("could not unguard tab 5: the rules could not be changed" if fail_rules else "")
    assert seen["record"] == {"handed": False, "gate": None, "holds": 0}
    names = seen["names"]
    assert "Fetch.continueRequest" not in names
    assert names.index("Fetch.failRequest") < names.index("Fetch.disable") < names.index("chrome.debugger.detach")
    assert seen["ungrouped"] == [5]
    assert 5 in seen["removedRules"], "the guard's block rule"
    assert {5 ^ OPENED_RULE_BIT, 5 ^ CHANNEL_RULE_BIT} <= set(seen["removedRules"]), "the gate's block rules"
