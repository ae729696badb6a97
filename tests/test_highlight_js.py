"""A confirmation card highlights the element it asks about (extension/lib/confirm.js, run in Node against a
recording `chrome` stand-in), but only in a tab the user handed over: the backend naming a tab is not enough for the
extension to attach its debugger to it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from extension_js import CHROME_STUB, run_js

RUNNER = CHROME_STUB + """
const { handed } = JSON.parse(process.argv[2]);
(async () => {
  const tabstate = await import(base + "tabstate.js");
  const confirm = await import(base + "confirm.js");
  await tabstate.loadTabState();
  if (handed) await tabstate.update(9, { type: "hand_over" });
  calls.length = 0;
  await confirm.showConfirm({ approval_id: "a1", nonce: "n", run_id: "r1", tab_id: 9, action_text: "click [3]",
    element: { backend_node_id: 42 }, reasons: [], timeout_s: 60 });
  const attached = calls.some(([path, args]) => path === "chrome.debugger.attach" && args[0].tabId === 9);
  const highlighted = calls.some(([path, args]) => path === "chrome.debugger.sendCommand"
    && args[1] === "Overlay.highlightNode");
  process.stdout.write(JSON.stringify({ attached, highlighted }));
  process.exit(0);
})().catch((error) => { console.error(error); process.exit(1); });
"""


@pytest.mark.parametrize(("handed", "expected"), [(True, True), (False, False)])
def test_the_element_is_highlighted_only_in_a_tab_handed_over(handed: bool, expected: bool) -> None:
    seen: dict[str, Any] = run_js("tabstate.js", RUNNER, json.dumps({"handed": handed}))
    assert seen == {"attached": expected, "highlighted": expected}
