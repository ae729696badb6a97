"""The network gate of one tab is changed in the order asked (extension/lib/gate.js `setGate`, run in Node against a
recording `chrome` stand-in whose calls take a moment): a run's "on" that arrives while an "off" still fails the tab's
holds one by one ends with the tab intercepted, not with its record saying gated and Fetch disabled."""

from __future__ import annotations

from typing import Any

from extension_js import CHROME_STUB, run_js

RUNNER = CHROME_STUB + """
(async () => {
  const tabstate = await import(base + "tabstate.js");
  const gate = await import(base + "gate.js");
  await gate.loadGate();
  await gate.setGate(7, true);
  for (const n of [1, 2, 3]) {
    await tabstate.update(7, { type: "hold", holdId: "h" + n,
      hold: { sessionId: undefined, requestId: "req-" + n, method: "POST", url: "http://shop.test/buy" } });
  }
  calls.length = 0;
  callDelayMs = 1;
  // A stale gate lifted by a new backend, and the run it starts on the same tab right after.
  await Promise.all([gate.setGate(7, false), gate.setGate(7, true)]);
  const fetchCalls = calls.filter(([path, args]) => path === "chrome.debugger.sendCommand"
    && ["Fetch.enable", "Fetch.disable"].includes(args[1])).map(([, args]) => args[1]);
  process.stdout.write(JSON.stringify({ fetchCalls, gated: Boolean(tabstate.tabState(7).gate) }));
  process.exit(0);
})().catch((error) => { console.error(error); process.exit(1); });
"""


def test_an_on_that_arrives_during_an_off_leaves_the_tab_intercepted() -> None:
    seen: dict[str, Any] = run_js("tabstate.js", RUNNER)
    assert seen["gated"] is True
    assert seen["fetchCalls"][-1] == "Fetch.enable", seen["fetchCalls"]


CHECKED = CHROME_STUB + """
(async () => {
  const tabstate = await import(base + "tabstate.js");
  const gate = await import(base + "gate.js");
  await gate.loadGate();
  // The backend's "on" (its check that the tab is handed over takes a moment), then its "off" right after (the run
  // ended): the off must not overtake the on.
  const on = gate.setGate(7, true, { check: () => new Promise((resolve) => setTimeout(resolve, 20)) });
  const off = gate.setGate(7, false);
  await Promise.all([on, off]);
  const gatedAfterOff = Boolean(tabstate.tabState(7).gate);
  // A tab the run's tab opened (8), and a tab that one's page opened (9): both named by the run's tab.
  await gate.setGate(7, true);
  await gate.gateIfOpenedByGated(7, 8);
  await gate.gateIfOpenedByGated(8, 9);
  process.stdout.write(JSON.stringify({
    gatedAfterOff,
    openers: [tabstate.tabState(8).gate?.openedBy, tabstate.tabState(9).gate?.openedBy],
  }));
  process.exit(0);
})().catch((error) => { console.error(error); process.exit(1); });
"""


def test_an_off_asked_right_after_an_on_is_the_last_word_and_opened_tabs_name_the_run_tab() -> None:
    seen: dict[str, Any] = run_js("tabstate.js", CHECKED)
    assert seen["gatedAfterOff"] is False
    assert seen["openers"] == [7, 7]


LIFTED = CHROME_STUB + """
(async () => {
  const tabstate = await import(base + "tabstate.js");
  const gate = await import(base + "gate.js");
  await gate.loadGate();
  const gated = (tab) => Boolean(tabstate.tabState(tab).gate);
  // The run's tab 7 opened 8, whose page opened 9; 10 it opened too, and the backend then gated 10 itself.
  await gate.setGate(7, true);
  await gate.gateIfOpenedByGated(7, 8);
  await gate.gateIfOpenedByGated(8, 9);
  await gate.gateIfOpenedByGated(7, 10);
  await gate.setGate(10, true);
  await gate.setGate(7, false);
  const afterOff = [8, 9, 10].map(gated);
  // A tab the run's tab opens just as its gate comes off (the debugger's calls take a moment).
  await gate.setGate(7, true);
  callDelayMs = 2;
  await Promise.all([gate.gateIfOpenedByGated(7, 11), gate.setGate(7, false)]);
  process.stdout.write(JSON.stringify({ afterOff, racing: gated(11), run: gated(7) }));
  process.exit(0);
})().catch((error) => { console.error(error); process.exit(1); });
"""


def test_tabs_gated_for_a_tab_lose_their_gate_with_it_unless_the_backend_gated_them() -> None:
    seen: dict[str, Any] = run_js("tabstate.js", LIFTED)
    assert seen == {"afterOff": [False, False, True], "racing": False, "run": False}
