"""Starting a run from the side panel hands its tab over first (the backend reads it as soon as it accepts), and takes
it back when the backend refuses or cannot be asked (extension/lib/tabs.js `handOverFor`, run in Node against a
recording `chrome` stand-in): a run that never started keeps no tab (nor its place in the Branchwise group); a tab
handed over before stays so."""

from __future__ import annotations

import json
from typing import Any

import pytest

from extension_js import CHROME_STUB, run_js

RUNNER = CHROME_STUB + """
const { before, refused } = JSON.parse(process.argv[2]);
(async () => {
  const tabstate = await import(base + "tabstate.js");
  const tabs = await import(base + "tabs.js");
  await tabstate.loadTabState();
  if (before) await tabstate.update(5, { type: "hand_over" });
  let handedDuring = null;
  const outcome = await tabs.handOverFor(5, async () => {
    handedDuring = tabstate.isHanded(5);
    if (refused) throw new Error("a run is already in progress; stop it first");
    return { run_id: "r1" };
  }).then((reply) => reply.run_id, (error) => error.message);
  const ungrouped = calls.filter(([path]) => path === "chrome.tabs.ungroup").map(([, args]) => args[0]);
  process.stdout.write(JSON.stringify({ handedDuring, outcome, handedAfter: tabstate.isHanded(5), ungrouped }));
  process.exit(0);
})().catch((error) => { console.error(error); process.exit(1); });
"""


@pytest.mark.parametrize(("before", "refused", "handed_after"), [
    (False, False, True), (False, True, False), (True, True, True)])
def test_a_run_the_backend_refuses_leaves_the_tab_as_it_was(before: bool, refused: bool, handed_after: bool) -> None:
    seen: dict[str, Any] = run_js("tabstate.js", RUNNER, json.dumps({"before": before, "refused": refused}))
    assert seen["handedDuring"] is True and seen["handedAfter"] is handed_after
    # A tab taken back leaves the Branchwise tab group it joined when it was handed over.
    assert seen["ungrouped"] == ([] if handed_after else [5])
    assert seen["outcome"] == ("a run is already in progress; stop it first" if refused else "r1")
